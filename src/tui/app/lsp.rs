//! The session's language servers in the TUI: asked of the host once at start (and told again
//! whenever they change), their states in the status row, `/lsp` listing them with their logs
//! (`/lsp restart NAME` stops one for a fresh start), and `/diagnostics` listing what the
//! running servers report for the open files.

use crate::protocol::{FileDiagnostics, HostOp, LspServerInfo, LspState, Op};
use crate::tui::conversation::NoticeKind;

use super::App;

impl App {
    /// Ask the host for the language servers, and to say whenever they change.
    pub fn watch_lsp(&mut self) {
        self.send(Op::Host(HostOp::LspServers));
    }

    pub(super) fn lsp_listed(&mut self, servers: &[LspServerInfo]) {
        self.session.status.lsp = servers.to_vec();
    }

    /// `/lsp` (list) or `/lsp restart NAME`.
    pub(super) fn lsp_command(&mut self, args: &str) {
        let mut words = args.split_whitespace();
        match (words.next(), words.next()) {
            (None, _) => {
                let text = lsp_text(&self.session.status.lsp, &self.session.cwd);
                self.conversation.push_notice(NoticeKind::Info, &text);
            }
            (Some("restart"), Some(name)) => self.send(Op::Host(HostOp::LspRestart {
                name: name.to_string(),
            })),
            _ => self
                .conversation
                .push_notice(NoticeKind::Warning, "Usage: /lsp, or /lsp restart NAME"),
        }
    }

    pub(super) fn lsp_answered(&mut self, result: &Result<String, String>) {
        match result {
            Ok(line) => self.conversation.push_notice(NoticeKind::Info, line),
            Err(why) => self.conversation.push_notice(NoticeKind::Warning, why),
        }
    }

    pub(super) fn diagnostics_listed(&mut self, files: &[FileDiagnostics]) {
        let text = diagnostics_text(files, &self.session.cwd);
        self.conversation.push_notice(NoticeKind::Info, &text);
    }
}

fn shown(path: &std::path::Path, cwd: &std::path::Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

/// `/lsp`'s notice: each server, its state, root and log.
fn lsp_text(servers: &[LspServerInfo], cwd: &std::path::Path) -> String {
    if servers.is_empty() {
        return "No language servers are configured or found on PATH (see `lspServers` in \
                docs/lsp.md)."
            .into();
    }
    let mut text = String::from("Language servers (/lsp restart NAME to start one afresh):");
    for s in servers {
        text.push_str(&format!("\n  {} · {}", s.name, s.state.word()));
        if let Some(root) = &s.root {
            let root = shown(root, cwd);
            text.push_str(&format!(" · {}", if root.is_empty() { "." } else { &root }));
        }
        text.push_str(&format!(" · {}", s.extensions.join(" ")));
        if let LspState::Failed { error } = &s.state {
            text.push_str(&format!("\n    {error}"));
        }
        text.push_str(&format!("\n    log: {}", s.log.display()));
    }
    text
}

/// `/diagnostics`' notice: each file's problems.
fn diagnostics_text(files: &[FileDiagnostics], cwd: &std::path::Path) -> String {
    if files.is_empty() {
        return "No diagnostics: the running language servers report no problems in the open \
                files."
            .into();
    }
    let mut text = String::from("Diagnostics:");
    for f in files {
        text.push_str(&format!("\n  {} ({})", shown(&f.path, cwd), f.server));
        for line in &f.lines {
            text.push_str(&format!("\n    {line}"));
        }
    }
    text
}
