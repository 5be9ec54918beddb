//! The HTTP plumbing both clients share: building a cheap `reqwest::Client`, sending a JSON
//! body with an idle timeout on the response head, turning a non-2xx response into
//! [`LlmError::Http`], and driving a wire-format [`Decoder`] over the SSE byte stream, with the
//! helpers both decoders share (content limits, assembling a finished tool call).
//!
//! Invariants of the streams built here: every wire frame goes through the decoder in order;
//! the stream ends right after the decoder reports the message finished; a stream that ends
//! (or breaks) before that yields one `LlmError::Stream`; no progress for the idle timeout
//! (keep-alives do not count) yields `LlmError::Idle`; a line or event past the parser's limit
//! yields `LlmError::TooLarge`; after an error nothing more is yielded.

use std::collections::VecDeque;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use super::sse::{SseFrame, SseParser};
use super::types::ContentBlock;
use super::{EventStream, LlmError, StreamEvent};

/// The most one content block (a text, a thinking block, one tool call's input JSON) may
/// accumulate: 16 MiB, far above what any model's output limit allows.
pub const MAX_BLOCK_BYTES: usize = 16 * 1024 * 1024;

/// The most all the blocks of one message may accumulate together: 64 MiB.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// The most content blocks (tool calls included) one message may have.
pub const MAX_BLOCKS: usize = 4096;

fn too_large(what: &str, limit: usize) -> LlmError {
    LlmError::TooLarge(format!(
        "{what} grew past {} MiB; stopped reading (a limit that protects memory)",
        limit / (1024 * 1024)
    ))
}

/// Append `piece` to a block being assembled, refusing to grow it past [`MAX_BLOCK_BYTES`] or
/// the message (whose content so far is `total` bytes) past [`MAX_MESSAGE_BYTES`]. `what`
/// names the block for the error ("the input of tool call `Write`").
pub(crate) fn append_capped(
    buf: &mut String,
    piece: &str,
    total: &mut usize,
    what: impl FnOnce() -> String,
) -> Result<(), LlmError> {
    if buf.len() + piece.len() > MAX_BLOCK_BYTES {
        return Err(too_large(&what(), MAX_BLOCK_BYTES));
    }
    if *total + piece.len() > MAX_MESSAGE_BYTES {
        return Err(too_large("the message", MAX_MESSAGE_BYTES));
    }
    *total += piece.len();
    buf.push_str(piece);
    Ok(())
}

/// Count one more block of a message, refusing more than [`MAX_BLOCKS`].
pub(crate) fn count_block(count: &mut usize) -> Result<(), LlmError> {
    *count += 1;
    if *count > MAX_BLOCKS {
        return Err(LlmError::TooLarge(format!(
            "the message has more than {MAX_BLOCKS} content blocks; stopped reading \
             (a limit that protects memory)"
        )));
    }
    Ok(())
}

/// A finished tool call: its input parsed (empty means `{}`), or `InvalidToolUse`.
pub(crate) fn tool_event(id: String, name: String, json: String) -> StreamEvent {
    if json.trim().is_empty() {
        return StreamEvent::BlockComplete(ContentBlock::ToolUse {
            id,
            name,
            input: json!({}),
        });
    }
    match serde_json::from_str::<Value>(&json) {
        Ok(input @ Value::Object(_)) => {
            StreamEvent::BlockComplete(ContentBlock::ToolUse { id, name, input })
        }
        Ok(_) => StreamEvent::InvalidToolUse {
            id,
            name,
            raw_input: json,
            error: "the tool input must be a JSON object".into(),
        },
        Err(e) => StreamEvent::InvalidToolUse {
            id,
            name,
            raw_input: json,
            error: format!("the tool input is not valid JSON: {e}"),
        },
    }
}

/// What a decoded frame was, for the idle deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Part of the answer (content, usage, a block boundary, the end).
    Progress,
    /// A keep-alive: a ping, an empty chunk. It does not hold off the idle deadline, so an
    /// endless stream of them ends there.
    KeepAlive,
}

/// A wire format's frame decoder: SSE frames in, provider-neutral events out.
pub(crate) trait Decoder: Send + 'static {
    /// Decode one frame. An `Err` ends the stream with that error.
    fn frame(&mut self, frame: &SseFrame, out: &mut Vec<StreamEvent>) -> Result<Seen, LlmError>;
    /// Whether the message is complete (see `docs/llm.md`: Anthropic `message_stop`, OpenAI
    /// `[DONE]`).
    fn is_done(&self) -> bool;
    /// Why the stream is incomplete when it ends now (for `LlmError::Stream`).
    fn cut_short(&self) -> String;
}

