//! The conversation view: the list of cells (user messages, assistant Markdown, thinking, tool
//! calls, notices) built from core [`Event`]s, and its rendering into a buffer.
//!
//! It owns no terminal and no input handling: the app feeds it events and keys' effects (focus,
//! expand, scroll through [`ScrollState`]) and asks it to draw into a `Rect`. Invariants: a frame
//! lays out only the cells the scroll position walks over (each cell caches its wrapped lines per
//! width), so the cost of a frame does not grow with the transcript; streamed text is parsed
//! once per completed block; nothing here blocks (highlighting runs on its own thread).

mod agent;
#[cfg(test)]
mod agent_snapshot_tests;
mod assistant;
mod body;
mod cell;
mod layout;
mod scroll;
#[cfg(test)]
mod snapshot_tests;
mod tool;
mod view;
pub mod wrap;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::protocol::{Display, Event, FileChange, HistoryItem, SearchMatch, TurnEnd};
use crate::tui::highlight::Highlighter;
use crate::tui::theme::Theme;
use assistant::AssistantCell;
pub use cell::NoticeKind;
use cell::{Cell, CellKind, Compaction, ThinkingCell};
pub use scroll::{Position, ScrollState};
use tool::{ToolCell, ToolStatus};

/// The conversation: cells plus what is needed to lay them out.
pub struct Conversation {
    cells: Vec<Cell>,
    theme: Theme,
    highlighter: Highlighter,
    /// Tool cells by call id.
    calls: HashMap<String, usize>,
    /// Sub-agents' calls (nested ones too), by call id: the Agent call cell they show in.
    children: HashMap<String, usize>,
    /// The file each file tool call works on (from its input), by cell index.
    files: Vec<(PathBuf, usize)>,
    /// The assistant cell receiving text deltas, and the thinking cell receiving thinking.
    open_text: Option<usize>,
    open_thinking: Option<usize>,
    /// Whether text arrived as deltas since the last whole message (else the message is shown).
    streamed_text: bool,
    /// Cells opened by text or thinking deltas since the last whole message: what a retry that
    /// discards its partial answer removes.
    partial_cells: Vec<usize>,
    /// Indices of tool cells still waiting or running (ticked for spinners).
    active: Vec<usize>,
    focus: Option<usize>,
    /// The first and last cell the last render drew (`usize::MAX` before any): the turn Ctrl+O
    /// acts on is the one of the last tool cell on screen.
    drawn: (usize, usize),
    /// Scroll the focused cell into view at the next render (focus just moved).
    reveal_focus: bool,
    dirty: bool,
    /// Bumped whenever output is added (drives the "new output below" marker).
    output_version: u64,
    rendered_generation: u64,
    pending_visible: bool,
    /// The session's directory: paths under it are shown relative to it.
    cwd: Option<PathBuf>,
}

impl Conversation {
    pub fn new(highlighter: Highlighter) -> Conversation {
        Conversation::with_theme(highlighter, Theme::default())
    }

