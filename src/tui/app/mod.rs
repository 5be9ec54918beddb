//! The App: all TUI state and the logic that changes it, with no terminal in sight.
//!
//! Inputs come in as [`InputEvent`]s (keys, pastes, wheel), core
//! [`Event`](crate::protocol::Event)s and [`AppEvent`]s (results of background work the event
//! loop ran for us; both folded in by `events.rs`). Ops go to the core through the
//! channel given at construction; everything the event loop must do for the app (quit, suspend,
//! write OSC 52, run a shell command, walk or match files) comes back as [`AppAction`]s.
//! Rendering (`render.rs`) only reads this state.
//!
//! Invariants: at most one prompt is in flight; text sent while a turn runs is queued and sent,
//! one prompt per finished turn, in order (an interrupt puts the queue back into the composer).
//! Every permission request gets at most one answer, and none after its turn ended (a
//! background agent's request outlives the turn that was running when it came).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;

use crate::protocol::{Op, PermissionMode};
use crate::tui::composer::Composer;
use crate::tui::composer::history::History;
use crate::tui::conversation::{Conversation, NoticeKind, ScrollState};
use crate::tui::highlight::Highlighter;
use crate::tui::input::{InputEvent, KeyInput};
use crate::tui::keymap::{self, Action, Context, Keys};
use crate::tui::overlay::{Message, Outcome, Overlay, Transcript};
use crate::tui::picker::{Picker, PickerKind, commands};
use crate::tui::prompt::PermissionPrompt;
use crate::tui::session_diff::{SessionChanges, SessionDiff};
use crate::tui::status::{Header, StatusState, mode_label};

/// Lines moved per mouse wheel step.
const WHEEL_LINES: usize = 3;

/// Something the event loop does on the app's behalf.
#[derive(Debug, Clone, PartialEq)]
pub enum AppAction {
    Quit,
    /// Ctrl+Z: restore the terminal, stop the process, set the terminal up again on resume.
    Suspend,
    /// Ctrl+L: clear the terminal and draw everything again.
    Repaint,
    /// Put this text on the clipboard with OSC 52.
    CopyToClipboard(String),
    /// `!command`: run with `sh -c` in the project directory, report an [`AppEvent::ShellFinished`].
    RunShell {
        command: String,
    },
    /// Walk the project's files in the background, report [`AppEvent::FilesListed`].
    ListFiles {
        root: PathBuf,
    },
    /// Fuzzy-match in the background, report [`AppEvent::FilesMatched`] with the same id.
    MatchFiles {
        request_id: u64,
        query: String,
        files: Arc<Vec<String>>,
    },
    /// `e` in an edit prompt: release the terminal, open `content` in `$EDITOR` (file name hint
    /// `path`), take the terminal back and call [`App::editor_finished`] with `request_id`.
    EditInEditor {
        request_id: u64,
        path: PathBuf,
        content: String,
    },
    /// `/memory`: release the terminal, edit the memory file `path` (its text `content`, as the
    /// host read it) in `$EDITOR`, take the terminal back and call [`App::memory_edited`].
    EditMemoryFile {
        path: PathBuf,
        content: String,
    },
}