/// What every model request says it is: `cairn/<version>`.
pub const USER_AGENT: &str = concat!("cairn/", env!("CARGO_PKG_VERSION"));

/// Build an HTTP client for `base_url`. For a plain `http://` URL (a local server: Ollama,
/// vLLM, the scripted server) no TLS roots are loaded, which keeps start-up fast; `https://`
/// URLs get the platform verifier.
pub(crate) fn http_client(base_url: &str) -> Result<reqwest::Client, LlmError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .user_agent(USER_AGENT);
    if let Some(rest) = base_url.strip_prefix("http://") {
        // An empty custom root store: building it costs ~20 µs instead of ~3-30 ms for the
        // platform verifier, and an http:// endpoint never needs it (a redirect to https would
        // fail verification, which is the safe outcome).
        builder = builder.tls_certs_only(Vec::new()).http1_only();
        if is_loopback(rest) {
            // A proxy from HTTP_PROXY can never reach our own machine's server.
            builder = builder.no_proxy();
        }
    }
    builder
        .build()
        .map_err(|e| LlmError::Connect(format!("could not set up the HTTP client: {e}")))
}

/// Whether the authority at the start of `rest` (after `http://`) is this machine.
fn is_loopback(rest: &str) -> bool {
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// POST `body` and wait (at most `idle`) for the response head. A non-2xx status becomes
/// [`LlmError::Http`] with the message from the JSON error body.
pub(crate) async fn post_json(
    request: reqwest::RequestBuilder,
    body: String,
    idle: Duration,
) -> Result<reqwest::Response, LlmError> {
    static FIRST: std::sync::Once = std::sync::Once::new();
    FIRST.call_once(|| {
        // For measuring startup (scripts/bench-mcp-start.sh), beside the first frame's line.
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        tracing::info!("first model request sent (unix_ms={unix_ms})");
    });
    let send = request
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body)
        .send();
    let response = match tokio::time::timeout(idle, send).await {
        Err(_) => return Err(LlmError::Idle(idle)),
        Ok(Err(e)) => return Err(connect_error(&e)),
        Ok(Ok(r)) => r,
    };
    let status = response.status();
    let is_json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if status.is_success() && !is_json {
        return Ok(response);
    }
    let retry_after = retry_after(response.headers());
    let text = match tokio::time::timeout(idle, response.text()).await {
        Ok(Ok(t)) => t,
        _ => String::new(),
    };
    if status.is_success() {
        // A 2xx JSON body where a stream was asked for: a proxy or a server that ignores
        // `stream: true`. Its error message (if any) is the most useful thing to show.
        return Err(LlmError::NotAStream(format!(
            "expected an event stream but got JSON: {}",
            error_message(&text)
        )));
    }
    Err(LlmError::Http {
        status: status.as_u16(),
        message: error_message(&text),
        retry_after,
    })
}

/// reqwest's Display hides the cause ("error sending request"); the source chain says why.
fn error_chain(e: &reqwest::Error) -> String {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg
}

fn connect_error(e: &reqwest::Error) -> LlmError {
    let msg = error_chain(e);
    if e.is_connect() || e.is_request() {
        LlmError::Connect(msg)
    } else {
        LlmError::Stream(msg)
    }
}

/// The human part of an error body: `error.message` (Anthropic and OpenAI), `message`, or the
/// body itself cut to a readable length.
pub(crate) fn error_message(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        let msg = v
            .pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(|m| m.as_str());
        if let Some(m) = msg {
            return m.to_string();
        }
    }
    let body = body.trim();
    match body.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &body[..i]),
        None => body.to_string(),
    }
}

/// `retry-after-ms`, or `retry-after` as seconds (fractions allowed) or an HTTP date.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    parse_retry_after(value, chrono::Utc::now())
}

