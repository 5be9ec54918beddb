//! The options a prompt offers, as data: the fixed keys shown on screen, the words, and the
//! keymap [`PromptAction`] each one stands for. Which options appear depends on the request: plans
//! get approve/approve/keep planning; edits also get "allow all edits"; "always allow" only when
//! the request carries a rule that can be saved. A question offers its own options on the digit
//! keys, "type an answer" on `5`, and, when several may be chosen, "done" on `6`.

use crate::protocol::{PermissionRequest, Question, RequestKind};
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

/// The prompt actions the digit keys 1-4 stand for (see the keymap), in order.
pub const DIGIT_ACTIONS: [PromptAction; 4] = [
    PromptAction::AllowOnce,
    PromptAction::AllowSession,
    PromptAction::DenyOnce,
    PromptAction::DenySession,
];

/// The options for question `q`; `picked` marks the options chosen so far of a multi-select one.
pub fn question_choices(q: &Question, picked: &[usize]) -> Vec<Choice> {
    const KEYS: [&str; 4] = ["1", "2", "3", "4"];
    let mut out: Vec<Choice> = q
        .options
        .iter()
        .zip(KEYS.iter().zip(DIGIT_ACTIONS))
        .enumerate()
        .map(|(i, (o, (keys, action)))| {
            let mark = match (q.multi_select, picked.contains(&i)) {
                (true, true) => "[x] ",
                (true, false) => "[ ] ",
                _ => "",
            };
            // The description is drawn under the label, framed as the model's words.
            choice(keys, format!("{mark}{}", o.label), action)
        })
        .collect();
    out.push(choice(
        "5",
        "type an answer of your own",
        PromptAction::DenyWithFeedback,
    ));
    if q.multi_select {
        out.push(choice("6", "done", PromptAction::AlwaysAllow));
    }
    out
}
