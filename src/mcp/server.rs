//! One configured server and its live connection ([`Server`]): opened by the manager's
//! background task, replaced once if it dies (on the next call), then failing with a message
//! for the model; its [`Status`] for display; and the [`McpOptions`] servers start with.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::client::{CallError, Connection, Timeouts, connect};
use super::config::ServerConfig;

/// Default `MAX_MCP_OUTPUT_TOKENS`.
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 25_000;

/// How servers are started and their tools offered.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// Stdio servers run here.
    pub project_dir: PathBuf,
    /// The settings' `env`, for stdio servers (beneath each server's own `env`).
    pub tool_env: Vec<(String, String)>,
    pub timeouts: Timeouts,
    /// Announce tools by name only until ToolSearch loads them.
    pub deferred: bool,
    /// Text results longer than this spill (about 4 characters a token).
    pub max_output_chars: usize,
}

impl McpOptions {
    /// Defaults with `MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT` and `MAX_MCP_OUTPUT_TOKENS` from `env`.
    pub fn from_env(project_dir: PathBuf, env: &dyn Fn(&str) -> Option<String>) -> McpOptions {
        let tokens = env("MAX_MCP_OUTPUT_TOKENS")
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|t| *t > 0)
            .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS);
        McpOptions {
            project_dir,
            tool_env: Vec::new(),
            timeouts: Timeouts::from_env(env),
            deferred: false,
            max_output_chars: tokens.saturating_mul(4),
        }
    }
}

/// Where a server stands, for `/mcp`, `cairn mcp list` and the notices at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Connecting,
    Connected { tools: usize, server_info: String },
    Failed(String),
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Connecting => write!(f, "connecting"),
            Status::Connected { tools, .. } => write!(f, "connected ({tools} tools)"),
            Status::Failed(why) => write!(f, "failed: {why}"),
        }
    }
}

/// One server and its connection.
pub struct Server {
    config: ServerConfig,
    options: McpOptions,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    status: Mutex<Status>,
    restarts_left: AtomicU32,
    /// Bumped at every change of status, so a client can follow them without polling.
    changed: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Server {
    pub(super) fn new(
        config: ServerConfig,
        options: McpOptions,
        changed: Arc<tokio::sync::watch::Sender<u64>>,
    ) -> Server {
        Server {
            config,
            options,
            connection: tokio::sync::Mutex::new(None),
            status: Mutex::new(Status::Connecting),
            restarts_left: AtomicU32::new(1),
            changed,
        }
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    pub fn status(&self) -> Status {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set_status(&self, status: Status) {
        *self.status.lock().unwrap_or_else(|e| e.into_inner()) = status;
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The stdio server's process id, while connected.
    pub async fn pid(&self) -> Option<u32> {
        self.connection.lock().await.as_ref().and_then(|c| c.pid())
    }

    /// Whether the connection is up.
    pub async fn is_connected(&self) -> bool {
        self.connection
            .lock()
            .await
            .as_ref()
            .is_some_and(|c| !c.is_closed())
    }

    async fn open(&self) -> Result<Arc<Connection>, String> {
        let o = &self.options;
        let conn = connect(
            &self.config,
            &o.project_dir,
            &o.tool_env,
            o.timeouts.startup,
        )
        .await;
        match conn {
            Ok(c) => {
                self.set_status(Status::Connected {
                    tools: c.tools.len(),
                    server_info: c.server_info.clone(),
                });
                Ok(Arc::new(c))
            }
            Err(why) => {
                self.set_status(Status::Failed(why.clone()));
                Err(why)
            }
        }
    }

    /// The live connection; a dead one is replaced once in the server's life.
    async fn live(&self) -> Result<Arc<Connection>, String> {
        let mut slot = self.connection.lock().await;
        if let Some(c) = slot.as_ref().filter(|c| !c.is_closed()) {
            return Ok(Arc::clone(c));
        }
        let name = &self.config.name;
        let had_one = slot.take().is_some();
        let restart = self
            .restarts_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if !restart {
            let why = format!(
                "MCP server \"{name}\" stopped and was already restarted once; it is not \
                 restarted again in this session"
            );
            self.set_status(Status::Failed(why.clone()));
            return Err(why);
        }
        tracing::info!(target: "cairn::mcp", server = %name, had_one, "restarting");
        let conn = self.open().await.map_err(|why| {
            format!("MCP server \"{name}\" stopped, and restarting it failed: {why}")
        })?;
        *slot = Some(Arc::clone(&conn));
        Ok(conn)
    }

    /// Call one of the server's tools. Errors are messages for the model.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
        progress: Option<crate::tools::ProgressSender>,
    ) -> Result<rmcp::model::CallToolResult, String> {
        let conn = self.live().await?;
        let name = &self.config.name;
        let timeout = self.options.timeouts.call;
        match conn.call(tool, arguments, timeout, cancel, progress).await {
            Ok(result) => Ok(result),
            Err(CallError::Disconnected(why)) => {
                let next = if self.restarts_left.load(Ordering::SeqCst) > 0 {
                    "it will be restarted on the next call"
                } else {
                    "it is not restarted again"
                };
                Err(format!(
                    "MCP server \"{name}\" disconnected ({why}); {next}"
                ))
            }
            Err(CallError::Failed(why)) => Err(format!("MCP server \"{name}\": {why}")),
            Err(CallError::Timeout(d)) => Err(format!(
                "MCP tool \"{tool}\" of server \"{name}\" timed out after {} s \
                 (MCP_TOOL_TIMEOUT); the call was cancelled",
                d.as_secs_f64()
            )),
            Err(CallError::Cancelled) => Err("Interrupted by the user".into()),
        }
    }

    /// First connection, from the background task.
    pub(super) async fn start(self: &Arc<Self>) -> Option<Arc<Connection>> {
        let mut slot = self.connection.lock().await;
        let conn = self.open().await.ok()?;
        *slot = Some(Arc::clone(&conn));
        Some(conn)
    }

    /// The person asked for a fresh connection (`/mcp`): drop the old one, open a new one.
    /// This is not the automatic restart, so it does not use that up.
    pub(super) async fn reconnect(self: &Arc<Self>) -> Option<Arc<Connection>> {
        let mut slot = self.connection.lock().await;
        slot.take();
        self.set_status(Status::Connecting);
        let conn = self.open().await.ok()?;
        *slot = Some(Arc::clone(&conn));
        Some(conn)
    }

    pub(super) async fn stop(&self) {
        self.connection.lock().await.take();
    }

    /// Drop the connection now if no call holds the lock (for `Drop`, which cannot wait).
    pub(super) fn stop_now(&self) {
        if let Ok(mut slot) = self.connection.try_lock() {
            slot.take();
        }
    }
}
