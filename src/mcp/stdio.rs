//! The stdio transport to a server's child process: one JSON-RPC message per line each way.
//!
//! cairn reads the lines itself rather than through rmcp's child-process transport, whose
//! reader drops any line over 16 MiB and waits on: a server answering a call with 30 MB of
//! text left the call waiting for its timeout (ten minutes by default) with nothing said. Here
//! a message may be up to [`MAX_MESSAGE_BYTES`]; a longer one is never buffered: it is scanned
//! as it streams past for its top-level `id` ([`IdScan`]), and that call gets an error answer
//! at once, saying how large the answer was. An answer that is not a JSON-RPC message rmcp can
//! read is answered the same way when its `id` can be found, so no call waits on a reply that
//! was already sent. The server's stderr goes to the log a bounded line at a time, and its last
//! lines are kept ([`StderrTail`]) for `/mcp` to show why a server failed.

use std::sync::Arc;

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::Mutex;

/// The largest message read from a server (one line). An answer carries a tool's whole result,
/// which is spilled to a file past `MAX_MCP_OUTPUT_TOKENS`, so this only bounds memory.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// At most this much of one stderr line reaches the log.
const MAX_STDERR_LINE: usize = 2000;

/// A transport over a reader (the server's stdout) and a writer (its stdin).
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    max: usize,
    /// Set while the rest of an oversized line is skipped.
    skipping: Option<IdScan>,
    write: Arc<Mutex<Option<W>>>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineTransport<R, W> {
    pub fn new(read: R, write: W, max: usize) -> Self {
        LineTransport {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            max,
            skipping: None,
            write: Arc::new(Mutex::new(Some(write))),
        }
    }
}

/// What one step of reading produced.
enum Read {
    /// A whole line is in `line`.
    Line,
    /// A line longer than the limit ended; what was found of it.
    Oversized {
        scan: IdScan,
        bytes: usize,
    },
    Eof,
}

impl<R: AsyncRead + Unpin, W> LineTransport<R, W> {
    /// Read to the end of the next line, buffering at most `max` bytes of it. Cancel-safe:
    /// nothing is consumed from the reader without being recorded in `self`.
    async fn read_line(&mut self) -> std::io::Result<Read> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Read::Eof);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..take];
            if self.skipping.is_none() && self.line.len() + take > self.max {
                let mut scan = IdScan::default();
                scan.feed(&self.line);
                scan.seen = self.line.len();
                self.line.clear();
                self.skipping = Some(scan);
            }
            match &mut self.skipping {
                Some(scan) => {
                    scan.feed(chunk);
                    scan.seen += take;
                }
                None => self.line.extend_from_slice(chunk),
            }
            self.read.consume(take);
            if newline.is_some() {
                return Ok(match self.skipping.take() {
                    Some(scan) => Read::Oversized {
                        bytes: scan.seen,
                        scan,
                    },
                    None => Read::Line,
                });
            }
        }
    }
}

impl<R, W> Transport<RoleClient> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let mut guard = write.lock().await;
            let Some(w) = guard.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the transport is closed",
                ));
            };
            w.write_all(&bytes).await?;
            w.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.read_line().await {
                Ok(Read::Line) => {}
                Ok(Read::Eof) => return None,
                Ok(Read::Oversized { scan, bytes }) => {
                    let why = oversized(bytes, self.max);
                    tracing::warn!(target: "cairn::mcp", "{why}");
                    match scan.answered_id().and_then(|id| error_answer(id, &why)) {
                        Some(answer) => return Some(answer),
                        None => continue,
                    }
                }
                Err(e) => {
                    tracing::warn!(target: "cairn::mcp", "reading from the server failed: {e}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text) {
                Ok(message) => return Some(message),
                Err(e) => {
                    let shown: String =
                        String::from_utf8_lossy(&text[..text.len().min(200)]).into();
                    tracing::debug!(target: "cairn::mcp", "unreadable message ({e}): {shown}");
                    let mut scan = IdScan::default();
                    scan.feed(text);
                    let why = format!("the server's answer could not be read: {e}");
                    if let Some(answer) = scan.answered_id().and_then(|id| error_answer(id, &why)) {
                        return Some(answer);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing the server's stdin is how a stdio server is asked to stop.
        if let Some(mut w) = self.write.lock().await.take() {
            let _ = w.shutdown().await;
        }
        Ok(())
    }
}

/// Why an answer of `bytes` bytes was not read.
fn oversized(bytes: usize, max: usize) -> String {
    let mib = |n: usize| format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0));
    format!(
        "the server's answer is {}, more than the {} cairn reads of one message; ask the tool \
         for less (a smaller page, range or query)",
        mib(bytes),
        mib(max)
    )
}

/// An error answer to the request `id`, as rmcp reads one from a server.
fn error_answer(id: Value, why: &str) -> Option<RxJsonRpcMessage<RoleClient>> {
    serde_json::from_value(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32603, "message": why},
    }))
    .ok()
}

