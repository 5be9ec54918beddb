//! The options a prompt offers, as data: the words, the short form the one-line list shows, the
//! letter key (if any) and the keymap [`PromptAction`] each one stands for. Options are numbered
//! by position, 1 up, in the order shown: the digit keys pick by number, so what is shown is what
//! each number does. Which options appear depends on the request: plans get approve/approve/keep
//! planning; edits also get "allow all edits"; "always allow" only when the request carries a
//! rule that can be saved. A question offers its own options, then "type an answer", then, when
//! several may be chosen, "done". A change that conflicts with an outside change offers
//! overwrite / re-read / abort, by number only.

use crate::protocol::{PermissionRequest, Question, RequestKind};
use crate::tui::keymap::PromptAction;

/// One option of the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The letter that picks it besides its number (`y`), if any.
    pub letter: Option<char>,
    pub label: String,
    /// The few words the one-line option list shows (`session`).
    pub short: String,
    pub action: PromptAction,
}

impl Choice {
    /// The keys as shown for the option at `index` (`1/y`).
    pub fn keys(&self, index: usize) -> String {
        match self.letter {
            Some(c) => format!("{}/{c}", index + 1),
            None => (index + 1).to_string(),
        }
    }
}

fn choice(
    letter: Option<char>,
    label: impl Into<String>,
    short: &str,
    action: PromptAction,
) -> Choice {
    Choice {
        letter,
        label: label.into(),
        short: short.to_string(),
        action,
    }
}

/// The options for `req`, in screen order (number = position + 1). `edit`: the request shows a
/// file diff.
pub fn choices(req: &PermissionRequest, edit: bool) -> Vec<Choice> {
    // No letters: a reflexive `y` must not overwrite someone's work; the numbers pick.
    if let RequestKind::Conflict { .. } = req.kind {
        return vec![
            choice(
                None,
                "overwrite: write the session's version (the lines marked - are lost)",
                "overwrite",
                PromptAction::Overwrite,
            ),
            choice(
                None,
                "re-read: keep the file as it is; the model reads it and redoes its edit",
                "re-read",
                PromptAction::Reread,
            ),
            choice(
                None,
                "abort: write nothing",
                "abort",
                PromptAction::DenyOnce,
            ),
        ];
    }
    if let RequestKind::PlanApproval { .. } = req.kind {
        return vec![
            choice(
                None,
                "yes, approve and accept edits",
                "approve, accept edits",
                PromptAction::AllowOnce,
            ),
            choice(
                None,
                "yes, approve and ask before each edit",
                "approve, ask each edit",
                PromptAction::AllowSession,
            ),
            choice(
                None,
                "no, keep planning (tell the model what to change)",
                "keep planning…",
                PromptAction::DenyOnce,
            ),
        ];
    }
    let scope = req
        .session_scope
        .as_deref()
        .map_or(String::new(), |s| format!(" ({s})"));
    let mut out = vec![
        choice(Some('y'), "yes", "yes", PromptAction::AllowOnce),
        choice(
            Some('a'),
            format!("yes, for this session{scope}"),
            "session",
            PromptAction::AllowSession,
        ),
        choice(Some('n'), "no", "no", PromptAction::DenyOnce),
        choice(
            Some('f'),
            "no, and tell the model what to do instead",
            "tell the model…",
            PromptAction::DenyWithFeedback,
        ),
        choice(
            Some('d'),
            format!("no, for this session{scope}"),
            "no for the session",
            PromptAction::DenySession,
        ),
    ];
    if edit {
        out.push(choice(
            Some('w'),
            "yes, and allow all edits this session",
            "all edits",
            PromptAction::AllowAllEdits,
        ));
    }
    if let Some(rule) = &req.saveable_rule {
        out.push(choice(
            Some('s'),
            format!("always allow: save the rule {rule}"),
            "always",
            PromptAction::AlwaysAllow,
        ));
    }
    out
}

/// How many options the one-line list shows before `? more`.
pub const SHORT_LIST: usize = 4;

/// The options for question `q`; `picked` marks the options chosen so far of a multi-select one.
pub fn question_choices(q: &Question, picked: &[usize]) -> Vec<Choice> {
    let mut out: Vec<Choice> = q
        .options
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let mark = match (q.multi_select, picked.contains(&i)) {
                (true, true) => "[x] ",
                (true, false) => "[ ] ",
                _ => "",
            };
            // The description is drawn under the label, framed as the model's words.
            let label = format!("{mark}{}", o.label);
            let short = crate::tui::untrusted::one_line(&label).into_owned();
            let action = PromptAction::Pick(u8::try_from(i).unwrap_or(u8::MAX));
            choice(None, label, &short, action)
        })
        .collect();
    out.push(choice(
        None,
        "type an answer of your own",
        "type an answer…",
        PromptAction::DenyWithFeedback,
    ));
    if q.multi_select {
        out.push(choice(None, "done", "done", PromptAction::Done));
    }
    out
}
