//! The host's side of the contract: data of the ops the session's host answers itself rather
//! than the core (the session's MCP servers, the project's saved sessions and the host's open
//! ones, memory files, the `statusLine` command's text). Re-exported from
//! [`crate::protocol`]; the ops and events carrying them are [`super::Op`] and [`super::Event`].

use std::path::PathBuf;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// One of the session's MCP servers, or a project server waiting for the person's approval.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerInfo {
    pub name: String,
    /// Scope, transport and status: `(project, stdio): connected (11 tools)`.
    pub detail: String,
    /// It failed to connect (the status row names it).
    pub failed: bool,
    /// Waiting for approval (a project server from `.mcp.json`): what it would run or reach.
    pub waiting: Option<String>,
    /// Its prompts, as the `/` picker offers them (`mcp__<server>__<prompt>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<super::CommandInfo>,
    /// Its resources, as the `@` picker offers them (`<server>:<uri>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Its state in plain words (`connected, 11 tools`; `failed: the server exited before it
    /// answered cairn's first message`), for `/mcp`'s detail view.
    #[serde(default)]
    pub status: String,
    /// Why it failed, as the connection said it, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The last lines it wrote to stderr (stdio servers), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<String>,
    /// What it runs (command and arguments) or reaches (a URL).
    #[serde(default)]
    pub command: String,
    /// The configuration file (or `--mcp-config` argument) it came from.
    #[serde(default)]
    pub source: String,
    /// Its log file (stderr and what happened to the connection), when it keeps one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Turned off (in the settings, or in `/mcp`): not running until turned on again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
}

/// The person's answer about a project server waiting for approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpApproval {
    /// Start it, and remember it in `enabledMcpjsonServers`.
    UseThis,
    /// Start every waiting server, and set `enableAllProjectMcpServers`.
    UseAll,
    /// Do not start it, and remember that in `disabledMcpjsonServers`.
    Refuse,
}

/// An earlier session of the project, as its transcript on disk says (`/resume`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSession {
    pub id: String,
    /// The transcript, for [`super::Op::Resume`].
    pub path: PathBuf,
    /// The first thing the person asked (one line).
    pub first_prompt: String,
    pub modified: SystemTime,
    /// How many prompts the person sent.
    pub prompts: usize,
    pub branch: Option<String>,
}

/// A session the host has open now (this one among them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenSessionInfo {
    pub session_id: String,
    pub project_dir: PathBuf,
    pub project_root: PathBuf,
}

/// What the client knows that the `statusLine` command is told (Claude Code's `Status` input;
/// the host adds the transcript, the project directory and the output style).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusLineInput {
    pub session_id: String,
    pub model: String,
    /// The current directory.
    pub cwd: PathBuf,
    pub cost_usd: f64,
    /// Since the client started.
    pub duration_ms: u64,
    pub lines_added: usize,
    pub lines_removed: usize,
}

/// One language server of the session: a configured one not started yet, or one running (or
/// failed) for a workspace root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LspServerInfo {
    pub name: String,
    /// The workspace root it serves; `None` before it has started for any.
    pub root: Option<PathBuf>,
    pub state: LspState,
    /// Where its stderr goes.
    pub log: PathBuf,
    /// The file extensions it covers (`.py`, `.ts`).
    pub extensions: Vec<String>,
}

/// How a language server is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LspState {
    /// Configured; it starts when a call first needs it.
    NotStarted,
    Starting,
    /// Running, and reporting work in progress (indexing, loading the project).
    Indexing,
    Ready,
    /// It failed to start or exited; the next call that needs it tries again (after a wait).
    Failed {
        error: String,
    },
}

impl LspState {
    /// The state in a word or two (`ready`, `failed`).
    pub fn word(&self) -> &'static str {
        match self {
            LspState::NotStarted => "not started",
            LspState::Starting => "starting",
            LspState::Indexing => "indexing",
            LspState::Ready => "ready",
            LspState::Failed { .. } => "failed",
        }
    }
}

/// The diagnostics a language server holds for one open file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiagnostics {
    pub path: PathBuf,
    pub server: String,
    /// One line per problem: `line 5:17 error: message [code]`.
    pub lines: Vec<String>,
}

/// One of the session's plugins (`/plugin`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginInfo {
    /// `name@marketplace`.
    pub id: String,
    /// Version, who turned it on, its folder.
    pub detail: String,
    pub description: String,
    /// One line per kind of part: `commands: /demo:hello`, `MCP servers: plugin:demo:fs`.
    pub contributes: Vec<String>,
}

