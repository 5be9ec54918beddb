//! The pickers' side of the app: opening, updating and closing the `/` and `@` pickers as the
//! word at the cursor changes, their keys, and the background file walk and match requests
//! (latest wins: results for an older request id are dropped); `/resume`'s list of saved
//! sessions and the memory files of `/memory` and `#`, which the session's host lists, reads
//! and writes (`Op::Host`).

use super::*;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::protocol::{HostOp, SavedSession};

use crate::tui::picker::PickerItem;

impl App {
    /// Offer a key to the open picker (see its [`Overlay`] impl). `Some` when it used it.
    pub(super) fn offer_to_picker(&mut self, keys: &Keys) -> Option<Vec<AppAction>> {
        match self.input.picker_mut()?.handle_key(keys) {
            Outcome::Ignored => None,
            Outcome::Consumed => Some(Vec::new()),
            Outcome::Close => {
                let kind = self.input.close_picker().map(|p| p.kind);
                // A `#` note whose file was not picked is dropped.
                self.asks.hold_note(None);
                if kind == Some(PickerKind::McpApproval) {
                    self.mcp_approval_postponed();
                }
                Some(Vec::new())
            }
            Outcome::Message(Message::Picked { item, enter }) => self.picked(item, enter),
            Outcome::Message(message) => Some(self.overlay_message(message)),
        }
    }

    /// Tab/Enter on the picker: it closes, and the item goes into the composer (Enter on a
    /// command runs it). Enter with nothing to pick is left for the composer: `None`.
    pub(super) fn picked(
        &mut self,
        item: Option<PickerItem>,
        enter: bool,
    ) -> Option<Vec<AppAction>> {
        let kind = self.input.close_picker()?.kind;
        let Some(item) = item else {
            return if enter { None } else { Some(Vec::new()) };
        };
        match kind {
            PickerKind::Commands if enter => {
                self.input.composer.clear();
                return Some(self.run_command_text(&item.label));
            }
            PickerKind::Commands | PickerKind::Files => self.input.insert_picked(kind, &item.label),
            PickerKind::Memory => self.save_memory_note(&item.detail),
            PickerKind::EditMemory => {
                let path = PathBuf::from(&item.detail);
                self.asks.reading(path.clone());
                self.send(Op::Host(HostOp::ReadMemoryFile { path }));
            }
            PickerKind::Model => self.send(Op::SetModel { model: item.label }),
            PickerKind::McpApproval => self.mcp_approval_picked(&item.label),
            PickerKind::McpServers => self.mcp_server_picked(&item.label),
            PickerKind::McpServer => self.mcp_detail_picked(&item.label),
            PickerKind::Rewind | PickerKind::RewindChoice | PickerKind::RewindConfirm => {
                self.rewind_picked(kind, &item)
            }
            PickerKind::Tasks => self.task_picked(&item),
            PickerKind::Session => {
                // The detail ends with the session's id.
                let id = item.detail.rsplit(' ').next().unwrap_or_default();
                if let Some(path) = self.asks.session_path(id) {
                    self.send(Op::Resume { path });
                }
            }
        }
        Some(Vec::new())
    }

    /// `#note` was sent (`Some`), or `/memory` (`None`): ask which memory file it is about.
    /// `/memory` lists the files loaded into this session first, then the standard ones not
    /// yet written; a note goes to one of the standard three.
    pub(super) fn ask_memory_target(&mut self, note: Option<String>) {
        let home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
        let mut targets = vec![
            (
                "Project memory".to_string(),
                self.session.cwd.join("CLAUDE.md"),
            ),
            (
                "Project memory, local".to_string(),
                self.session.cwd.join("CLAUDE.local.md"),
            ),
        ];
        if let Some(home) = home {
            targets.push(("User memory".to_string(), home.join(".claude/CLAUDE.md")));
        }
        if note.is_none() {
            let loaded: Vec<(String, PathBuf)> = self
                .session
                .status
                .session
                .as_ref()
                .map(|s| s.memory_files.clone())
                .unwrap_or_default();
            targets.retain(|(_, p)| !loaded.iter().any(|(_, l)| l == p));
            for (label, _) in &mut targets {
                label.push_str(" (new)");
            }
            let mut listed: Vec<(String, PathBuf)> = loaded
                .into_iter()
                .map(|(scope, path)| (format!("Loaded, {scope}"), path))
                .collect();
            listed.append(&mut targets);
            targets = listed;
        }
        let targets = targets
            .into_iter()
            .map(|(l, p)| (l, p.display().to_string()))
            .collect();
        let kind = match note {
            Some(_) => PickerKind::Memory,
            None => PickerKind::EditMemory,
        };
        self.asks.hold_note(note);
        self.input.open_picker(Picker::choices(kind, targets));
    }

