//! One live connection to one MCP server over rmcp: stdio (a child process in its own process
//! group, stderr to the log, the whole group killed when the connection goes), streamable
//! HTTP, or the legacy HTTP+SSE transport (our own [`super::sse`], as rmcp 3 has none).
//!
//! This module owns the handshake (`initialize`, then the tools, resources and prompts lists,
//! bounded by the startup timeout), reading those lists again, reading a resource, getting a
//! prompt, and one call (bounded by the call timeout; on a timeout or an interrupt the server is sent
//! `notifications/cancelled`; its progress notifications go to the call's tool progress). It knows nothing of tools,
//! permissions or restarts; a server's output is untrusted and only ever returned as data.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, ServerResult, Tool as RemoteTool,
};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ServiceExt, model::JsonObject};
use tokio_util::sync::CancellationToken;

use super::config::{ServerConfig, Transport};
use super::handler::{Handler, ListSync, Notice, ProgressRoutes, Route, Watched, token_key};
use super::stdio::{LineTransport, MAX_MESSAGE_BYTES};
use crate::tools::ProgressSender;

/// What a server offers: its tools, resources and prompts (the last two empty when it does not
/// declare them, or when listing them failed: that is logged, the tools still work).
#[derive(Debug, Clone, Default)]
pub struct Lists {
    pub tools: Vec<RemoteTool>,
    pub resources: Vec<rmcp::model::Resource>,
    pub prompts: Vec<rmcp::model::Prompt>,
}

/// How long a server may take to start, and a call to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub startup: Duration,
    pub call: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            startup: Duration::from_secs(30),
            call: Duration::from_secs(10 * 60),
        }
    }
}

impl Timeouts {
    /// `MCP_TIMEOUT` and `MCP_TOOL_TIMEOUT` (milliseconds) over the defaults; a value that is
    /// not a positive number is ignored.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Timeouts {
        let ms = |key: &str| {
            env(key)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis)
        };
        let d = Timeouts::default();
        Timeouts {
            startup: ms("MCP_TIMEOUT").unwrap_or(d.startup),
            call: ms("MCP_TOOL_TIMEOUT").unwrap_or(d.call),
        }
    }
}

/// Kills a stdio server's whole process group (npx and the node it starts) when dropped.
struct ProcessGroup(Option<i32>);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: killpg has no memory effects; the group was created for this server by
            // `process_group(0)`, so it holds only the server and its children.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

/// A stdio server's transport, which owns the child (killed when the transport goes).
struct ChildTransport {
    lines: LineTransport<tokio::process::ChildStdout, tokio::process::ChildStdin>,
    _child: tokio::process::Child,
}

impl rmcp::transport::Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.lines.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send {
        self.lines.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lines.close().await
    }
}

/// A connected server: its session, its tools, and (stdio) its process group.
pub struct Connection {
    service: RunningService<RoleClient, Handler>,
    routes: ProgressRoutes,
    /// The list changes the server announced, and whether the lists were read after them.
    pub sync: Arc<ListSync>,
    /// The lists as the handshake read them.
    pub lists: Lists,
    /// The server's name and version as it introduced itself.
    pub server_info: String,
    pid: Option<u32>,
    _group: ProcessGroup,
}