/// Results of background work, fed back by the event loop.
#[derive(Debug, Clone, PartialEq)]
pub enum AppEvent {
    ShellFinished {
        command: String,
        output: String,
        exit_code: Option<i32>,
    },
    FilesListed(Arc<Vec<String>>),
    FilesMatched {
        request_id: u64,
        paths: Vec<String>,
    },
    /// A `statusLine` command ran: its line, or why there is none (shown as nothing).
    StatusLine(Result<ratatui::text::Line<'static>, String>),
}

/// Overlays, drawn bottom-up over the main view; keys go to the top one first. Each is an
/// [`Overlay`]; the enum only gives the App typed access (which prompt is open, ...).
// No derives that would require them of the conversation view's types (`ScrollState`).
pub enum Layer {
    Transcript(Transcript),
    Permission(PermissionPrompt),
    /// `/diff`: the session's changes.
    SessionDiff(SessionDiff),
}

impl Layer {
    pub(crate) fn overlay(&mut self) -> &mut dyn Overlay {
        match self {
            Layer::Transcript(t) => t,
            Layer::Permission(p) => p,
            Layer::SessionDiff(d) => d,
        }
    }
}

/// Settings of the app that come from outside.
#[derive(Clone)]
pub struct AppConfig {
    pub cwd: PathBuf,
    /// Whether Shift+Tab may cycle into bypassPermissions (only when started in it).
    pub bypass_allowed: bool,
    pub highlighter: Highlighter,
}

/// The file list for the `@` picker, loaded once in the background.
#[derive(Debug, Default)]
struct FileIndex {
    files: Option<Arc<Vec<String>>>,
    loading: bool,
    next_request: u64,
}

/// The whole TUI state.
pub struct App {
    pub(crate) conversation: Conversation,
    pub(crate) scroll: ScrollState,
    pub(crate) composer: Composer,
    pub(crate) picker: Option<Picker>,
    file_index: FileIndex,
    pub(crate) status: StatusState,
    pub(crate) header: Header,
    pub(crate) layers: Vec<Layer>,
    pub(crate) queued: VecDeque<String>,
    /// The model's todo list (TodoWrite), and whether it is shown above the composer.
    pub(crate) todos: Vec<crate::protocol::Todo>,
    pub(crate) todos_shown: bool,
    /// What the app asked of the session's host and waits for (and a `#` note's text).
    asks: asks::HostAsks,
    /// The session's MCP servers, for `/mcp`, approvals and the status row.
    pub(crate) mcp: mcp::McpView,
    /// Actions for the event loop that came of a core or host event ([`App::take_actions`]).
    pending: Vec<AppAction>,
    ops: UnboundedSender<Op>,
    turn_running: bool,
    quit_armed: bool,
    bypass_allowed: bool,
    dirty: bool,
    /// The project directory: paths in prompts and notices are shown relative to it.
    pub(crate) cwd: PathBuf,
    pub(crate) highlighter: Highlighter,
    /// What `/diff` shows.
    pub(crate) changes: SessionChanges,
    /// Where `/rewind` is.
    rewind: rewind::RewindUi,
    /// When Esc was last pressed on an idle, empty composer (a second one opens `/rewind`).
    esc_at: Option<Instant>,
    /// The background agents, for `/tasks`.
    pub(crate) tasks: crate::tui::tasks::BackgroundTasks,
}

impl App {
    pub fn new(config: AppConfig, history: History, ops: UnboundedSender<Op>) -> App {
        App {
            conversation: Conversation::new(config.highlighter.clone()),
            scroll: ScrollState::default(),
            composer: Composer::new(history),
            picker: None,
            file_index: FileIndex::default(),
            status: StatusState::default(),
            header: Header::for_dir(&config.cwd),
            layers: Vec::new(),
            queued: VecDeque::new(),
            todos: Vec::new(),
            todos_shown: true,
            asks: asks::HostAsks::default(),
            mcp: mcp::McpView::default(),
            pending: Vec::new(),
            ops,
            turn_running: false,
            quit_armed: false,
            bypass_allowed: config.bypass_allowed,
            dirty: true,
            cwd: config.cwd,
            highlighter: config.highlighter,
            changes: SessionChanges::default(),
            rewind: rewind::RewindUi::default(),
            esc_at: None,
            tasks: Default::default(),
        }
    }

    // ----- queries (for the event loop, rendering and tests) -----

    pub fn is_turn_running(&self) -> bool {
        self.turn_running
    }

    pub fn composer_text(&self) -> String {
        self.composer.text()
    }

    pub fn queued(&self) -> impl Iterator<Item = &str> {
        self.queued.iter().map(String::as_str)
    }

    pub fn mode(&self) -> PermissionMode {
        self.status.mode
    }

    pub fn status(&self) -> &StatusState {
        &self.status
    }

    pub fn picker(&self) -> Option<&Picker> {
        self.picker.as_ref()
    }

    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    pub fn permission_prompt(&self) -> Option<&PermissionPrompt> {
        self.layers.iter().rev().find_map(|l| match l {
            Layer::Permission(p) => Some(p),
            _ => None,
        })
    }

    pub(crate) fn permission_prompt_mut(&mut self) -> Option<&mut PermissionPrompt> {
        self.layers.iter_mut().rev().find_map(|l| match l {
            Layer::Permission(p) => Some(p),
            _ => None,
        })
    }

    pub fn is_session_diff_open(&self) -> bool {
        matches!(self.layers.last(), Some(Layer::SessionDiff(_)))
    }

    /// The files changed in this session (what `/diff` shows).
    pub fn session_changes(&self) -> &SessionChanges {
        &self.changes
    }

    pub fn is_transcript_open(&self) -> bool {
        matches!(self.layers.last(), Some(Layer::Transcript(_)))
    }

    /// The summary printed after exit.
    pub fn exit_summary(&self) -> String {
        self.status.exit_summary()
    }

    /// What the event loop must do because of the events folded in since the last call.
    pub fn take_actions(&mut self) -> Vec<AppAction> {
        std::mem::take(&mut self.pending)
    }

    /// Whether something changed since the last draw.
    pub fn needs_redraw(&self) -> bool {
        self.dirty || self.conversation.is_dirty()
    }

