//! The App: the TUI's state and the logic that changes it, with no terminal in sight. It is a
//! coordinator: each responsibility is a part with its own state and invariants, and the App
//! routes inputs and events to them and carries out what they ask of each other.
//!
//! The parts: the conversation view (the cells and their scroll position), [`Turn`] (a prompt
//! in flight, the queue behind it, the todo list, the "press again" keys), [`InputArea`] (the
//! composer, the picker over it and the `@` file index), [`Layers`] (the overlays: the
//! permission prompt, the transcript, `/diff`), [`SessionFacts`] (the session's info, mode and
//! usage, the project directory, `/diff`'s changes, the background agents), and what the app
//! asked of the session's host ([`asks::HostAsks`], the MCP servers, `/rewind`'s steps).
//!
//! Inputs come in as [`InputEvent`]s (keys, pastes, wheel), core
//! [`Event`](crate::protocol::Event)s and [`AppEvent`]s (results of background work the event
//! loop ran for us; both folded in by `events.rs`). Ops go to the core through the
//! channel given at construction; everything the event loop must do for the app (quit, suspend,
//! write OSC 52, run a shell command, walk or match files) comes back as [`AppAction`]s.
//! Rendering (`render.rs`) only reads this state.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;

use crate::protocol::{Op, PermissionMode};
use crate::tui::composer::history::History;
use crate::tui::conversation::{Conversation, NoticeKind, ScrollState};
use crate::tui::highlight::Highlighter;
use crate::tui::input::{InputEvent, KeyInput};
use crate::tui::keymap::{self, Action, Context, Keys};
use crate::tui::overlay::{Message, Outcome, Overlay, Transcript};
use crate::tui::picker::{Picker, PickerKind, commands};
use crate::tui::prompt::PermissionPrompt;
use crate::tui::session_diff::{SessionChanges, SessionDiff};
use crate::tui::status::{StatusState, mode_label};

pub(crate) use input_area::InputArea;
pub(crate) use layers::Layers;
pub(crate) use session::SessionFacts;
pub(crate) use turn::Turn;

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
    /// `/tasks`' live view of one background task.
    TaskView(crate::tui::task_view::TaskView),
}

