//! Enter and the slash commands: what a submitted text does (prompt, queued prompt, `/command`,
//! `!shell`), and the commands that run inside the TUI without the model.

use super::*;

impl App {
    /// Enter: a newline after a trailing `\`, a command, a shell command, or a prompt (queued
    /// while a turn runs).
    pub(super) fn submit(&mut self) -> Vec<AppAction> {
        if self.input.composer.backslash_newline() {
            return Vec::new();
        }
        let Some(text) = self.input.composer.take_submission() else {
            return Vec::new();
        };
        self.input.close_picker();
        // `#note`: remember it in a memory file the person picks.
        if let Some(note) = text.strip_prefix('#').map(str::trim)
            && !note.is_empty()
            && !text.starts_with("##")
        {
            self.ask_memory_target(Some(note.to_string()));
            return Vec::new();
        }
        if text.starts_with('/') {
            return self.run_command_text(&text);
        }
        if let Some(command) = text.strip_prefix('!') {
            let command = command.trim().to_string();
            if command.is_empty() {
                return Vec::new();
            }
            return vec![AppAction::RunShell { command }];
        }
        self.submit_prompt(text);
        Vec::new()
    }

    pub(super) fn run_command_text(&mut self, text: &str) -> Vec<AppAction> {
        let Some((command, args)) = commands::parse(text.trim()) else {
            let name = text.split_whitespace().next().unwrap_or(text);
            let custom = self
                .session
                .custom_commands()
                .iter()
                .any(|c| c.name == name[1..] || c.aliases.iter().any(|a| *a == name[1..]));
            // A path (`/etc/hosts is wrong`) or the person's own command: a prompt (the core
            // expands the command).
            if custom || name[1..].contains('/') {
                // A path (`/etc/hosts is wrong`), not a command: it is a prompt.
                self.submit_prompt(text.to_string());
                return Vec::new();
            }
            // The closest names among the built-in and the person's commands.
            let custom = self.session.custom_commands();
            let names = commands::COMMANDS
                .iter()
                .map(|(n, _, _)| *n)
                .chain(custom.iter().map(|c| c.name.as_str()))
                .chain(
                    custom
                        .iter()
                        .flat_map(|c| c.aliases.iter().map(String::as_str)),
                );
            let close = crate::suggest::closest_names(&name[1..], names);
            let hint = if close.is_empty() {
                String::new()
            } else {
                let close: Vec<String> = close.iter().map(|n| format!("/{n}")).collect();
                format!(" Did you mean {}?", close.join(", "))
            };
            self.conversation.push_notice(
                NoticeKind::Error,
                &format!("Unknown command {name}.{hint} Type / to see the commands."),
            );
            return Vec::new();
        };
        self.run_command(command, args)
    }

    pub(super) fn run_command(&mut self, command: commands::Command, args: &str) -> Vec<AppAction> {
        use commands::Command as C;
        match command {
            C::Help => {
                let mut text = String::from("Commands:\n");
                for (name, _, help) in commands::COMMANDS {
                    text.push_str(&format!("  /{name:<12} {help}\n"));
                }
                text.push_str(
                    "  !command      run a shell command\n  @path         mention a file\nKeys:\n",
                );
                for line in keymap::help_lines(&[Context::Global, Context::Composer]) {
                    text.push_str(&format!("  {line}\n"));
                }
                text.push_str(
                    "In the transcript (Ctrl+T): Esc or q closes, Up/Down/PgUp/PgDn scroll.\n",
                );
                text.push_str("In a permission prompt:\n");
                for line in keymap::help_lines(&[Context::Permission]) {
                    text.push_str(&format!("  {line}\n"));
                }
                text.push_str("In /diff: Left/Right file, j/k PgUp/PgDn scroll, Tab hunk, v layout, Esc closes.\n");
                self.conversation
                    .push_notice(NoticeKind::Info, text.trim_end());
            }
            C::Clear => {
                // The model forgets too (Claude Code's meaning); the core refuses mid-turn.
                self.send(Op::Clear);
                self.conversation.clear();
                self.scroll.to_bottom();
            }
            C::Model => self.model_command(args),
            C::Mode => self.mode_command(args),
            C::Copy => match self.conversation.last_answer() {
                Some(answer) => {
                    self.conversation.push_notice(
                        NoticeKind::Info,
                        &format!(
                            "Copied the last answer ({} characters) to the clipboard.",
                            answer.chars().count()
                        ),
                    );
                    return vec![AppAction::CopyToClipboard(answer)];
                }
                None => self
                    .conversation
                    .push_notice(NoticeKind::Warning, "There is no answer to copy yet."),
            },
            C::Transcript => self.toggle_transcript(),
            C::Plan => self.enter_plan_mode(),
            C::Diff => self.open_session_diff(),
            // The core knows the instruction; headless `-p /init` works the same way.
            C::Memory => self.ask_memory_target(None),
            C::Init => self.submit_prompt("/init".into()),
            C::Resume => self.ask_saved_sessions(),
            C::Rewind => self.open_rewind(),
            C::Compact if self.turn.is_running() => self.conversation.push_notice(
                NoticeKind::Warning,
                "Cannot compact while the model is working; wait or interrupt first.",
            ),
            C::Compact => self.send(Op::Compact {
                instructions: Some(args.to_string()).filter(|a| !a.is_empty()),
            }),
            C::Cost => {
                let text = self.session.status.cost_report();
                self.conversation.push_notice(NoticeKind::Info, &text);
            }
            C::Context => self.send(Op::ContextReport),
            C::Mcp => self.open_mcp_picker(),
            C::Plugin => self.send(Op::Host(crate::protocol::HostOp::Plugins)),
            C::Lsp => self.lsp_command(args),
            C::Diagnostics => self.send(Op::Host(crate::protocol::HostOp::Diagnostics)),
            C::Agents => {
                let agents = self
                    .session
                    .status
                    .session
                    .as_ref()
                    .map(|s| s.agents.clone())
                    .unwrap_or_default();
                let mut text = String::from(
                    "Sub-agents (the model hands them tasks with the Agent tool; yours are \
                     .claude/agents/*.md):",
                );
                for (name, description) in agents {
                    text.push_str(&format!("\n  {name}: {description}"));
                }
                self.conversation.push_notice(NoticeKind::Info, &text);
            }
            C::Tasks => self.tasks_command(),
            C::Exit => return vec![AppAction::Quit],
        }
        Vec::new()
    }

