//! Plan approval, in one place: the request a call that asks to leave plan mode puts to the
//! person ([`Access::ApprovePlan`](crate::tools::Access::ApprovePlan)), and what each answer
//! to it means — approving switches the mode, every "no" keeps planning (a "deny for the
//! session" must not disable leaving plan mode), and feedback goes to the model.

use super::{CallInfo, DecisionEffect, GateOutcome, ModeCell, person_request};
use crate::protocol::{
    CallOutcome, Decision, Display, PermissionMode, PermissionRequest, RequestKind,
};

/// The gate's verdict on a call asking for approval of `plan` while in `mode`.
pub(super) fn request(
    call: &CallInfo<'_>,
    plan: &str,
    mode: PermissionMode,
    interactive: bool,
) -> GateOutcome {
    if mode != PermissionMode::Plan {
        return GateOutcome::Deny {
            message: "You are not in plan mode, so there is no plan to approve. Go ahead with \
                      the task (or call EnterPlanMode first if you want to plan)."
                .into(),
        };
    }
    if !interactive {
        return GateOutcome::Deny {
            message: "The plan cannot be approved: no one can be asked in non-interactive \
                      mode. Run without plan mode (e.g. --permission-mode acceptEdits) to let \
                      the work proceed."
                .into(),
        };
    }
    let preview = Display::Markdown {
        text: plan.to_string(),
    };
    let kind = RequestKind::PlanApproval {
        plan: plan.to_string(),
    };
    let reason = "the plan needs your approval before any change is made";
    person_request(call, reason, Some(preview), kind)
}

/// What the person's answer to a plan request means; `None` for any other request.
pub(super) fn answer(
    request: &PermissionRequest,
    decision: &Decision,
    mode: &ModeCell,
) -> Option<DecisionEffect> {
    if !matches!(request.kind, RequestKind::PlanApproval { .. }) {
        return None;
    }
    let keep_planning = |message: String| DecisionEffect {
        allow: false,
        outcome: CallOutcome::Denied,
        message: Some(message),
        new_mode: None,
    };
    Some(match decision {
        Decision::DenyWithFeedback { feedback } => keep_planning(format!(
            "The user wants to keep planning and said:\n{feedback}\nStay in plan mode, revise \
             the plan, and call ExitPlanMode again when it is ready."
        )),
        // Not answers to a plan: fail closed.
        Decision::DenyOnce | Decision::DenySession | Decision::Overwrite | Decision::Reread => {
            keep_planning(
                "The user rejected the plan and wants to keep planning. Stay in plan mode, refine \
             the plan, and ask again with ExitPlanMode when it is ready."
                    .into(),
            )
        }
        // Every "yes" approves the plan; the allow options of an ordinary prompt mean the
        // default mode afterwards.
        Decision::ApprovePlan { mode: next } => approve(mode, *next),
        Decision::Answers { .. } => approve(mode, PermissionMode::Default),
        Decision::AllowOnce
        | Decision::AllowSession
        | Decision::AllowAllEditsSession
        | Decision::AlwaysAllow
        | Decision::AllowEdited { .. } => approve(mode, PermissionMode::Default),
    })
}

fn approve(cell: &ModeCell, next: PermissionMode) -> DecisionEffect {
    cell.set(next);
    DecisionEffect {
        allow: true,
        outcome: CallOutcome::PlanApproved,
        message: None,
        new_mode: Some(next),
    }
}
