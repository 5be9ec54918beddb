//! The scripted model server: a small HTTP/1.1 server on 127.0.0.1 that answers model requests
//! from a [`Script`], in the Anthropic (`POST /v1/messages`), OpenAI chat
//! (`POST /v1/chat/completions`, `POST /chat/completions`) and OpenAI Responses
//! (`POST /v1/responses`, `POST /responses`: what Codex speaks) wire formats. It serves the
//! demo, the tests and `cairn mock-server`.
//!
//! Script format (JSON; every field optional except `turns` and a tool call's `name`):
//! ```json
//! {"turns": [
//!   {"thinking": "optional", "text": "Hello",
//!    "tool_calls": [{"id": "toolu_1", "name": "Read", "input": {"file_path": "src/main.rs"}}],
//!    "stop_reason": "end_turn | tool_use | max_tokens",
//!    "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 0,
//!              "cache_creation_input_tokens": 0},
//!    "chunk_chars": 8, "delay_ms": 0,
//!    "faults": [{"status": 529, "body": "{...}", "retry_after": 1, "times": 1},
//!               {"drop_after_events": 3, "times": 1},
//!               {"malformed_event_at": 2, "times": 1}, {"cut_event_at": 2},
//!               {"invalid_tool_json": true, "times": 1},
//!               {"stream_error": "overloaded_error", "times": 1},
//!               {"truncate": true}, {"unclosed_tool_use": true},
//!               {"keep_alive_forever_ms": 20}]}
//! ],
//!  "chaos": {"seed": 7, "rate_limit": 0.25, "retry_after_ms": 1000, "unavailable": 0.15,
//!            "disconnect": 0.1, "truncate": 0.1, "malformed": 0.1}}
//! ```
//! Invariants: the turn answered is the number of assistant messages already in the request
//! (past the last turn the answer is the text "(the script has no more turns)"); attempts are
//! counted per turn and the faults apply in order, each to `times` attempts, then the turn
//! plays normally; with `chaos`, a request no scripted fault applies to may get a random one
//! (see [`Chaos`]); every request is recorded before it is answered; each response ends with
//! `Connection: close`. The server binds loopback only and stops when dropped.

mod chaos;
mod responses;
mod script;
mod wire;

pub use chaos::Chaos;
pub use script::{
    Fault, FaultKind, Script, ScriptError, ScriptStopReason, ScriptUsage, ToolCall, Turn,
};

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use chaos::{ChaosFault, ChaosState};
use wire::{RenderContext, Wire};

/// The answer past the last scripted turn.
pub const NO_MORE_TURNS: &str = "(the script has no more turns)";

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The parsed JSON body (`Null` when it was not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Shared {
    script: Script,
    chaos: Option<ChaosState>,
    /// Attempts per (conversation, turn).
    attempts: Mutex<HashMap<(usize, usize), u32>>,
    requests: Mutex<Vec<RecordedRequest>>,
}

impl Shared {
    fn new(script: Script) -> Shared {
        Shared {
            chaos: script.chaos.clone().map(ChaosState::new),
            script,
            attempts: Mutex::new(HashMap::new()),
            requests: Mutex::new(Vec::new()),
        }
    }
}

/// A running scripted server. Dropping it (or [`ScriptedServer::shutdown`]) stops it,
/// including responses still streaming.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    cancel: CancellationToken,
}

impl ScriptedServer {
    /// Start on a free port of 127.0.0.1. Must be called inside a Tokio runtime.
    pub fn start(script: Script) -> io::Result<ScriptedServer> {
        ScriptedServer::start_on_port(script, 0)
    }