    pub fn with_theme(highlighter: Highlighter, theme: Theme) -> Conversation {
        Conversation {
            cells: Vec::new(),
            theme,
            highlighter,
            calls: HashMap::new(),
            children: HashMap::new(),
            files: Vec::new(),
            open_text: None,
            open_thinking: None,
            streamed_text: false,
            partial_cells: Vec::new(),
            active: Vec::new(),
            focus: None,
            drawn: (0, usize::MAX),
            reveal_focus: false,
            dirty: true,
            output_version: 0,
            rendered_generation: 0,
            pending_visible: false,
            cwd: None,
        }
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    fn push(&mut self, kind: CellKind) -> usize {
        self.cells.push(Cell::new(kind));
        self.changed();
        self.cells.len() - 1
    }

    fn changed(&mut self) {
        self.dirty = true;
        self.output_version = self.output_version.wrapping_add(1);
    }

    pub fn push_user(&mut self, text: &str) {
        self.close_streams();
        self.push(CellKind::User(text.to_string()));
    }

    pub fn push_notice(&mut self, kind: NoticeKind, text: &str) {
        self.push(CellKind::Notice(kind, text.to_string()));
    }

    pub fn clear(&mut self) {
        let (theme, highlighter) = (self.theme.clone(), self.highlighter.clone());
        let version = self.output_version;
        *self = Conversation::with_theme(highlighter, theme);
        self.output_version = version.wrapping_add(1);
    }

    /// Finish the open assistant and thinking cells: their text is whole.
    fn close_streams(&mut self) {
        for idx in [self.open_text.take(), self.open_thinking.take()]
            .into_iter()
            .flatten()
        {
            if let Some(cell) = self.cells.get_mut(idx) {
                match &mut cell.kind {
                    CellKind::Assistant(a) => a.finish(&self.theme),
                    CellKind::Thinking(t) => t.streaming = false,
                    _ => {}
                }
                cell.touch();
            }
        }
        self.dirty = true;
    }

    /// The open streaming cell if it is still the last one (else output came in between).
    fn open_last(&self, open: Option<usize>) -> Option<usize> {
        open.filter(|&i| i + 1 == self.cells.len())
    }

    fn text_delta(&mut self, text: &str) {
        if let Some(t) = self.open_thinking.take()
            && let Some(cell) = self.cells.get_mut(t)
        {
            if let CellKind::Thinking(th) = &mut cell.kind {
                th.streaming = false;
            }
            cell.touch();
        }
        let idx = match self.open_last(self.open_text) {
            Some(i) => i,
            None => {
                self.close_streams();
                let i = self.push(CellKind::Assistant(AssistantCell::new()));
                self.open_text = Some(i);
                self.partial_cells.push(i);
                i
            }
        };
        self.streamed_text = true;
        if let Some(cell) = self.cells.get_mut(idx) {
            if let CellKind::Assistant(a) = &mut cell.kind {
                a.push(text, &self.theme);
            }
            cell.touch();
        }
        self.changed();
    }

    fn thinking_delta(&mut self, text: &str) {
        let idx = match self.open_last(self.open_thinking) {
            Some(i) => i,
            None => {
                self.close_streams();
                let i = self.push(CellKind::Thinking(ThinkingCell {
                    text: String::new(),
                    streaming: true,
                }));
                self.open_thinking = Some(i);
                self.partial_cells.push(i);
                i
            }
        };
        if let Some(cell) = self.cells.get_mut(idx) {
            if let CellKind::Thinking(t) = &mut cell.kind {
                t.text.push_str(text);
            }
            cell.touch();
        }
        self.changed();
    }

    /// Remove the text and thinking the current answer streamed so far: the request is being
    /// made again and that answer is not part of the conversation. Only trailing cells go (a
    /// streamed cell with something else after it stays, closed), so no other index moves.
    fn discard_partial(&mut self) {
        self.open_text = None;
        self.open_thinking = None;
        self.streamed_text = false;
        let partial = std::mem::take(&mut self.partial_cells);
        while let Some(last) = self.cells.len().checked_sub(1)
            && partial.contains(&last)
        {
            self.cells.pop();
        }
        if self.focus.is_some_and(|f| f >= self.cells.len()) {
            self.focus = None;
        }
        self.close_streams();
        self.changed();
    }

    fn tool_cell(&mut self, call_id: &str) -> Option<&mut ToolCell> {
        let idx = *self.calls.get(call_id)?;
        let cell = self.cells.get_mut(idx)?;
        cell.touch();
        match &mut cell.kind {
            CellKind::Tool(t) => Some(t),
            _ => None,
        }
    }

    fn start_tool(&mut self, call_id: &str, title: &str) -> usize {
        if let Some(&idx) = self.calls.get(call_id) {
            return idx;
        }
        self.close_streams();
        let idx = self.push(CellKind::Tool(Box::new(ToolCell::new(
            title,
            Instant::now(),
        ))));
        self.calls.insert(call_id.to_string(), idx);
        self.active.push(idx);
        idx
    }

    /// Fold a core event into the cells.
    pub fn apply_event(&mut self, event: &Event) {
        match event {
            Event::TurnStarted { .. } => {
                self.streamed_text = false;
                self.partial_cells.clear();
            }
            Event::TextDelta { text } => self.text_delta(text),
            Event::ThinkingDelta { text } => self.thinking_delta(text),
            Event::AssistantMessage { content, .. } => {
                self.partial_cells.clear();
                let streamed = std::mem::take(&mut self.streamed_text);
                self.close_streams();
                if !streamed {
                    let text = message_text(content);
                    if !text.trim().is_empty() {
                        let mut a = AssistantCell::new();
                        a.push(&text, &self.theme);
                        a.finish(&self.theme);
                        self.push(CellKind::Assistant(a));
                    }
                }
            }
            Event::ToolCallStarted {
                call_id,
                title,
                input,
                ..
            } => {
                let idx = self.start_tool(call_id, title);
                self.note_file(idx, input);
            }
            Event::ToolCallProgress { call_id, output } => {
                let theme = self.theme.clone();
                if let Some(t) = self.tool_cell(call_id) {
                    // Output means the call was allowed and runs.
                    if t.status == ToolStatus::Waiting {
                        t.resume(Instant::now());
                    }
                    t.set_progress(output, &theme);
                }
                self.changed();
            }
            Event::PermissionRequest(req)
            | Event::PermissionRequestUpdated { request: req, .. }
                if self.children.contains_key(&req.call_id) =>
            {
                self.child_waiting(&req.call_id, true);
            }
            Event::PermissionRequest(req)
            | Event::PermissionRequestUpdated { request: req, .. } => {
                let idx = self.start_tool(&req.call_id, &req.title);
                self.note_file(idx, &req.input);
                if let Some(t) = self.tool_cell(&req.call_id) {
                    t.status = ToolStatus::Waiting;
                    t.asks = matches!(req.kind, crate::protocol::RequestKind::Questions { .. });
                }
                self.changed();
            }
            Event::ToolCallFinished {
                call_id,
                is_error,
                display,
                outcome,
            } => {
                let theme = self.theme.clone();
                let display = match &self.cwd {
                    Some(cwd) => relative_display(display, cwd),
                    None => display.clone(),
                };
                if let Some(t) = self.tool_cell(call_id) {
                    t.finish(*is_error, &display, *outcome, &theme);
                }
                self.changed();
            }
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
                discarded,
            } => {
                if *discarded {
                    self.discard_partial();
                }
                let secs = delay_ms.div_ceil(1000);
                let dropped = if *discarded {
                    "; the partial answer was dropped"
                } else {
                    ""
                };
                let text =
                    format!("{reason}, retrying in {secs} s ({attempt}/{max_attempts}){dropped}");
                self.push_notice(NoticeKind::Warning, &text);
            }
            Event::TurnFinished { end, .. } => {
                self.close_streams();
                self.end_active_tools();
                match end {
                    TurnEnd::Interrupted => self.push_notice(NoticeKind::Warning, "Interrupted"),
                    TurnEnd::MaxTurns => self.push_notice(
                        NoticeKind::Warning,
                        "Stopped: reached the maximum number of turns",
                    ),
                    TurnEnd::Completed | TurnEnd::Failed => {}
                }
            }
            Event::ToolDiagnostics {
                call_id,
                problems,
                new,
                ..
            } => {
                if let Some(&idx) = self.calls.get(call_id)
                    && let Some(cell) = self.cells.get_mut(idx)
                    && let CellKind::Tool(t) = &mut cell.kind
                {
                    t.set_diagnostics(problems, *new);
                    cell.touch();
                }
                self.changed();
            }
            Event::FileChangedOnDisk { path, change } => self.file_changed_on_disk(path, *change),
            Event::Notice { message } => self.push_notice(NoticeKind::Info, message),
            // The app folds the host's answers in.
            Event::Host(_) => {}
            Event::Error { message } => self.push_notice(NoticeKind::Error, message),
            Event::SessionConfigured(info) => self.cwd = Some(info.cwd.clone()),
            Event::HistoryRestored { items } => self.restore(items),
            Event::Rewound { summary, .. } => self.push_notice(NoticeKind::Info, summary),
            Event::Compacted {
                trigger,
                pre_tokens,
                summary,
            } => {
                // `auto`: the context window was nearly full.
                let why = if trigger == "auto" {
                    "auto"
                } else {
                    "/compact"
                };
                self.close_streams();
                self.push(CellKind::Compacted(Compaction {
                    summary: summary.clone(),
                    why: Some(format!("{why}, ~{}k tokens", pre_tokens / 1000)),
                }));
            }
            Event::Subagent {
                parent_call_id,
                event,
                ..
            } => self.subagent_event(parent_call_id, event),
            Event::BackgroundTask(task) => self.background_task(task),
            Event::ToolResults { .. }
            | Event::ToolCallRunning { .. }
            | Event::TaskOutput { .. }
            | Event::Usage { .. }
            | Event::ContextReport { .. }
            | Event::ModeChanged { .. }
            | Event::ModelChanged { .. }
            | Event::RewindPoints { .. }
            | Event::RewindNeedsConfirmation { .. }
            | Event::TodosUpdated { .. } => {}
        }
    }

