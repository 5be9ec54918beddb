//! The overlays over the main view, as a stack: the transcript (Ctrl+T), `/diff`, and the
//! permission prompt, which gathers the core's requests and is answered one at a time.
//!
//! Keys go to the top overlay first; a modal one keeps the ones under it from seeing keys it
//! ignored. Invariants: at most one prompt is open and it goes on top when it opens (it must
//! be answered, over `/diff` and the transcript included); it closes as soon as its last
//! request is answered or dropped. Requests of a turn are dropped when the turn ends, those of
//! a background agent when the agent ends; no request is answered after that.

use std::path::Path;

use super::Layer;
use crate::protocol::PermissionRequest;
use crate::tui::conversation::ScrollState;
use crate::tui::highlight::Highlighter;
use crate::tui::keymap::Keys;
use crate::tui::overlay::{Message, Outcome};
use crate::tui::prompt::PermissionPrompt;
use crate::tui::session_diff::SessionDiff;

/// What became of a key offered to the overlays.
pub(crate) enum Offered {
    /// An overlay used it (and may have closed).
    Used,
    /// An overlay asks the App to act.
    Message(Message),
}

#[derive(Default)]
pub(crate) struct Layers {
    stack: Vec<Layer>,
}

impl Layers {
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    pub fn top_mut(&mut self) -> Option<&mut Layer> {
        self.stack.last_mut()
    }

    pub fn permission_prompt(&self) -> Option<&PermissionPrompt> {
        self.stack.iter().rev().find_map(|l| match l {
            Layer::Permission(p) => Some(p),
            _ => None,
        })
    }

    pub fn permission_prompt_mut(&mut self) -> Option<&mut PermissionPrompt> {
        self.stack.iter_mut().rev().find_map(|l| match l {
            Layer::Permission(p) => Some(p),
            _ => None,
        })
    }

    pub fn is_transcript_open(&self) -> bool {
        matches!(self.stack.last(), Some(Layer::Transcript(_)))
    }

    pub fn is_session_diff_open(&self) -> bool {
        matches!(self.stack.last(), Some(Layer::SessionDiff(_)))
    }

    /// The transcript's own scroll position while it is on top.
    pub fn transcript_scroll(&mut self) -> Option<&mut ScrollState> {
        match self.stack.last_mut() {
            Some(Layer::Transcript(t)) => Some(&mut t.scroll),
            _ => None,
        }
    }

    /// Ctrl+T: close the transcript when it is on top, else open it. True when it opened.
    pub fn toggle_transcript(&mut self) -> bool {
        if self.is_transcript_open() {
            self.stack.pop();
            false
        } else {
            self.stack.push(Layer::Transcript(Default::default()));
            true
        }
    }

    /// `/tasks`' view of one task, over everything.
    pub fn open_task_view(&mut self, view: crate::tui::task_view::TaskView) {
        self.stack.push(Layer::TaskView(view));
    }

    pub fn has_task_view(&self) -> bool {
        matches!(self.stack.last(), Some(Layer::TaskView(_)))
    }

    /// The task view, when it is on top.
    pub fn task_view(&mut self) -> Option<&mut crate::tui::task_view::TaskView> {
        match self.stack.last_mut() {
            Some(Layer::TaskView(v)) => Some(v),
            _ => None,
        }
    }

    pub fn open_session_diff(&mut self, view: SessionDiff) {
        self.stack.push(Layer::SessionDiff(view));
    }

    /// A paste goes to the top overlay (only the prompt takes text). False with none open.
    pub fn paste(&mut self, text: &str) -> bool {
        match self.stack.last_mut() {
            None => return false,
            Some(Layer::Permission(p)) => p.paste(text),
            Some(Layer::Transcript(_) | Layer::SessionDiff(_) | Layer::TaskView(_)) => {}
        }
        true
    }

    /// Offer a key to the overlays, top first. `None` when none used it.
    pub fn offer_key(&mut self, keys: &Keys) -> Option<Offered> {
        for i in (0..self.stack.len()).rev() {
            let overlay = self.stack[i].overlay();
            let modal = overlay.modal();
            match overlay.handle_key(keys) {
                Outcome::Ignored if modal => return None,
                Outcome::Ignored => continue,
                Outcome::Consumed => {}
                Outcome::Close => {
                    self.stack.remove(i);
                }
                Outcome::Message(message) => {
                    self.close_answered_prompt();
                    return Some(Offered::Message(message));
                }
            }
            self.close_answered_prompt();
            return Some(Offered::Used);
        }
        None
    }

    /// A new request joins the open prompt (answered in order) or opens one on top.
    pub fn permission_request(&mut self, req: &PermissionRequest, cwd: &Path, hl: &Highlighter) {
        self.with_prompt(cwd, hl, |p| p.push(req.clone()));
    }

    /// The core replaced a request (its file changed on disk): the new proposal takes the old
    /// one's place, or opens the prompt again when the old one was answered already.
    pub fn permission_request_updated(
        &mut self,
        req: &PermissionRequest,
        note: &str,
        cwd: &Path,
        hl: &Highlighter,
    ) {
        self.with_prompt(cwd, hl, |p| p.replace(req.clone(), note.to_string()));
    }

    /// Change the open prompt, or a new one that then opens on top.
    fn with_prompt(&mut self, cwd: &Path, hl: &Highlighter, f: impl FnOnce(&mut PermissionPrompt)) {
        if let Some(p) = self.permission_prompt_mut() {
            f(p);
            return;
        }
        let mut prompt = PermissionPrompt::new(cwd.to_path_buf(), hl.clone());
        f(&mut prompt);
        self.stack.push(Layer::Permission(prompt));
    }

    /// The turn ended: the core no longer waits for answers to its requests, but background
    /// agents' requests still wait.
    pub fn drop_turn_requests(&mut self) {
        if let Some(p) = self.permission_prompt_mut() {
            p.drop_where(|r| r.background_task.is_none());
        }
        self.close_answered_prompt();
    }

    /// Background agent `id` ended: nothing waits for its requests any more.
    pub fn drop_task_requests(&mut self, id: &str) {
        if let Some(p) = self.permission_prompt_mut() {
            p.drop_where(|r| r.background_task.as_deref() == Some(id));
        }
        self.close_answered_prompt();
    }

    /// The core is gone: no request will be read.
    pub fn drop_prompt(&mut self) {
        self.stack.retain(|l| !matches!(l, Layer::Permission(_)));
    }

    /// Drop the prompt once its last request is answered.
    pub fn close_answered_prompt(&mut self) {
        if self
            .permission_prompt()
            .is_some_and(PermissionPrompt::is_empty)
        {
            self.drop_prompt();
        }
    }

    /// The `$EDITOR` round trip for request `request_id` ended.
    pub fn editor_finished(&mut self, request_id: u64, result: Result<String, String>) {
        if let Some(p) = self.permission_prompt_mut() {
            p.editor_finished(request_id, result);
        }
    }
}
