//! Tests of the Anthropic client: the request body and the stream decoder.

use super::*;
use crate::llm::types::{Message, Role, ToolSpec};
use serde_json::json;

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
        reasoning_effort: None,
        server_tools: Vec::new(),
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
        seen(r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}"#),
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

/// Issue 22 §6: data that does not decode fails, whatever the event's type; a bare ping and
/// a ping with its JSON are keep-alives.
#[test]
fn an_event_whose_data_does_not_decode_fails_whatever_its_type() {
    for (event, data) in [
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"ty"#,
        ),
        ("content_block_delta", ""),
        ("ping", r#"{"type": "pi"#),
        ("some_future_event", "{oops"),
        ("message", "not json"),
    ] {
        let (_, result) = decode(&[(event, data)]);
        let Err(LlmError::Malformed(why)) = result else {
            panic!("{event} {data:?}: {result:?}");
        };
        assert!(
            why.starts_with(&format!("event `{event}` is not JSON (")),
            "{why}"
        );
    }
    let (out, result) = decode(&[("ping", ""), ("ping", r#"{"type": "ping"}"#)]);
    assert_eq!((out, result), (Vec::new(), Ok(())));
}

#[test]
fn server_blocks_are_kept_as_received_and_sent_back_the_same() {
    let result_block = r#"{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","title":"Rust","url":"https://www.rust-lang.org/","encrypted_content":"EqgfCio","page_age":"April 30, 2025"}]}"#;
    let (events, result) = decode(&[
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"rust"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" lang\"}"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            "content_block_start",
            &format!(
                r#"{{"type":"content_block_start","index":1,"content_block":{result_block}}}"#
            ),
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"redacted_thinking","data":"EmwKAhgB"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":2}"#,
        ),
    ]);
    result.unwrap();
    let blocks: Vec<ContentBlock> = events
        .into_iter()
        .map(|e| match e {
            StreamEvent::BlockComplete(b) => b,
            other => panic!("only whole blocks, got {other:?}"),
        })
        .collect();
    assert_eq!(
        blocks[0],
        ContentBlock::Server(json!({"type": "server_tool_use", "id": "srvtoolu_1",
            "name": "web_search", "input": {"query": "rust lang"}}))
    );
    // Never a tool call of cairn's.
    assert!(
        !blocks
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse { .. }))
    );
    // In the next request, each block goes back exactly as it came, in its order of keys.
    let request = ModelRequest {
        model: "m".into(),
        system: String::new(),
        messages: vec![
            Message::user_text("search"),
            Message {
                role: Role::Assistant,
                content: blocks.clone(),
            },
            Message::user_text("thanks"),
        ],
        tools: vec![],
        max_tokens: 100,
        thinking_budget: None,
        reasoning_effort: None,
        server_tools: vec![],
    };
    let body = request_json(&request);
    assert!(body.contains(result_block), "{body}");
    assert!(
        body.contains(r#"{"type":"redacted_thinking","data":"EmwKAhgB"}"#),
        "{body}"
    );
    // A transcript line round-trips them too.
    let line = serde_json::to_string(&blocks).unwrap();
    let back: Vec<ContentBlock> = serde_json::from_str(&line).unwrap();
    assert_eq!(back, blocks);
}