impl Connection {
    /// Whether the transport is gone (the process died, the HTTP session ended).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.is_transport_closed()
    }

    /// The stdio server's process id (its process group id too).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Read the tools, resources and prompts lists (the last two when the server declares
    /// them). A failed tools list is an error; a failed resources or prompts list is logged
    /// and empty.
    pub async fn read_lists(&self) -> Result<Lists, String> {
        let peer = self.service.peer();
        let caps = self.service.peer_info().map(|i| i.capabilities.clone());
        let tools = peer
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        let mut lists = Lists {
            tools,
            ..Lists::default()
        };
        if caps.as_ref().is_some_and(|c| c.resources.is_some()) {
            match peer.list_all_resources().await {
                Ok(r) => lists.resources = r,
                Err(e) => tracing::warn!(target: "cairn::mcp", "resources/list failed: {e}"),
            }
        }
        if caps.as_ref().is_some_and(|c| c.prompts.is_some()) {
            match peer.list_all_prompts().await {
                Ok(p) => lists.prompts = p,
                Err(e) => tracing::warn!(target: "cairn::mcp", "prompts/list failed: {e}"),
            }
        }
        Ok(lists)
    }

    /// `resources/read`, within `timeout`: the wire result.
    pub async fn read_resource(
        &self,
        uri: &str,
        timeout: Duration,
    ) -> Result<serde_json::Value, CallError> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        let read = self.service.read_resource(params);
        let result = tokio::time::timeout(timeout, read)
            .await
            .map_err(|_| CallError::Timeout(timeout))?
            .map_err(classify)?;
        serde_json::to_value(&result).map_err(|e| CallError::Failed(e.to_string()))
    }

    /// `prompts/get`, within `timeout`: the wire result.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: JsonObject,
        timeout: Duration,
    ) -> Result<serde_json::Value, CallError> {
        let params = rmcp::model::GetPromptRequestParams::new(name).with_arguments(arguments);
        let get = self.service.get_prompt(params);
        let result = tokio::time::timeout(timeout, get)
            .await
            .map_err(|_| CallError::Timeout(timeout))?
            .map_err(classify)?;
        serde_json::to_value(&result).map_err(|e| CallError::Failed(e.to_string()))
    }

    /// Call one tool. Errors are messages for the model.
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: Option<ProgressSender>,
    ) -> Result<CallToolResult, CallError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = self.service.peer();
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(classify)?;
        // rmcp gives every request its own progress token; route that one to this call.
        let key = token_key(&handle.progress_token);
        let _route = progress.map(|sender| {
            self.routes.lock().insert(key.clone(), sender);
            Route(&self.routes, key)
        });
        let id = handle.id.clone();
        let outcome = tokio::select! {
            r = handle.await_response() => Ok(r),
            _ = tokio::time::sleep(timeout) => Err(CallError::Timeout(timeout)),
            _ = cancel.cancelled() => Err(CallError::Cancelled),
        };
        match outcome {
            Ok(Ok(ServerResult::CallToolResult(result))) => Ok(result),
            Ok(Ok(_)) => Err(CallError::Failed(
                "the server answered tools/call with something else than a tool result".into(),
            )),
            Ok(Err(e)) => Err(classify(e)),
            Err(why) => {
                // Tell the server to stop; it may be gone already, which is fine.
                let reason = match &why {
                    CallError::Timeout(_) => "timed out",
                    _ => "interrupted by the user",
                };
                let note = CancelledNotification::new(CancelledNotificationParam::new(
                    Some(id),
                    Some(reason.into()),
                ));
                let _ = peer.send_notification(note.into()).await;
                Err(why)
            }
        }
    }
}

fn classify(e: ServiceError) -> CallError {
    match e {
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            CallError::Disconnected(e.to_string())
        }
        other => CallError::Failed(other.to_string()),
    }
}

/// Why a call has no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The server went away.
    Disconnected(String),
    /// The server answered with an error, or the exchange failed.
    Failed(String),
    Timeout(Duration),
    Cancelled,
}

/// The configured headers as a header map; a name or value HTTP cannot carry is an error
/// naming the header (never its value).
fn header_map(headers: &[(String, String)]) -> Result<reqwest::header::HeaderMap, String> {
    let mut map = reqwest::header::HeaderMap::new();
    for (k, v) in headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| format!("header {k:?} is not a valid header name"))?;
        let value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|_| format!("header {k:?} has a value HTTP cannot carry"))?;
        map.insert(name, value);
    }
    Ok(map)
}

/// Where a server runs and what it is told: its working directory, the settings' env (stdio),
/// and the roots it is given.
pub struct Place<'a> {
    pub project_dir: &'a Path,
    pub tool_env: &'a [(String, String)],
    pub roots: &'a [PathBuf],
    /// Where a stdio server's last stderr lines are kept.
    pub stderr: Option<&'a Arc<super::stdio::StderrTail>>,
}

