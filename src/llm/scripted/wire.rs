//! Rendering a scripted turn as the SSE frames of either wire format, and the error bodies of
//! HTTP faults. Pure functions: the server decides when and how many frames to send.

use serde_json::{Value, json};

use super::script::{ScriptUsage, Turn};

/// Which API the request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    Anthropic,
    OpenAi,
    /// The OpenAI Responses API (`responses.rs`).
    Responses,
}

/// What a turn renders with, beyond the turn itself.
pub(crate) struct RenderContext<'a> {
    pub turn_index: usize,
    pub model: &'a str,
    /// Size of the request body, for the default input-token estimate.
    pub request_bytes: usize,
    pub invalid_tool_json: bool,
}

/// `s` in pieces of at most `n` characters (never splitting a character).
pub(super) fn pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

pub(super) fn frame(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// The tool calls with their ids and the input JSON text to send.
pub(super) fn tool_calls(turn: &Turn, ctx: &RenderContext) -> Vec<(String, String, String)> {
    turn.tool_calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let id = call
                .id
                .clone()
                .unwrap_or_else(|| format!("toolu_{}_{}", ctx.turn_index, i));
            let mut json = call.input.to_string();
            if ctx.invalid_tool_json {
                json.pop();
            }
            (id, call.name.clone(), json)
        })
        .collect()
}

pub(super) fn usage(turn: &Turn, ctx: &RenderContext) -> (u64, u64, ScriptUsage) {
    let given = turn.usage.unwrap_or_default();
    let generated = turn.text.as_deref().map_or(0, |t| t.chars().count())
        + turn.thinking.as_deref().map_or(0, |t| t.chars().count())
        + turn
            .tool_calls
            .iter()
            .map(|c| c.input.to_string().len() + c.name.len())
            .sum::<usize>();
    let input = given
        .input_tokens
        .unwrap_or((ctx.request_bytes / 4).max(1) as u64);
    let output = given.output_tokens.unwrap_or((generated / 4 + 1) as u64);
    (input, output, given)
}

