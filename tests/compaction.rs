//! Compaction with the real core against the scripted model: `/compact` with instructions, the
//! automatic one at the threshold, microcompaction of old tool results, PreCompact hooks, and
//! a resume that starts from the summary while the transcript keeps everything.
//!
//! The scripted model answers turn N to a request holding N assistant messages, so a summary
//! request (the conversation so far, plus the instruction) gets the turn after the last answer,
//! and a request after a compaction (no assistant message left) gets turn 0 again.

use std::time::Duration;

use cairn::llm::Provider;
use cairn::protocol::{Event, Op};
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;

use agent::{Agent, Setup};

/// Collect events until one matches `stop`.
async fn until(agent: &mut Agent, stop: impl Fn(&Event) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), agent.handle.events.recv())
            .await
            .expect("no event in time")
            .expect("the core stopped");
        let done = stop(&ev);
        seen.push(ev);
        if done {
            return seen;
        }
    }
}

fn messages(agent: &Agent, n: usize) -> Vec<Value> {
    agent.server.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn slash_compact_summarises_and_the_next_request_starts_from_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("parser.rs"), "fn parse() {}\n").unwrap();
    let script = json!({"turns": [
        {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "parser.rs"}}]},
        {"text": "Read it. The first answer."},
        {"text": "SUMMARY: the user wants the parser fixed."}
    ]});
    let mut agent = Agent::start(&script, Setup::in_dir(tmp.path(), Provider::Anthropic));
    agent.prompt("fix the parser").await;
    // Re-attached as it is when the compaction runs.
    std::fs::write(tmp.path().join("parser.rs"), "fn parse() { todo!() }\n").unwrap();
    agent
        .handle
        .ops
        .send(Op::Compact {
            instructions: Some("keep the file names".into()),
        })
        .unwrap();
    let events = until(&mut agent, |e| matches!(e, Event::Compacted { .. })).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Compacted { trigger, summary, .. }
                if trigger == "manual" && summary == "SUMMARY: the user wants the parser fixed.")),
        "the client gets the summary, to show under the row: {events:?}"
    );
    // The summary request: the conversation, then the instruction, with the same system
    // prompt and tools as the requests before it (the cached prefix still serves).
    let requests = agent.server.requests();
    let ask = requests[2].body["messages"].to_string();
    assert!(ask.contains("write a detailed summary"), "{ask}");
    assert!(ask.contains("keep the file names"), "{ask}");
    assert_eq!(requests[2].body["system"], requests[1].body["system"]);
    assert_eq!(requests[2].body["tools"], requests[1].body["tools"]);
    // The next request: one user message with the summary, the file read (as it is now) and
    // the new prompt; the old messages are gone.
    agent.prompt("go on").await;
    let next = messages(&agent, 3);
    assert_eq!(next.len(), 1, "{next:?}");
    let text = next[0].to_string();
    assert!(
        text.contains("SUMMARY: the user wants the parser fixed."),
        "{text}"
    );
    assert!(text.contains("fn parse() { todo!() }"), "{text}");
    assert!(text.contains("go on"), "{text}");
    assert!(!text.contains("The first answer."), "{text}");
    // The transcript keeps everything, with the boundary; a resume starts from the summary.
    let path = tmp.path().join(".data/t.jsonl");
    let transcript = std::fs::read_to_string(&path).unwrap();
    assert!(transcript.contains("The first answer."));
    assert!(transcript.contains("\"type\":\"compact_boundary\""));
    let resumed = cairn::session::resume::load(&path).unwrap();
    assert!(
        serde_json::to_string(&resumed.messages[0])
            .unwrap()
            .contains("SUMMARY:")
    );
    // (The prompt before the compaction is gone; what came after it is there.)
    let all = serde_json::to_string(&resumed.messages).unwrap();
    assert!(!all.contains("\"fix the parser\""), "{all}");
    assert!(all.contains("go on"), "{all}");
}

#[tokio::test]
async fn the_threshold_compacts_before_the_next_prompt_and_hooks_run() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("pre-compact.json");
    let settings: cairn::config::LoadedSettings = {
        let text = json!({"hooks": {"PreCompact": [{"matcher": "auto", "hooks": [
            {"type": "command", "command": format!("cat > {}", marker.display())}]}]}});
        let dir = tmp.path().join(".claude");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), text.to_string()).unwrap();
        cairn::config::load_settings(
            tmp.path(),
            None,
            &|k| (k == "HOME").then(|| tmp.path().join("home").display().to_string()),
            cairn::config::Trust::Trusted,
        )
    };
    let script = json!({"turns": [
        {"text": "Big answer.", "usage": {"input_tokens": 190000, "output_tokens": 100}},
        {"text": "SUMMARY: big work so far."}
    ]});
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.hooks = settings.hooks.clone();
    let mut agent = Agent::start(&script, setup);
    agent.prompt("start").await;
    let events = agent.prompt("next step").await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Compacted { trigger, .. } if trigger == "auto")),
        "{events:?}"
    );
    let next = messages(&agent, 2);
    assert_eq!(next.len(), 1, "{next:?}");
    let text = next[0].to_string();
    assert!(text.contains("SUMMARY: big work so far.") && text.contains("next step"));
    let hook: Value = serde_json::from_str(&std::fs::read_to_string(&marker).unwrap()).unwrap();
    assert_eq!(hook["hook_event_name"], "PreCompact");
    assert_eq!(hook["trigger"], "auto");
}

