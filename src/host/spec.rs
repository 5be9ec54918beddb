//! What a session is opened from, as plain data: the directory it works in, the model and
//! provider, the permission flags, what to resume, MCP sources, the trust decision and who the
//! client is. The command line builds one (`cli`), an editor's `session/new` another (`acp`);
//! the host reads nothing else — not the process's working directory, not the flags.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::model::ModelFlags;
use crate::files::client::ClientFiles;
use crate::mcp::config::ServerConfig;
use crate::mcp::session::McpFlags;
use crate::shell::client::ClientTerminal;

/// Which session to continue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Resume {
    /// A new conversation.
    #[default]
    New,
    /// The project's most recent session (`--continue`).
    Continue,
    /// The session with this id (`--resume ID`, an editor's `session/load`).
    Id(String),
    /// The person picks one once the session is open (`--resume` alone, in the TUI).
    Pick,
}

/// Whether the folder counts as trusted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TrustDecision {
    /// As `~/.claude.json` records it for the folder's project root or an ancestor.
    #[default]
    Recorded,
    /// The person (or a client acting for them) vouched for it for this session:
    /// `--trust-folder`, the TUI's question answered "Yes", an editor that says so.
    Trusted,
}

/// Who drives the session, which decides what happens when something needs a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// The full-screen TUI: questions are asked; with no credentials the demo runs.
    Tui,
    /// `-p`: no one to ask; no credentials is an error; broken settings stop the start.
    Headless,
    /// An editor over the Agent Client Protocol: questions go to the editor; no credentials
    /// is an error.
    Editor,
}

impl ClientKind {
    /// Whether someone can answer permission questions.
    pub fn interactive(self) -> bool {
        !matches!(self, ClientKind::Headless)
    }

    /// Whether it can show a change that conflicts with an outside change and let the person
    /// overwrite, re-read or abort: the TUI only (`-p` has no one to ask; an editor's
    /// permission question cannot show what overwriting loses, so both keep refusing).
    pub fn shows_conflicts(self) -> bool {
        matches!(self, ClientKind::Tui)
    }
}

/// Everything one session is opened from.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// Where the session works; its project root is found from here.
    pub cwd: PathBuf,
    /// More working directories (relative ones are taken from `cwd`).
    pub additional_dirs: Vec<PathBuf>,
    /// Provider, model, endpoint, demo.
    pub model: ModelFlags,
    /// The starting permission mode (`--permission-mode`).
    pub permission_mode: Option<String>,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    /// `--settings`: a file or inline JSON, the highest settings layer.
    pub settings: Option<String>,
    pub resume: Resume,
    /// Continue a resumed conversation under a new id.
    pub fork: bool,
    /// `--mcp-config` / `--strict-mcp-config`.
    pub mcp: McpFlags,
    /// MCP servers the client brings (an editor's `session/new`), started with the session's.
    pub mcp_servers: Vec<ServerConfig>,
    pub trust: TrustDecision,
    /// The person approved CLAUDE.md imports from outside the project for this session (the
    /// recorded approval counts too).
    pub external_imports: bool,
    pub client: ClientKind,
    /// Stop after this many model turns.
    pub max_turns: Option<u32>,
    /// The client's files (an editor's buffers, ACP `fs/*`), when it serves them.
    pub client_files: Option<Arc<dyn ClientFiles>>,
    /// The client's terminals (an editor's, ACP `terminal/*`), when it offers them.
    pub client_terminal: Option<Arc<dyn ClientTerminal>>,
    /// `--plugin-dir`: plugin folders loaded for this session (relative ones from `cwd`).
    pub plugin_dirs: Vec<PathBuf>,
}

impl SessionSpec {
    /// A spec with every choice at its default: a new conversation in `cwd`, the model the
    /// settings and environment choose, trust as recorded.
    pub fn new(cwd: PathBuf, client: ClientKind) -> SessionSpec {
        SessionSpec {
            cwd,
            additional_dirs: Vec::new(),
            model: ModelFlags::default(),
            permission_mode: None,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            settings: None,
            resume: Resume::New,
            fork: false,
            mcp: McpFlags::default(),
            mcp_servers: Vec::new(),
            trust: TrustDecision::Recorded,
            external_imports: false,
            client,
            max_turns: None,
            client_files: None,
            client_terminal: None,
            plugin_dirs: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ClientKind;

    #[test]
    fn only_the_tui_is_asked_about_conflicts_with_outside_changes() {
        assert!(ClientKind::Tui.shows_conflicts());
        assert!(!ClientKind::Headless.shows_conflicts());
        assert!(!ClientKind::Editor.shows_conflicts());
    }
}