    /// `/model name` switches; `/model` alone offers the aliases (or says how to switch).
    fn model_command(&mut self, args: &str) {
        if !args.is_empty() {
            self.send(Op::SetModel {
                model: args.to_string(),
            });
            return;
        }
        let Some(session) = &self.session.status.session else {
            self.conversation
                .push_notice(NoticeKind::Info, "The session is still starting.");
            return;
        };
        if session.model_choices.is_empty() {
            let text = format!(
                "model: {} ({}). /model <name> switches.",
                session.model, session.provider
            );
            self.conversation.push_notice(NoticeKind::Info, &text);
            return;
        }
        // The model in use is marked and starts under the cursor.
        let current = session
            .model_choices
            .iter()
            .position(|(alias, id)| *alias == session.model || *id == session.model);
        let mut choices = session.model_choices.clone();
        if let Some((_, detail)) = current.and_then(|i| choices.get_mut(i)) {
            detail.push_str("  ✓ current");
        }
        let mut picker = Picker::choices(PickerKind::Model, choices);
        picker.selected = current.unwrap_or(0);
        self.input.open_picker(picker);
    }

    fn mode_command(&mut self, args: &str) {
        if args.is_empty() {
            let text = format!(
                "mode: {}. Shift+Tab cycles; /mode default, acceptEdits, plan or dontAsk sets it.",
                self.session.status.mode.as_str()
            );
            self.conversation.push_notice(NoticeKind::Info, &text);
            return;
        }
        match PermissionMode::parse(args) {
            Some(mode) if !self.session.allows(mode) => {
                self.conversation.push_notice(
                    NoticeKind::Error,
                    "bypassPermissions is only available when cairn starts in it \
                     (--permission-mode bypassPermissions).",
                );
            }
            Some(mode) => {
                self.set_mode(mode);
                self.conversation
                    .push_notice(NoticeKind::Info, &format!("mode: {}", mode_label(mode)));
            }
            None => self.conversation.push_notice(
                NoticeKind::Error,
                &format!(
                    "Unknown mode {args:?}. Use default, acceptEdits, plan, dontAsk or \
                     bypassPermissions."
                ),
            ),
        }
    }

    /// `/diff`: open the session's changes, or say there are none.
    fn open_session_diff(&mut self) {
        if self.session.changes.is_empty() {
            self.conversation.push_notice(
                NoticeKind::Info,
                "cairn has not changed any file in this session yet.",
            );
            return;
        }
        self.input.close_picker();
        let view = SessionDiff::new(&self.session.changes, &self.highlighter);
        self.layers.open_session_diff(view);
    }

    /// `/plan`: enter plan mode.
    fn enter_plan_mode(&mut self) {
        self.set_mode(PermissionMode::Plan);
        self.conversation.push_notice(
            NoticeKind::Info,
            "mode: plan. The model explores and proposes a plan; nothing is changed until you \
             approve it. Shift+Tab leaves plan mode.",
        );
    }
}
