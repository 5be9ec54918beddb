//! Folding what happens elsewhere into the App's state: the core's [`Event`]s (the
//! conversation, usage and mode in the status line, the session's changes for `/diff`, the
//! prompt queue when a turn ends), the host's answers in [`Event::Host`] (MCP servers, saved
//! sessions, memory files) and the [`AppEvent`]s of background work the event loop ran for the
//! app (a `!` shell command, the file index and its matches, the status-line command's line).

use std::time::Instant;

use super::{App, AppAction, AppEvent};
use crate::protocol::{Event, HostEvent, PermissionMode};
use crate::tui::conversation::NoticeKind;
use crate::tui::picker::PickerKind;
use crate::tui::status::Header;

impl App {
    // ----- core events -----

    /// Fold a core event into the state.
    pub fn handle_core_event(&mut self, event: &Event) {
        self.dirty = true;
        if let Event::FileChangedOnDisk { path, change } = event {
            self.file_changed_on_disk(path, *change);
            return;
        }
        self.conversation.apply_event(event);
        match event {
            Event::ToolCallFinished {
                is_error: false,
                display:
                    crate::protocol::Display::Diff {
                        path,
                        before,
                        after,
                    },
                ..
            } => {
                let path = crate::tui::prompt::relative(path, &self.cwd);
                self.changes.record(&path, before, after);
            }
            Event::SessionConfigured(info) => {
                self.cwd = info.cwd.clone();
                self.status.mode = info.mode;
                self.bypass_allowed |= info.mode == PermissionMode::BypassPermissions;
                self.header = Header::for_dir(&info.cwd);
                self.status.session = Some(info.clone());
            }
            Event::TurnStarted { .. } => {
                self.turn_running = true;
                self.status.working_since.get_or_insert_with(Instant::now);
            }
            Event::PermissionRequest(req) => self.permission_request(req),
            Event::PermissionRequestUpdated { request, note } => {
                self.permission_request_updated(request, note)
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
            Event::ContextReport {
                model,
                window,
                parts,
                last_used,
            } => {
                let text =
                    crate::tui::status::context_report(model, *window, parts, *last_used, 40);
                self.push_notice(NoticeKind::Info, &text);
            }
            Event::ModelChanged { model, label } => {
                if let Some(info) = self.status.session.as_mut() {
                    info.model = model.clone();
                    info.model_label = label.clone();
                }
                let shown = if label.is_empty() { model } else { label };
                self.push_notice(NoticeKind::Info, &format!("Model: {shown}"));
            }
            Event::TodosUpdated { todos } => self.todos = todos.clone(),
            Event::RewindPoints { points, undo } => self.rewind_points(points, undo),
            Event::RewindNeedsConfirmation {
                target,
                code,
                conversation,
                files,
            } => self.rewind_confirm(target, *code, *conversation, files),
            Event::Rewound { prompt, .. } => {
                // `/diff` shows what the files are now, not what the rewind undid.
                self.changes.reread(&self.cwd);
                if let Some(text) = prompt {
                    self.composer.set_text(text);
                }
                self.scroll.to_bottom();
            }
            Event::BackgroundTask(task) => {
                let idle = !self.turn_running;
                if let Some(text) = self.tasks.update(task, Instant::now(), idle) {
                    self.push_notice(NoticeKind::Info, &text);
                    self.drop_task_requests(&task.id);
                }
            }
            Event::Host(event) => self.host_event(event),
            Event::TurnFinished { .. } => {
                self.turn_running = false;
                self.status.working_since = None;
                self.drop_turn_requests();
                if let Some(next) = self.queued.pop_front() {
                    self.send_prompt(next);
                }
            }
            _ => {}
        }
    }

    /// The session's host answered.
    fn host_event(&mut self, event: &HostEvent) {
        match event {
            HostEvent::McpServers { servers } => self.mcp_listed(servers),
            HostEvent::McpAnswer { result } => self.mcp_answered(result),
            HostEvent::SavedSessions { sessions } => {
                self.saved_sessions_listed(sessions, std::time::SystemTime::now())
            }
            HostEvent::MemoryFile { path, content } => self.memory_file_read(path, content),
            HostEvent::MemoryWritten { path, note, result } => {
                self.memory_written(path, *note, result)
            }
            HostEvent::Plugins { plugins, problems } => {
                self.push_notice(NoticeKind::Info, &plugins_text(plugins, problems))
            }
            // The event loop runs the status line; the app has no use for the open sessions.
            HostEvent::StatusLine { .. } | HostEvent::OpenSessions { .. } => {}
            HostEvent::LspServers { servers } => self.lsp_listed(servers),
            HostEvent::LspAnswer { result } => self.lsp_answered(result),
            HostEvent::Diagnostics { files } => self.diagnostics_listed(files),
        }
    }

    // ----- background results -----

    pub fn handle_app_event(&mut self, event: AppEvent) -> Vec<AppAction> {
        self.dirty = true;
        match event {
            AppEvent::ShellFinished {
                command,
                output,
                exit_code,
            } => {
                let status = match exit_code {
                    Some(0) => String::new(),
                    Some(c) => format!("\n(exit code {c})"),
                    None => "\n(killed by a signal)".into(),
                };
                let kind = if exit_code == Some(0) {
                    NoticeKind::Info
                } else {
                    NoticeKind::Warning
                };
                let body = output.trim_end();
                let text = if body.is_empty() {
                    format!("$ {command}{status}")
                } else {
                    format!("$ {command}\n{body}{status}")
                };
                self.conversation.push_notice(kind, &text);
                Vec::new()
            }
            AppEvent::FilesListed(files) => {
                self.file_index.loading = false;
                self.file_index.files = Some(files);
                self.request_file_matches()
            }
            AppEvent::FilesMatched { request_id, paths } => {
                if let Some(p) = &mut self.picker
                    && p.kind == PickerKind::Files
                    && p.pending == Some(request_id)
                {
                    p.pending = None;
                    p.set_files(paths);
                }
                Vec::new()
            }
            AppEvent::StatusLine(line) => {
                self.status.command_line = Some(line.unwrap_or_default());
                Vec::new()
            }
        }
    }
}

/// `/plugin`'s notice: each plugin, its description and what it contributes.
fn plugins_text(plugins: &[crate::protocol::PluginInfo], problems: &[String]) -> String {
    let mut text = String::from(
        "Plugins (`cairn plugin list|install|enable|disable|uninstall`, --plugin-dir):",
    );
    if plugins.is_empty() {
        text.push_str("\n  none loaded");
    }
    for p in plugins {
        text.push_str(&format!("\n  {} {}", p.id, p.detail));
        if !p.description.is_empty() {
            text.push_str(&format!("\n    {}", p.description));
        }
        for line in &p.contributes {
            text.push_str(&format!("\n    {line}"));
        }
    }
    for problem in problems {
        text.push_str(&format!("\n  problem: {problem}"));
    }
    text
}
