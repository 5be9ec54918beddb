//! The scripted server's OpenAI Responses endpoint (`POST /v1/responses`, what Codex speaks),
//! driven over loopback with plain HTTP: a scripted text turn and a tool call come back as the
//! Responses SSE events, in order, with the finished items and the usage Codex reads from
//! `response.completed`; the turn answered follows the model turns the input already holds.

use cairn::llm::scripted::{Script, ScriptedServer, Turn};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// POSTs `body` to `path` and returns the status line and the SSE events as (name, data).
async fn post(server: &ScriptedServer, path: &str, body: &Value) -> (String, Vec<(String, Value)>) {
    let body = body.to_string();
    let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.unwrap();
    let (head, rest) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.lines().next().unwrap().to_string();
    if !status.ends_with("200 OK") {
        return (status, Vec::new());
    }
    let events = rest
        .split("\n\n")
        .filter(|f| !f.trim().is_empty())
        .map(|f| {
            let name = f.lines().find_map(|l| l.strip_prefix("event: ")).unwrap();
            let data = f.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
            (name.to_string(), serde_json::from_str(data).unwrap())
        })
        .collect();
    (status, events)
}

fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(n, _)| n.as_str()).collect()
}

fn script() -> Script {
    let text = Turn {
        chunk_chars: 5,
        ..Turn::text("Hello there")
    };
    let call = Turn {
        chunk_chars: 10,
        ..Turn::tool_call("call_7", "shell", json!({"command": ["cat", "lib.py"]}))
    };
    Script::new(vec![text, call, Turn::text("Done.")])
}

#[tokio::test]
async fn a_text_turn_streams_as_responses_events() {
    let server = ScriptedServer::start(script()).unwrap();
    // As Codex 0.171 sends it: the tools and instructions as developer items first.
    let body = json!({"model": "m", "instructions": "You are Codex.", "stream": true,
                      "input": [{"type": "additional_tools", "role": "developer", "tools": []},
                                {"type": "message", "role": "developer",
                                 "content": [{"type": "input_text", "text": "You are Codex"}]},
                                {"type": "message", "role": "user",
                                 "content": [{"type": "input_text", "text": "hi"}]}]});
    let (status, events) = post(&server, "/v1/responses", &body).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(
        names(&events),
        [
            "response.created",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    for (i, (name, data)) in events.iter().enumerate() {
        assert_eq!(data["type"], json!(name), "{data}");
        assert_eq!(data["sequence_number"], json!(i), "{data}");
    }
    let deltas: String = events
        .iter()
        .filter(|(n, _)| n == "response.output_text.delta")
        .map(|(_, d)| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "Hello there");
    let item = &events[8].1["item"];
    assert_eq!(item["type"], "message");
    assert_eq!(item["role"], "assistant");
    assert_eq!(item["content"][0]["type"], "output_text");
    assert_eq!(item["content"][0]["text"], "Hello there");
    let done = &events[9].1["response"];
    assert_eq!(done["status"], "completed");
    assert_eq!(done["output"][0], *item);
    let usage = &done["usage"];
    let (input, output) = (
        usage["input_tokens"].as_u64().unwrap(),
        usage["output_tokens"].as_u64().unwrap(),
    );
    assert!(input > 0 && output > 0, "{usage}");
    assert_eq!(usage["total_tokens"].as_u64(), Some(input + output));
    assert_eq!(usage["input_tokens_details"]["cached_tokens"], 0);
    assert_eq!(server.requests()[0].path, "/v1/responses");
}

#[tokio::test]
async fn a_tool_call_streams_its_arguments_and_the_turn_follows_the_input() {
    let server = ScriptedServer::start(script()).unwrap();
    // One model turn already in the input (a reasoning item and a message said together).
    let body = json!({"model": "m", "stream": true, "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "reasoning", "summary": []},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Hello there"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "read"}]}
    ]});
    let (_, events) = post(&server, "/responses", &body).await;
    assert_eq!(
        names(&events),
        [
            "response.created",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let args = r#"{"command":["cat","lib.py"]}"#;
    let streamed: String = events
        .iter()
        .filter(|(n, _)| n == "response.function_call_arguments.delta")
        .map(|(_, d)| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, args);
    assert_eq!(events[5].1["arguments"], args);
    let added = &events[1].1["item"];
    assert_eq!(added["type"], "function_call");
    assert_eq!(added["arguments"], "");
    let item = &events[6].1["item"];
    assert_eq!(item["type"], "function_call");
    assert_eq!(item["name"], "shell");
    assert_eq!(item["call_id"], "call_7");
    assert_eq!(item["arguments"], args);
    assert_eq!(events[7].1["response"]["output"][0], *item);

    // After the call and its output: the third turn.
    let body = json!({"model": "m", "stream": true, "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "message", "role": "assistant", "content": []},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "read"}]},
        item.clone(),
        {"type": "function_call_output", "call_id": "call_7", "output": "def f(): ..."}
    ]});
    let (_, events) = post(&server, "/v1/responses", &body).await;
    let text = &events[events.len() - 2].1["item"]["content"][0]["text"];
    assert_eq!(text, "Done.");
}

