//! What the app knows of the session it shows: the core's facts (the session's info, mode,
//! model and usage, which the status line draws), the project directory (paths in prompts and
//! notices are shown relative to it), the files changed in the session (what `/diff` shows)
//! and the background agents (`/tasks`).
//!
//! Invariants: bypassPermissions is offered (Shift+Tab, `/mode`) only when the session started
//! in it; `/diff` lists a file by its path under the project directory, as the core last
//! reported the directory.

use std::path::{Path, PathBuf};

use crate::protocol::{CommandInfo, Display, Event, PermissionMode};
use crate::tui::session_diff::SessionChanges;
use crate::tui::status::{Header, StatusState};
use crate::tui::tasks::BackgroundTasks;

pub(crate) struct SessionFacts {
    /// The status line's model: mode, usage, the session's info, transient hints.
    pub(crate) status: StatusState,
    pub(crate) header: Header,
    /// The project directory.
    pub(crate) cwd: PathBuf,
    /// What `/diff` shows.
    pub(crate) changes: SessionChanges,
    /// The background agents, for `/tasks`.
    pub(crate) tasks: BackgroundTasks,
    /// Whether Shift+Tab may cycle into bypassPermissions (only when started in it).
    bypass_allowed: bool,
}

impl SessionFacts {
    pub fn new(cwd: PathBuf, bypass_allowed: bool) -> SessionFacts {
        SessionFacts {
            status: StatusState::default(),
            header: Header::for_dir(&cwd),
            cwd,
            changes: SessionChanges::default(),
            tasks: BackgroundTasks::default(),
            bypass_allowed,
        }
    }

    /// Fold in what a core event says about the session. Returns a line to tell the person
    /// (the model changed).
    pub fn apply(&mut self, event: &Event) -> Option<String> {
        match event {
            Event::ToolCallFinished {
                is_error: false,
                display:
                    Display::Diff {
                        path,
                        before,
                        after,
                    },
                ..
            } => {
                let path = self.relative(path);
                self.changes.record(&path, before, after);
            }
            Event::SessionConfigured(info) => {
                self.cwd = info.cwd.clone();
                self.status.mode = info.mode;
                self.bypass_allowed |= info.mode == PermissionMode::BypassPermissions;
                self.header = Header::for_dir(&info.cwd);
                self.status.session = Some(info.clone());
            }
            Event::Usage {
                last,
                total,
                total_cost_usd,
                context_window,
                model,
            } => {
                self.status.add_usage(model, last, *total_cost_usd);
                self.status.last = *last;
                self.status.total = *total;
                self.status.cost_usd = *total_cost_usd;
                self.status.context_window = *context_window;
            }
            Event::ModeChanged { mode } => self.status.mode = *mode,
            Event::ModelChanged { model, label } => {
                if let Some(info) = self.status.session.as_mut() {
                    info.model = model.clone();
                    info.model_label = label.clone();
                }
                let shown = if label.is_empty() { model } else { label };
                return Some(format!("Model: {shown}"));
            }
            // `/diff` shows what the files are now, not what the rewind undid.
            Event::Rewound { .. } => self.changes.reread(&self.cwd),
            _ => {}
        }
        None
    }

    pub fn mode(&self) -> PermissionMode {
        self.status.mode
    }

    /// The mode after the current one in Shift+Tab's cycle.
    pub fn next_mode(&self) -> PermissionMode {
        self.status.mode.next_in_cycle(self.bypass_allowed)
    }

    /// Whether the person may switch to `mode`.
    pub fn allows(&self, mode: PermissionMode) -> bool {
        mode != PermissionMode::BypassPermissions || self.bypass_allowed
    }

    /// `path` as shown: relative to the project directory when under it.
    pub fn relative(&self, path: &Path) -> PathBuf {
        crate::tui::prompt::relative(path, &self.cwd)
    }

    /// The person's own slash commands, as the core announced them.
    pub fn custom_commands(&self) -> &[CommandInfo] {
        self.status
            .session
            .as_ref()
            .map_or(&[], |s| s.commands.as_slice())
    }
}
