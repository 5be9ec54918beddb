//! Model clients: the provider-neutral types ([`types`]), the streaming clients for the Anthropic
//! Messages API and OpenAI-compatible chat completions, SSE parsing, retry with backoff, pricing,
//! and a scripted model server used by the demo and the tests.
//!
//! The agent talks to a model only through [`ModelClient`] and [`retry::stream_with_retry`]; it
//! never sees a wire format.

pub mod anthropic;
pub mod auth;
pub mod client;
mod http;
pub mod openai;
mod openai_user;
pub mod pricing;
pub mod retry;
pub mod scripted;
pub mod sse;
pub mod tool_result;
pub mod types;

use std::pin::Pin;
use std::time::Duration;

use futures::Stream;

pub use client::{ClientOptions, ModelEndpoint, build_client, decode_frames};
pub use pricing::{context_window, cost_usd};
pub use types::{
    ContentBlock, Effort, Message, ModelRequest, Role, StopReason, StreamEvent, ToolResultBlock,
    ToolResultContent, ToolSpec,
};

/// The events of one streaming response.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Anthropic,
    OpenAi,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
        }
    }
}

/// A model endpoint that streams responses.
#[async_trait::async_trait]
pub trait ModelClient: Send + Sync {
    fn provider(&self) -> Provider;

    /// Whether the endpoint takes Anthropic's `defer_loading` tools and `tool_reference`
    /// blocks (first-party Anthropic by default). Others get deferred tools appended to the
    /// tool list once loaded.
    fn supports_tool_references(&self) -> bool {
        false
    }

    /// Send one request. Resolves once the response status is known: `Ok` with the event stream
    /// for a 2xx, `Err` otherwise. Dropping the stream cancels the request.
    async fn send(&self, request: &ModelRequest) -> Result<EventStream, LlmError>;
}

/// Why a model request failed. `Display` is the message shown to the person.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// A non-2xx response. `retry_after` comes from the `retry-after` header.
    #[error("{}", http_message(*status, message))]
    Http {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    /// An error event inside the stream (`overloaded_error`, `api_error`, ...).
    #[error("API error ({kind}): {message}")]
    Api { kind: String, message: String },
    /// The credentials could not be had (an `apiKeyHelper` that failed). Not retried.
    #[error("{0}")]
    Auth(String),
    #[error("could not connect to the model server: {0}")]
    Connect(String),
    #[error("the response stream broke: {0}")]
    Stream(String),
    #[error("no data from the model server for {}", seconds(.0))]
    Idle(Duration),
    /// Stream data that does not decode (not JSON, a delta for a block that never started, a
    /// block never closed). Retried: a flaky proxy or a cut connection produces these.
    #[error("the model server sent something unreadable: {0}")]
    Malformed(String),
    /// A 2xx answer that is not an event stream (a server or proxy ignoring `stream: true`).
    /// Not retried: the same request gets the same answer.
    #[error("the model server did not stream: {0}")]
    NotAStream(String),
    /// A line, an event or a content block past the memory limits (see `docs/llm.md`).
    /// Not retried: a server that sends one will send it again.
    #[error("the model server sent too much: {0}")]
    TooLarge(String),
    /// Retrying stopped at a limit; `last` is the error of the last attempt.
    #[error("{last} (gave up after {attempts} attempts in {}: {limit})", seconds(.elapsed))]
    GaveUp {
        attempts: u32,
        elapsed: Duration,
        /// Which limit: "the attempt limit, CAIRN_MAX_ATTEMPTS=8" and the like.
        limit: String,
        last: Box<LlmError>,
    },
}

fn seconds(d: &Duration) -> String {
    if d.as_secs() >= 1 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

fn http_message(status: u16, body: &str) -> String {
    let hint = match status {
        400 => "the request was rejected; check the model name and settings",
        401 => {
            "the credentials were refused; check ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, \
             apiKeyHelper or OPENAI_API_KEY"
        }
        403 => "the API key is not allowed to do this",
        404 => "not found; check the base URL and the model name",
        429 => "rate limited",
        529 => "the API is overloaded",
        500..=599 => "the model server had an error",
        _ => "unexpected response",
    };
    let body = body.trim();
    if body.is_empty() {
        format!("HTTP {status}: {hint}")
    } else {
        format!("HTTP {status}: {hint} ({body})")
    }
}

impl LlmError {
    /// Whether trying the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => matches!(status, 408 | 409 | 429 | 500..=504 | 529),
            LlmError::Api { kind, .. } => matches!(
                kind.as_str(),
                "overloaded_error" | "api_error" | "rate_limit_error" | "timeout_error"
            ),
            LlmError::Connect(_)
            | LlmError::Stream(_)
            | LlmError::Idle(_)
            | LlmError::Malformed(_) => true,
            LlmError::Auth(_)
            | LlmError::NotAStream(_)
            | LlmError::TooLarge(_)
            | LlmError::GaveUp { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_error_message() {
        assert_eq!(
            LlmError::Idle(Duration::from_secs(120)).to_string(),
            "no data from the model server for 120 s"
        );
        assert_eq!(
            LlmError::Idle(Duration::from_millis(300)).to_string(),
            "no data from the model server for 300 ms"
        );
    }
}