/// The Anthropic Messages stream for `turn`.
pub(crate) fn anthropic_frames(turn: &Turn, ctx: &RenderContext) -> Vec<String> {
    let (input, output, given) = usage(turn, ctx);
    let mut out = vec![frame(
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": format!("msg_scripted_{}", ctx.turn_index),
            "type": "message", "role": "assistant", "model": ctx.model, "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": 1,
                      "cache_creation_input_tokens": given.cache_creation_input_tokens,
                      "cache_read_input_tokens": given.cache_read_input_tokens}}}),
    )];
    out.push(frame(Some("ping"), &json!({"type": "ping"})));
    let mut index = 0;
    let mut block = |out: &mut Vec<String>, start: Value, deltas: Vec<Value>| {
        out.push(frame(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            out.push(frame(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        out.push(frame(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    if let Some(thinking) = turn.thinking.as_deref().filter(|t| !t.is_empty()) {
        let mut deltas: Vec<Value> = pieces(thinking, turn.chunk_chars)
            .into_iter()
            .map(|p| json!({"type": "thinking_delta", "thinking": p}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": "scripted-signature"}));
        block(
            &mut out,
            json!({"type": "thinking", "thinking": ""}),
            deltas,
        );
    }
    for server in &turn.server_blocks {
        block(&mut out, server.clone(), Vec::new());
    }
    if let Some(text) = turn.text.as_deref().filter(|t| !t.is_empty()) {
        let deltas = pieces(text, turn.chunk_chars)
            .into_iter()
            .map(|p| json!({"type": "text_delta", "text": p}))
            .collect();
        block(&mut out, json!({"type": "text", "text": ""}), deltas);
    }
    for (id, name, input) in tool_calls(turn, ctx) {
        let deltas = pieces(&input, turn.chunk_chars)
            .into_iter()
            .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
            .collect();
        block(
            &mut out,
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            deltas,
        );
    }
    out.push(frame(
        Some("message_delta"),
        &json!({"type": "message_delta",
                "delta": {"stop_reason": turn.stop_reason().anthropic(), "stop_sequence": null},
                "usage": {"output_tokens": output}}),
    ));
    out.push(frame(
        Some("message_stop"),
        &json!({"type": "message_stop"}),
    ));
    out
}

/// The chat-completions stream for `turn`.
pub(crate) fn openai_frames(turn: &Turn, ctx: &RenderContext) -> Vec<String> {
    let (input, output, given) = usage(turn, ctx);
    let id = format!("chatcmpl-scripted-{}", ctx.turn_index);
    let chunk = |delta: Value, finish: Option<&str>| {
        frame(
            None,
            &json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": ctx.model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    if let Some(thinking) = turn.thinking.as_deref() {
        for p in pieces(thinking, turn.chunk_chars) {
            out.push(chunk(json!({"reasoning_content": p}), None));
        }
    }
    if let Some(text) = turn.text.as_deref() {
        for p in pieces(text, turn.chunk_chars) {
            out.push(chunk(json!({"content": p}), None));
        }
    }
    for (i, (call_id, name, args)) in tool_calls(turn, ctx).into_iter().enumerate() {
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "id": call_id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        for p in pieces(&args, turn.chunk_chars) {
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                None,
            ));
        }
    }
    out.push(chunk(json!({}), Some(turn.stop_reason().openai())));
    let prompt = input + given.cache_read_input_tokens + given.cache_creation_input_tokens;
    out.push(frame(
        None,
        &json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": ctx.model,
                "choices": [],
                "usage": {"prompt_tokens": prompt, "completion_tokens": output,
                          "total_tokens": prompt + output,
                          "prompt_tokens_details": {"cached_tokens": given.cache_read_input_tokens}}}),
    ));
    out.push("data: [DONE]\n\n".to_string());
    out
}

/// Drop what closes the tool calls (see `FaultKind::UnclosedToolUse`).
pub(crate) fn unclose_tools(wire: Wire, frames: &mut Vec<String>) {
    match wire {
        Wire::Anthropic => {
            let data = |f: &String| -> Value {
                f.split_once("data: ")
                    .and_then(|(_, d)| serde_json::from_str(d.trim()).ok())
                    .unwrap_or(Value::Null)
            };
            // Which indexes are tool blocks, from their starts.
            let tools: Vec<Value> = frames
                .iter()
                .map(data)
                .filter(|v| {
                    v["type"] == "content_block_start" && v["content_block"]["type"] == "tool_use"
                })
                .map(|v| v["index"].clone())
                .collect();
            frames.retain(|f| {
                let v = data(f);
                !(v["type"] == "content_block_stop" && tools.contains(&v["index"]))
            });
        }
        Wire::OpenAi => {
            // Everything after the last arguments piece: the finish chunk, usage, [DONE].
            frames.truncate(frames.len().saturating_sub(3));
        }
        Wire::Responses => {
            // Everything after the last arguments piece.
            if let Some(last) = frames
                .iter()
                .rposition(|f| f.starts_with("event: response.function_call_arguments.delta"))
            {
                frames.truncate(last + 1);
            }
        }
    }
}

/// The keep-alives sent in turn forever (see `FaultKind::KeepAliveForever`).
pub(crate) fn keep_alives(wire: Wire) -> [&'static str; 2] {
    match wire {
        Wire::Anthropic => [
            "event: ping\ndata: {\"type\": \"ping\"}\n\n",
            ": keep-alive\n\n",
        ],
        Wire::OpenAi | Wire::Responses => [
            ": keep-alive\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"}}]}\n\n",
        ],
    }
}

/// `frame` with the JSON of its `data:` line cut in half (at a character boundary); the
/// `event:` line and the blank line that ends the event are kept.
pub(crate) fn cut_in_half(frame: &str) -> String {
    let Some(at) = frame.find("data: ") else {
        return frame.to_string();
    };
    let start = at + "data: ".len();
    let end = frame[start..].find('\n').map_or(frame.len(), |n| start + n);
    let mut half = start + (end - start) / 2;
    while !frame.is_char_boundary(half) {
        half -= 1;
    }
    format!("{}{}", &frame[..half], &frame[end..])
}

/// A frame whose data is not JSON.
pub(crate) fn malformed_frame(wire: Wire) -> String {
    match wire {
        Wire::Anthropic => {
            "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", oops\n\n".into()
        }
        Wire::OpenAi => "data: {\"choices\": [oops\n\n".into(),
        Wire::Responses => "event: response.output_text.delta\ndata: {\"delta\": oops\n\n".into(),
    }
}

/// An in-stream error event of type `kind`.
pub(crate) fn error_frame(wire: Wire, kind: &str) -> String {
    let message = default_message(kind);
    match wire {
        Wire::Anthropic => frame(
            Some("error"),
            &json!({"type": "error", "error": {"type": kind, "message": message}}),
        ),
        Wire::OpenAi => frame(
            None,
            &json!({"error": {"type": kind, "message": message, "code": null}}),
        ),
        Wire::Responses => frame(
            Some("response.failed"),
            &json!({"type": "response.failed", "response": {"id": "resp_scripted",
                    "object": "response", "status": "failed",
                    "error": {"code": kind, "message": message}}}),
        ),
    }
}

fn default_message(kind: &str) -> &'static str {
    match kind {
        "overloaded_error" => "Overloaded",
        "rate_limit_error" => "Rate limited",
        "authentication_error" => "invalid x-api-key",
        "permission_error" => "Permission denied",
        "not_found_error" => "Not found",
        "invalid_request_error" => "Invalid request",
        _ => "Internal server error",
    }
}