#[tokio::test]
async fn a_request_without_input_is_refused() {
    let server = ScriptedServer::start(script()).unwrap();
    let (status, _) = post(&server, "/v1/responses", &json!({"model": "m"})).await;
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
}

#[tokio::test]
async fn a_string_input_streams_as_a_custom_tool_call_and_its_output_ends_the_turn() {
    // Codex 0.171's file tool: `exec`, a freeform tool whose input is JavaScript, raw.
    let js = "const r = await tools.exec_command({cmd: \"cat lib.py\"});\ntext(r.output);";
    let call = Turn {
        chunk_chars: 20,
        ..Turn::tool_call("call_9", "exec", json!(js))
    };
    let server = ScriptedServer::start(Script::new(vec![call, Turn::text("Done.")])).unwrap();
    // A script file may say so too (`assets/bench/read-edit-codex.json`); a number may not.
    let file = r#"{"turns": [{"tool_calls": [{"name": "exec", "input": "text(1);"}]}]}"#;
    assert_eq!(
        Script::from_json(file).unwrap().turns[0].tool_calls[0].input,
        json!("text(1);")
    );
    let bad = r#"{"turns": [{"tool_calls": [{"name": "exec", "input": 1}]}]}"#;
    assert!(Script::from_json(bad).is_err());
    let go = json!({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "go"}]});
    let body = json!({"model": "m", "stream": true, "input": [go.clone()]});
    let (_, events) = post(&server, "/v1/responses", &body).await;
    let deltas = js.chars().count().div_ceil(20);
    let mut expected = vec!["response.created", "response.output_item.added"];
    expected.extend(std::iter::repeat_n(
        "response.custom_tool_call_input.delta",
        deltas,
    ));
    expected.extend([
        "response.custom_tool_call_input.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(names(&events), expected);
    let streamed: String = events
        .iter()
        .filter(|(n, _)| n == "response.custom_tool_call_input.delta")
        .map(|(_, d)| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, js);
    let added = &events[1].1["item"];
    assert_eq!(added["type"], "custom_tool_call");
    assert_eq!(added["input"], "");
    let item = &events[events.len() - 2].1["item"];
    assert_eq!(item["type"], "custom_tool_call");
    assert_eq!(item["name"], "exec");
    assert_eq!(item["call_id"], "call_9");
    assert_eq!(item["input"], js, "the input is the raw source, not JSON");
    assert_eq!(events[events.len() - 1].1["response"]["output"][0], *item);

    // Codex sends the call back with its output: the next scripted turn answers.
    let body = json!({"model": "m", "stream": true, "input": [
        go,
        item.clone(),
        {"type": "custom_tool_call_output", "call_id": "call_9", "output": "def f(): ..."}
    ]});
    let (_, events) = post(&server, "/v1/responses", &body).await;
    let text = &events[events.len() - 2].1["item"]["content"][0]["text"];
    assert_eq!(text, "Done.");
}