#[tokio::test]
async fn old_large_tool_results_are_cleared_before_a_full_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("big.txt"), "line of text\n".repeat(4000)).unwrap();
    std::fs::write(tmp.path().join("big2.txt"), "other text\n".repeat(4000)).unwrap();
    let read = |id: &str, file: &str| {
        json!({"tool_calls": [{"id": id, "name": "Read",
        "input": {"file_path": file, "limit": 3000}}]})
    };
    // The fourth answer reports a window past the threshold (85% of the 128k window assumed
    // for an unknown model); clearing the first big result is estimated to free enough (below
    // 90% of the threshold), so no summary is asked for.
    let script = json!({"turns": [
        read("r1", "big.txt"),
        {"text": "first read done"},
        read("r2", "big2.txt"),
        {"text": "second done", "usage": {"input_tokens": 110000, "output_tokens": 100}},
        {"text": "third"}
    ]});
    let mut agent = Agent::start(&script, Setup::in_dir(tmp.path(), Provider::Anthropic));
    agent.prompt("read it").await;
    agent.prompt("read it again").await;
    let events = agent.prompt("and now").await;
    assert!(
        !events.iter().any(|e| matches!(e, Event::Compacted { .. })),
        "{events:?}"
    );
    let sent = messages(&agent, 4);
    let first_result = sent[2]["content"][0]["content"].to_string();
    assert!(
        first_result.contains("was cleared to save context"),
        "{first_result}"
    );
    // The latest result is kept whole.
    let last_result = sent[6]["content"][0]["content"].to_string();
    assert!(last_result.contains("other text"), "{sent:?}");
}

#[tokio::test]
async fn slash_context_reports_what_fills_the_window() {
    let tmp = tempfile::tempdir().unwrap();
    let script = json!({"turns": [{"text": "Hello.", "usage": {"input_tokens": 5000, "output_tokens": 10}}]});
    let mut agent = Agent::start(&script, Setup::in_dir(tmp.path(), Provider::Anthropic));
    agent.prompt("hi").await;
    agent.handle.ops.send(Op::ContextReport).unwrap();
    let events = until(&mut agent, |e| matches!(e, Event::ContextReport { .. })).await;
    let Some(Event::ContextReport {
        model,
        window,
        parts,
        last_used,
    }) = events.last()
    else {
        panic!("{events:?}")
    };
    assert_eq!(model, "test-model");
    assert!(*window > 0);
    assert_eq!(*last_used, Some(5010));
    let names: Vec<&str> = parts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["system", "memory", "tools", "messages"]);
    let tokens = |name: &str| parts.iter().find(|(n, _)| n == name).unwrap().1;
    assert!(tokens("system") > 100 && tokens("tools") > 100, "{parts:?}");
    assert!(
        tokens("messages") > 0 && tokens("messages") < 100,
        "{parts:?}"
    );
}

/// The todo list survives a compaction: the model is reminded of it in the request after the
/// summary, and a resume from the compacted transcript still has it.
#[tokio::test]
async fn the_todo_list_survives_compaction_and_the_model_is_reminded_of_it() {
    let tmp = tempfile::tempdir().unwrap();
    let todos = json!({"todos": [
        {"content": "Fix the parser", "status": "in_progress", "activeForm": "Fixing the parser"},
        {"content": "Add a test", "status": "pending", "activeForm": "Adding a test"}
    ]});
    let script = json!({"turns": [
        {"tool_calls": [{"id": "t", "name": "TodoWrite", "input": todos}]},
        {"text": "Planned."},
        {"text": "SUMMARY: two steps planned."}
    ]});
    let mut agent = Agent::start(&script, Setup::in_dir(tmp.path(), Provider::Anthropic));
    agent.prompt("plan the fix").await;
    agent
        .handle
        .ops
        .send(Op::Compact { instructions: None })
        .unwrap();
    until(&mut agent, |e| matches!(e, Event::Compacted { .. })).await;
    agent.prompt("go on").await;
    let next = messages(&agent, 3);
    assert_eq!(next.len(), 1, "{next:?}");
    let text = next[0].to_string();
    assert!(text.contains("SUMMARY: two steps planned."), "{text}");
    assert!(text.contains("The todo list:"), "{text}");
    assert!(
        text.contains("Fix the parser") && text.contains("Add a test"),
        "{text}"
    );
    let resumed = cairn::session::resume::load(&tmp.path().join(".data/t.jsonl")).unwrap();
    let kept: Vec<&str> = resumed.todos.iter().map(|t| t.content.as_str()).collect();
    assert_eq!(kept, ["Fix the parser", "Add a test"]);
}