    /// A sub-agent's event: into the cell of the Agent call that started it (the outermost
    /// one, for a nested sub-agent).
    fn subagent_event(&mut self, parent_call_id: &str, event: &Event) {
        let Some(idx) = self
            .calls
            .get(parent_call_id)
            .or_else(|| self.children.get(parent_call_id))
            .copied()
        else {
            return;
        };
        let mut inner = event;
        while let Event::Subagent { event, .. } = inner {
            inner = event;
        }
        if let Event::ToolCallStarted { call_id, .. } = inner {
            self.children.insert(call_id.clone(), idx);
        }
        let theme = self.theme.clone();
        if let Some(cell) = self.cells.get_mut(idx)
            && let CellKind::Tool(t) = &mut cell.kind
        {
            t.agent
                .get_or_insert_with(Default::default)
                .apply(event, &theme);
            cell.touch();
        }
        self.changed();
    }

    /// A background agent or shell started or ended: into the cell of the call that started
    /// it, which follows it in place.
    fn background_task(&mut self, task: &crate::protocol::BackgroundTask) {
        let theme = self.theme.clone();
        if let Some(call_id) = &task.call_id
            && let Some(t) = self.tool_cell(call_id)
        {
            t.set_background(task, &theme);
        }
        self.changed();
    }