    pub(crate) fn mark_drawn(&mut self) {
        self.dirty = false;
    }

    /// Force a full redraw (after resume, resize).
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// The core's event channel closed: nothing will finish the turn or answer prompts.
    pub fn core_stopped(&mut self) {
        self.turn_running = false;
        self.status.working_since = None;
        self.layers.retain(|l| !matches!(l, Layer::Permission(_)));
        self.push_notice(
            NoticeKind::Error,
            "The agent stopped. Quit with Ctrl+D and start again.",
        );
    }

    /// Show an inline notice in the conversation.
    pub fn push_notice(&mut self, kind: NoticeKind, text: &str) {
        self.dirty = true;
        self.conversation.push_notice(kind, text);
    }

    /// Advance animations; true when the screen must be redrawn.
    pub fn tick(&mut self, now: Instant) -> bool {
        let changed = self.conversation.tick(now) || self.status.working_since.is_some();
        self.dirty |= changed;
        changed
    }

    /// Whether anything animates (spinners, elapsed time), so the loop keeps a slow tick.
    pub fn is_animating(&self) -> bool {
        self.status.working_since.is_some()
    }

    // ----- input -----

    /// Handle one input event; returns what the event loop must do.
    pub fn handle_input(&mut self, input: InputEvent) -> Vec<AppAction> {
        self.dirty = true;
        match input {
            InputEvent::Resize { .. } => Vec::new(),
            InputEvent::ScrollUp => {
                self.active_scroll().scroll_up(WHEEL_LINES);
                Vec::new()
            }
            InputEvent::ScrollDown => {
                self.active_scroll().scroll_down(WHEEL_LINES);
                Vec::new()
            }
            InputEvent::Paste(text) => {
                match self.layers.last_mut() {
                    None => {
                        self.composer.paste(&text);
                        return self.refresh_picker();
                    }
                    Some(Layer::Permission(p)) => p.paste(&text),
                    Some(Layer::Transcript(_) | Layer::SessionDiff(_)) => {}
                }
                Vec::new()
            }
            InputEvent::Key(key) => self.handle_key(key),
        }
    }

    fn active_scroll(&mut self) -> &mut ScrollState {
        match self.layers.last_mut() {
            Some(Layer::Transcript(t)) => &mut t.scroll,
            _ => &mut self.scroll,
        }
    }

    /// A key: looked up in the keymap once, offered to the overlays top-down (the layers, then
    /// the picker on the composer), and what none of them used goes to the composer and the
    /// global bindings.
    fn handle_key(&mut self, key: KeyInput) -> Vec<AppAction> {
        let keys = keymap::resolve(key);
        let global = keys.app(Context::Global);
        if global != Some(Action::Cancel) {
            self.esc_at = None;
        }
        if global != Some(Action::CtrlC) {
            self.quit_armed = false;
            self.status.hint = None;
        }
        if let Some(actions) = self.offer_to_layers(&keys) {
            return actions;
        }
        if self.layers.is_empty() && self.composer.is_searching() {
            if key == KeyInput::ctrl('r') {
                self.composer.search_step();
                return Vec::new();
            }
            if global != Some(Action::CtrlC) {
                self.composer.search_key(key);
                return Vec::new();
            }
        }
        if self.layers.is_empty()
            && let Some(actions) = self.offer_to_picker(&keys)
        {
            return actions;
        }
        let composer_action = if self.layers.is_empty() {
            keys.app(Context::Composer)
        } else {
            None
        };
        match composer_action.or(global) {
            Some(action) => self.run_action(action, key),
            None if self.layers.is_empty() => {
                self.composer.edit(key);
                self.refresh_picker()
            }
            None => Vec::new(),
        }
    }

    /// Offer a key to the layers, top first. `Some` when one used it.
    fn offer_to_layers(&mut self, keys: &Keys) -> Option<Vec<AppAction>> {
        for i in (0..self.layers.len()).rev() {
            let overlay = self.layers[i].overlay();
            let modal = overlay.modal();
            match overlay.handle_key(keys) {
                Outcome::Ignored if modal => return None,
                Outcome::Ignored => continue,
                Outcome::Consumed => {}
                Outcome::Close => {
                    self.layers.remove(i);
                }
                Outcome::Message(message) => return Some(self.overlay_message(message)),
            }
            self.close_answered_prompt();
            return Some(Vec::new());
        }
        None
    }

