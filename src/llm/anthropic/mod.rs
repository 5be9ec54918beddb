//! The Anthropic Messages API client: `POST {base}/v1/messages` with `stream: true`.
//!
//! Owns the request body (system as blocks, thinking budget, and the three prompt-caching
//! breakpoints: system block, last tool, last content block of the last user message) and the
//! decoding of every stream event into [`StreamEvent`]s. Invariants: a content block is
//! announced as `BlockComplete` (or `InvalidToolUse`) exactly once, at its `content_block_stop`;
//! each `Usage` event carries the whole usage known so far; `Finished` comes at `message_stop`,
//! which is what makes a message complete (a `message_stop` while a block is still open is an
//! error, so an unclosed tool call is never dropped silently). `ping`s and empty deltas are
//! keep-alives. An event whose data is not JSON (cut in half, or missing) fails the attempt
//! whatever its type, so the retry answers whole and no text goes missing silently.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::auth::{Auth, Login};
use super::http::{self, Decoder, Seen, append_capped, count_block, tool_event};
use super::sse::SseFrame;
use super::types::{ContentBlock, ModelRequest, StopReason, StreamEvent};
use super::{EventStream, LlmError, ModelClient, Provider};
use crate::protocol::Usage;

mod body;

pub use body::{request_body, request_json};

pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The beta that `defer_loading` tools and `tool_reference` blocks need.
pub const TOOL_SEARCH_BETA: &str = "advanced-tool-use-2025-11-20";

/// A streaming client for one Anthropic-compatible endpoint.
pub struct AnthropicClient {
    http: reqwest::Client,
    base_url: String,
    auth: Auth,
    idle_timeout: Duration,
    /// Whether the endpoint takes `defer_loading` and `tool_reference` (see
    /// [`ModelClient::supports_tool_references`]).
    tool_references: bool,
}

/// Whether `base_url` is Anthropic's own API, which knows `defer_loading` and `tool_reference`
/// (proxies and gateways often do not).
pub fn is_first_party(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .is_ok_and(|u| u.scheme() == "https" && u.host_str() == Some("api.anthropic.com"))
}

impl AnthropicClient {
    /// `base_url` without the `/v1` suffix, e.g. `https://api.anthropic.com`.
    pub fn new(
        base_url: &str,
        api_key: Option<String>,
        login: Login,
        idle_timeout: Duration,
    ) -> Result<AnthropicClient, LlmError> {
        Ok(AnthropicClient {
            http: http::http_client(base_url)?,
            base_url: base_url.trim_end_matches('/').to_string(),
            auth: Auth::new(Provider::Anthropic, api_key, login),
            idle_timeout,
            tool_references: is_first_party(base_url),
        })
    }

    /// Say whether the endpoint takes deferred tools, whatever its URL (a setting, a test).
    pub fn with_tool_references(mut self, on: bool) -> AnthropicClient {
        self.tool_references = on;
        self
    }
}

#[async_trait::async_trait]
impl ModelClient for AnthropicClient {
    fn provider(&self) -> Provider {
        Provider::Anthropic
    }

    fn supports_tool_references(&self) -> bool {
        self.tool_references
    }

    async fn send(&self, request: &ModelRequest) -> Result<EventStream, LlmError> {
        let url = format!("{}/v1/messages", self.base_url);
        let deferring = request.tools.iter().any(|t| t.defer_loading);
        let build = || {
            let builder = self
                .http
                .post(&url)
                .header("anthropic-version", ANTHROPIC_VERSION)
                .header(reqwest::header::ACCEPT, "text/event-stream");
            if deferring {
                builder.header("anthropic-beta", TOOL_SEARCH_BETA)
            } else {
                builder
            }
        };
        let response = self
            .auth
            .send(build, request_json(request), self.idle_timeout)
            .await?;
        Ok(http::event_stream(
            response,
            AnthropicDecoder::default(),
            self.idle_timeout,
        ))
    }
}

/// A block being assembled from deltas.
#[derive(Debug)]
enum Partial {
    Text(String),
    Thinking {
        thinking: String,
        signature: Option<String>,
    },
    Tool {
        id: String,
        name: String,
        json: String,
    },
    /// A block the provider made or ran itself (`server_tool_use`, `web_search_tool_result`,
    /// `redacted_thinking`, types cairn does not know), kept as its start event gave it; the
    /// input of a server tool call streams into `json` as a client tool's does.
    Server {
        block: Value,
        json: String,
    },
    /// A block with nothing in it to keep (never started with content).
    Ignored,
}

