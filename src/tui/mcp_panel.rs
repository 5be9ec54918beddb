//! What the TUI can see and do of the session's MCP servers, behind one trait so the app can
//! be driven in tests without real servers: the `/mcp` lines, the servers that failed (for the
//! status row), the project servers waiting for approval, approving one, reconnecting one, and
//! a signal that fires when any of that changed.

use std::path::PathBuf;
use std::sync::Arc;

use crate::mcp::McpManager;
pub use crate::mcp::manager::ApprovalChoice;

/// A project server waiting for approval: its name and what it would run or reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingServer {
    pub name: String,
    pub runs: String,
}

/// The session's MCP servers as the TUI uses them.
pub trait McpControl: Send + Sync {
    /// One line per server (name, scope, transport, status), then the waiting ones.
    fn lines(&self) -> Vec<String>;
    /// The names of the servers that failed.
    fn failing(&self) -> Vec<String>;
    /// Project servers waiting for approval.
    fn waiting(&self) -> Vec<WaitingServer>;
    /// Answer for a waiting server; a line for the person, or why nothing happened.
    fn approve(&self, name: &str, choice: ApprovalChoice) -> Result<String, String>;
    /// Start a fresh connection to a server in the background.
    fn reconnect(&self, name: &str) -> Result<(), String>;
    /// Fires whenever what the methods above return may have changed.
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>>;
}

/// The real servers of a session started in `project_root`.
pub struct ManagerControl {
    pub manager: Arc<McpManager>,
    pub project_root: PathBuf,
}

impl McpControl for ManagerControl {
    fn lines(&self) -> Vec<String> {
        self.manager.status_lines()
    }

    fn failing(&self) -> Vec<String> {
        self.manager.failing()
    }

    fn waiting(&self) -> Vec<WaitingServer> {
        self.manager
            .unapproved()
            .into_iter()
            .map(|s| WaitingServer {
                runs: crate::mcp::listing::describe(&s),
                name: s.name,
            })
            .collect()
    }

    fn approve(&self, name: &str, choice: ApprovalChoice) -> Result<String, String> {
        self.manager.approve(&self.project_root, name, choice)
    }

    fn reconnect(&self, name: &str) -> Result<(), String> {
        self.manager.reconnect(name)
    }

    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.manager.changes())
    }
}

impl std::fmt::Debug for dyn McpControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("McpControl")
    }
}
