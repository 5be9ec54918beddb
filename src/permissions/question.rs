//! Questions for the person, in one place: the request a call that asks questions puts to the
//! person ([`Access::AskPerson`](crate::tools::Access::AskPerson)), and what each answer means —
//! the answers go to the call; declining (with or without words) goes to the model instead.

use super::{CallInfo, DecisionEffect, GateOutcome, person_request};
use crate::protocol::{CallOutcome, Decision, PermissionRequest, Question, RequestKind};

/// The gate's verdict on a call asking `questions`.
pub(super) fn request(
    call: &CallInfo<'_>,
    questions: &[Question],
    interactive: bool,
) -> GateOutcome {
    if !interactive {
        return GateOutcome::Deny {
            message: "No one can answer questions in non-interactive mode. Decide yourself, say \
                      which assumption you made, and go on."
                .into(),
        };
    }
    let kind = RequestKind::Questions {
        questions: questions.to_vec(),
    };
    person_request(call, "the model asks you", None, kind)
}

/// What the person's answer to a questions request means; `None` for any other request.
pub(super) fn answer(request: &PermissionRequest, decision: &Decision) -> Option<DecisionEffect> {
    if !matches!(request.kind, RequestKind::Questions { .. }) {
        return None;
    }
    let declined = |message: String| DecisionEffect {
        allow: false,
        outcome: CallOutcome::Denied,
        message: Some(message),
        new_mode: None,
    };
    Some(match decision {
        Decision::Answers { .. } => DecisionEffect {
            allow: true,
            outcome: CallOutcome::AllowedOnce,
            message: None,
            new_mode: None,
        },
        Decision::DenyWithFeedback { feedback } => declined(format!(
            "The user did not pick an answer and said:\n{feedback}"
        )),
        _ => declined(
            "The user declined to answer the questions. Go on with your best judgement, or ask \
             differently if you cannot."
                .into(),
        ),
    })
}
