//! The OpenAI-compatible chat-completions client (OpenAI, Ollama, vLLM, ...):
//! `POST {base}/chat/completions` with `stream: true` and `stream_options.include_usage`.
//!
//! Owns the mapping from the canonical (Anthropic-shaped) conversation to chat messages and the
//! decoding of streamed chunks. Invariants: tool calls are assembled by their `index` across
//! chunks; the finished blocks (thinking, text, then each tool call in index order) and then
//! `Finished` are emitted at `data: [DONE]`, which is what makes a message complete (a
//! `finish_reason` is optional: some servers omit it). Blocks wait for `[DONE]` so that no tool
//! call of a stream cut short can start. Chunks that carry nothing (keep-alives) are not
//! progress. Input tokens exclude cached tokens, as in Anthropic's usage, so
//! `Usage::context_tokens` means the same for both.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::auth::{Auth, Login};
use super::http::{self, Decoder, MAX_BLOCKS, Seen, append_capped, tool_event};
use super::sse::SseFrame;
use super::types::{ContentBlock, ModelRequest, Role, StopReason, StreamEvent};
use super::{EventStream, LlmError, ModelClient, Provider};
use crate::protocol::Usage;

/// A streaming client for one OpenAI-compatible endpoint.
pub struct OpenAiClient {
    http: reqwest::Client,
    base_url: String,
    auth: Auth,
    idle_timeout: Duration,
}

impl OpenAiClient {
    /// `base_url` including the version segment, e.g. `https://api.openai.com/v1`.
    pub fn new(
        base_url: &str,
        api_key: Option<String>,
        login: Login,
        idle_timeout: Duration,
    ) -> Result<OpenAiClient, LlmError> {
        Ok(OpenAiClient {
            http: http::http_client(base_url)?,
            base_url: base_url.trim_end_matches('/').to_string(),
            auth: Auth::new(Provider::OpenAi, api_key, login),
            idle_timeout,
        })
    }
}

#[async_trait::async_trait]
impl ModelClient for OpenAiClient {
    fn provider(&self) -> Provider {
        Provider::OpenAi
    }

    async fn send(&self, request: &ModelRequest) -> Result<EventStream, LlmError> {
        let url = format!("{}/chat/completions", self.base_url);
        let build = || {
            self.http
                .post(&url)
                .header(reqwest::header::ACCEPT, "text/event-stream")
        };
        let response = self
            .auth
            .send(build, request_body(request).to_string(), self.idle_timeout)
            .await?;
        Ok(http::event_stream(
            response,
            OpenAiDecoder::default(),
            self.idle_timeout,
        ))
    }
}

/// The JSON body for `request`.
pub fn request_body(request: &ModelRequest) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        match message.role {
            // Tool results first: they must directly follow the assistant's tool calls.
            Role::User => super::openai_user::push_user_turn(&mut messages, message),
            Role::Assistant => {
                let text = message.text();
                let calls: Vec<Value> = message
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolUse { id, name, input } => Some(json!({
                            "id": id,
                            "type": "function",
                            "function": {"name": name, "arguments": input.to_string()},
                        })),
                        _ => None,
                    })
                    .collect();
                let mut m = json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { Value::String(text) },
                });
                if !calls.is_empty() {
                    m["tool_calls"] = Value::Array(calls);
                }
                messages.push(m);
            }
        }
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    body[max_tokens_field(&request.model)] = json!(request.max_tokens);
    if let Some(effort) = request.reasoning_effort {
        body["reasoning_effort"] = json!(effort.openai());
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            // Deferred definitions are Anthropic's; the core never sends them here.
            .filter(|t| !t.defer_loading)
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                }})
            })
            .collect();
    }
    body
}