/// The error type an HTTP status stands for.
fn status_kind(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// The default JSON error body for an HTTP fault.
pub(crate) fn error_body(wire: Wire, status: u16) -> String {
    let kind = status_kind(status);
    let message = default_message(kind);
    match wire {
        Wire::Anthropic => {
            json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
        }
        Wire::OpenAi | Wire::Responses => {
            json!({"error": {"message": message, "type": kind, "code": null}}).to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::llm::StreamEvent;
    use crate::llm::anthropic::AnthropicDecoder;
    use crate::llm::http::Decoder;
    use crate::llm::openai::OpenAiDecoder;
    use crate::llm::sse::SseParser;
    use proptest::prelude::*;

    /// Parse and decode `bytes` cut at `cuts`, as the client does with network chunks.
    fn decode_split(bytes: &[u8], cuts: &[usize], decoder: &mut dyn Decoder) -> Vec<StreamEvent> {
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        points.sort_unstable();
        points.push(bytes.len());
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        let mut start = 0;
        for p in points {
            let mut frames = Vec::new();
            parser.push(&bytes[start..p], &mut frames).unwrap();
            for frame in frames {
                decoder.frame(&frame, &mut out).unwrap();
            }
            start = p;
        }
        out
    }

    proptest! {
        #[test]
        fn any_split_of_a_scripted_response_decodes_the_same(
            text in "[a-z é✓\n]{0,40}",
            thinking in proptest::option::of("[a-z ]{1,20}"),
            chunk in 1usize..6,
            cuts in proptest::collection::vec(any::<usize>(), 0..12),
        ) {
            let turn = Turn {
                text: Some(text),
                thinking,
                chunk_chars: chunk,
                ..Turn::tool_call("t1", "Grep", json!({"pattern": "fn main", "glob": "*.rs"}))
            };
            let ctx = RenderContext { turn_index: 0, model: "m", request_bytes: 100, invalid_tool_json: false };
            let anthropic = anthropic_frames(&turn, &ctx).concat().into_bytes();
            let whole = decode_split(&anthropic, &[], &mut AnthropicDecoder::default());
            prop_assert_eq!(&decode_split(&anthropic, &cuts, &mut AnthropicDecoder::default()), &whole);
            prop_assert!(matches!(whole.last(), Some(StreamEvent::Finished(_))));
            let openai = openai_frames(&turn, &ctx).concat().into_bytes();
            let whole = decode_split(&openai, &[], &mut OpenAiDecoder::default());
            prop_assert_eq!(&decode_split(&openai, &cuts, &mut OpenAiDecoder::default()), &whole);
            prop_assert!(matches!(whole.last(), Some(StreamEvent::Finished(_))));
        }
    }

    #[test]
    fn pieces_respect_characters() {
        assert_eq!(pieces("héllo", 2), vec!["hé", "ll", "o"]);
        assert!(pieces("", 3).is_empty());
    }

    #[test]
    fn invalid_tool_json_drops_the_closing_brace() {
        let turn = Turn::tool_call("t", "Read", json!({"file_path": "a"}));
        let ctx = RenderContext {
            turn_index: 0,
            model: "m",
            request_bytes: 40,
            invalid_tool_json: true,
        };
        assert_eq!(
            tool_calls(&turn, &ctx),
            vec![("t".into(), "Read".into(), r#"{"file_path":"a""#.into())]
        );
    }
}
