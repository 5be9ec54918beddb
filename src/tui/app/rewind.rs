//! `/rewind` in the TUI (and Esc Esc on an empty composer while idle): the prompts of the
//! conversation, newest first (with "undo last rewind" on top when there is one), then what
//! to restore as numbered choices, then — when the core says files were changed outside cairn
//! since its last turn — a confirmation. The pickers are the composer's; the core does the
//! work ([`Op::Rewind`]) and reports back.

use super::*;
use crate::protocol::{RewindPoint, RewindTarget};
use crate::tui::picker::PickerItem;

/// The numbered choices once a prompt is picked: (label, code, conversation).
const CHOICES: [(&str, bool, bool); 3] = [
    ("1. Restore code and conversation", true, true),
    ("2. Restore conversation only", false, true),
    ("3. Restore code only", true, false),
];
const CANCEL: &str = "4. Cancel";
const UNDO: &str = "↶ Undo last rewind";
const CONFIRM: &str = "1. Restore them too";

/// Where `/rewind` is: the list it showed, the prompt picked, the rewind awaiting a yes.
#[derive(Debug, Default)]
pub(crate) struct RewindUi {
    points: Vec<RewindPoint>,
    items: Vec<(String, String)>,
    undo: Option<String>,
    picked: Option<RewindPoint>,
    confirm: Option<Op>,
}

/// A prompt in one line for a list.
fn one_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    let mut out: String = line.chars().take(max).collect();
    if out.chars().count() < line.chars().count() || text.trim().lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

impl App {
    /// `/rewind` or Esc Esc: ask the core for the points (the list opens when they come).
    pub(super) fn open_rewind(&mut self) {
        if self.turn.is_running() {
            self.conversation.push_notice(
                NoticeKind::Info,
                "Rewind works between turns: wait, or interrupt first (Esc).",
            );
            return;
        }
        self.send(Op::RewindList);
    }

    /// Esc on an idle, empty composer with nothing open: the second one within
    /// [`turn::ESC_ESC`] opens `/rewind`.
    pub(super) fn esc_on_empty(&mut self, now: Instant) {
        if self.turn.esc_idle(now) {
            self.open_rewind();
        } else {
            self.session.status.hint = Some("Esc again to rewind".into());
        }
    }

    /// The core's list of points: open the picker, newest first.
    pub(super) fn rewind_points(&mut self, points: &[RewindPoint], undo: &Option<String>) {
        if points.is_empty() && undo.is_none() {
            self.conversation.push_notice(
                NoticeKind::Info,
                "Nothing to rewind yet: no prompt of this conversation to go back to.",
            );
            return;
        }
        let mut items = Vec::new();
        if let Some(what) = undo {
            items.push((UNDO.to_string(), what.clone()));
        }
        let total = points.len();
        for (n, p) in points.iter().enumerate() {
            let what = if p.code {
                "code and conversation"
            } else {
                "conversation only (no checkpoint of the files)"
            };
            let mut detail = format!("#{} · {what}", total - n);
            if p.code && !p.not_undone.is_empty() {
                detail.push_str(&format!(" · {} not undone", p.not_undone.len()));
            }
            // What the prompt's turn changed, so a person can tell the prompts apart.
            match p.changed.as_slice() {
                [] => {}
                [one] => detail.push_str(&format!(" · changed {}", one_line(one, 40))),
                many => detail.push_str(&format!(
                    " · changed {} and {} more",
                    one_line(&many[0], 40),
                    many.len() - 1
                )),
            }
            items.push((one_line(&p.text, 60), detail));
        }
        self.rewind = RewindUi {
            points: points.to_vec(),
            items: items.clone(),
            undo: undo.clone(),
            picked: None,
            confirm: None,
        };
        self.input
            .open_picker(Picker::choices(PickerKind::Rewind, items));
    }

    /// A row of one of the rewind pickers was picked.
    pub(super) fn rewind_picked(&mut self, kind: PickerKind, item: &PickerItem) {
        match kind {
            PickerKind::Rewind => {
                let at = self
                    .rewind
                    .items
                    .iter()
                    .position(|(l, d)| *l == item.label && *d == item.detail);
                let offset = usize::from(self.rewind.undo.is_some());
                match at {
                    Some(0) if offset == 1 => self.send(Op::Rewind {
                        target: RewindTarget::UndoLast,
                        code: true,
                        conversation: true,
                        confirmed: false,
                    }),
                    Some(n) => {
                        let Some(point) = self.rewind.points.get(n - offset).cloned() else {
                            return;
                        };
                        let mut items: Vec<(String, String)> = CHOICES
                            .iter()
                            .map(|(label, code, _)| {
                                let why = if *code && !point.code {
                                    "no checkpoint of the files before this prompt"
                                } else {
                                    ""
                                };
                                (label.to_string(), why.to_string())
                            })
                            .collect();
                        items.push((CANCEL.to_string(), String::new()));
                        if point.code && !point.not_undone.is_empty() {
                            self.not_undone_notice(&point.not_undone);
                        }
                        self.input
                            .open_picker(Picker::choices(PickerKind::RewindChoice, items));
                        self.rewind.picked = Some(point);
                    }
                    None => {}
                }
            }
            PickerKind::RewindChoice => {
                let Some(point) = self.rewind.picked.take() else {
                    return;
                };
                let Some((_, code, conversation)) =
                    CHOICES.iter().find(|(l, _, _)| *l == item.label)
                else {
                    return;
                };
                if *code && !point.code {
                    self.conversation.push_notice(
                        NoticeKind::Error,
                        "No checkpoint of the files was recorded before that prompt: only the \
                         conversation can go back.",
                    );
                    return;
                }
                self.send(Op::Rewind {
                    target: RewindTarget::Prompt { id: point.id },
                    code: *code,
                    conversation: *conversation,
                    confirmed: false,
                });
            }
            PickerKind::RewindConfirm => {
                if let Some(op) = self.rewind.confirm.take()
                    && item.label == CONFIRM
                {
                    self.send(op);
                }
            }
            _ => {}
        }
    }

    /// What restoring the code to the picked prompt cannot undo, above the choices.
    fn not_undone_notice(&mut self, lines: &[String]) {
        let mut text = String::from("Restoring the code cannot undo these (not undone):");
        for line in lines.iter().take(20) {
            text.push_str(&format!("\n  {line}"));
        }
        if lines.len() > 20 {
            text.push_str(&format!("\n  … and {} more", lines.len() - 20));
        }
        self.conversation.push_notice(NoticeKind::Warning, &text);
    }

    /// The core asks before undoing changes made outside cairn: list them and ask.
    pub(super) fn rewind_confirm(
        &mut self,
        target: &RewindTarget,
        code: bool,
        conversation: bool,
        files: &[PathBuf],
    ) {
        let mut text = String::from(
            "These files changed after cairn's last turn (by you or another program); \
             restoring the files undoes that too:",
        );
        for f in files.iter().take(20) {
            text.push_str(&format!("\n  {}", self.session.relative(f).display()));
        }
        if files.len() > 20 {
            text.push_str(&format!("\n  … and {} more", files.len() - 20));
        }
        self.conversation.push_notice(NoticeKind::Warning, &text);
        self.rewind.confirm = Some(Op::Rewind {
            target: target.clone(),
            code,
            conversation,
            confirmed: true,
        });
        let items = vec![
            (
                CONFIRM.to_string(),
                "restore them as well (undo it later with /rewind)".to_string(),
            ),
            ("2. Cancel".to_string(), "change nothing".to_string()),
        ];
        self.input
            .open_picker(Picker::choices(PickerKind::RewindConfirm, items));
    }
}