    /// What only the App can do for an overlay.
    fn overlay_message(&mut self, message: Message) -> Vec<AppAction> {
        self.close_answered_prompt();
        match message {
            Message::Decided {
                op,
                call_id,
                allowed,
            } => {
                self.send(op);
                self.conversation.permission_resolved(&call_id, allowed);
                Vec::new()
            }
            Message::Edit {
                request_id,
                path,
                content,
            } => vec![AppAction::EditInEditor {
                request_id,
                path,
                content,
            }],
            Message::Picked { item, enter } => self.picked(item, enter).unwrap_or_default(),
        }
    }

    fn run_action(&mut self, action: Action, key: KeyInput) -> Vec<AppAction> {
        match action {
            Action::Submit => return self.submit(),
            Action::Newline => self.composer.insert_newline(),
            Action::HistoryPrev => {
                if !self.composer.history_prev() {
                    self.composer.edit(key);
                }
            }
            Action::HistoryNext => {
                if !self.composer.history_next() {
                    self.composer.edit(key);
                }
            }
            Action::HistorySearch => self.composer.search_step(),
            Action::Cancel => {
                if self.picker.take().is_some() {
                    self.esc_at = None;
                } else if self.turn_running {
                    self.interrupt();
                } else if self.composer.is_empty() && self.layers.is_empty() {
                    self.esc_on_empty(Instant::now());
                }
            }
            Action::CtrlC => return self.ctrl_c(),
            Action::QuitIfEmpty => {
                if self.composer.is_empty() {
                    return vec![AppAction::Quit];
                }
                self.composer.edit(key);
            }
            Action::Suspend => return vec![AppAction::Suspend],
            Action::Repaint => return vec![AppAction::Repaint],
            Action::CycleMode => {
                let next = self.status.mode.next_in_cycle(self.bypass_allowed);
                self.set_mode(next);
            }
            Action::PageUp => self.active_scroll().page_up(),
            Action::PageDown => self.active_scroll().page_down(),
            Action::ScrollTop => self.active_scroll().to_top(),
            Action::ScrollBottom => self.active_scroll().to_bottom(),
            Action::ToggleTranscript => self.toggle_transcript(),
            Action::ToggleTodos => self.todos_shown = !self.todos_shown,
            Action::ToggleExpanded => self.conversation.toggle_expanded(),
            Action::FocusPrev => self.conversation.focus_prev(),
            Action::FocusNext => self.conversation.focus_next(),
        }
        Vec::new()
    }

    fn ctrl_c(&mut self) -> Vec<AppAction> {
        if self.turn_running {
            self.interrupt();
            return Vec::new();
        }
        if self.composer.is_searching() || !self.composer.is_empty() {
            self.composer.clear();
            self.picker = None;
            return Vec::new();
        }
        if self.quit_armed {
            return vec![AppAction::Quit];
        }
        self.quit_armed = true;
        self.status.hint = Some("Press Ctrl+C again to quit".into());
        Vec::new()
    }

    /// Stop the running turn. Queued prompts come back into the composer for editing rather
    /// than going out on their own after a stop the person asked for.
    fn interrupt(&mut self) {
        self.send(Op::Interrupt);
        if self.queued.is_empty() {
            return;
        }
        let mut parts: Vec<String> = self.queued.drain(..).collect();
        if !self.composer.is_empty() {
            parts.push(self.composer.text());
        }
        self.composer.set_text(&parts.join("\n"));
    }

    fn toggle_transcript(&mut self) {
        if self.is_transcript_open() {
            self.layers.pop();
        } else {
            self.picker = None;
            self.layers.push(Layer::Transcript(Transcript::default()));
        }
    }

    fn set_mode(&mut self, mode: PermissionMode) {
        self.status.mode = mode;
        self.send(Op::SetMode { mode });
    }

    fn send(&mut self, op: Op) {
        if self.ops.send(op).is_err() {
            self.conversation
                .push_notice(NoticeKind::Error, "the agent has stopped; quit and restart");
        }
    }

    /// Ask the session's host for something (its answer comes as a core event).
    pub fn send_host(&mut self, op: crate::protocol::HostOp) {
        self.send(Op::Host(op));
    }

    /// The prompt given on the command line: sent as soon as the app starts.
    pub fn send_initial_prompt(&mut self, text: String) {
        self.send_prompt(text);
    }

    fn send_prompt(&mut self, text: String) {
        self.conversation.push_user(&text);
        self.scroll.to_bottom();
        self.turn_running = true;
        self.status.working_since = Some(Instant::now());
        self.send(Op::Submit { text });
    }
}

mod asks;
mod events;
mod lsp;
mod mcp;
mod permission;
mod pickers;
mod rewind;
mod submit;
mod tasks;

#[cfg(test)]
mod lsp_tests;
#[cfg(test)]
mod picker_tests;
#[cfg(test)]
mod rewind_tests;
#[cfg(test)]
pub(crate) mod tests;