    /// A sub-agent's call `call_id` waits for the person's answer, or got it.
    fn child_waiting(&mut self, call_id: &str, waiting: bool) {
        let Some(&idx) = self.children.get(call_id) else {
            return;
        };
        if let Some(cell) = self.cells.get_mut(idx)
            && let CellKind::Tool(t) = &mut cell.kind
            && let Some(agent) = &mut t.agent
        {
            agent.set_waiting(call_id, waiting);
            cell.touch();
        }
        self.changed();
    }

    /// Show a resumed conversation in place of what is shown: prompts, answers, and each tool
    /// call as a finished cell.
    fn restore(&mut self, items: &[HistoryItem]) {
        let cwd = self.cwd.take();
        self.clear();
        self.cwd = cwd;
        let theme = self.theme.clone();
        for item in items {
            match item {
                HistoryItem::Prompt { text } => self.push_user(text),
                HistoryItem::Answer { text } => {
                    let mut a = AssistantCell::new();
                    a.push(text, &theme);
                    a.finish(&theme);
                    self.push(CellKind::Assistant(a));
                }
                HistoryItem::Tool {
                    call_id,
                    title,
                    is_error,
                    display,
                    outcome,
                } => {
                    self.start_tool(call_id, title);
                    let display = match (display, &self.cwd) {
                        (Some(d), Some(cwd)) => relative_display(d, cwd),
                        (Some(d), None) => d.clone(),
                        (None, _) => Display::Empty,
                    };
                    if let Some(t) = self.tool_cell(call_id) {
                        t.finish(*is_error, &display, *outcome, &theme);
                    }
                }
                HistoryItem::Compacted { summary } => {
                    self.close_streams();
                    self.push(CellKind::Compacted(Compaction {
                        summary: summary.clone(),
                        why: None,
                    }));
                }
            }
        }
        self.end_active_tools();
    }

    /// Remember which file a file tool's cell is about (`file_path`, `notebook_path`).
    fn note_file(&mut self, idx: usize, input: &serde_json::Value) {
        let path = ["file_path", "notebook_path"]
            .iter()
            .find_map(|k| input.get(*k).and_then(serde_json::Value::as_str));
        if let Some(path) = path
            && !self
                .files
                .iter()
                .any(|(p, i)| *i == idx && p == Path::new(path))
        {
            self.files.push((PathBuf::from(path), idx));
        }
    }

