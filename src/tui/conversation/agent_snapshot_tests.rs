//! The Agent call's cell: running (live line, a call waiting for permission), done (summary
//! and report), expanded (the sub-agent's calls with their output), and nested sub-agents.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::json;

use super::*;
use crate::protocol::{PermissionRequest, RequestKind, Usage};

fn conv() -> Conversation {
    Conversation::new(Highlighter::plain())
}

fn screen(conv: &mut Conversation, w: u16, h: u16) -> String {
    let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
    conv.render(buf.area, &mut buf, &mut ScrollState::default());
    (0..h)
        .map(|y| {
            let row: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
            row.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `event` as the sub-agent of Agent call `a1` sends it.
fn sub(event: Event) -> Event {
    Event::Subagent {
        parent_call_id: "a1".into(),
        agent: "Explore".into(),
        event: Box::new(event),
    }
}

fn started(id: &str, title: &str) -> Event {
    Event::ToolCallStarted {
        call_id: id.into(),
        tool: "Grep".into(),
        title: title.into(),
        input: json!({}),
        kind: Default::default(),
    }
}

fn finished(id: &str, display: Display) -> Event {
    Event::ToolCallFinished {
        call_id: id.into(),
        is_error: false,
        display,
        outcome: None,
    }
}

fn usage(tokens: u64) -> Event {
    Event::Usage {
        last: Usage {
            input_tokens: tokens,
            ..Usage::default()
        },
        total: Usage::default(),
        total_cost_usd: 0.0,
        context_window: 200_000,
        model: "claude-haiku-4-5".into(),
    }
}

/// An Explore agent that grepped, read, and now runs a command that waits for permission.
fn working() -> Conversation {
    let mut c = conv();
    c.apply_event(&Event::ToolCallStarted {
        call_id: "a1".into(),
        tool: "Agent".into(),
        title: "Explore · find the parser".into(),
        input: json!({}),
        kind: Default::default(),
    });
    c.apply_event(&sub(usage(1200)));
    c.apply_event(&sub(started("g1", "Grep fn parse")));
    c.apply_event(&sub(finished(
        "g1",
        Display::Text {
            text: "src/parse.rs:12: fn parse(input: &str)".into(),
        },
    )));
    c.apply_event(&sub(usage(2100)));
    c.apply_event(&sub(started("r1", "Read src/parse.rs")));
    c
}

#[test]
fn running_agent_shows_its_current_call_and_a_waiting_one() {
    let mut c = working();
    insta::assert_snapshot!("agent_running", screen(&mut c, 60, 3));
    // The sub-agent's permission request marks its call, in this cell: no cell of its own.
    c.apply_event(&sub(finished("r1", Display::Empty)));
    c.apply_event(&sub(started("b1", "Bash git log -3")));
    c.apply_event(&Event::PermissionRequest(PermissionRequest {
        id: 1,
        call_id: "b1".into(),
        tool: "Bash".into(),
        title: "Explore › Bash git log -3".into(),
        input: json!({"command": "git log -3"}),
        reason: "ask".into(),
        preview: None,
        session_scope: None,
        saveable_rule: None,
        background_task: None,
        kind: RequestKind::Tool,
    }));
    assert_eq!(c.len(), 1);
    let shown = screen(&mut c, 60, 3);
    assert!(
        shown.contains("⎿ Bash git log -3 · waiting for permission · 3 tool uses"),
        "{shown}"
    );
    c.permission_resolved("b1", true);
    let shown = screen(&mut c, 60, 3);
    assert!(shown.contains("⎿ Bash git log -3 · 3 tool uses"), "{shown}");
}

fn done() -> Conversation {
    let mut c = working();
    c.apply_event(&sub(finished(
        "r1",
        Display::Text {
            text: "fn parse(input: &str) -> Ast {\n    todo!()\n}".into(),
        },
    )));
    c.apply_event(&Event::ToolCallFinished {
        call_id: "a1".into(),
        is_error: false,
        display: Display::Markdown {
            text: "The parser is `parse` in src/parse.rs:12 (sure).".into(),
        },
        outcome: None,
    });
    c
}

#[test]
fn done_agent_shows_a_summary_and_its_report() {
    let mut c = done();
    insta::assert_snapshot!("agent_done", screen(&mut c, 60, 4));
}

#[test]
fn expanded_agent_shows_every_call_with_its_output() {
    let mut c = done();
    c.toggle_expanded();
    insta::assert_snapshot!("agent_expanded", screen(&mut c, 60, 10));
}

#[test]
fn a_nested_agents_calls_join_the_outer_cell() {
    let mut c = conv();
    c.apply_event(&Event::ToolCallStarted {
        call_id: "a1".into(),
        tool: "Agent".into(),
        title: "outer · delegate".into(),
        input: json!({}),
        kind: Default::default(),
    });
    c.apply_event(&sub(started("a2", "inner · look")));
    c.apply_event(&sub(Event::Subagent {
        parent_call_id: "a2".into(),
        agent: "inner".into(),
        event: Box::new(started("g9", "Glob **/*.rs")),
    }));
    assert_eq!(c.len(), 1);
    let shown = screen(&mut c, 60, 3);
    assert!(shown.contains("⎿ Glob **/*.rs · 2 tool uses"), "{shown}");
}

/// A background run of Agent call `a1`, as the core tells of it.
fn background(status: crate::protocol::TaskStatus, report: Option<&str>) -> Event {
    Event::BackgroundTask(crate::protocol::BackgroundTask {
        id: "agent-1".into(),
        kind: crate::protocol::TaskKind::Agent,
        agent: "Explore".into(),
        description: "find the parser".into(),
        status,
        elapsed_ms: if report.is_some() { 14_000 } else { 0 },
        call_id: Some("a1".into()),
        report: report.map(str::to_string),
    })
}

/// Issue #27 item 6: a background agent's cell said `Done (… 0s)` above a stale "Running in
/// the background" line. The cell follows the run: running (its calls as they happen) with
/// where to watch it, then its end, duration and report, and nothing stale.
#[test]
fn a_background_agents_cell_follows_the_run_in_place() {
    use crate::protocol::TaskStatus;
    let mut c = conv();
    c.apply_event(&Event::ToolCallStarted {
        call_id: "a1".into(),
        tool: "Agent".into(),
        title: "Explore · find the parser".into(),
        input: json!({}),
        kind: Default::default(),
    });
    c.apply_event(&background(TaskStatus::Running, None));
    c.apply_event(&finished(
        "a1",
        Display::Text {
            text: "Running in the background as agent-1 (/tasks)".into(),
        },
    ));
    c.apply_event(&sub(usage(1200)));
    c.apply_event(&sub(started("g1", "Grep fn parse")));
    c.apply_event(&sub(finished(
        "g1",
        Display::Text {
            text: "src/parse.rs:12".into(),
        },
    )));
    c.apply_event(&sub(started("r1", "Read src/parse.rs")));
    let running = screen(&mut c, 70, 6);
    insta::assert_snapshot!("background_agent_running", running);
    c.apply_event(&sub(finished(
        "r1",
        Display::Text {
            text: "fn parse() {}".into(),
        },
    )));
    c.apply_event(&background(
        TaskStatus::Completed,
        Some("parse() is in src/parse.rs:12"),
    ));
    let done = screen(&mut c, 70, 6);
    assert!(!done.contains("Running in the background"), "{done}");
    insta::assert_snapshot!("background_agent_done", done);
    c.apply_event(&background(TaskStatus::Failed, Some("the model refused")));
    insta::assert_snapshot!("background_agent_failed", screen(&mut c, 70, 6));
}