/// Connect to a server and read its lists, within `timeout`. The receiver hears the server's
/// list changes and the end of its transport.
pub async fn connect(
    server: &ServerConfig,
    place: &Place<'_>,
    timeout: Duration,
) -> Result<(Connection, tokio::sync::mpsc::UnboundedReceiver<Notice>), String> {
    match tokio::time::timeout(timeout, connect_inner(server, place)).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "did not start within {} s (MCP_TIMEOUT)",
            timeout.as_secs_f64()
        )),
    }
}

async fn connect_inner(
    server: &ServerConfig,
    place: &Place<'_>,
) -> Result<(Connection, tokio::sync::mpsc::UnboundedReceiver<Notice>), String> {
    let (project_dir, tool_env) = (place.project_dir, place.tool_env);
    let (tx, notices) = tokio::sync::mpsc::unbounded_channel();
    let handler = Handler::new(place.roots.to_vec(), tx.clone());
    let routes = handler.routes.clone();
    let sync = Arc::clone(&handler.sync);
    let (service, pid, group) = match &server.transport {
        Transport::Stdio { command, args, env } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).current_dir(project_dir);
            // Servers do not inherit cairn's own model credentials; the settings' env and the
            // server's own env come on top.
            crate::shell::env_policy::apply(&mut cmd, tool_env);
            cmd.envs(env.iter().map(|(k, v)| (k, v)));
            cmd.process_group(0).kill_on_drop(true);
            cmd.stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let mut child = cmd
                .spawn()
                .map_err(|e| format!("cannot start {command:?}: {e}"))?;
            let pid = child.id();
            // A pid that does not fit a pgid cannot be ours; then only kill_on_drop acts.
            let group = ProcessGroup(pid.and_then(|p| i32::try_from(p).ok()));
            let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                return Err(format!("cannot start {command:?}: no pipes to it"));
            };
            if let Some(stderr) = child.stderr.take() {
                let tail = place.stderr.cloned();
                tokio::spawn(super::stdio::log_stderr(stderr, server.name.clone(), tail));
            }
            let transport = ChildTransport {
                lines: LineTransport::new(stdout, stdin, MAX_MESSAGE_BYTES),
                _child: child,
            };
            let service = handler
                .serve(Watched::new(transport, tx))
                .await
                .map_err(|e| format!("handshake failed: {e}"))?;
            (service, pid, group)
        }
        Transport::Http { url, headers } => {
            let headers = header_map(headers)?;
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .custom_headers(
                    headers
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                );
            // rmcp's default (16 MiB) is below what a stdio server may send.
            config.max_sse_event_size = MAX_MESSAGE_BYTES;
            let transport = StreamableHttpClientTransport::from_config(config);
            let service = handler
                .serve(Watched::new(transport, tx))
                .await
                .map_err(|e| {
                    let e = e.to_string();
                    if e.contains("Auth required") {
                        format!(
                            "cannot connect to {url}: HTTP 401: {}",
                            super::sse::NEEDS_OAUTH
                        )
                    } else {
                        format!("cannot connect to {url}: {e}")
                    }
                })?;
            (service, None, ProcessGroup(None))
        }
        Transport::Sse { url, headers } => {
            let transport = super::sse::connect(url, header_map(headers)?).await?;
            let service = handler
                .serve(Watched::new(transport, tx))
                .await
                .map_err(|e| format!("cannot connect to {url}: {e}"))?;
            (service, None, ProcessGroup(None))
        }
    };
    let server_info = service
        .peer_info()
        .and_then(|i| {
            i.server_info
                .as_ref()
                .map(|s| format!("{} {}", s.name, s.version))
        })
        .unwrap_or_default();
    let mut connection = Connection {
        service,
        routes,
        sync,
        lists: Lists::default(),
        server_info,
        pid,
        _group: group,
    };
    connection.lists = connection.read_lists().await?;
    Ok((connection, notices))
}