/// What a client asks of the session's host rather than its core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "host_op", rename_all = "snake_case")]
pub enum HostOp {
    /// The session's MCP servers: [`HostEvent::McpServers`] now, and again whenever they
    /// change.
    McpServers,
    /// Answer for a project server waiting for approval ([`HostEvent::McpAnswer`]).
    McpApprove { name: String, choice: McpApproval },
    /// Start a fresh connection to a server ([`HostEvent::McpAnswer`]; its status follows).
    McpReconnect { name: String },
    /// Turn a server off (disconnected, kept off in later sessions) or on again
    /// ([`HostEvent::McpAnswer`]; the list follows).
    McpEnable { name: String, enabled: bool },
    /// The project's earlier sessions, from their transcripts ([`HostEvent::SavedSessions`]).
    ListSavedSessions,
    /// The sessions the host has open now ([`HostEvent::OpenSessions`]).
    ListOpenSessions,
    /// Read a memory file (`CLAUDE.md`, ...) to edit it ([`HostEvent::MemoryFile`]).
    ReadMemoryFile { path: PathBuf },
    /// Replace a memory file's text, creating it and its folder ([`HostEvent::MemoryWritten`]).
    WriteMemoryFile { path: PathBuf, content: String },
    /// Add `- note` as a line at the end of a memory file (`#`) ([`HostEvent::MemoryWritten`]).
    AddMemoryNote { path: PathBuf, note: String },
    /// Run the settings' `statusLine` command with this input ([`HostEvent::StatusLine`]).
    StatusLine { input: StatusLineInput },
    /// The session's language servers: [`HostEvent::LspServers`] now, and again whenever
    /// one starts, finishes indexing, fails or stops.
    LspServers,
    /// Stop a language server (every root it serves); the next call that needs it starts it
    /// afresh ([`HostEvent::LspAnswer`]).
    LspRestart { name: String },
    /// The diagnostics the running servers hold for the session's open files
    /// ([`HostEvent::Diagnostics`]).
    Diagnostics,
    /// The session's plugins and what each contributes ([`HostEvent::Plugins`]).
    Plugins,
}

/// The host's answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "host_event", rename_all = "snake_case")]
pub enum HostEvent {
    /// The session's MCP servers (after [`HostOp::McpServers`], and whenever they change).
    McpServers { servers: Vec<McpServerInfo> },
    /// What came of [`HostOp::McpApprove`] or [`HostOp::McpReconnect`]: a line for the
    /// person, or why nothing happened.
    McpAnswer { result: Result<String, String> },
    /// The project's earlier sessions, newest first.
    SavedSessions { sessions: Vec<SavedSession> },
    /// The host's open sessions.
    OpenSessions { sessions: Vec<OpenSessionInfo> },
    /// A memory file's text (empty when it does not exist yet), or why it cannot be read.
    MemoryFile {
        path: PathBuf,
        content: Result<String, String>,
    },
    /// A memory file was written (`note`: a `#` note was added to it), or why not.
    MemoryWritten {
        path: PathBuf,
        note: bool,
        result: Result<(), String>,
    },
    /// The `statusLine` command's first line of output (escape sequences as it printed them,
    /// padded as the settings say), or why there is none.
    StatusLine { text: Result<String, String> },
    /// The session's language servers (after [`HostOp::LspServers`], and whenever they change).
    LspServers { servers: Vec<LspServerInfo> },
    /// What came of [`HostOp::LspRestart`]: a line for the person, or why nothing happened.
    LspAnswer { result: Result<String, String> },
    /// The current diagnostics, by file (files without any left out).
    Diagnostics { files: Vec<FileDiagnostics> },
    /// The session's plugins, and the problems finding them.
    Plugins {
        plugins: Vec<PluginInfo>,
        problems: Vec<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::super::{Event, Op};
    use super::*;

    #[test]
    fn host_ops_and_events_survive_json_inside_the_outer_tag() {
        let op = Op::Host(HostOp::AddMemoryNote {
            path: "/p/CLAUDE.md".into(),
            note: "use tabs".into(),
        });
        let text = serde_json::to_string(&op).unwrap();
        assert_eq!(
            text,
            r#"{"type":"host","host_op":"add_memory_note","path":"/p/CLAUDE.md","note":"use tabs"}"#
        );
        assert_eq!(serde_json::from_str::<Op>(&text).unwrap(), op);
        let event = Event::Host(HostEvent::McpAnswer {
            result: Err("no MCP server named \"x\"".into()),
        });
        let text = serde_json::to_string(&event).unwrap();
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), event);
    }
}
