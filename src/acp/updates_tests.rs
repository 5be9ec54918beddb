//! Tests of `updates.rs`: what the client sees of cairn's events, as JSON on the wire.

use std::path::Path;

use serde_json::{Value, json};

use super::updates::{history, translate};
use crate::protocol::{
    CallKind, CommandInfo, Display, Event, HistoryItem, PermissionMode, SessionInfo, Todo,
    TodoStatus,
};

fn wire(event: &Event) -> Vec<Value> {
    translate(event, Path::new("/w"))
        .iter()
        .map(|u| serde_json::to_value(u).unwrap_or_default())
        .collect()
}

#[test]
fn a_tool_call_starts_pending_with_its_kind_and_location() {
    let out = wire(&Event::ToolCallStarted {
        call_id: "t1".into(),
        tool: "Read".into(),
        title: "Read src/a.rs".into(),
        input: json!({"file_path": "src/a.rs", "offset": 10}),
        kind: CallKind::Read,
    });
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["sessionUpdate"], "tool_call");
    assert_eq!(out[0]["toolCallId"], "t1");
    assert_eq!(out[0]["kind"], "read");
    // `pending` is the protocol's default status, left off the wire.
    assert!(
        out[0].get("status").is_none_or(|s| s == "pending"),
        "{}",
        out[0]
    );
    assert_eq!(out[0]["locations"][0]["path"], "/w/src/a.rs");
    assert_eq!(out[0]["locations"][0]["line"], 10);
    let kinds: Vec<Value> = [
        CallKind::Search,
        CallKind::Edit,
        CallKind::Execute,
        CallKind::Fetch,
        CallKind::Agent,
        CallKind::Plan,
        CallKind::Mcp,
    ]
    .into_iter()
    .map(|kind| {
        wire(&Event::ToolCallStarted {
            call_id: "t".into(),
            tool: String::new(),
            title: String::new(),
            input: json!({}),
            kind,
        })[0]["kind"]
            .clone()
    })
    .collect();
    // `other` is the protocol's default kind, left off the wire.
    assert_eq!(
        kinds,
        [
            json!("search"),
            json!("edit"),
            json!("execute"),
            json!("fetch"),
            json!("think"),
            json!("switch_mode"),
            Value::Null
        ]
    );
}

#[test]
fn an_edit_finishes_with_its_diff_and_a_command_with_its_output() {
    let out = wire(&Event::ToolCallFinished {
        call_id: "e1".into(),
        is_error: false,
        display: Display::Diff {
            path: "/w/a.txt".into(),
            before: "one\n".into(),
            after: "two\n".into(),
        },
        outcome: None,
    });
    assert_eq!(out[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(out[0]["status"], "completed");
    assert_eq!(
        out[0]["content"][0],
        json!({"type": "diff", "path": "/w/a.txt", "oldText": "one\n", "newText": "two\n"})
    );
    // A new file has no old text.
    let created = wire(&Event::ToolCallFinished {
        call_id: "e2".into(),
        is_error: false,
        display: Display::Diff {
            path: "/w/new.txt".into(),
            before: String::new(),
            after: "x".into(),
        },
        outcome: None,
    });
    assert!(
        created[0]["content"][0]
            .get("oldText")
            .is_none_or(Value::is_null)
    );
    // A rename: one diff per file, and each file a location.
    let file = |path: &str| crate::protocol::FileTexts {
        path: path.into(),
        before: "old\n".into(),
        after: "new\n".into(),
    };
    let renamed = wire(&Event::ToolCallFinished {
        call_id: "r1".into(),
        is_error: false,
        display: Display::Diffs {
            files: vec![file("/w/a.py"), file("/w/b.py")],
        },
        outcome: None,
    });
    let paths: Vec<&Value> = renamed[0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["path"])
        .collect();
    assert_eq!(paths, [&json!("/w/a.py"), &json!("/w/b.py")]);
    assert_eq!(renamed[0]["locations"][1]["path"], "/w/b.py");
    let bash = wire(&Event::ToolCallFinished {
        call_id: "b1".into(),
        is_error: true,
        display: Display::Command {
            command: "false".into(),
            stdout: "out\n".into(),
            stderr: "err\n".into(),
            exit_code: Some(1),
            timed_out: false,
        },
        outcome: None,
    });
    assert_eq!(bash[0]["status"], "failed");
    assert_eq!(
        bash[0]["content"][0]["content"]["text"],
        "```\nout\nerr\n```\nexit code 1"
    );
}

#[test]
fn todos_are_the_plan_and_modes_and_commands_are_announced() {
    let plan = wire(&Event::TodosUpdated {
        todos: vec![
            Todo {
                content: "Write it".into(),
                status: TodoStatus::Completed,
                active_form: "Writing it".into(),
            },
            Todo {
                content: "Test it".into(),
                status: TodoStatus::InProgress,
                active_form: "Testing it".into(),
            },
        ],
    });
    assert_eq!(plan[0]["sessionUpdate"], "plan");
    assert_eq!(plan[0]["entries"][0]["content"], "Write it");
    assert_eq!(plan[0]["entries"][0]["status"], "completed");
    assert_eq!(plan[0]["entries"][1]["status"], "in_progress");
    let mode = wire(&Event::ModeChanged {
        mode: PermissionMode::AcceptEdits,
    });
    assert_eq!(
        mode[0],
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "acceptEdits"})
    );
    let info = SessionInfo {
        session_id: "s".into(),
        model: "m".into(),
        model_label: String::new(),
        provider: "anthropic".into(),
        cwd: "/w".into(),
        tools: vec![],
        mode: PermissionMode::Default,
        demo: false,
        commands: vec![CommandInfo {
            name: "review".into(),
            description: "Review the diff".into(),
            argument_hint: Some("[file]".into()),
            skill: false,
            aliases: vec![],
        }],
        memory_files: vec![],
        model_choices: vec![],
        auto_compact_pct: 0,
        agents: vec![],
    };
    let commands = wire(&Event::SessionConfigured(info));
    assert_eq!(commands[0]["sessionUpdate"], "available_commands_update");
    let list = &commands[0]["availableCommands"];
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["init", "clear", "compact", "review"]);
    assert_eq!(list[3]["input"]["hint"], "[file]");
}