/// Log a server's stderr, a bounded line at a time (a line without an end is cut, not kept).
pub async fn log_stderr(
    stderr: impl AsyncRead + Unpin,
    server: String,
    tail: Option<Arc<StderrTail>>,
) {
    let mut read = BufReader::new(stderr);
    let mut line: Vec<u8> = Vec::new();
    let keep = |line: &[u8]| {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end();
        tracing::debug!(target: "cairn::mcp", server = %server, "stderr: {}", text);
        if let Some(tail) = &tail {
            tail.push(text);
        }
    };
    loop {
        let available = match read.fill_buf().await {
            Ok(a) if !a.is_empty() => a,
            _ => break,
        };
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        let room = MAX_STDERR_LINE.saturating_sub(line.len());
        line.extend_from_slice(&available[..take.min(room)]);
        read.consume(take);
        if newline.is_some() {
            keep(&line);
            line.clear();
        }
    }
    // A last line without its newline (the server exited mid-line).
    if !line.is_empty() {
        keep(&line);
    }
    if let Some(tail) = &tail {
        tail.ended();
    }
}

/// The last [`StderrTail::LINES`] lines a server wrote to stderr (each bounded), across its
/// restarts: what `/mcp` shows of a server that failed (every line also goes to the server's
/// log file, when it has one). When the stream ends (the server
/// exited) the `changed` signal is bumped, so a client that was told of the failure before the
/// last lines were read is sent the list again, with them.
#[derive(Debug, Default)]
pub struct StderrTail {
    lines: std::sync::Mutex<std::collections::VecDeque<String>>,
    changed: Option<Arc<tokio::sync::watch::Sender<u64>>>,
    /// Every line is also appended here.
    log: Option<Arc<super::server_log::ServerLog>>,
}

impl StderrTail {
    pub const LINES: usize = 12;

    /// A tail whose end bumps `changed`, its lines also written to `log`.
    pub fn telling(
        changed: Arc<tokio::sync::watch::Sender<u64>>,
        log: Option<Arc<super::server_log::ServerLog>>,
    ) -> StderrTail {
        StderrTail {
            lines: Default::default(),
            changed: Some(changed),
            log,
        }
    }

    /// The stream ended: every line there will be of this run is in.
    fn ended(&self) {
        if let Some(changed) = &self.changed {
            changed.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    fn push(&self, line: &str) {
        if let Some(log) = &self.log {
            log.stderr(line);
        }
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == Self::LINES {
            lines.pop_front();
        }
        lines.push_back(line.to_string());
    }

    /// The lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.iter().cloned().collect()
    }
}

/// Finds the top-level `"id"` of a JSON object streaming past, in constant memory, and
/// whether the object is an answer (it has no top-level `"method"`).
#[derive(Default)]
struct IdScan {
    depth: usize,
    in_string: bool,
    escape: bool,
    /// At the top level: the next string is a key.
    expect_key: bool,
    /// Reading a top-level key into `key`.
    in_key: bool,
    key: Vec<u8>,
    /// Copying the top-level `"id"` value into `id`.
    in_id: bool,
    id: Vec<u8>,
    has_method: bool,
    /// Bytes seen of the line.
    seen: usize,
}

/// Longer keys and ids are not the ones looked for.
const MAX_SCANNED: usize = 256;

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.in_id && !(self.depth == 1 && !self.in_string && matches!(b, b',' | b'}')) {
                push_bounded(&mut self.id, b);
            }
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if b == b'\\' {
                    self.escape = true;
                } else if b == b'"' {
                    self.in_string = false;
                    self.in_key = false;
                    continue;
                }
                if self.in_key {
                    push_bounded(&mut self.key, b);
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    if self.depth == 1 && self.expect_key {
                        self.in_key = true;
                        self.expect_key = false;
                        self.key.clear();
                    }
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    if self.depth == 1 {
                        self.expect_key = b == b'{';
                    }
                }
                b'}' | b']' => {
                    if self.depth == 1 {
                        self.in_id = false;
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                b':' if self.depth == 1 => match self.key.as_slice() {
                    b"id" => {
                        self.in_id = true;
                        self.id.clear();
                    }
                    b"method" => self.has_method = true,
                    _ => {}
                },
                b',' if self.depth == 1 => {
                    self.in_id = false;
                    self.expect_key = true;
                }
                _ => {}
            }
        }
    }

    /// The id, when the object is an answer to a request of ours (a number or a string).
    fn answered_id(&self) -> Option<Value> {
        if self.has_method || self.id.len() >= MAX_SCANNED {
            return None;
        }
        serde_json::from_slice::<Value>(&self.id)
            .ok()
            .filter(|id| id.is_number() || id.is_string())
    }
}

fn push_bounded(buf: &mut Vec<u8>, b: u8) {
    if buf.len() < MAX_SCANNED {
        buf.push(b);
    }
}

#[cfg(test)]
#[path = "stdio_tests.rs"]
mod tests;