impl Layer {
    pub(crate) fn overlay(&mut self) -> &mut dyn Overlay {
        match self {
            Layer::Transcript(t) => t,
            Layer::Permission(p) => p,
            Layer::SessionDiff(d) => d,
            Layer::TaskView(v) => v,
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

/// The whole TUI state: the parts, and what connects them.
pub struct App {
    pub(crate) conversation: Conversation,
    pub(crate) scroll: ScrollState,
    pub(crate) input: InputArea,
    pub(crate) layers: Layers,
    pub(crate) turn: Turn,
    pub(crate) session: SessionFacts,
    /// What the app asked of the session's host and waits for (and a `#` note's text).
    asks: asks::HostAsks,
    /// The session's MCP servers, for `/mcp`, approvals and the status row.
    pub(crate) mcp: mcp::McpView,
    /// Where `/rewind` is.
    rewind: rewind::RewindUi,
    /// Actions for the event loop that came of a core or host event ([`App::take_actions`]).
    pending: Vec<AppAction>,
    ops: UnboundedSender<Op>,
    dirty: bool,
    pub(crate) highlighter: Highlighter,
}

impl App {
    pub fn new(config: AppConfig, history: History, ops: UnboundedSender<Op>) -> App {
        App {
            conversation: Conversation::new(config.highlighter.clone()),
            scroll: ScrollState::default(),
            input: InputArea::new(history),
            layers: Layers::default(),
            turn: Turn::default(),
            session: SessionFacts::new(config.cwd, config.bypass_allowed),
            asks: asks::HostAsks::default(),
            mcp: mcp::McpView::default(),
            rewind: rewind::RewindUi::default(),
            pending: Vec::new(),
            ops,
            dirty: true,
            highlighter: config.highlighter,
        }
    }

    // ----- queries (for the event loop, rendering and tests) -----

    pub fn is_turn_running(&self) -> bool {
        self.turn.is_running()
    }

    pub fn composer_text(&self) -> String {
        self.input.composer.text()
    }

    pub fn queued(&self) -> impl Iterator<Item = &str> {
        self.turn.queued()
    }

    pub fn mode(&self) -> PermissionMode {
        self.session.mode()
    }

    pub fn status(&self) -> &StatusState {
        &self.session.status
    }

    pub fn picker(&self) -> Option<&Picker> {
        self.input.picker()
    }

    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    pub fn permission_prompt(&self) -> Option<&PermissionPrompt> {
        self.layers.permission_prompt()
    }

    pub fn is_session_diff_open(&self) -> bool {
        self.layers.is_session_diff_open()
    }

    /// The files changed in this session (what `/diff` shows).
    pub fn session_changes(&self) -> &SessionChanges {
        &self.session.changes
    }

    /// Whether `/tasks`' view of one task is open.
    pub fn is_task_view_open(&self) -> bool {
        self.layers.has_task_view()
    }

    pub fn is_transcript_open(&self) -> bool {
        self.layers.is_transcript_open()
    }

    /// The summary printed after exit.
    pub fn exit_summary(&self) -> String {
        self.session.status.exit_summary()
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
        self.turn.stopped();
        self.session.status.working_since = None;
        self.layers.drop_prompt();
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
        self.poll_task_view(now);
        let changed = self.conversation.tick(now) || self.is_animating();
        self.dirty |= changed;
        changed
    }

    /// Whether anything animates (spinners, elapsed time), so the loop keeps a slow tick.
    pub fn is_animating(&self) -> bool {
        self.session.status.working_since.is_some() || self.layers.has_task_view()
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
                if self.layers.paste(&text) {
                    return Vec::new();
                }
                self.input.composer.paste(&text);
                self.refresh_picker()
            }
            InputEvent::Key(key) => self.handle_key(key),
        }
    }

    fn active_scroll(&mut self) -> &mut ScrollState {
        match self.layers.transcript_scroll() {
            Some(scroll) => scroll,
            None => &mut self.scroll,
        }
    }

    /// A key: looked up in the keymap once, offered to the overlays top-down (the layers, then
    /// the picker on the composer), and what none of them used goes to the composer and the
    /// global bindings.
    fn handle_key(&mut self, key: KeyInput) -> Vec<AppAction> {
        let keys = keymap::resolve(key);
        let global = keys.app(Context::Global);
        self.turn.key(global);
        if global != Some(Action::CtrlC) {
            self.session.status.hint = None;
        }
        match self.layers.offer_key(&keys) {
            Some(layers::Offered::Used) => return Vec::new(),
            Some(layers::Offered::Message(message)) => return self.overlay_message(message),
            None => {}
        }
        let composer = self.layers.is_empty();
        if composer && self.input.search_key(key, global == Some(Action::CtrlC)) {
            return Vec::new();
        }
        if composer && let Some(actions) = self.offer_to_picker(&keys) {
            return actions;
        }
        let composer_action = if composer {
            keys.app(Context::Composer)
        } else {
            None
        };
        match composer_action.or(global) {
            Some(action) => self.run_action(action, key),
            // `?` on an empty composer lists the keys and commands, as the start screen says.
            None if composer
                && self.input.composer.is_empty()
                && key == KeyInput::plain(crate::tui::input::Key::Char('?')) =>
            {
                self.run_command(crate::tui::picker::commands::Command::Help, "")
            }
            None if composer => {
                self.input.composer.edit(key);
                self.refresh_picker()
            }
            None => Vec::new(),
        }
    }

    /// What only the App can do for an overlay.
    fn overlay_message(&mut self, message: Message) -> Vec<AppAction> {
        self.layers.close_answered_prompt();
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
            Message::StopTask { id } => {
                self.send(Op::StopTask { id });
                Vec::new()
            }
        }
    }

