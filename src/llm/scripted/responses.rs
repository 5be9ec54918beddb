//! The OpenAI Responses API side of the scripted server (`POST /v1/responses`, what Codex
//! speaks): which scripted turn a request is at, and the turn rendered as the Responses SSE
//! events (`response.created`, `response.output_item.added`, the text and function-call
//! argument deltas, `response.output_item.done`, `response.completed` with usage). Pure
//! functions, like `wire.rs`.
//!
//! A scripted tool call whose `input` is a JSON string is a call of a freeform (custom) tool,
//! Codex's `exec`: it streams as a `custom_tool_call` item whose `input` is that string, raw
//! (its result comes back as a `custom_tool_call_output` input item). Any other input is a
//! `function_call` with the input as its JSON `arguments`.

use serde_json::{Value, json};

use super::script::{ScriptStopReason, Turn};
use super::wire::{RenderContext, frame, pieces, tool_calls, usage};

/// Whether a Responses input item is something the model said (one model turn may say
/// several: reasoning, a message, function calls). Anything else (the person's or the
/// developer's messages, tool outputs, Codex's `additional_tools`) is not.
fn from_model(item: &Value) -> bool {
    if let Some(role) = item.get("role").and_then(Value::as_str) {
        return role == "assistant";
    }
    matches!(
        item.get("type").and_then(Value::as_str),
        Some(
            "function_call"
                | "custom_tool_call"
                | "reasoning"
                | "local_shell_call"
                | "web_search_call"
                | "tool_search_call"
        )
    )
}

/// The model turns the request's `input` already holds: runs of model items, each ended by
/// anything else (a person's message, a tool's output).
pub(crate) fn turn_index(input: &[Value]) -> usize {
    let mut turns = 0;
    let mut in_turn = false;
    for item in input {
        let model = from_model(item);
        if model && !in_turn {
            turns += 1;
        }
        in_turn = model;
    }
    turns
}

/// The system prompt of a Responses request: `instructions` and system or developer messages.
pub(crate) fn system(body: &Value, input: &[Value]) -> String {
    let mut out = body
        .get("instructions")
        .map(Value::to_string)
        .unwrap_or_default();
    for item in input {
        if matches!(
            item.get("role").and_then(Value::as_str),
            Some("system" | "developer")
        ) {
            out.push_str(&item.to_string());
        }
    }
    out
}