    /// Start on 127.0.0.1:`port` (0 picks a free port). Must be called inside a Tokio runtime.
    pub fn start_on_port(script: Script, port: u16) -> io::Result<ScriptedServer> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(io::Error::other(
                "the scripted server must be started inside a Tokio runtime",
            ));
        }
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(script));
        let cancel = CancellationToken::new();
        tokio::spawn(accept_loop(listener, shared.clone(), cancel.clone()));
        Ok(ScriptedServer {
            addr,
            shared,
            cancel,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL for an Anthropic client: `http://127.0.0.1:PORT`.
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The base URL for an OpenAI client: `http://127.0.0.1:PORT/v1`.
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    pub fn shutdown(self) {
        // Drop does the work.
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Serve `script` on 127.0.0.1:`port` until the process ends, after printing
/// `listening on http://127.0.0.1:PORT` to stdout (for `cairn mock-server`).
pub async fn serve_forever(script: Script, port: u16) -> io::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    {
        use std::io::Write;
        let mut stdout = io::stdout().lock();
        writeln!(stdout, "listening on http://{addr}")?;
        stdout.flush()?;
    }
    let shared = Arc::new(Shared::new(script));
    accept_loop(listener, shared, CancellationToken::new()).await;
    Ok(())
}

/// A poisoned lock only means another connection task panicked; the data is still usable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, cancel: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            _ = cancel.cancelled() => return,
            a = listener.accept() => a,
        };
        let Ok((stream, _)) = accepted else {
            // Running out of file descriptors and the like: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let shared = shared.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = cancel.cancelled() => {}
                _ = handle(stream, &shared) => {}
            }
        });
    }
}

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Read one request: head up to CRLFCRLF, then `Content-Length` bytes of body.
async fn read_request(stream: &mut TcpStream) -> io::Result<RecordedRequest> {
    let mut buf = Vec::with_capacity(8192);
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::other("request head too large"));
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or("").split_whitespace();
    let method = request_line.next().unwrap_or("").to_string();
    let target = request_line.next().unwrap_or("/");
    let path = target.split('?').next().unwrap_or("/").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    if length > MAX_BODY {
        return Err(io::Error::other("request body too large"));
    }
    let has = |name: &str, value: &str| {
        headers
            .iter()
            .any(|(k, v)| k == name && v.eq_ignore_ascii_case(value))
    };
    if has("transfer-encoding", "chunked") {
        // Clients in our use (reqwest, curl -d) send a Content-Length; say so plainly.
        write_error(
            stream,
            411,
            r#"{"error":{"message":"send a Content-Length"}}"#,
            None,
        )
        .await?;
        return Err(io::Error::other("chunked request bodies are not supported"));
    }
    if has("expect", "100-continue") {
        // curl asks before sending bodies over 1 KiB and would otherwise wait a second.
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
    }
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = vec![0u8; (length - body.len()).min(64 * 1024)];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Ok(RecordedRequest {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        411 => "Length Required",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Error",
    }
}

async fn write_error(
    stream: &mut TcpStream,
    status: u16,
    body: &str,
    retry_after: Option<Duration>,
) -> io::Result<()> {
    // Whole seconds (rounded up) as the HTTP header has it, and the exact wait in
    // `retry-after-ms`, which clients that know it prefer.
    let retry = retry_after
        .map(|d| {
            let ms = d.as_millis();
            format!(
                "retry-after: {}\r\nretry-after-ms: {ms}\r\n",
                ms.div_ceil(1000)
            )
        })
        .unwrap_or_default();
    let response = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{retry}connection: close\r\n\r\n{body}",
        reason(status),
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

/// Which scripted turn a request is at (the assistant turns it already holds) and its system
/// prompt; `None` when the body is not a request of its wire format.
fn turn_and_system(wire: Wire, body: &Value) -> Option<(usize, String)> {
    if wire == Wire::Responses {
        let input = match body.get("input")? {
            Value::Array(items) => items.as_slice(),
            Value::String(_) => &[],
            _ => return None,
        };
        return Some((responses::turn_index(input), responses::system(body, input)));
    }
    let messages = body.get("messages").and_then(Value::as_array)?;
    let turn_index = messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .count();
    // Anthropic's `system`, or OpenAI's system messages.
    let system = match body.get("system") {
        Some(s) => s.to_string(),
        None => messages
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("system"))
            .map(Value::to_string)
            .collect(),
    };
    Some((turn_index, system))
}

