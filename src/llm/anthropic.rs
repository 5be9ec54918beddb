//! The Anthropic Messages API client: `POST {base}/v1/messages` with `stream: true`.
//!
//! Owns the request body (system as blocks, thinking budget, and the three prompt-caching
//! breakpoints: system block, last tool, last content block of the last user message) and the
//! decoding of every stream event into [`StreamEvent`]s. Invariants: a content block is
//! announced as `BlockComplete` (or `InvalidToolUse`) exactly once, at its `content_block_stop`;
//! each `Usage` event carries the whole usage known so far; `Finished` comes at `message_stop`,
//! which is what makes a message complete (a `message_stop` while a block is still open is an
//! error, so an unclosed tool call is never dropped silently). `ping`s and empty deltas are
//! keep-alives.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::auth::{Auth, Login};
use super::http::{self, Decoder, Seen, append_capped, count_block, tool_event};
use super::sse::SseFrame;
use super::types::{ContentBlock, ModelRequest, Role, StopReason, StreamEvent};
use super::{EventStream, LlmError, ModelClient, Provider};
use crate::protocol::Usage;

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

/// The JSON body for `request`, with prompt-caching breakpoints, as sent (see
/// [`request_json`]).
pub fn request_body(request: &ModelRequest) -> Value {
    serde_json::from_str(&request_json(request)).unwrap_or(Value::Null)
}

/// The JSON text of the body for `request`, with prompt-caching breakpoints: on the system
/// prompt, on the last tool the model sees, and on the last block of the last user message.
///
/// Written straight from the messages rather than through a `serde_json::Value` tree: a
/// resumed 2,000-message session's body is 2 MiB, and building the tree first cost more than
/// writing it (every request of a long session pays this).
pub fn request_json(request: &ModelRequest) -> String {
    let ephemeral = || json!({"type": "ephemeral"});
    let marked = request.messages.iter().rposition(|m| m.role == Role::User);
    let system = (!request.system.is_empty()).then(|| {
        json!([{
            "type": "text",
            "text": request.system,
            "cache_control": ephemeral(),
        }])
    });
    // The breakpoint goes on the last tool the model sees: deferred ones stay out of the
    // prompt until referenced.
    let last_seen = request.tools.iter().rposition(|t| !t.defer_loading);
    let tools: Vec<Value> = request
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut tool = json!({
                "name": t.name,
                "description": t.description,
                "input_schema": t.input_schema,
            });
            if t.defer_loading {
                tool["defer_loading"] = Value::Bool(true);
            }
            if Some(i) == last_seen {
                tool["cache_control"] = ephemeral();
            }
            tool
        })
        .collect();
    let body = Body {
        model: &request.model,
        max_tokens: request.max_tokens,
        stream: true,
        messages: Messages {
            messages: &request.messages,
            marked,
        },
        system,
        tools,
        thinking: request
            .thinking_budget
            .map(|budget| json!({"type": "enabled", "budget_tokens": budget})),
    };
    // Serialising these types cannot fail: every map key is a string.
    serde_json::to_string(&body).unwrap_or_default()
}

/// The body's fields, in the order they are sent.
#[derive(serde::Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Value>,
}

/// The messages, the one at `marked` with a cache breakpoint on its last block.
struct Messages<'a> {
    messages: &'a [super::types::Message],
    marked: Option<usize>,
}