pub(crate) fn parse_retry_after(
    value: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = when.with_timezone(&chrono::Utc) - now;
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

struct DriveState<S, D> {
    bytes: S,
    parser: SseParser,
    decoder: D,
    pending: VecDeque<Result<StreamEvent, LlmError>>,
    idle: Duration,
    /// When the stream counts as idle: `idle` after the last frame that carried progress.
    /// Keep-alives (pings, comments, empty chunks) do not move it.
    deadline: tokio::time::Instant,
    ended: bool,
}

/// Turn a 2xx streaming response into events with `decoder`.
pub(crate) fn event_stream<D: Decoder>(
    response: reqwest::Response,
    decoder: D,
    idle: Duration,
) -> EventStream {
    let state = DriveState {
        bytes: Box::pin(response.bytes_stream()),
        parser: SseParser::new(),
        decoder,
        pending: VecDeque::new(),
        idle,
        deadline: tokio::time::Instant::now() + idle,
        ended: false,
    };
    futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(item) = st.pending.pop_front() {
                return Some((item, st));
            }
            if st.ended {
                return None;
            }
            let next = match tokio::time::timeout_at(st.deadline, st.bytes.next()).await {
                Err(_) => Err(LlmError::Idle(st.idle)),
                Ok(None) => {
                    let frames: Vec<SseFrame> = st.parser.finish().into_iter().collect();
                    st.feed(frames);
                    if !st.ended {
                        st.fail(LlmError::Stream(st.decoder.cut_short()));
                    }
                    continue;
                }
                Ok(Some(Err(e))) => Err(LlmError::Stream(error_chain(&e))),
                Ok(Some(Ok(chunk))) => Ok(chunk),
            };
            match next {
                Ok(chunk) => {
                    let mut frames = Vec::new();
                    let parsed = st.parser.push(&chunk, &mut frames);
                    st.feed(frames);
                    if let Err(e) = parsed
                        && !st.ended
                    {
                        st.fail(LlmError::TooLarge(format!(
                            "{e}; stopped reading (a limit that protects memory)"
                        )));
                    }
                }
                Err(e) => st.fail(e),
            }
        }
    })
    .boxed()
}

impl<S, D: Decoder> DriveState<S, D> {
    fn feed(&mut self, frames: Vec<SseFrame>) {
        let mut out = Vec::new();
        for frame in frames {
            if self.ended {
                return;
            }
            let result = self.decoder.frame(&frame, &mut out);
            self.pending.extend(out.drain(..).map(Ok));
            match result {
                Err(e) => self.fail(e),
                Ok(seen) => {
                    if seen == Seen::Progress {
                        self.deadline = tokio::time::Instant::now() + self.idle;
                    }
                    if self.decoder.is_done() {
                        self.ended = true;
                    }
                }
            }
        }
    }

    fn fail(&mut self, e: LlmError) {
        self.pending.push_back(Err(e));
        self.ended = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_message_prefers_the_json_message() {
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            ),
            "invalid x-api-key"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("  Bad Gateway \n"), "Bad Gateway");
    }

    #[test]
    fn content_limits_per_block_per_message_and_block_count() {
        let mut total = 0;
        let mut block = String::new();
        append_capped(&mut block, "abc", &mut total, || "a text block".into()).unwrap();
        assert_eq!((block.as_str(), total), ("abc", 3));
        let mut big = "x".repeat(MAX_BLOCK_BYTES - 1);
        let err = append_capped(&mut big, "yz", &mut total, || {
            "the input of tool call `W`".into()
        });
        assert_eq!(
            err.unwrap_err().to_string(),
            "the model server sent too much: the input of tool call `W` grew past 16 MiB; \
             stopped reading (a limit that protects memory)"
        );
        let mut total = MAX_MESSAGE_BYTES - 1;
        let err = append_capped(&mut String::new(), "yz", &mut total, || "x".into());
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("the message grew past 64 MiB"),
        );
        assert_eq!(total, MAX_MESSAGE_BYTES - 1, "nothing added on refusal");
        let mut count = MAX_BLOCKS - 1;
        count_block(&mut count).unwrap();
        assert!(matches!(
            count_block(&mut count),
            Err(LlmError::TooLarge(_))
        ));
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("127.0.0.1:8080/v1"));
        assert!(is_loopback("localhost:11434/v1"));
        assert!(is_loopback("[::1]:80"));
        assert!(is_loopback("LOCALHOST"));
        assert!(!is_loopback("10.0.0.2:8000/v1"));
        assert!(!is_loopback("example.com/v1"));
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = chrono::DateTime::parse_from_rfc2822("Wed, 21 Oct 2015 07:28:00 GMT")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("0.5", now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
    }
}
