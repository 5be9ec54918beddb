//! Folding what happens elsewhere into the App's state: the core's [`Event`]s (the
//! conversation, usage and mode in the status line, the session's changes for `/diff`, the
//! prompt queue when a turn ends), the host's answers in [`Event::Host`] (MCP servers, saved
//! sessions, memory files) and the [`AppEvent`]s of background work the event loop ran for the
//! app (a `!` shell command, the file index and its matches, the status-line command's line).

use std::time::Instant;

use super::{App, AppAction, AppEvent};
use crate::protocol::{Event, HostEvent};
use crate::tui::conversation::NoticeKind;

impl App {
    // ----- core events -----

    /// Fold a core event into the state.
    pub fn handle_core_event(&mut self, event: &Event) {
        self.dirty = true;
        if let Event::FileChangedOnDisk { path, change } = event {
            // A notice and marked tool cells. (Open proposals for the file are planned again
            // by the core, which replaces their requests.)
            let rel = self.session.relative(path);
            self.conversation.file_changed_on_disk(&rel, *change);
            return;
        }
        self.conversation.apply_event(event);
        if let Some(text) = self.session.apply(event) {
            self.push_notice(NoticeKind::Info, &text);
        }
        match event {
            Event::TurnStarted { .. } => {
                self.turn.started();
                let status = &mut self.session.status;
                status.working_since.get_or_insert_with(Instant::now);
            }
            Event::PermissionRequest(req) => {
                let session = &self.session;
                let hl = &self.highlighter;
                self.layers.permission_request(req, &session.cwd, hl);
            }
            Event::PermissionRequestUpdated { request, note } => {
                let session = &self.session;
                let hl = &self.highlighter;
                self.layers
                    .permission_request_updated(request, note, &session.cwd, hl);
            }
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
            Event::TodosUpdated { todos } => self.turn.set_todos(todos),
            Event::RewindPoints { points, undo } => self.rewind_points(points, undo),
            Event::RewindNeedsConfirmation {
                target,
                code,
                conversation,
                files,
            } => self.rewind_confirm(target, *code, *conversation, files),
            Event::Rewound { prompt, .. } => {
                if let Some(text) = prompt {
                    self.input.composer.set_text(text);
                }
                self.scroll.to_bottom();
            }
            Event::BackgroundTask(task) => {
                let idle = !self.turn.is_running();
                let now = Instant::now();
                if let Some(text) = self.session.tasks.update(task, now, idle) {
                    self.push_notice(NoticeKind::Info, &text);
                    self.layers.drop_task_requests(&task.id);
                }
                self.session.status.background_agents = self.session.tasks.running_agents();
                if let Some(view) = self.layers.task_view()
                    && view.task.id == task.id
                {
                    view.ended(task);
                    self.poll_task_view(now);
                }
            }
            Event::TaskOutput { id, output, status } => {
                if let Some(view) = self.layers.task_view()
                    && &view.task.id == id
                {
                    view.set_output(output, *status);
                }
            }
            Event::Host(event) => self.host_event(event),
            Event::TurnFinished { .. } => {
                self.session.status.working_since = None;
                let next = self.turn.finished();
                self.layers.drop_turn_requests();
                if let Some(next) = next {
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
            AppEvent::FilesListed(files) => self.input.files_listed(files),
            AppEvent::FilesMatched { request_id, paths } => {
                self.input.files_matched(request_id, paths);
                Vec::new()
            }
            AppEvent::StatusLine(line) => {
                self.session.status.command_line = Some(line.unwrap_or_default());
                Vec::new()
            }
        }
    }

    /// The editor round trip for request `request_id` ended: its text, or why it failed.
    pub fn editor_finished(&mut self, request_id: u64, result: Result<String, String>) {
        self.dirty = true;
        self.layers.editor_finished(request_id, result);
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