impl serde::Serialize for Messages<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        #[derive(serde::Serialize)]
        struct Plain<'a> {
            role: Role,
            content: &'a [ContentBlock],
        }
        let mut seq = serializer.serialize_seq(Some(self.messages.len()))?;
        for (i, m) in self.messages.iter().enumerate() {
            if Some(i) != self.marked {
                seq.serialize_element(&Plain {
                    role: m.role,
                    content: &m.content,
                })?;
                continue;
            }
            let mut message = json!({"role": m.role, "content": m.content});
            if let Some(block) = message
                .get_mut("content")
                .and_then(Value::as_array_mut)
                .and_then(|blocks| blocks.last_mut())
                .and_then(Value::as_object_mut)
            {
                block.insert("cache_control".into(), json!({"type": "ephemeral"}));
            }
            seq.serialize_element(&message)?;
        }
        seq.end()
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
    /// Redacted thinking and block types we do not know: their content is not kept.
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
                    Some("tool_use") | Some("server_tool_use") => Partial::Tool {
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
                    _ => Partial::Ignored,
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
mod tests {
    use super::*;
    use crate::llm::types::{Message, ToolSpec};

    fn decode(frames: &[(&str, &str)]) -> (Vec<StreamEvent>, Result<(), LlmError>) {
        let mut d = AnthropicDecoder::default();
        let mut out = Vec::new();
        for (event, data) in frames {
            let f = SseFrame {
                event: event.to_string(),
                data: data.to_string(),
            };
            if let Err(e) = d.frame(&f, &mut out) {
                return (out, Err(e));
            }
        }
        (out, Ok(()))
    }

    #[test]
    fn body_has_cache_breakpoints_and_thinking() {
        let request = ModelRequest {
            model: "claude-x".into(),
            system: "be brief".into(),
            messages: vec![
                Message::user_text("one"),
                Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::Text { text: "ok".into() }],
                },
                Message {
                    role: Role::User,
                    content: vec![
                        ContentBlock::Text { text: "a".into() },
                        ContentBlock::Text { text: "b".into() },
                    ],
                },
            ],
            tools: vec![
                ToolSpec {
                    name: "A".into(),
                    description: "a".into(),
                    input_schema: json!({"type": "object"}),
                    defer_loading: false,
                },
                ToolSpec {
                    name: "B".into(),
                    description: "b".into(),
                    input_schema: json!({"type": "object"}),
                    defer_loading: false,
                },
            ],
            max_tokens: 1000,
            thinking_budget: Some(500),
        };
        let body = request_body(&request);
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(body["tools"][0].get("cache_control"), None);
        assert_eq!(
            body["tools"][1]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(body["messages"][0]["content"][0].get("cache_control"), None);
        assert_eq!(body["messages"][2]["content"][0].get("cache_control"), None);
        assert_eq!(
            body["messages"][2]["content"][1],
            json!({"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}})
        );
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 500})
        );
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["max_tokens"], json!(1000));
    }

    #[test]
    fn decodes_text_tool_and_usage() {
        let (events, result) = decode(&[
            (
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":4,"output_tokens":1}}}"#,
            ),
            ("ping", r#"{"type":"ping"}"#),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":0}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"Glob","input":{}}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":1}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        result.unwrap();
        let usage0 = Usage {
            input_tokens: 10,
            output_tokens: 1,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 4,
        };
        assert_eq!(
            events,
            vec![
                StreamEvent::Usage(usage0),
                StreamEvent::TextDelta("Hi".into()),
                StreamEvent::BlockComplete(ContentBlock::Text { text: "Hi".into() }),
                StreamEvent::BlockComplete(ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "Glob".into(),
                    input: json!({})
                }),
                StreamEvent::Usage(Usage {
                    output_tokens: 7,
                    ..usage0
                }),
                StreamEvent::Finished(StopReason::ToolUse),
            ]
        );
    }

    #[test]
    fn error_event_and_bad_json() {
        let (_, result) = decode(&[(
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )]);
        assert_eq!(
            result,
            Err(LlmError::Api {
                kind: "overloaded_error".into(),
                message: "Overloaded".into()
            })
        );
        let (_, result) = decode(&[("message_start", "{oops")]);
        let err = result.unwrap_err().to_string();
        assert!(
            err.starts_with(
                "the model server sent something unreadable: event `message_start` is not JSON"
            ),
            "{err}"
        );
    }

    #[test]
    fn unclosed_or_restarted_tool_blocks_are_errors() {
        let start = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"Read","input":{}}}"#;
        let (events, result) = decode(&[
            ("content_block_start", start),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        assert_eq!(events, vec![]);
        assert_eq!(
            result,
            Err(LlmError::Malformed(
                "`message_stop` while tool call `Read` was never closed".into()
            ))
        );
        let (_, result) = decode(&[
            ("content_block_start", start),
            ("content_block_start", start),
        ]);
        assert!(
            result
                .unwrap_err()
                .to_string()
                .contains("block 0 started again before it was closed")
        );
        let mut d = AnthropicDecoder::default();
        let f = SseFrame {
            event: "content_block_start".into(),
            data: start.into(),
        };
        d.frame(&f, &mut Vec::new()).unwrap();
        assert_eq!(
            d.cut_short(),
            "the connection closed before `message_stop` (tool call `Read` was never closed)"
        );
    }

    #[test]
    fn pings_and_empty_deltas_are_keep_alives() {
        let mut d = AnthropicDecoder::default();
        let mut out = Vec::new();
        let mut seen = |data: &str| {
            let f = SseFrame {
                event: "message".into(),
                data: data.into(),
            };
            d.frame(&f, &mut out).unwrap()
        };
        assert_eq!(seen(r#"{"type":"ping"}"#), Seen::KeepAlive);
        assert_eq!(seen(r#"{"type":"some_future_event"}"#), Seen::KeepAlive);
        assert_eq!(
            seen(
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
            ),
            Seen::Progress
        );
        assert_eq!(
            seen(
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}"#
            ),
            Seen::KeepAlive
        );
        assert_eq!(
            seen(
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}"#
            ),
            Seen::Progress
        );
        assert_eq!(out, vec![StreamEvent::TextDelta("a".into())]);
    }

    #[test]
    fn tool_event_variants() {
        assert_eq!(
            tool_event("i".into(), "n".into(), "[1]".into()),
            StreamEvent::InvalidToolUse {
                id: "i".into(),
                name: "n".into(),
                raw_input: "[1]".into(),
                error: "the tool input must be a JSON object".into()
            }
        );
        assert!(matches!(
            tool_event("i".into(), "n".into(), "{\"a\":".into()),
            StreamEvent::InvalidToolUse { .. }
        ));
    }
}
