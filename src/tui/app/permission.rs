//! The permission side of the app: requests into the prompt panel, the prompt's answers
//! out as ops (and into the tool cells), requests the core replaced, the `$EDITOR` round trip,
//! files changed on disk, and the `/diff` overlay.

use std::path::Path;

use super::*;
use crate::protocol::{FileChange, PermissionRequest};
use crate::tui::prompt::relative;

impl App {
    /// A new request joins the open prompt (answered in order) or opens one.
    pub(super) fn permission_request(&mut self, req: &PermissionRequest) {
        match self.permission_prompt_mut() {
            Some(p) => p.push(req.clone()),
            None => {
                let mut p = PermissionPrompt::new(self.cwd.clone(), self.highlighter.clone());
                p.push(req.clone());
                // On top of everything, `/diff` and the transcript included: it must be answered.
                self.layers.push(Layer::Permission(p));
            }
        }
    }

    /// The core replaced a request (its file changed on disk): the new proposal takes the old
    /// one's place, or opens the prompt again when the old one was answered already.
    pub(super) fn permission_request_updated(&mut self, req: &PermissionRequest, note: &str) {
        match self.permission_prompt_mut() {
            Some(p) => p.replace(req.clone(), note.to_string()),
            None => {
                let mut p = PermissionPrompt::new(self.cwd.clone(), self.highlighter.clone());
                p.replace(req.clone(), note.to_string());
                self.layers.push(Layer::Permission(p));
            }
        }
    }

    /// The turn ended: the core no longer waits for answers to its requests, but background
    /// agents' requests still wait.
    pub(super) fn drop_turn_requests(&mut self) {
        if let Some(p) = self.permission_prompt_mut() {
            p.drop_where(|r| r.background_task.is_none());
        }
        self.close_answered_prompt();
    }

    /// Background agent `id` ended: nothing waits for its requests any more.
    pub(super) fn drop_task_requests(&mut self, id: &str) {
        if let Some(p) = self.permission_prompt_mut() {
            p.drop_where(|r| r.background_task.as_deref() == Some(id));
        }
        self.close_answered_prompt();
    }

    /// Drop the prompt once its last request is answered.
    pub(super) fn close_answered_prompt(&mut self) {
        if self
            .permission_prompt()
            .is_some_and(PermissionPrompt::is_empty)
        {
            self.layers.retain(|l| !matches!(l, Layer::Permission(_)));
        }
    }

    /// The editor round trip for request `request_id` ended: its text, or why it failed.
    pub fn editor_finished(&mut self, request_id: u64, result: Result<String, String>) {
        self.dirty = true;
        if let Some(p) = self.permission_prompt_mut() {
            p.editor_finished(request_id, result);
        }
    }

    /// The watcher saw `path` change: a notice and marked tool cells. (Open proposals for the
    /// file are planned again by the core, which replaces their requests.)
    pub(super) fn file_changed_on_disk(&mut self, path: &Path, change: FileChange) {
        let rel = relative(path, &self.cwd);
        self.conversation.file_changed_on_disk(&rel, change);
    }

    /// `/diff`: open the session's changes, or say there are none.
    pub(super) fn open_session_diff(&mut self) {
        if self.changes.is_empty() {
            self.conversation.push_notice(
                NoticeKind::Info,
                "cairn has not changed any file in this session yet.",
            );
            return;
        }
        self.picker = None;
        let view = SessionDiff::new(&self.changes, &self.highlighter);
        self.layers.push(Layer::SessionDiff(view));
    }

    /// `/plan`: enter plan mode.
    pub(super) fn enter_plan_mode(&mut self) {
        self.set_mode(PermissionMode::Plan);
        self.conversation.push_notice(
            NoticeKind::Info,
            "mode: plan. The model explores and proposes a plan; nothing is changed until you \
             approve it. Shift+Tab leaves plan mode.",
        );
    }
}
