//! The session's MCP servers: [`start_servers`] connects every configured server concurrently
//! in the background (starting cairn never waits for them) and hands each server's tools to the
//! shared [`LateTools`] list as it becomes ready; a server that fails keeps its error for
//! display. Each [`Server`] owns its live connection and its one restart.
//!
//! Dropping the [`McpManager`] stops every server (stdio process groups are killed).

use std::sync::Arc;
use std::time::Duration;

use super::config::McpConfig;
use super::server::{McpOptions, Server};
use super::tool::McpTool;
use crate::tools::{LateTools, ToolHandle};

/// The session's servers.
pub struct McpManager {
    servers: Vec<Arc<Server>>,
    late: LateTools,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Project servers waiting for approval, by name.
    pub unapproved: Vec<String>,
    /// Configuration problems (`source: what is wrong`).
    pub problems: Vec<String>,
}

/// Start connecting every server of `config` in the background; tools appear in `late` as
/// their servers become ready. Must run inside a tokio runtime.
pub fn start_servers(config: McpConfig, options: McpOptions, late: LateTools) -> McpManager {
    let mut servers = Vec::new();
    let mut tasks = Vec::new();
    for sc in config.servers {
        let server = Arc::new(Server::new(sc, options.clone()));
        servers.push(Arc::clone(&server));
        let late = late.clone();
        let (deferred, max_chars) = (options.deferred, options.max_output_chars);
        tasks.push(tokio::spawn(async move {
            let Some(conn) = server.start().await else {
                tracing::warn!(target: "cairn::mcp", server = %server.name(), "{}", server.status());
                return;
            };
            let tools: Vec<ToolHandle> = conn
                .tools
                .iter()
                .map(|t| {
                    Arc::new(McpTool::new(Arc::clone(&server), t, deferred, max_chars))
                        as ToolHandle
                })
                .collect();
            late.replace(server.name(), tools);
        }));
    }
    McpManager {
        servers,
        late,
        tasks,
        unapproved: config.unapproved,
        problems: config.problems,
    }
}

impl McpManager {
    pub fn servers(&self) -> &[Arc<Server>] {
        &self.servers
    }

    /// A function that tells, each time it is called, every server's name, scope, transport
    /// and status (for `/mcp`), one line each.
    pub fn status_lines(&self) -> impl Fn() -> Vec<String> + Send + Sync + 'static {
        let servers = self.servers.clone();
        let unapproved = self.unapproved.clone();
        move || {
            let waiting = unapproved.iter().map(|name| {
                format!("{name} (project): needs approval (add it to enabledMcpjsonServers)")
            });
            servers
                .iter()
                .map(|s| {
                    let config = s.config();
                    let transport = match &config.transport {
                        crate::mcp::config::Transport::Stdio { .. } => "stdio",
                        crate::mcp::config::Transport::Http { .. } => "http",
                        crate::mcp::config::Transport::Sse { .. } => "sse",
                    };
                    format!(
                        "{} ({}, {transport}): {}",
                        s.name(),
                        config.scope.name(),
                        s.status()
                    )
                })
                .chain(waiting)
                .collect()
        }
    }

    pub fn server(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.iter().find(|s| s.name() == name)
    }

    /// The tools of every server connected so far.
    pub fn tools(&self) -> Vec<ToolHandle> {
        self.late.snapshot().1
    }

    /// Wait until no server is still connecting, at most `bound`. Returns whether all settled.
    pub async fn wait_settled(&self, bound: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let pending = self.tasks.iter().any(|t| !t.is_finished());
            if !pending {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stop every server now.
    pub async fn shutdown(&self) {
        for t in &self.tasks {
            t.abort();
        }
        for s in &self.servers {
            s.stop().await;
        }
    }
}

impl Drop for McpManager {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        // Each connection kills its process group when dropped; take them out of the servers
        // (tools in a registry may still hold the servers themselves).
        for s in &self.servers {
            s.stop_now();
        }
    }
}