    fn run_action(&mut self, action: Action, key: KeyInput) -> Vec<AppAction> {
        let composer = &mut self.input.composer;
        match action {
            Action::Submit => return self.submit(),
            Action::Newline => composer.insert_newline(),
            Action::HistoryPrev => {
                if !composer.history_prev() {
                    composer.edit(key);
                }
            }
            Action::HistoryNext => {
                if !composer.history_next() {
                    composer.edit(key);
                }
            }
            Action::HistorySearch => composer.search_step(),
            Action::Cancel => {
                if self.input.close_picker().is_some() {
                    self.turn.esc_used();
                } else if self.turn.is_running() {
                    self.interrupt();
                } else if self.input.composer.is_empty() && self.layers.is_empty() {
                    self.esc_on_empty(Instant::now());
                }
            }
            Action::CtrlC => return self.ctrl_c(),
            Action::QuitIfEmpty => {
                if composer.is_empty() {
                    return vec![AppAction::Quit];
                }
                composer.edit(key);
            }
            Action::Suspend => return vec![AppAction::Suspend],
            Action::Repaint => return vec![AppAction::Repaint],
            Action::CycleMode => self.set_mode(self.session.next_mode()),
            Action::PageUp => self.active_scroll().page_up(),
            Action::PageDown => self.active_scroll().page_down(),
            Action::ScrollTop => self.active_scroll().to_top(),
            Action::ScrollBottom => self.active_scroll().to_bottom(),
            Action::ToggleTranscript => self.toggle_transcript(),
            Action::ToggleTodos => self.turn.toggle_todos(),
            Action::ToggleExpanded => self.conversation.toggle_expanded(),
            Action::FocusPrev => self.conversation.focus_prev(),
            Action::FocusNext => self.conversation.focus_next(),
        }
        Vec::new()
    }

    fn ctrl_c(&mut self) -> Vec<AppAction> {
        if self.turn.is_running() {
            self.interrupt();
            return Vec::new();
        }
        let composer = &self.input.composer;
        if composer.is_searching() || !composer.is_empty() {
            self.input.clear();
            return Vec::new();
        }
        if self.turn.ctrl_c_idle() {
            return vec![AppAction::Quit];
        }
        self.session.status.hint = Some("Press Ctrl+C again to quit".into());
        Vec::new()
    }

    /// Stop the running turn. Queued prompts come back into the composer for editing rather
    /// than going out on their own after a stop the person asked for.
    fn interrupt(&mut self) {
        self.send(Op::Interrupt);
        let mut parts = self.turn.take_queued();
        if parts.is_empty() {
            return;
        }
        let composer = &mut self.input.composer;
        if !composer.is_empty() {
            parts.push(composer.text());
        }
        composer.set_text(&parts.join("\n"));
    }

    fn toggle_transcript(&mut self) {
        if self.layers.toggle_transcript() {
            self.input.close_picker();
        }
    }

    fn set_mode(&mut self, mode: PermissionMode) {
        self.session.status.mode = mode;
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

    /// A prompt of the person's: out now, or queued behind the running turn.
    fn submit_prompt(&mut self, text: String) {
        if let Some(text) = self.turn.submit(text) {
            self.send_prompt(text);
        }
    }

    fn send_prompt(&mut self, text: String) {
        self.conversation.push_user(&text);
        self.scroll.to_bottom();
        self.turn.started();
        self.session.status.working_since = Some(Instant::now());
        self.send(Op::Submit { text });
    }
}

mod asks;
mod events;
mod input_area;
mod layers;
mod lsp;
mod mcp;
mod mcp_detail;
mod pickers;
mod rewind;
mod session;
mod submit;
mod tasks;
mod turn;

#[cfg(test)]
mod cells_tests;
#[cfg(test)]
mod dead_end_tests;
#[cfg(test)]
mod lsp_tests;
#[cfg(test)]
mod picker_tests;
#[cfg(test)]
mod rewind_tests;
#[cfg(test)]
mod tasks_tests;
#[cfg(test)]
pub(crate) mod tests;
