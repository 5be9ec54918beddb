//! The MCP servers a custom agent's file defines (`mcpServers: [name: {definition}]`), as the
//! layers above `mcp` see them: the core asks the session's [`AgentServers`] (the MCP client
//! implements it; the host hands it over) to start an agent's servers when its run starts, and
//! gets [`RunServers`]: their tools, joining a [`LateTools`] list of the run's own as each
//! server connects, the servers that did not start and why, and what stops them. The run ends
//! with [`RunServers::close`]; dropping it (a run cancelled, the session ending) stops them too.
//! Nothing here decides whether a definition may run: the host takes away what an untrusted
//! folder's agents define before any run.

use std::path::PathBuf;

use async_trait::async_trait;

use super::LateTools;

/// One server an agent's file defines, as the file has it (`.mcp.json`'s shape).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineServer {
    pub name: String,
    pub config: serde_json::Value,
    /// The agent file, for messages.
    pub source: PathBuf,
}

/// What stops a run's servers. Its own `Drop` must stop them as well (it cannot wait).
#[async_trait]
pub trait StopServers: Send + Sync {
    /// Stop every server now, and wait until they are gone.
    async fn stop(&self);
}

/// An agent run's own servers, started: stopped by [`close`](Self::close) or when dropped.
pub struct RunServers {
    /// Their tools (`mcp__<server>__<tool>`), as each server connects or changes its list.
    pub tools: LateTools,
    /// The servers' names as their tools carry them (`mcp__<server>__…`), started or not.
    pub servers: Vec<String>,
    /// The servers that did not start: (name, why).
    pub failed: Vec<(String, String)>,
    stop: Box<dyn StopServers>,
}

impl RunServers {
    pub fn new(
        tools: LateTools,
        servers: Vec<String>,
        failed: Vec<(String, String)>,
        stop: Box<dyn StopServers>,
    ) -> RunServers {
        RunServers {
            tools,
            servers,
            failed,
            stop,
        }
    }

    /// Stop the servers and wait for it (the run ended).
    pub async fn close(self) {
        self.stop.stop().await;
    }
}

/// Starts the servers of one agent run.
#[async_trait]
pub trait AgentServers: Send + Sync {
    /// Start `servers` for a run of the agent `agent` and wait until each is connected or has
    /// failed (each bounded by its start-up timeout, `MCP_TIMEOUT`). A definition that cannot
    /// be read is a failure like a server that does not start.
    async fn start(&self, agent: &str, servers: &[InlineServer]) -> RunServers;
}
