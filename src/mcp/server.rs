//! One configured server and its live connection ([`Server`]): opened by the manager's
//! background task; its death (the child's exit, a closed stream) noticed at once and shown as
//! failed; restarted on the next call every time it dies, a restart that fails backing off
//! (1 s, 2 s, 4 s… at most 30 s) before the next attempt; its lists (tools, resources,
//! prompts) read again when the server says they changed, and handed on to `on_lists`; its
//! [`Status`] for display; and the [`McpOptions`] servers start with.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::client::{CallError, Connection, Lists, Place, Timeouts, connect};
use super::config::{ServerConfig, Transport};
use super::handler::Notice;
use super::server_log::ServerLog;

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
    /// The session's working directories, the roots servers are given (`roots/list`).
    pub roots: Vec<PathBuf>,
    /// Where each server's log file is kept ([`ServerLog`]); none without.
    pub log_dir: Option<PathBuf>,
}

impl McpOptions {
    /// Defaults with `MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT` and `MAX_MCP_OUTPUT_TOKENS` from `env`.
    pub fn from_env(project_dir: PathBuf, env: &dyn Fn(&str) -> Option<String>) -> McpOptions {
        let tokens = env("MAX_MCP_OUTPUT_TOKENS")
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|t| *t > 0)
            .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS);
        McpOptions {
            tool_env: Vec::new(),
            timeouts: Timeouts::from_env(env),
            deferred: false,
            max_output_chars: tokens.saturating_mul(4),
            roots: vec![project_dir.clone()],
            log_dir: None,
            project_dir,
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

/// The first wait after a restart that failed; each further failure doubles it.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Called with a server whenever its lists are new (connected, restarted, changed).
pub type OnLists = Arc<dyn Fn(&Arc<Server>) + Send + Sync>;

/// Restarts that failed in a row, and when the next may be tried.
#[derive(Default)]
struct Backoff {
    failures: u32,
    not_before: Option<Instant>,
}

/// One server and its connection.
pub struct Server {
    config: ServerConfig,
    options: McpOptions,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    status: Mutex<Status>,
    lists: Mutex<Lists>,
    /// Bumped for each connection opened or dropped on purpose: a notice from an older one is
    /// not about the current connection.
    generation: AtomicU64,
    /// The current connection's transport has ended (set as soon as that is noticed, before
    /// rmcp's own loop may have marked it closed).
    dead: AtomicBool,
    backoff: Mutex<Backoff>,
    /// Bumped at every change of status, so a client can follow them without polling.
    changed: Arc<tokio::sync::watch::Sender<u64>>,
    on_lists: OnLists,
    /// Its last stderr lines (stdio servers), across restarts.
    stderr: Arc<super::stdio::StderrTail>,
    /// Its log file: stderr and what happened to the connection.
    log: Option<Arc<ServerLog>>,
    me: Weak<Server>,
}

/// A poisoned lock still holds its value: a panic elsewhere loses nothing here.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Server {
    pub(super) fn new(
        config: ServerConfig,
        options: McpOptions,
        changed: Arc<tokio::sync::watch::Sender<u64>>,
        on_lists: OnLists,
    ) -> Arc<Server> {
        let log =
            (options.log_dir.as_deref()).map(|dir| Arc::new(ServerLog::new(dir, &config.name)));
        Arc::new_cyclic(|me| Server {
            config,
            options,
            connection: tokio::sync::Mutex::new(None),
            stderr: Arc::new(super::stdio::StderrTail::telling(
                Arc::clone(&changed),
                log.clone(),
            )),
            log,
            status: Mutex::new(Status::Connecting),
            lists: Mutex::new(Lists::default()),
            generation: AtomicU64::new(0),
            dead: AtomicBool::new(false),
            backoff: Mutex::new(Backoff::default()),
            changed,
            on_lists,
            me: me.clone(),
        })
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    pub fn status(&self) -> Status {
        lock(&self.status).clone()
    }

    /// The tools, resources and prompts as last read.
    pub fn lists(&self) -> Lists {
        lock(&self.lists).clone()
    }

    fn set_status(&self, status: Status) {
        *lock(&self.status) = status;
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The stdio server's process id, while connected.
    pub async fn pid(&self) -> Option<u32> {
        self.connection.lock().await.as_ref().and_then(|c| c.pid())
    }

    /// The last lines it wrote to stderr, oldest first.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr.lines()
    }

    /// Its log file, when it has one.
    pub fn log_path(&self) -> Option<&std::path::Path> {
        self.log.as_deref().map(ServerLog::path)
    }

    /// Note what happened to it in its log file.
    pub(super) fn log_event(&self, what: &str) {
        if let Some(log) = &self.log {
            log.event(what);
        }
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
        self.log_event(&format!("starting: {}", self.config.describe()));
        let o = &self.options;
        let place = Place {
            project_dir: &o.project_dir,
            tool_env: &o.tool_env,
            roots: &o.roots,
            stderr: Some(&self.stderr),
        };
        match connect(&self.config, &place, o.timeouts.startup).await {
            Ok((c, notices)) => {
                let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
                self.dead.store(false, Ordering::SeqCst);
                let c = Arc::new(c);
                self.lists_read(c.lists.clone(), &c.server_info);
                self.log_event(&format!("connected: {}", self.status()));
                self.watch(generation, Arc::downgrade(&c), notices);
                Ok(c)
            }
            Err(why) => {
                self.log_event(&format!("failed: {why}"));
                self.set_status(Status::Failed(why.clone()));
                Err(why)
            }
        }
    }

    /// New lists: kept, counted in the status, handed on.
    fn lists_read(&self, lists: Lists, server_info: &str) {
        let tools = lists.tools.len();
        *lock(&self.lists) = lists;
        // The tools join the late list before the status says connected: whoever waits for
        // the status (ToolSearch) finds them there.
        if let Some(me) = self.me.upgrade() {
            (self.on_lists)(&me);
        }
        self.set_status(Status::Connected {
            tools,
            server_info: server_info.to_string(),
        });
    }

    /// Follow the connection `generation`'s notices until it ends: lists read again when they
    /// changed; its end shown at once.
    fn watch(
        &self,
        generation: u64,
        conn: Weak<Connection>,
        mut notices: UnboundedReceiver<Notice>,
    ) {
        let me = self.me.clone();
        tokio::spawn(async move {
            while let Some(notice) = notices.recv().await {
                let Some(server) = me.upgrade() else { break };
                if server.generation.load(Ordering::SeqCst) != generation {
                    break;
                }
                let conn = match notice {
                    Notice::Closed => {
                        server.died();
                        break;
                    }
                    Notice::ListsChanged => match conn.upgrade() {
                        Some(c) => c,
                        None => break,
                    },
                };
                let seen = conn.sync.seen();
                match conn.read_lists().await {
                    Ok(lists) => server.lists_read(lists, &conn.server_info),
                    Err(why) => {
                        tracing::warn!(target: "cairn::mcp", server = %server.name(), "{why}")
                    }
                }
                // Only once the new tools are in place: a call waiting on this answers, and
                // the model's next request is built from them.
                conn.sync.read_after(seen);
            }
        });
    }

    fn died(&self) {
        let how = match self.config.transport {
            Transport::Stdio { .. } => "its process exited",
            _ => "its connection closed",
        };
        tracing::warn!(target: "cairn::mcp", server = %self.name(), "{how}");
        self.log_event(&format!("exited: {how}"));
        self.dead.store(true, Ordering::SeqCst);
        self.set_status(Status::Failed(format!(
            "disconnected ({how}); it restarts on the next call"
        )));
    }

    /// The live connection; a dead one is replaced, unless a restart failed a moment ago (then
    /// the next attempt waits out the back-off).
    async fn live(&self) -> Result<Arc<Connection>, String> {
        let mut slot = self.connection.lock().await;
        let dead = self.dead.load(Ordering::SeqCst);
        if let Some(c) = slot.as_ref().filter(|c| !dead && !c.is_closed()) {
            return Ok(Arc::clone(c));
        }
        let name = &self.config.name;
        let had_one = slot.take().is_some();
        if let Some(at) = lock(&self.backoff).not_before
            && let Some(wait) = at.checked_duration_since(Instant::now())
        {
            let why = match self.status() {
                Status::Failed(why) => why,
                other => other.to_string(),
            };
            return Err(format!(
                "MCP server \"{name}\" is not running ({why}); the next restart is tried in {} s",
                wait.as_secs().max(1)
            ));
        }
        tracing::info!(target: "cairn::mcp", server = %name, had_one, "restarting");
        self.log_event("restarting (a call needs it)");
        match self.open().await {
            Ok(conn) => {
                *lock(&self.backoff) = Backoff::default();
                *slot = Some(Arc::clone(&conn));
                Ok(conn)
            }
            Err(why) => {
                let mut b = lock(&self.backoff);
                let wait = FIRST_BACKOFF
                    .saturating_mul(1 << b.failures.min(5))
                    .min(MAX_BACKOFF);
                b.failures = b.failures.saturating_add(1);
                b.not_before = Some(Instant::now() + wait);
                Err(format!(
                    "MCP server \"{name}\" stopped, and restarting it failed: {why} (the next \
                     attempt in {} s)",
                    wait.as_secs()
                ))
            }
        }
    }

    /// A failed exchange as a message for the model.
    fn failure(&self, what: &str, e: CallError) -> String {
        let name = &self.config.name;
        match e {
            CallError::Disconnected(why) => format!(
                "MCP server \"{name}\" disconnected ({why}); it will be restarted on the next call"
            ),
            CallError::Failed(why) => format!("MCP server \"{name}\": {why}"),
            CallError::Timeout(d) => format!(
                "{what} of server \"{name}\" timed out after {} s (MCP_TOOL_TIMEOUT); the call \
                 was cancelled",
                d.as_secs_f64()
            ),
            CallError::Cancelled => "Interrupted by the user".into(),
        }
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
        let timeout = self.options.timeouts.call;
        let result = conn
            .call(tool, arguments, timeout, cancel, progress)
            .await
            .map_err(|e| self.failure(&format!("MCP tool \"{tool}\""), e))?;
        // A call that changed the server's tools answers once they are read again, so the
        // model's next request has them.
        conn.sync.settled().await;
        Ok(result)
    }

    /// `resources/read`: the wire result. Errors are messages.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, String> {
        let conn = self.live().await?;
        conn.read_resource(uri, self.options.timeouts.call)
            .await
            .map_err(|e| self.failure(&format!("Reading {uri}"), e))
    }

    /// `prompts/get`: the wire result. Errors are messages.
    pub async fn get_prompt(
        &self,
        prompt: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, String> {
        let conn = self.live().await?;
        conn.get_prompt(prompt, arguments, self.options.timeouts.call)
            .await
            .map_err(|e| self.failure(&format!("MCP prompt \"{prompt}\""), e))
    }

    /// First connection, from the background task.
    pub(super) async fn start(&self) -> Option<Arc<Connection>> {
        let mut slot = self.connection.lock().await;
        let conn = self.open().await.ok()?;
        *slot = Some(Arc::clone(&conn));
        Some(conn)
    }

    /// The person asked for a fresh connection (`/mcp`): drop the old one, open a new one
    /// now, whatever the back-off said.
    pub(super) async fn reconnect(&self) -> Option<Arc<Connection>> {
        let mut slot = self.connection.lock().await;
        self.generation.fetch_add(1, Ordering::SeqCst);
        slot.take();
        *lock(&self.backoff) = Backoff::default();
        self.log_event("reconnecting (asked in /mcp)");
        self.set_status(Status::Connecting);
        let conn = self.open().await.ok()?;
        *slot = Some(Arc::clone(&conn));
        Some(conn)
    }

    pub(super) async fn stop(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.connection.lock().await.take();
    }

    /// Drop the connection now if no call holds the lock (for `Drop`, which cannot wait).
    pub(super) fn stop_now(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut slot) = self.connection.try_lock() {
            slot.take();
        }
    }
}