    /// `/resume` (or `--resume` without an id): ask the host for the project's sessions; the
    /// picker opens when they come ([`App::saved_sessions_listed`]).
    pub fn ask_saved_sessions(&mut self) {
        self.asks.want_sessions();
        self.send(Op::Host(HostOp::ListSavedSessions));
    }

    /// The project's sessions, newest first, with when, how many prompts, the branch and the
    /// id; shown when `/resume` asked for them.
    pub fn saved_sessions_listed(&mut self, sessions: &[SavedSession], now: SystemTime) {
        let current = self
            .session
            .status
            .session
            .as_ref()
            .map(|s| s.session_id.as_str());
        let Some(offered) = self.asks.sessions_arrived(sessions, current) else {
            return;
        };
        let items: Vec<(String, String)> = offered.iter().map(|s| session_item(s, now)).collect();
        if items.is_empty() {
            self.conversation.push_notice(
                NoticeKind::Info,
                "There is no earlier session of this project to resume.",
            );
            return;
        }
        self.input
            .open_picker(Picker::choices(PickerKind::Session, items));
    }

    /// `/memory`'s editor returned: the host writes the file when its text changed.
    pub fn memory_edited(&mut self, path: &Path, before: &str, result: Result<String, String>) {
        let shown = path.display();
        match result {
            Ok(text) if text == before => self
                .conversation
                .push_notice(NoticeKind::Info, &format!("{shown} unchanged.")),
            Ok(content) => self.send(Op::Host(HostOp::WriteMemoryFile {
                path: path.to_path_buf(),
                content,
            })),
            Err(e) => self
                .conversation
                .push_notice(NoticeKind::Error, &format!("The editor failed: {e}")),
        }
    }

    /// The host has read the memory file `/memory` picked: edit it.
    pub(super) fn memory_file_read(&mut self, path: &Path, content: &Result<String, String>) {
        if !self.asks.read_arrived(path) {
            return;
        }
        match content {
            Ok(content) => self.pending.push(AppAction::EditMemoryFile {
                path: path.to_path_buf(),
                content: content.clone(),
            }),
            Err(e) => self.conversation.push_notice(
                NoticeKind::Error,
                &format!("Could not read {}: {e}", path.display()),
            ),
        }
    }

    /// The host wrote a memory file (`note`: added a `#` note to it), or could not.
    pub(super) fn memory_written(&mut self, path: &Path, note: bool, result: &Result<(), String>) {
        let shown = path.display();
        let (kind, message) = match (note, result) {
            (false, Ok(())) => (
                NoticeKind::Info,
                format!("Saved {shown}; memory files are read when a session starts."),
            ),
            (false, Err(e)) => (NoticeKind::Error, format!("Could not save {shown}: {e}")),
            (true, Ok(())) => (
                NoticeKind::Info,
                format!(
                    "Saved to {shown}. Memory files are read when a session starts: the model \
                     follows it from the next one."
                ),
            ),
            (true, Err(e)) => (NoticeKind::Error, format!("Could not save to {shown}: {e}")),
        };
        self.conversation.push_notice(kind, &message);
    }

    /// The pending `#` note goes to the memory file `path` (the host adds it).
    fn save_memory_note(&mut self, path: &str) {
        let Some(note) = self.asks.take_note() else {
            return;
        };
        self.send(Op::Host(HostOp::AddMemoryNote {
            path: PathBuf::from(path),
            note,
        }));
    }

    /// Open, update or close the picker from the text around the cursor.
    pub(super) fn refresh_picker(&mut self) -> Vec<AppAction> {
        let custom = self.session.custom_commands();
        self.input.refresh_picker(custom, &self.session.header.cwd)
    }
}

/// A session as the picker shows it: its first prompt, then when, how many prompts, the branch
/// and the id (last: picking reads it back).
pub(crate) fn session_item(s: &SavedSession, now: SystemTime) -> (String, String) {
    let age = now.duration_since(s.modified).unwrap_or_default().as_secs();
    let when = match age {
        0..60 => "just now".to_string(),
        60..3600 => format!("{} min ago", age / 60),
        3600..86_400 => format!("{} h ago", age / 3600),
        _ => format!("{} days ago", age / 86_400),
    };
    let prompts = match s.prompts {
        1 => "1 prompt".to_string(),
        n => format!("{n} prompts"),
    };
    let branch = s
        .branch
        .as_deref()
        .map_or(String::new(), |b| format!(" · {b}"));
    let label: String = s.first_prompt.chars().take(60).collect();
    (label, format!("{when} · {prompts}{branch} · {}", s.id))
}