    /// `path` (as the person should read it, usually project-relative) changed outside cairn:
    /// an inline notice, and the tool cells that worked on that file are marked.
    pub fn file_changed_on_disk(&mut self, path: &Path, change: FileChange) {
        let shown = path.display();
        let text = match change {
            FileChange::Modified => format!(
                "{shown} changed on disk — cairn will have the model re-read before editing"
            ),
            FileChange::Deleted => format!(
                "{shown} was deleted on disk — cairn will have the model re-read before editing"
            ),
        };
        let hits: Vec<usize> = self
            .files
            .iter()
            .filter(|(p, _)| p.ends_with(path) || path.ends_with(p))
            .map(|(_, i)| *i)
            .collect();
        for idx in hits {
            if let Some(cell) = self.cells.get_mut(idx)
                && let CellKind::Tool(t) = &mut cell.kind
            {
                t.changed_on_disk = true;
                cell.touch();
            }
        }
        self.push_notice(NoticeKind::Warning, &text);
    }

    /// The person answered the permission prompt of `call_id`: an allowed call shows as
    /// running from now (a denied one keeps waiting until its `ToolCallFinished` says denied).
    pub fn permission_resolved(&mut self, call_id: &str, allowed: bool) {
        if !allowed {
            return;
        }
        if self.children.contains_key(call_id) {
            self.child_waiting(call_id, false);
            return;
        }
        if let Some(t) = self.tool_cell(call_id)
            && t.status == ToolStatus::Waiting
        {
            t.resume(Instant::now());
        }
        self.dirty = true;
    }

    /// Tools still waiting or running when a turn ends were cut short.
    fn end_active_tools(&mut self) {
        for idx in std::mem::take(&mut self.active) {
            if let Some(cell) = self.cells.get_mut(idx)
                && let CellKind::Tool(t) = &mut cell.kind
                && t.is_active()
            {
                t.status = ToolStatus::Interrupted;
                if let Some(agent) = &mut t.agent {
                    agent.interrupt();
                }
                cell.touch();
                self.dirty = true;
            }
        }
    }

    /// Advance spinners and elapsed times; true if something visible changed.
    pub fn tick(&mut self, now: Instant) -> bool {
        let mut changed = false;
        let cells = &mut self.cells;
        self.active.retain(|&idx| {
            let Some(cell) = cells.get_mut(idx) else {
                return false;
            };
            let CellKind::Tool(t) = &mut cell.kind else {
                return false;
            };
            if !t.is_active() {
                return false;
            }
            if t.advance(now) {
                cell.touch();
                changed = true;
            }
            true
        });
        self.dirty |= changed;
        changed
    }

    /// The raw Markdown of the last assistant message (for /copy).
    /// The texts of the notices, oldest first.
    pub fn notices(&self) -> impl Iterator<Item = &str> {
        self.cells.iter().filter_map(|c| match &c.kind {
            CellKind::Notice(_, text) => Some(text.as_str()),
            _ => None,
        })
    }

    pub fn last_answer(&self) -> Option<String> {
        self.cells.iter().rev().find_map(|c| match &c.kind {
            CellKind::Assistant(a) if !a.text().trim().is_empty() => Some(a.text().to_string()),
            _ => None,
        })
    }
}

/// The text blocks of an assistant message's content (a string or a list of content blocks).
pub(crate) fn message_text(content: &serde_json::Value) -> String {
    match content {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(|t| t.as_str()) == Some("text"))
            .filter_map(|b| b.get("text").and_then(|t| t.as_str()))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

/// `display` with paths under `cwd` made relative to it, so tool output reads like the
/// project (`src/main.rs:12`) rather than like the machine (`/home/me/work/proj/src/main.rs:12`).
fn relative_display(display: &Display, cwd: &Path) -> Display {
    let rel = |p: &PathBuf| match p.strip_prefix(cwd) {
        Ok(r) if !r.as_os_str().is_empty() => r.to_path_buf(),
        _ => p.clone(),
    };
    match display {
        Display::FileList { files, more } => Display::FileList {
            files: files.iter().map(rel).collect(),
            more: *more,
        },
        Display::Matches {
            pattern,
            matches,
            more,
        } => Display::Matches {
            pattern: pattern.clone(),
            matches: matches
                .iter()
                .map(|m| SearchMatch {
                    path: rel(&m.path),
                    ..m.clone()
                })
                .collect(),
            more: *more,
        },
        Display::Diff {
            path,
            before,
            after,
        } => Display::Diff {
            path: rel(path),
            before: before.clone(),
            after: after.clone(),
        },
        other => other.clone(),
    }
}
