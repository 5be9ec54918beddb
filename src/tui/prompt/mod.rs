//! The permission prompt: a panel under the conversation that asks the person about pending
//! [`PermissionRequest`]s, oldest first ("1 of 3"), and answers each with exactly one
//! [`Op::PermissionDecision`].
//!
//! It shows the tool, title and reason, a preview (an embedded [`DiffView`] for file changes,
//! see `preview`), and options numbered 1 up in the order shown (`choices`). A diff approved with rejected hunks or
//! after an `$EDITOR` round trip is answered with [`Decision::AllowEdited`]. When the file under
//! an open diff changes on disk, the core plans the change again and replaces the request
//! ([`PermissionPrompt::replace`]); the prompt shows the new proposal and says why. What the
//! model or a server wrote is shown as data ([`crate::tui::untrusted`], `data.rs`): it cannot
//! draw rows that pass for the prompt's own, nor push the question and options out of view.
//! A change that conflicts with a change made outside cairn shows what overwriting does to the
//! file as it is now (its removed lines are lost) and offers overwrite / re-read / abort
//! ([`Decision::Overwrite`], [`Decision::Reread`], Esc aborts).
//! Invariants: one answer per request; keys never reach the composer while a prompt is open;
//! no terminal I/O here (the editor is run by the event loop on request).

mod choices;
#[cfg(test)]
mod conflict_tests;
mod data;
pub mod editor;
#[cfg(test)]
mod panel_tests;
mod preview;
#[cfg(test)]
mod rename_tests;
mod render;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod untrusted_tests;

use std::collections::VecDeque;
use std::path::PathBuf;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::protocol::{
    Decision, Grant, Op, PermissionMode, PermissionRequest, Question, RequestKind,
};
use crate::tui::highlight::Highlighter;
use crate::tui::input::Key;
use crate::tui::keymap::{Bound, Context, Keys, PromptAction};
use crate::tui::overlay::{Message, Outcome, Overlay, RenderCtx, passes_through};
use crate::tui::review::{DiffSet, ReviewKey};

pub use choices::{Choice, SHORT_LIST, choices, question_choices};
pub use preview::{Preview, diff_view, relative};

/// One request waiting for an answer, with its view state.
pub(crate) struct Pending {
    pub req: PermissionRequest,
    pub preview: Preview,
    /// Index into [`choices`] of the focused option.
    pub focus: usize,
    /// Set when the core replaced the request (the file changed on disk), saying why.
    pub notice: Option<String>,
    /// For a questions request: the answers given so far (the current question is the next).
    pub answers: Vec<String>,
    /// Options of the current multi-select question chosen so far.
    pub picked: Vec<usize>,
    /// `?` was pressed: every option and the key hints are listed even when the window is small.
    pub more: bool,
}

impl Pending {
    /// The question now asked, for a questions request.
    pub fn question(&self) -> Option<(usize, usize, &Question)> {
        match &self.req.kind {
            RequestKind::Questions { questions } => questions
                .get(self.answers.len())
                .map(|q| (self.answers.len(), questions.len(), q)),
            _ => None,
        }
    }

    /// The options offered now.
    fn options(&self, edit: bool) -> Vec<Choice> {
        match self.question() {
            Some((_, _, q)) => question_choices(q, &self.picked),
            None => choices(&self.req, edit),
        }
    }
}

/// Pending requests and the feedback line being typed, if any.
pub struct PermissionPrompt {
    queue: VecDeque<Pending>,
    /// `Some` while typing the "tell the model what to do instead" text.
    feedback: Option<String>,
    cwd: PathBuf,
    highlighter: Highlighter,
}

impl std::fmt::Debug for PermissionPrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionPrompt")
            .field("pending", &self.queue.len())
            .field("feedback", &self.feedback)
            .finish_non_exhaustive()
    }
}

impl PermissionPrompt {
    /// An empty prompt; diff paths are shown relative to `cwd`.
    pub fn new(cwd: PathBuf, highlighter: Highlighter) -> PermissionPrompt {
        PermissionPrompt {
            queue: VecDeque::new(),
            feedback: None,
            cwd,
            highlighter,
        }
    }

    pub fn push(&mut self, request: PermissionRequest) {
        let pending = self.pending(request, None);
        self.queue.push_back(pending);
    }

    /// The core replaced the request of the same call (new id, new proposal): show it in its
    /// place with `note`, or afresh at the end when that one was answered already.
    pub fn replace(&mut self, request: PermissionRequest, note: String) {
        let at = self
            .queue
            .iter()
            .position(|p| p.req.call_id == request.call_id);
        let pending = self.pending(request, Some(note));
        match at {
            Some(i) => {
                if i == 0 {
                    self.feedback = None;
                }
                self.queue[i] = pending;
            }
            None => self.queue.push_back(pending),
        }
    }