/// OpenAI's reasoning models (o1, o3, o4, gpt-5) refuse `max_tokens` and want
/// `max_completion_tokens`; every other server (Ollama, vLLM, older models) takes `max_tokens`.
fn max_tokens_field(model: &str) -> &'static str {
    let m = model.to_ascii_lowercase();
    let name = m.rsplit('/').next().unwrap_or(&m);
    let reasoning = ["o1", "o3", "o4", "gpt-5"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.']))
    });
    if reasoning {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Decodes chat-completion chunks.
#[derive(Debug, Default)]
pub(crate) struct OpenAiDecoder {
    text: String,
    thinking: String,
    calls: BTreeMap<u64, PartialCall>,
    stop_reason: Option<StopReason>,
    flushed: bool,
    done: bool,
    /// Content bytes accumulated so far (capped).
    content_bytes: usize,
}

impl OpenAiDecoder {
    fn flush(&mut self, out: &mut Vec<StreamEvent>) {
        if self.flushed {
            return;
        }
        self.flushed = true;
        if !self.thinking.is_empty() {
            out.push(StreamEvent::BlockComplete(ContentBlock::Thinking {
                thinking: std::mem::take(&mut self.thinking),
                signature: None,
            }));
        }
        if !self.text.is_empty() {
            out.push(StreamEvent::BlockComplete(ContentBlock::Text {
                text: std::mem::take(&mut self.text),
            }));
        }
        for (_, call) in std::mem::take(&mut self.calls) {
            out.push(tool_event(call.id, call.name, call.arguments));
        }
    }
}

fn text(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

fn finish_reason(s: &str) -> StopReason {
    match s {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        _ => StopReason::Other,
    }
}

impl Decoder for OpenAiDecoder {
    fn is_done(&self) -> bool {
        self.done
    }

    fn cut_short(&self) -> String {
        let mut why = "the connection closed before `data: [DONE]`".to_string();
        if let Some(call) = self.calls.values().next() {
            why.push_str(&format!(" (tool call `{}` was never completed)", call.name));
        }
        why
    }

    fn frame(&mut self, frame: &SseFrame, out: &mut Vec<StreamEvent>) -> Result<Seen, LlmError> {
        let data = frame.data.trim();
        if data == "[DONE]" {
            self.flush(out);
            self.done = true;
            out.push(StreamEvent::Finished(
                self.stop_reason.unwrap_or(StopReason::EndTurn),
            ));
            return Ok(Seen::Progress);
        }
        let mut seen = Seen::KeepAlive;
        let v: Value = serde_json::from_str(data).map_err(|e| {
            let shown: String = data.chars().take(200).collect();
            LlmError::Malformed(format!("a stream chunk is not JSON ({e}): {shown}"))
        })?;
        if let Some(err) = v.get("error") {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .or_else(|| err.as_str())
                .unwrap_or("no message");
            let kind = err
                .get("type")
                .or_else(|| err.get("code"))
                .and_then(Value::as_str)
                .unwrap_or("api_error");
            return Err(LlmError::Api {
                kind: kind.to_string(),
                message: message.to_string(),
            });
        }
        if let Some(choice) = v.get("choices").and_then(|c| c.get(0)) {
            if let Some(delta) = choice.get("delta") {
                let s = |k: &str| {
                    delta
                        .get(k)
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                };
                if let Some(r) = s("reasoning_content").or_else(|| s("reasoning")) {
                    append_capped(&mut self.thinking, r, &mut self.content_bytes, || {
                        "the reasoning".into()
                    })?;
                    out.push(StreamEvent::ThinkingDelta(r.to_string()));
                    seen = Seen::Progress;
                }
                if let Some(t) = s("content") {
                    append_capped(&mut self.text, t, &mut self.content_bytes, || {
                        "the text".into()
                    })?;
                    out.push(StreamEvent::TextDelta(t.to_string()));
                    seen = Seen::Progress;
                }
                for call in delta
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    seen = Seen::Progress;
                    let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
                    if !self.calls.contains_key(&index) && self.calls.len() >= MAX_BLOCKS {
                        return Err(LlmError::TooLarge(format!(
                            "the message has more than {MAX_BLOCKS} tool calls; stopped \
                             reading (a limit that protects memory)"
                        )));
                    }
                    let partial = self.calls.entry(index).or_default();
                    if let Some(id) = call.get("id").and_then(Value::as_str) {
                        partial.id = id.to_string();
                    }
                    let function = call.get("function");
                    let name = text(function.and_then(|f| f.get("name")));
                    if !name.is_empty() {
                        partial.name = name.to_string();
                    }
                    let what = || format!("the input of tool call `{}`", partial.name);
                    match function.and_then(|f| f.get("arguments")) {
                        Some(Value::String(piece)) => {
                            append_capped(
                                &mut partial.arguments,
                                piece,
                                &mut self.content_bytes,
                                what,
                            )?;
                        }
                        // Some servers send the arguments whole, as an object.
                        Some(object @ Value::Object(_)) => {
                            self.content_bytes =
                                self.content_bytes.saturating_sub(partial.arguments.len());
                            partial.arguments.clear();
                            append_capped(
                                &mut partial.arguments,
                                &object.to_string(),
                                &mut self.content_bytes,
                                what,
                            )?;
                        }
                        _ => {}
                    }
                }
            }
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                self.stop_reason = Some(finish_reason(r));
                seen = Seen::Progress;
            }
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            seen = Seen::Progress;
            let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            let cached = n("/prompt_tokens_details/cached_tokens");
            out.push(StreamEvent::Usage(Usage {
                input_tokens: n("/prompt_tokens").saturating_sub(cached),
                output_tokens: n("/completion_tokens"),
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: cached,
            }));
        }
        Ok(seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::types::{Message, ToolSpec};

    fn decode(chunks: &[&str]) -> Vec<StreamEvent> {
        let mut d = OpenAiDecoder::default();
        let mut out = Vec::new();
        for c in chunks {
            let f = SseFrame {
                event: "message".into(),
                data: c.to_string(),
            };
            d.frame(&f, &mut out).unwrap();
        }
        out
    }

    /// Issue 22 §6: a chunk whose data does not decode fails, whatever the event's name;
    /// keep-alive chunks and `[DONE]` still work.
    #[test]
    fn a_chunk_whose_data_does_not_decode_fails() {
        for (event, data) in [
            (
                "message",
                r#"{"choices":[{"index":0,"delta":{"content":"hel"#,
            ),
            ("message", ""),
            ("ping", "{oops"),
        ] {
            let mut d = OpenAiDecoder::default();
            let f = SseFrame {
                event: event.into(),
                data: data.into(),
            };
            let got = d.frame(&f, &mut Vec::new());
            let Err(LlmError::Malformed(why)) = got else {
                panic!("{event} {data:?}: {got:?}");
            };
            assert!(why.starts_with("a stream chunk is not JSON ("), "{why}");
        }
        let out = decode(&[
            r#"{"choices":[{"index":0,"delta":{"content":""}}]}"#,
            r#"{"choices":[]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"hi"}}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            out.last(),
            Some(&StreamEvent::Finished(StopReason::EndTurn))
        );
        assert!(out.contains(&StreamEvent::TextDelta("hi".into())));
    }

    #[test]
    fn maps_the_conversation() {
        let request = ModelRequest {
            model: "gpt-x".into(),
            system: "sys".into(),
            messages: vec![
                Message::user_text("read it"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        ContentBlock::Text {
                            text: "Reading".into(),
                        },
                        ContentBlock::ToolUse {
                            id: "c1".into(),
                            name: "Read".into(),
                            input: json!({"file_path": "a"}),
                        },
                    ],
                },
                Message {
                    role: Role::User,
                    content: vec![ContentBlock::ToolResult {
                        tool_use_id: "c1".into(),
                        content: "no such file".into(),
                        is_error: true,
                    }],
                },
            ],
            tools: vec![ToolSpec {
                name: "Read".into(),
                description: "reads".into(),
                input_schema: json!({"type": "object"}),
                defer_loading: false,
            }],
            max_tokens: 64,
            thinking_budget: None,
            reasoning_effort: None,
            server_tools: Vec::new(),
        };
        assert_eq!(
            request_body(&request),
            json!({
                "model": "gpt-x",
                "max_tokens": 64,
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "read it"},
                    {"role": "assistant", "content": "Reading", "tool_calls": [
                        {"id": "c1", "type": "function",
                         "function": {"name": "Read", "arguments": "{\"file_path\":\"a\"}"}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "Error: no such file"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "Read", "description": "reads", "parameters": {"type": "object"}}}],
            })
        );
    }

    #[test]
    fn reasoning_models_get_max_completion_tokens() {
        assert_eq!(max_tokens_field("o3"), "max_completion_tokens");
        assert_eq!(max_tokens_field("o4-mini"), "max_completion_tokens");
        assert_eq!(max_tokens_field("gpt-5.1"), "max_completion_tokens");
        assert_eq!(max_tokens_field("gpt-4o"), "max_tokens");
        assert_eq!(max_tokens_field("llama3.1:8b"), "max_tokens");
        assert_eq!(max_tokens_field("o3mega-local"), "max_tokens");
    }

    #[test]
    fn assembles_split_tool_calls_and_usage() {
        let events = decode(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"Read","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"file_"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"path\":\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":20}}}"#,
            "[DONE]",
        ]);
        assert_eq!(
            events,
            vec![
                StreamEvent::Usage(Usage {
                    input_tokens: 30,
                    output_tokens: 9,
                    cache_creation_input_tokens: 0,
                    cache_read_input_tokens: 20
                }),
                StreamEvent::BlockComplete(ContentBlock::ToolUse {
                    id: "c1".into(),
                    name: "Read".into(),
                    input: json!({"file_path": "a"})
                }),
                StreamEvent::Finished(StopReason::ToolUse),
            ]
        );
    }

    #[test]
    fn arguments_sent_as_an_object() {
        let events = decode(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c9","function":{"name":"Glob","arguments":{"pattern":"*.rs"}}}]},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            events,
            vec![
                StreamEvent::BlockComplete(ContentBlock::ToolUse {
                    id: "c9".into(),
                    name: "Glob".into(),
                    input: json!({"pattern": "*.rs"})
                }),
                StreamEvent::Finished(StopReason::ToolUse),
            ]
        );
    }

    #[test]
    fn empty_chunks_are_keep_alives_and_blocks_wait_for_done() {
        let mut d = OpenAiDecoder::default();
        let mut out = Vec::new();
        let mut seen = |data: &str, out: &mut Vec<StreamEvent>| {
            let f = SseFrame {
                event: "message".into(),
                data: data.into(),
            };
            d.frame(&f, out).unwrap()
        };
        assert_eq!(
            seen(r#"{"choices":[{"delta":{}}]}"#, &mut out),
            Seen::KeepAlive
        );
        assert_eq!(
            seen(
                r#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#,
                &mut out
            ),
            Seen::KeepAlive
        );
        assert_eq!(seen(r#"{"choices":[]}"#, &mut out), Seen::KeepAlive);
        assert_eq!(
            seen(
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"Read","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
                &mut out
            ),
            Seen::Progress
        );
        // The finish reason alone releases nothing: a stream cut here must not start a tool.
        assert_eq!(out, vec![]);
        assert_eq!(
            d.cut_short(),
            "the connection closed before `data: [DONE]` (tool call `Read` was never completed)"
        );
    }

    #[test]
    fn reasoning_then_text_without_finish_reason() {
        let events = decode(&[
            r#"{"choices":[{"delta":{"reasoning_content":"hmm"}}]}"#,
            r#"{"choices":[{"delta":{"content":"Hi"}}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            events,
            vec![
                StreamEvent::ThinkingDelta("hmm".into()),
                StreamEvent::TextDelta("Hi".into()),
                StreamEvent::BlockComplete(ContentBlock::Thinking {
                    thinking: "hmm".into(),
                    signature: None
                }),
                StreamEvent::BlockComplete(ContentBlock::Text { text: "Hi".into() }),
                StreamEvent::Finished(StopReason::EndTurn),
            ]
        );
    }
}