/// Decodes the Anthropic event stream.
#[derive(Debug, Default)]
pub(crate) struct AnthropicDecoder {
    blocks: BTreeMap<u64, Partial>,
    usage: Usage,
    stop_reason: Option<StopReason>,
    done: bool,
    /// Blocks started and content bytes accumulated so far (both capped).
    block_count: usize,
    content_bytes: usize,
}

fn malformed(what: &str, data: &str) -> LlmError {
    let data: String = data.chars().take(200).collect();
    LlmError::Malformed(format!("{what}: {data}"))
}

pub(crate) fn stop_reason(s: &str) -> StopReason {
    match s {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        _ => StopReason::Other,
    }
}

fn merge_usage(usage: &mut Usage, v: &Value) {
    let field = |name: &str| v.get(name).and_then(Value::as_u64);
    if let Some(n) = field("input_tokens") {
        usage.input_tokens = n;
    }
    if let Some(n) = field("output_tokens") {
        usage.output_tokens = n;
    }
    if let Some(n) = field("cache_creation_input_tokens") {
        usage.cache_creation_input_tokens = n;
    }
    if let Some(n) = field("cache_read_input_tokens") {
        usage.cache_read_input_tokens = n;
    }
}

impl Decoder for AnthropicDecoder {
    fn is_done(&self) -> bool {
        self.done
    }

    fn cut_short(&self) -> String {
        let mut why = "the connection closed before `message_stop`".to_string();
        if let Some(name) = self.open_tool() {
            why.push_str(&format!(" (tool call `{name}` was never closed)"));
        }
        why
    }

