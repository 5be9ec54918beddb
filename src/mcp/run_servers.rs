//! The servers one custom agent's run defines for itself ([`RunServerStarter`], the MCP side
//! of [`AgentServers`]): its `mcpServers` definitions read as `.mcp.json` entries are
//! (`parse_server`: stdio, streamable HTTP, SSE, `${VAR}` from the settings' `env` and then
//! cairn's environment), started as the session's are (a [`McpManager`] of their own, with the
//! session's [`McpOptions`]: working directory, roots, `MCP_TIMEOUT`, output bounds), each
//! with its log file in `<session's MCP logs>/agent-<agent>/`, and their tools published to
//! the run's own late list only. Stopping them is writing it in each log and dropping the
//! connections (a stdio server's process group is killed); dropping the handle does the same.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;

use super::config::{self, McpConfig, Scope, ServerConfig};
use super::manager::{McpManager, start_servers};
use super::server::{McpOptions, Status};
use crate::tools::LateTools;
use crate::tools::agent_servers::{AgentServers, InlineServer, RunServers, StopServers};

/// Starts agents' own servers with the session's options.
pub struct RunServerStarter {
    options: McpOptions,
}

impl RunServerStarter {
    pub fn new(options: McpOptions) -> RunServerStarter {
        RunServerStarter { options }
    }
}

/// A run's servers: stopped once, on close or on drop.
struct RunGuard {
    manager: McpManager,
    stopped: AtomicBool,
}

impl RunGuard {
    /// Say in each server's log that it stops (once); whether this is the first time.
    fn log_stop(&self, why: &str) -> bool {
        if self.stopped.swap(true, Ordering::SeqCst) {
            return false;
        }
        for server in self.manager.servers() {
            server.log_event(&format!("stopped: {why}"));
        }
        true
    }
}

#[async_trait]
impl StopServers for RunGuard {
    async fn stop(&self) {
        if self.log_stop("the agent's run ended") {
            self.manager.shutdown().await;
        }
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        // The manager's own drop stops the servers.
        self.log_stop("the agent's run was stopped");
    }
}

#[async_trait]
impl AgentServers for RunServerStarter {
    async fn start(&self, agent: &str, servers: &[InlineServer]) -> RunServers {
        let tool_env = &self.options.tool_env;
        let env = |k: &str| {
            tool_env
                .iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var(k).ok())
        };
        let mut cfg = McpConfig::default();
        let mut failed = Vec::new();
        for server in servers {
            match config::parse_server(&server.name, &server.config, &env) {
                Ok(transport) => cfg.servers.push(ServerConfig {
                    name: server.name.clone(),
                    scope: Scope::User,
                    source: server.source.display().to_string(),
                    transport,
                }),
                Err(why) => failed.push((server.name.clone(), why)),
            }
        }
        let mut options = self.options.clone();
        let stem = super::server_log::file_name(agent);
        let stem = stem.trim_end_matches(".log");
        options.log_dir = options.log_dir.map(|d| d.join(format!("agent-{stem}")));
        let startup = options.timeouts.startup;
        let late = LateTools::default();
        let manager = start_servers(cfg, options, late.clone());
        // Each connection gives up after `startup`; the margin is for the tasks to end.
        manager.wait_settled(startup + Duration::from_secs(1)).await;
        for server in manager.servers() {
            match server.status() {
                Status::Connected { .. } => {}
                Status::Failed(why) => failed.push((server.name().to_string(), why)),
                Status::Connecting => failed.push((
                    server.name().to_string(),
                    format!(
                        "it did not connect within {} s (MCP_TIMEOUT)",
                        startup.as_secs()
                    ),
                )),
            }
        }
        let names = servers
            .iter()
            .map(|s| super::names::normalize(&s.name))
            .collect();
        let guard = RunGuard {
            manager,
            stopped: AtomicBool::new(false),
        };
        RunServers::new(late, names, failed, Box::new(guard))
    }
}

/// The session's starter, for the core (`None`: the session runs no MCP servers).
pub fn starter_for(manager: &McpManager) -> Arc<dyn AgentServers> {
    Arc::new(RunServerStarter::new(manager.options().clone()))
}
