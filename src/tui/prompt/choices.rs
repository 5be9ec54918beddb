//! The options a prompt offers, as data: the fixed keys shown on screen, the words, and the
//! keymap [`PromptAction`] each one stands for. Which options appear depends on the request: plans
//! get approve/approve/keep planning; edits also get "allow all edits"; "always allow" only when
//! the request carries a rule that can be saved.

use crate::protocol::{PermissionRequest, RequestKind};
use crate::tui::keymap::PromptAction;

/// One option of the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The keys as shown (`1/y`).
    pub keys: &'static str,
    pub label: String,
    pub action: PromptAction,
}

fn choice(keys: &'static str, label: impl Into<String>, action: PromptAction) -> Choice {
    Choice {
        keys,
        label: label.into(),
        action,
    }
}

/// The options for `req`, in screen order. `edit`: the request shows a file diff.
pub fn choices(req: &PermissionRequest, edit: bool) -> Vec<Choice> {
    if let RequestKind::PlanApproval { .. } = req.kind {
        return vec![
            choice(
                "1",
                "yes, approve and accept edits",
                PromptAction::AllowOnce,
            ),
            choice(
                "2",
                "yes, approve and ask before each edit",
                PromptAction::AllowSession,
            ),
            choice(
                "3",
                "no, keep planning (tell the model what to change)",
                PromptAction::DenyOnce,
            ),
        ];
    }
    let scope = req
        .session_scope
        .as_deref()
        .map_or(String::new(), |s| format!(" ({s})"));
    let mut out = vec![
        choice("1/y", "yes", PromptAction::AllowOnce),
        choice(
            "2/a",
            format!("yes, for this session{scope}"),
            PromptAction::AllowSession,
        ),
    ];
    if edit {
        out.push(choice(
            "7/w",
            "yes, and allow all edits this session",
            PromptAction::AllowAllEdits,
        ));
    }
    out.push(choice("3/n", "no", PromptAction::DenyOnce));
    out.push(choice(
        "4/d",
        format!("no, for this session{scope}"),
        PromptAction::DenySession,
    ));
    out.push(choice(
        "5/f",
        "no, and tell the model what to do instead",
        PromptAction::DenyWithFeedback,
    ));
    if let Some(rule) = &req.saveable_rule {
        out.push(choice(
            "6/s",
            format!("always allow: save the rule {rule}"),
            PromptAction::AlwaysAllow,
        ));
    }
    out
}