    fn frame(&mut self, frame: &SseFrame, out: &mut Vec<StreamEvent>) -> Result<Seen, LlmError> {
        // A bare `event: ping` carries nothing to lose. Any other event whose data does not
        // decode — cut in half, or cut off entirely — fails the attempt, whatever its type.
        if frame.event == "ping" && frame.data.trim().is_empty() {
            return Ok(Seen::KeepAlive);
        }
        let v: Value = serde_json::from_str(&frame.data).map_err(|e| {
            malformed(
                &format!("event `{}` is not JSON ({e})", frame.event),
                &frame.data,
            )
        })?;
        let mut seen = Seen::Progress;
        // The `type` inside the data is authoritative; the `event:` line may be absent.
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(frame.event.as_str());
        let index = || {
            v.get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| malformed(&format!("`{kind}` without an index"), &frame.data))
        };
        match kind {
            "ping" => seen = Seen::KeepAlive,
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    merge_usage(&mut self.usage, u);
                    out.push(StreamEvent::Usage(self.usage));
                }
            }
            "content_block_start" => {
                let block = v
                    .get("content_block")
                    .ok_or_else(|| malformed("content_block_start without a block", &frame.data))?;
                let text = |k: &str| {
                    block
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                let partial = match block.get("type").and_then(Value::as_str) {
                    Some("text") => Partial::Text(text("text")),
                    Some("thinking") => Partial::Thinking {
                        thinking: text("thinking"),
                        signature: block
                            .get("signature")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .map(str::to_string),
                    },
                    Some("tool_use") => Partial::Tool {
                        id: text("id"),
                        name: text("name"),
                        // Some servers put the whole input in the start block.
                        json: match block.get("input") {
                            Some(Value::Object(o)) if !o.is_empty() => {
                                Value::Object(o.clone()).to_string()
                            }
                            _ => String::new(),
                        },
                    },
                    Some(_) => Partial::Server {
                        block: block.clone(),
                        json: String::new(),
                    },
                    None => Partial::Ignored,
                };
                let i = index()?;
                count_block(&mut self.block_count)?;
                let mut partial = partial;
                // Content given whole in the start event counts against the limits too.
                if let Partial::Text(t)
                | Partial::Thinking { thinking: t, .. }
                | Partial::Tool { json: t, .. } = &mut partial
                {
                    let whole = std::mem::take(t);
                    append_capped(t, &whole, &mut self.content_bytes, || {
                        "a content block".into()
                    })?;
                }
                if let Partial::Server { block, .. } = &partial {
                    append_capped(
                        &mut String::new(),
                        &block.to_string(),
                        &mut self.content_bytes,
                        || "a server block".into(),
                    )?;
                }
                // A second start for an open block would silently lose the first (a tool call
                // among them): refuse it.
                if let Some(old) = self.blocks.insert(i, partial)
                    && !matches!(old, Partial::Ignored)
                {
                    return Err(malformed(
                        &format!("block {i} started again before it was closed"),
                        &frame.data,
                    ));
                }
            }
            "content_block_delta" => {
                let i = index()?;
                let delta = v
                    .get("delta")
                    .ok_or_else(|| malformed("content_block_delta without a delta", &frame.data))?;
                let s = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or("");
                let piece = match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => s("text"),
                    Some("thinking_delta") => s("thinking"),
                    Some("signature_delta") => s("signature"),
                    Some("input_json_delta") => s("partial_json"),
                    _ => "",
                };
                if piece.is_empty() {
                    seen = Seen::KeepAlive;
                }
                match (
                    self.blocks.get_mut(&i),
                    delta.get("type").and_then(Value::as_str),
                ) {
                    (Some(Partial::Text(t)), Some("text_delta")) => {
                        append_capped(t, piece, &mut self.content_bytes, || "a text block".into())?;
                        if !piece.is_empty() {
                            out.push(StreamEvent::TextDelta(piece.to_string()));
                        }
                    }
                    (Some(Partial::Thinking { thinking, .. }), Some("thinking_delta")) => {
                        append_capped(thinking, piece, &mut self.content_bytes, || {
                            "a thinking block".into()
                        })?;
                        if !piece.is_empty() {
                            out.push(StreamEvent::ThinkingDelta(piece.to_string()));
                        }
                    }
                    (Some(Partial::Thinking { signature, .. }), Some("signature_delta")) => {
                        append_capped(
                            signature.get_or_insert_default(),
                            piece,
                            &mut self.content_bytes,
                            || "a thinking signature".into(),
                        )?;
                    }
                    (Some(Partial::Tool { json, name, .. }), Some("input_json_delta")) => {
                        append_capped(json, piece, &mut self.content_bytes, || {
                            format!("the input of tool call `{name}`")
                        })?;
                    }
                    (Some(Partial::Server { json, .. }), Some("input_json_delta")) => {
                        append_capped(json, piece, &mut self.content_bytes, || {
                            "the input of a server tool call".into()
                        })?;
                    }
                    (Some(Partial::Ignored), _) => {}
                    (None, _) => {
                        return Err(malformed(
                            "a delta for a block that never started",
                            &frame.data,
                        ));
                    }
                    // A delta kind we do not know for this block (e.g. citations): skip it.
                    _ => {}
                }
            }
            "content_block_stop" => {
                let i = index()?;
                match self.blocks.remove(&i) {
                    Some(Partial::Text(text)) => {
                        out.push(StreamEvent::BlockComplete(ContentBlock::Text { text }))
                    }
                    Some(Partial::Thinking {
                        thinking,
                        signature,
                    }) => out.push(StreamEvent::BlockComplete(ContentBlock::Thinking {
                        thinking,
                        signature,
                    })),
                    Some(Partial::Tool { id, name, json }) => out.push(tool_event(id, name, json)),
                    Some(Partial::Server { mut block, json }) => {
                        if !json.trim().is_empty() {
                            let input = serde_json::from_str::<Value>(&json).map_err(|e| {
                                malformed(
                                    &format!("a server tool call's input is not JSON ({e})"),
                                    &frame.data,
                                )
                            })?;
                            block["input"] = input;
                        }
                        out.push(StreamEvent::BlockComplete(ContentBlock::Server(block)));
                    }
                    Some(Partial::Ignored) => {}
                    None => {
                        return Err(malformed(
                            "a stop for a block that never started",
                            &frame.data,
                        ));
                    }
                }
            }
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(stop_reason(r));
                }
                if let Some(u) = v.get("usage") {
                    merge_usage(&mut self.usage, u);
                    out.push(StreamEvent::Usage(self.usage));
                }
            }
            "message_stop" => {
                if let Some((i, _)) = self
                    .blocks
                    .iter()
                    .find(|(_, b)| !matches!(b, Partial::Ignored))
                {
                    let what = match self.open_tool() {
                        Some(name) => format!("tool call `{name}`"),
                        None => format!("block {i}"),
                    };
                    return Err(LlmError::Malformed(format!(
                        "`message_stop` while {what} was never closed"
                    )));
                }
                self.done = true;
                out.push(StreamEvent::Finished(
                    self.stop_reason.unwrap_or(StopReason::EndTurn),
                ));
            }
            "error" => {
                let kind = v
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown_error");
                let message = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                return Err(LlmError::Api {
                    kind: kind.to_string(),
                    message: message.to_string(),
                });
            }
            // New event types are allowed by the API's versioning policy: ignore them (and
            // they do not count as progress, or a stream of them would never go idle).
            _ => seen = Seen::KeepAlive,
        }
        Ok(seen)
    }
}

impl AnthropicDecoder {
    /// The name of a tool call still being streamed, if any.
    fn open_tool(&self) -> Option<&str> {
        self.blocks.values().find_map(|b| match b {
            Partial::Tool { name, .. } => Some(name.as_str()),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests;