    fn pending(&self, req: PermissionRequest, notice: Option<String>) -> Pending {
        // A reflexive Enter on a conflict re-reads (nothing lost), never overwrites.
        let focus = usize::from(matches!(req.kind, RequestKind::Conflict { .. }));
        Pending {
            preview: Preview::for_request(&req, &self.cwd, &self.highlighter),
            req,
            focus,
            notice,
            answers: Vec::new(),
            picked: Vec::new(),
            more: false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn current(&self) -> Option<&PermissionRequest> {
        self.queue.front().map(|p| &p.req)
    }

    /// The diff under review in the current request, if it shows one.
    pub fn diff(&self) -> Option<&DiffSet> {
        match self.queue.front().map(|p| &p.preview) {
            Some(Preview::Diff(d)) => Some(d),
            _ => None,
        }
    }

    /// The focused option of the current request.
    pub fn focused_choice(&self) -> Option<Choice> {
        let p = self.queue.front()?;
        p.options(self.is_edit()).into_iter().nth(p.focus)
    }

    pub fn is_typing_feedback(&self) -> bool {
        self.feedback.is_some()
    }

    fn is_edit(&self) -> bool {
        self.diff().is_some()
    }

    /// A key while the prompt is on top. The prompt is modal: every key is used or swallowed,
    /// except global keys it does not bind (Ctrl+C, Ctrl+T, ...) while no feedback is typed.
    pub(crate) fn key(&mut self, keys: &Keys) -> Outcome {
        let own = keys.get(Context::Permission);
        if own.is_none() && self.feedback.is_none() && passes_through(keys) {
            return Outcome::Ignored;
        }
        if self.queue.is_empty() {
            return Outcome::Consumed;
        }
        let key = keys.key;
        if let Some(text) = &mut self.feedback {
            match key.code {
                Key::Enter => {
                    let feedback = std::mem::take(text).trim().to_string();
                    self.feedback = None;
                    if self.queue.front().is_some_and(|p| p.question().is_some()) {
                        // A typed answer to the current question; empty goes back to options.
                        if feedback.is_empty() {
                            return Outcome::Consumed;
                        }
                        return self.answer(feedback);
                    }
                    if feedback.is_empty() {
                        return self.decide(Decision::DenyOnce);
                    }
                    return self.decide(Decision::DenyWithFeedback { feedback });
                }
                Key::Esc => self.feedback = None,
                Key::Backspace => {
                    text.pop();
                }
                Key::Char(c) if !key.mods.ctrl && !key.mods.alt => text.push(c),
                _ => {}
            }
            return Outcome::Consumed;
        }
        let Some(Bound::Prompt(action)) = own else {
            return Outcome::Consumed;
        };
        // Esc is always "no, once"; `3`/`n` on a plan means "keep planning" and asks why.
        if key.code == Key::Esc {
            return self.decide(Decision::DenyOnce);
        }
        let action = match (action, key.code) {
            // A digit picks the option shown with that number, whatever it stands for.
            (PromptAction::Number, Key::Char(c)) => {
                let edit = self.is_edit();
                let index = c.to_digit(10).and_then(|d| usize::try_from(d).ok());
                let picked = self.queue.front().and_then(|p| {
                    let options = p.options(edit);
                    index.and_then(|n| options.get(n.checked_sub(1)?).map(|c| c.action))
                });
                match picked {
                    Some(action) => action,
                    None => return Outcome::Consumed,
                }
            }
            (PromptAction::Number, _) => return Outcome::Consumed,
            (other, _) => other,
        };
        self.act(action)
    }

    fn act(&mut self, action: PromptAction) -> Outcome {
        let edit = self.is_edit();
        let Some(p) = self.queue.front_mut() else {
            return Outcome::Consumed;
        };
        let options = p.options(edit);
        let conflict = matches!(p.req.kind, RequestKind::Conflict { .. });
        let mut chosen = None;
        match action {
            PromptAction::OptionPrev => p.focus = p.focus.saturating_sub(1),
            PromptAction::OptionNext => {
                p.focus = (p.focus + 1).min(options.len().saturating_sub(1))
            }
            PromptAction::Choose => chosen = options.get(p.focus).map(|c| c.action),
            PromptAction::More => p.more = !p.more,
            // Space toggles the focused option of a multi-select question, as the digits do.
            PromptAction::Review(ReviewKey::ToggleHunk)
                if p.question()
                    .is_some_and(|(_, _, q)| q.multi_select && p.focus < q.options.len()) =>
            {
                chosen = options.get(p.focus).map(|c| c.action)
            }
            // A conflict's diff is what overwriting does: nothing in it to choose or edit.
            PromptAction::Review(
                ReviewKey::ToggleHunk | ReviewKey::AcceptAll | ReviewKey::RejectAll,
            )
            | PromptAction::EditInEditor
                if conflict => {}
            PromptAction::Review(key) => match &mut p.preview {
                Preview::Diff(d) => {
                    d.handle_key(key);
                }
                Preview::Text { top, height } => {
                    let page = height.saturating_sub(1).max(1);
                    *top = match key {
                        ReviewKey::Up => top.saturating_sub(1),
                        ReviewKey::Down => *top + 1,
                        ReviewKey::PageUp => top.saturating_sub(page),
                        ReviewKey::PageDown => *top + page,
                        _ => *top,
                    };
                }
            },
            PromptAction::EditInEditor => {
                if let Preview::Diff(d) = &p.preview {
                    return Outcome::Message(Message::Edit {
                        request_id: p.req.id,
                        path: d.path().to_path_buf(),
                        content: d.after().to_string(),
                    });
                }
            }
            other => {
                // Only the options offered for this request count.
                if let Some(i) = options.iter().position(|c| c.action == other) {
                    p.focus = i;
                    chosen = Some(other);
                }
            }
        }
        match chosen {
            Some(action) => self.choose(action),
            None => Outcome::Consumed,
        }
    }

    /// A chosen option of the current question: its label is the answer (toggled, for a
    /// multi-select question, until "done").
    fn choose_option(&mut self, action: PromptAction) -> Outcome {
        let Some(p) = self.queue.front_mut() else {
            return Outcome::Consumed;
        };
        let Some((_, _, q)) = p.question() else {
            return Outcome::Consumed;
        };
        let (multi, labels): (bool, Vec<String>) = (
            q.multi_select,
            q.options.iter().map(|o| o.label.clone()).collect(),
        );
        match action {
            PromptAction::DenyWithFeedback => {
                self.feedback = Some(String::new());
                Outcome::Consumed
            }
            PromptAction::Done if multi => {
                if p.picked.is_empty() {
                    return Outcome::Consumed;
                }
                let mut picked = std::mem::take(&mut p.picked);
                picked.sort_unstable();
                let answer: Vec<&str> = picked.iter().map(|i| labels[*i].as_str()).collect();
                let answer = answer.join(", ");
                self.answer(answer)
            }
            PromptAction::Pick(i) => {
                let i = usize::from(i);
                if i >= labels.len() {
                    return Outcome::Consumed;
                }
                if multi {
                    match p.picked.iter().position(|x| *x == i) {
                        Some(at) => {
                            p.picked.remove(at);
                        }
                        None => p.picked.push(i),
                    }
                    return Outcome::Consumed;
                }
                self.answer(labels[i].clone())
            }
            _ => Outcome::Consumed,
        }
    }

    /// Record the answer to the current question; after the last one, send them all.
    fn answer(&mut self, answer: String) -> Outcome {
        let Some(p) = self.queue.front_mut() else {
            return Outcome::Consumed;
        };
        p.answers.push(answer);
        p.picked.clear();
        p.focus = 0;
        // The next question's text in full starts at its top.
        if let Preview::Text { top, .. } = &mut p.preview {
            *top = 0;
        }
        if p.question().is_some() {
            return Outcome::Consumed;
        }
        let answers = std::mem::take(&mut p.answers);
        self.decide(Decision::Answers { answers })
    }

    /// The decision for a chosen option of the current request.
    fn choose(&mut self, action: PromptAction) -> Outcome {
        let Some(p) = self.queue.front() else {
            return Outcome::Consumed;
        };
        if p.question().is_some() {
            return self.choose_option(action);
        }
        let plan = matches!(p.req.kind, RequestKind::PlanApproval { .. });
        let decision = match action {
            PromptAction::AllowOnce if plan => Decision::ApprovePlan {
                mode: PermissionMode::AcceptEdits,
            },
            PromptAction::AllowSession if plan => Decision::ApprovePlan {
                mode: PermissionMode::Default,
            },
            PromptAction::DenyOnce | PromptAction::DenyWithFeedback if plan => {
                self.feedback = Some(String::new());
                return Outcome::Consumed;
            }
            PromptAction::DenyWithFeedback => {
                self.feedback = Some(String::new());
                return Outcome::Consumed;
            }
            _ => match decision_of(action) {
                Some(decision) => decision,
                None => return Outcome::Consumed,
            },
        };
        // A trimmed or rewritten diff is written as the person saw it, whatever allow option.
        let tool = matches!(p.req.kind, RequestKind::Tool);
        let decision = match (&p.preview, is_allow(&decision)) {
            (Preview::Diff(d), true) if tool && (!d.all_accepted() || d.edited()) => {
                let (content, note) = d.approved_content();
                let files = d.approved_files(&request_paths(&p.req));
                let grant = match decision {
                    Decision::AllowSession => Some(Grant::Session),
                    Decision::AllowAllEditsSession => Some(Grant::AllEditsSession),
                    Decision::AlwaysAllow => Some(Grant::Always),
                    _ => None,
                };
                Decision::AllowEdited {
                    content,
                    note,
                    grant,
                    files,
                }
            }
            _ => decision,
        };
        self.decide(decision)
    }

    /// A paste while typing feedback joins the line (newlines become spaces); else ignored.
    pub fn paste(&mut self, text: &str) {
        if let Some(line) = &mut self.feedback {
            line.push_str(&text.replace(['\r', '\n'], " "));
        }
    }

    /// Drop every pending request (the turn ended; the core no longer waits for answers).
    pub fn clear(&mut self) {
        self.queue.clear();
        self.feedback = None;
    }

    /// Drop the requests `drop` picks (their asker no longer waits for an answer).
    pub fn drop_where(&mut self, drop: impl Fn(&PermissionRequest) -> bool) {
        if self.queue.front().is_some_and(|p| drop(&p.req)) {
            self.feedback = None;
        }
        self.queue.retain(|p| !drop(&p.req));
    }

    /// The editor returned for request `request_id`: `Ok(text)` becomes the content under
    /// review; an error is shown in the prompt. Stale ids (already answered) are ignored.
    pub fn editor_finished(&mut self, request_id: u64, result: Result<String, String>) {
        let Some(p) = self.queue.iter_mut().find(|p| p.req.id == request_id) else {
            return;
        };
        let Preview::Diff(d) = &mut p.preview else {
            return;
        };
        match result {
            Ok(text) => d.set_after(text),
            Err(message) => p.notice = Some(format!("The editor failed: {message}")),
        }
    }

    fn decide(&mut self, decision: Decision) -> Outcome {
        self.feedback = None;
        match self.queue.pop_front() {
            Some(p) => Outcome::Message(Message::Decided {
                allowed: is_allow(&decision),
                call_id: p.req.call_id,
                op: Op::PermissionDecision {
                    request_id: p.req.id,
                    decision,
                },
            }),
            None => Outcome::Consumed,
        }
    }
}

/// The files a request's multi-file preview names, in its order (their paths as the core
/// gave them, not as shown).
fn request_paths(req: &PermissionRequest) -> Vec<PathBuf> {
    match &req.preview {
        Some(crate::protocol::Display::Diffs { files }) => {
            files.iter().map(|f| f.path.clone()).collect()
        }
        _ => Vec::new(),
    }
}

/// Whether a decision lets the call run.
fn is_allow(decision: &Decision) -> bool {
    matches!(
        decision,
        Decision::AllowOnce
            | Decision::AllowSession
            | Decision::AllowAllEditsSession
            | Decision::AlwaysAllow
            | Decision::AllowEdited { .. }
            | Decision::ApprovePlan { .. }
            | Decision::Answers { .. }
            | Decision::Overwrite
            | Decision::Reread
    )
}

impl Overlay for PermissionPrompt {
    fn handle_key(&mut self, keys: &Keys) -> Outcome {
        self.key(keys)
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, _ctx: &mut RenderCtx<'_>) {
        self.draw(area, buf);
    }

    fn key_hints(&self) -> &'static str {
        if self.queue.front().is_some_and(|p| p.question().is_some()) {
            return "↑↓ Enter or a number choose · Esc decline";
        }
        if self
            .queue
            .front()
            .is_some_and(|p| matches!(p.req.kind, RequestKind::Conflict { .. }))
        {
            return "↑↓ Enter or 1-3 choose · Esc abort · j/k PgUp/PgDn scroll · v layout";
        }
        if self.is_edit() {
            "↑↓ Enter choose · Esc no · j/k PgUp/PgDn scroll · Tab hunk · Space toggle · A/R all · \
             v layout · e edit"
        } else {
            "↑↓ Enter choose · Esc no · j/k PgUp/PgDn scroll"
        }
    }
}

/// The decision an option stands for outside a plan's approval (feedback options open the
/// input instead, and have none).
fn decision_of(action: PromptAction) -> Option<Decision> {
    Some(match action {
        PromptAction::AllowOnce => Decision::AllowOnce,
        PromptAction::AllowSession => Decision::AllowSession,
        PromptAction::AllowAllEdits => Decision::AllowAllEditsSession,
        PromptAction::AlwaysAllow => Decision::AlwaysAllow,
        PromptAction::DenyOnce => Decision::DenyOnce,
        PromptAction::DenySession => Decision::DenySession,
        PromptAction::Overwrite => Decision::Overwrite,
        PromptAction::Reread => Decision::Reread,
        _ => return None,
    })
}