async fn handle(mut stream: TcpStream, shared: &Shared) -> io::Result<()> {
    let request = read_request(&mut stream).await?;
    lock(&shared.requests).push(request.clone());
    let wire = match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/v1/messages") => Wire::Anthropic,
        ("POST", "/v1/chat/completions" | "/chat/completions") => Wire::OpenAi,
        ("POST", "/v1/responses" | "/responses") => Wire::Responses,
        _ => {
            let body = format!(
                r#"{{"error":{{"type":"not_found_error","message":"no route for {} {}"}}}}"#,
                request.method, request.path
            );
            return write_error(&mut stream, 404, &body, None).await;
        }
    };
    let Some((turn_index, system)) = turn_and_system(wire, &request.body) else {
        let body = wire::error_body(wire, 400);
        return write_error(&mut stream, 400, &body, None).await;
    };
    let (conversation, turns) = shared.script.turns_for(&system);
    let attempt = {
        let mut attempts = lock(&shared.attempts);
        let n = attempts.entry((conversation, turn_index)).or_insert(0);
        *n += 1;
        *n - 1
    };
    let fallback;
    let turn = match turns.get(turn_index) {
        Some(t) => t,
        None => {
            fallback = Turn::text(shared.script.after_last.as_deref().unwrap_or(NO_MORE_TURNS));
            &fallback
        }
    };
    let fault = script::fault_for_attempt(&turn.faults, attempt);
    if let Some(FaultKind::Status {
        status,
        body,
        retry_after,
    }) = fault
    {
        let body = body
            .clone()
            .unwrap_or_else(|| wire::error_body(wire, *status));
        let retry_after = retry_after.map(Duration::from_secs);
        return write_error(&mut stream, *status, &body, retry_after).await;
    }
    let chaos = match (&shared.chaos, fault) {
        (Some(c), None) => c.draw(),
        _ => None,
    };
    match chaos {
        Some(ChaosFault::RateLimit(wait)) => {
            let body = wire::error_body(wire, 429);
            return write_error(&mut stream, 429, &body, Some(wait)).await;
        }
        Some(ChaosFault::Unavailable) => {
            let body = wire::error_body(wire, 503);
            return write_error(&mut stream, 503, &body, None).await;
        }
        _ => {}
    }
    let model = request
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("scripted");
    let request_bytes = request.body.to_string().len();
    let ctx = RenderContext {
        turn_index,
        model,
        request_bytes,
        invalid_tool_json: fault == Some(&FaultKind::InvalidToolJson),
    };
    let mut frames = match wire {
        Wire::Anthropic => wire::anthropic_frames(turn, &ctx),
        Wire::OpenAi => wire::openai_frames(turn, &ctx),
        Wire::Responses => responses::frames(turn, &ctx),
    };
    match fault {
        Some(FaultKind::DropAfterEvents(n)) => frames.truncate(*n),
        Some(FaultKind::MalformedEventAt(i)) => match frames.get_mut(*i) {
            Some(f) => *f = wire::malformed_frame(wire),
            None => frames.push(wire::malformed_frame(wire)),
        },
        Some(FaultKind::CutEventAt(i)) => {
            if let Some(f) = frames.get_mut(*i) {
                *f = wire::cut_in_half(f);
            }
        }
        Some(FaultKind::StreamError(kind)) => {
            frames.truncate(1);
            frames.push(wire::error_frame(wire, kind));
        }
        Some(FaultKind::Truncate) => {
            frames.pop();
        }
        Some(FaultKind::UnclosedToolUse) => wire::unclose_tools(wire, &mut frames),
        Some(FaultKind::KeepAliveForever(_)) => frames.truncate(1),
        _ => {}
    }
    // Bytes of a frame sent after the last whole one, before the connection is dropped.
    let mut cut: Option<String> = None;
    match chaos {
        Some(ChaosFault::Disconnect { pick }) => {
            if let Some((i, keep)) = chaos::disconnect_point(&frames, pick) {
                let mut partial = frames.swap_remove(i);
                frames.truncate(i);
                let mut keep = keep;
                while !partial.is_char_boundary(keep) {
                    keep -= 1;
                }
                partial.truncate(keep);
                cut = Some(partial);
            }
        }
        Some(ChaosFault::Truncate) => {
            frames.pop();
        }
        Some(ChaosFault::Malformed { pick }) => {
            let n = frames.len().max(1) as u64;
            let i = usize::try_from(pick % n).unwrap_or(0);
            match frames.get_mut(i) {
                Some(f) => *f = wire::malformed_frame(wire),
                None => frames.push(wire::malformed_frame(wire)),
            }
        }
        _ => {}
    }
    stream
        .write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
        )
        .await?;
    stream.flush().await?;
    for f in frames {
        if turn.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(turn.delay_ms)).await;
        }
        stream.write_all(f.as_bytes()).await?;
        stream.flush().await?;
    }
    if let Some(FaultKind::KeepAliveForever(ms)) = fault {
        // Until the client gives up and the write fails, or the server stops.
        for alive in wire::keep_alives(wire).iter().cycle() {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
            stream.write_all(alive.as_bytes()).await?;
            stream.flush().await?;
        }
    }
    if let Some(partial) = cut {
        stream.write_all(partial.as_bytes()).await?;
        stream.flush().await?;
        // Dropped without a clean shutdown: the connection is cut mid-frame.
        return Ok(());
    }
    stream.shutdown().await
}