/// The Responses stream for `turn`.
pub(crate) fn frames(turn: &Turn, ctx: &RenderContext) -> Vec<String> {
    let (input, output, given) = usage(turn, ctx);
    let id = format!("resp_scripted_{}", ctx.turn_index);
    let response = |status: &str, items: &[Value]| {
        json!({"id": id, "object": "response", "created_at": 0, "status": status,
               "model": ctx.model, "output": items})
    };
    let mut seq = 0u64;
    let mut out = Vec::new();
    let mut event = |out: &mut Vec<String>, kind: &str, mut data: Value| {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(seq);
        seq += 1;
        out.push(frame(Some(kind), &data));
    };
    event(
        &mut out,
        "response.created",
        json!({"response": response("in_progress", &[])}),
    );
    let mut done: Vec<Value> = Vec::new();
    if let Some(thinking) = turn.thinking.as_deref().filter(|t| !t.is_empty()) {
        let n = done.len();
        let item = json!({"id": format!("rs_{}_{n}", ctx.turn_index), "type": "reasoning",
                          "summary": [{"type": "summary_text", "text": thinking}]});
        let added = json!({"id": item["id"], "type": "reasoning", "summary": []});
        event(
            &mut out,
            "response.output_item.added",
            json!({"output_index": n, "item": added}),
        );
        for p in pieces(thinking, turn.chunk_chars) {
            event(
                &mut out,
                "response.reasoning_summary_text.delta",
                json!({"item_id": item["id"], "output_index": n, "summary_index": 0, "delta": p}),
            );
        }
        event(
            &mut out,
            "response.output_item.done",
            json!({"output_index": n, "item": item}),
        );
        done.push(item);
    }
    if let Some(text) = turn.text.as_deref().filter(|t| !t.is_empty()) {
        let n = done.len();
        let item_id = format!("msg_{}_{n}", ctx.turn_index);
        let message = |status: &str, content: Value| {
            json!({"id": item_id, "type": "message", "status": status, "role": "assistant",
                   "content": content})
        };
        let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
        event(
            &mut out,
            "response.output_item.added",
            json!({"output_index": n, "item": message("in_progress", json!([]))}),
        );
        event(
            &mut out,
            "response.content_part.added",
            json!({"item_id": item_id, "output_index": n, "content_index": 0, "part": part("")}),
        );
        for p in pieces(text, turn.chunk_chars) {
            event(
                &mut out,
                "response.output_text.delta",
                json!({"item_id": item_id, "output_index": n, "content_index": 0, "delta": p}),
            );
        }
        event(
            &mut out,
            "response.output_text.done",
            json!({"item_id": item_id, "output_index": n, "content_index": 0, "text": text}),
        );
        event(
            &mut out,
            "response.content_part.done",
            json!({"item_id": item_id, "output_index": n, "content_index": 0, "part": part(text)}),
        );
        let item = message("completed", json!([part(text)]));
        event(
            &mut out,
            "response.output_item.done",
            json!({"output_index": n, "item": item}),
        );
        done.push(item);
    }
    for ((call_id, name, args), scripted) in tool_calls(turn, ctx).into_iter().zip(&turn.tool_calls)
    {
        if let Some(input) = scripted.input.as_str() {
            let n = done.len();
            let item_id = format!("ctc_{}_{n}", ctx.turn_index);
            let call = |status: &str, input: &str| {
                json!({"id": item_id, "type": "custom_tool_call", "status": status,
                       "name": name, "call_id": call_id, "input": input})
            };
            event(
                &mut out,
                "response.output_item.added",
                json!({"output_index": n, "item": call("in_progress", "")}),
            );
            for p in pieces(input, turn.chunk_chars) {
                event(
                    &mut out,
                    "response.custom_tool_call_input.delta",
                    json!({"item_id": item_id, "output_index": n, "delta": p}),
                );
            }
            event(
                &mut out,
                "response.custom_tool_call_input.done",
                json!({"item_id": item_id, "output_index": n, "input": input}),
            );
            let item = call("completed", input);
            event(
                &mut out,
                "response.output_item.done",
                json!({"output_index": n, "item": item}),
            );
            done.push(item);
            continue;
        }
        let n = done.len();
        let item_id = format!("fc_{}_{n}", ctx.turn_index);
        let call = |status: &str, arguments: &str| {
            json!({"id": item_id, "type": "function_call", "status": status, "name": name,
                   "call_id": call_id, "arguments": arguments})
        };
        event(
            &mut out,
            "response.output_item.added",
            json!({"output_index": n, "item": call("in_progress", "")}),
        );
        for p in pieces(&args, turn.chunk_chars) {
            event(
                &mut out,
                "response.function_call_arguments.delta",
                json!({"item_id": item_id, "output_index": n, "delta": p}),
            );
        }
        event(
            &mut out,
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": n, "arguments": args}),
        );
        let item = call("completed", &args);
        event(
            &mut out,
            "response.output_item.done",
            json!({"output_index": n, "item": item}),
        );
        done.push(item);
    }
    let cached = given.cache_read_input_tokens;
    let total_input = input + cached + given.cache_creation_input_tokens;
    let mut last = response("completed", &done);
    last["usage"] = json!({"input_tokens": total_input,
                           "input_tokens_details": {"cached_tokens": cached},
                           "output_tokens": output,
                           "output_tokens_details": {"reasoning_tokens": 0},
                           "total_tokens": total_input + output});
    let kind = if turn.stop_reason() == ScriptStopReason::MaxTokens {
        last["status"] = json!("incomplete");
        last["incomplete_details"] = json!({"reason": "max_output_tokens"});
        "response.incomplete"
    } else {
        "response.completed"
    };
    event(&mut out, kind, json!({"response": last}));
    out
}