#[test]
fn a_call_that_starts_running_is_in_progress_and_a_sub_agents_calls_are_its_own() {
    let running = wire(&Event::ToolCallRunning {
        call_id: "c1".into(),
    });
    assert_eq!(running[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(running[0]["status"], "in_progress");
    let started = Event::ToolCallStarted {
        call_id: "inner".into(),
        tool: "Read".into(),
        title: "Read a.rs".into(),
        input: json!({"file_path": "a.rs"}),
        kind: CallKind::Read,
    };
    let nested = Event::Subagent {
        parent_call_id: "outer-agent".into(),
        agent: "Explore".into(),
        event: Box::new(Event::Subagent {
            parent_call_id: "inner-agent".into(),
            agent: "Plan".into(),
            event: Box::new(started),
        }),
    };
    let call = wire(&nested);
    assert_eq!(call[0]["sessionUpdate"], "tool_call");
    assert_eq!(call[0]["title"], "Explore › Plan › Read a.rs");
    // The call's own agent's call is its parent.
    assert_eq!(call[0]["_meta"]["cairn"]["parentToolCallId"], "inner-agent");
    // A sub-agent's text stays inside.
    let text = Event::Subagent {
        parent_call_id: "a".into(),
        agent: "Explore".into(),
        event: Box::new(Event::TextDelta { text: "hm".into() }),
    };
    assert!(wire(&text).is_empty());
}

#[test]
fn a_restored_history_replays_prompts_answers_and_calls() {
    let out: Vec<Value> = history(&[
        HistoryItem::Prompt { text: "hi".into() },
        HistoryItem::Tool {
            call_id: "t1".into(),
            title: "Read a".into(),
            is_error: false,
            display: None,
            outcome: None,
        },
        HistoryItem::Answer {
            text: "done".into(),
        },
    ])
    .iter()
    .map(|u| serde_json::to_value(u).unwrap_or_default())
    .collect();
    assert_eq!(out[0]["sessionUpdate"], "user_message_chunk");
    assert_eq!(out[0]["content"]["text"], "hi");
    assert_eq!(out[1]["sessionUpdate"], "tool_call");
    assert_eq!(out[1]["status"], "completed");
    assert_eq!(out[2]["sessionUpdate"], "agent_message_chunk");
    assert_eq!(out[2]["content"]["text"], "done");
}

#[test]
fn retries_and_finished_background_agents_are_told_as_thoughts() {
    let retry = wire(&Event::Retrying {
        attempt: 2,
        max_attempts: 8,
        delay_ms: 10,
        reason: "overloaded".into(),
        discarded: true,
    });
    assert_eq!(retry[0]["sessionUpdate"], "agent_thought_chunk");
    let text = retry[0]["content"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("overloaded") && text.contains("cut off"),
        "{text}"
    );
    let task = |status| {
        wire(&Event::BackgroundTask(crate::protocol::BackgroundTask {
            id: "agent-1".into(),
            agent: "Explore".into(),
            description: "look around".into(),
            status,
            elapsed_ms: 5,
            kind: crate::protocol::TaskKind::Agent,
            call_id: None,
            report: None,
        }))
    };
    assert!(task(crate::protocol::TaskStatus::Running).is_empty());
    let done = task(crate::protocol::TaskStatus::Completed);
    assert!(
        done[0]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("agent-1") && t.contains("completed"))
    );
}
