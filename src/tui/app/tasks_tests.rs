//! Background agents in the TUI: the status row while some run, the notice when one ends.

use crate::protocol::{BackgroundTask, Event, PermissionMode, TaskStatus};
use crate::tui::app::tests::{Harness, session};
use crate::tui::input::Key;
use crate::tui::render::tests::screen;

fn task(id: &str, status: TaskStatus) -> Event {
    Event::BackgroundTask(BackgroundTask {
        id: id.into(),
        agent: "Explore".into(),
        description: "find the parser".into(),
        status,
        elapsed_ms: 0,
        kind: crate::protocol::TaskKind::Agent,
        call_id: None,
        report: None,
    })
}

/// The last row of the screen: the status line.
fn status_row(h: &mut Harness, width: u16) -> String {
    let text = screen(h, width, 10, 0);
    text.lines().last().unwrap_or_default().to_string()
}

/// Issue #27 item 6: nothing said a background agent runs. The status row counts them while
/// they run, pointing at `/tasks`, and says nothing once they ended.
#[test]
fn the_status_row_counts_running_background_agents() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    assert!(!status_row(&mut h, 100).contains("background"));
    h.event(task("agent-1", TaskStatus::Running));
    h.event(task("agent-2", TaskStatus::Running));
    insta::assert_snapshot!(screen(&mut h, 100, 10, 0));
    h.event(task("agent-1", TaskStatus::Completed));
    let row = status_row(&mut h, 100);
    assert!(
        row.contains(" 1 background agent running · /tasks "),
        "{row}"
    );
    h.event(task("agent-2", TaskStatus::Stopped));
    let row = status_row(&mut h, 100);
    assert!(!row.contains("background"), "{row}");
}

/// Issue #27 item 6: `/tasks` wrote a notice into the conversation each time. It is a view
/// now: every agent with its status, the conversation left as it was.
#[test]
fn slash_tasks_is_a_view_that_leaves_the_conversation_alone() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.event(task("agent-1", TaskStatus::Running));
    h.event(task("agent-2", TaskStatus::Running));
    h.event(Event::BackgroundTask(BackgroundTask {
        elapsed_ms: 4000,
        ..match task("agent-1", TaskStatus::Completed) {
            Event::BackgroundTask(t) => t,
            _ => unreachable!(),
        }
    }));
    let before = screen(&mut h, 100, 14, 0);
    h.type_text("/tasks");
    h.press(Key::Enter);
    insta::assert_snapshot!(screen(&mut h, 100, 14, 0));
    h.press(Key::Esc);
    assert_eq!(screen(&mut h, 100, 14, 0), before);
}

/// A background shell `bash_1` (Bash call `s1`) running `npm run dev`.
fn shell(status: TaskStatus, report: Option<&str>) -> Event {
    Event::BackgroundTask(BackgroundTask {
        id: "bash_1".into(),
        kind: crate::protocol::TaskKind::Shell,
        agent: "shell".into(),
        description: "npm run dev".into(),
        status,
        elapsed_ms: 3000,
        call_id: Some("s1".into()),
        report: report.map(str::to_string),
    })
}

/// Issue #27 item 6: `/tasks` lists background shells beside the agents, and Enter opens a
/// live view of one: the shell's output so far (asked of the core, asked again while it
/// runs), `k` stops it, its end shows, Esc goes back to a conversation left as it was.
#[test]
fn tasks_lists_shells_and_watches_one_live() {
    use crate::protocol::Op;
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.event(task("agent-1", TaskStatus::Running));
    h.event(shell(TaskStatus::Running, None));
    let before = screen(&mut h, 80, 14, 0);
    h.sent();
    h.type_text("/tasks");
    h.press(Key::Enter);
    insta::assert_snapshot!("tasks_with_an_agent_and_a_shell", screen(&mut h, 80, 14, 0));
    h.press(Key::Down);
    h.press(Key::Enter);
    assert!(h.app.is_task_view_open());
    assert_eq!(
        h.sent(),
        [Op::ReadTask {
            id: "bash_1".into()
        }]
    );
    h.event(Event::TaskOutput {
        id: "bash_1".into(),
        output: "> dev\n> vite\n\n  ready in 300 ms\n  Local: http://localhost:5173/\n".into(),
        status: TaskStatus::Running,
    });
    insta::assert_snapshot!("task_view_of_a_running_shell", screen(&mut h, 80, 8, 0));
    // While it runs, the tick asks again (every half second), and `k` stops it.
    h.app
        .tick(std::time::Instant::now() + std::time::Duration::from_secs(1));
    assert_eq!(
        h.sent(),
        [Op::ReadTask {
            id: "bash_1".into()
        }]
    );
    h.press(Key::Char('k'));
    assert_eq!(
        h.sent(),
        [Op::StopTask {
            id: "bash_1".into()
        }]
    );
    h.event(shell(TaskStatus::Stopped, Some("stopped")));
    assert_eq!(
        h.sent(),
        [Op::ReadTask {
            id: "bash_1".into()
        }],
        "its last output"
    );
    let ended = screen(&mut h, 80, 8, 0);
    assert!(
        ended.contains("bash_1  shell · npm run dev · stopped"),
        "{ended}"
    );
    assert!(ended.contains("── stopped"), "{ended}");
    h.press(Key::Esc);
    assert!(!h.app.is_task_view_open());
    let after = screen(&mut h, 80, 14, 0);
    assert_eq!(
        after
            .lines()
            .filter(|l| l.contains("Background shell"))
            .count(),
        1,
        "only the notice of its end: {after}\n{before}"
    );
}

/// The view of a running background agent: its Agent call's cell whole, its calls as they
/// come (the view draws the cell the events keep up to date).
#[test]
fn the_view_of_a_background_agent_follows_its_calls() {
    use serde_json::json;
    let sub = |event: Event| Event::Subagent {
        parent_call_id: "a1".into(),
        agent: "Explore".into(),
        event: Box::new(event),
    };
    let started = |id: &str, title: &str| Event::ToolCallStarted {
        call_id: id.into(),
        tool: "Grep".into(),
        title: title.into(),
        input: json!({}),
        kind: Default::default(),
    };
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.event(started("a1", "Explore · find the parser"));
    h.event(Event::BackgroundTask(BackgroundTask {
        call_id: Some("a1".into()),
        ..match task("agent-1", TaskStatus::Running) {
            Event::BackgroundTask(t) => t,
            _ => unreachable!(),
        }
    }));
    h.event(Event::ToolCallFinished {
        call_id: "a1".into(),
        is_error: false,
        display: crate::protocol::Display::Text {
            text: "Running in the background as agent-1 (/tasks)".into(),
        },
        outcome: None,
    });
    h.event(sub(started("g1", "Grep fn parse")));
    h.event(sub(Event::ToolCallFinished {
        call_id: "g1".into(),
        is_error: false,
        display: crate::protocol::Display::Text {
            text: "src/parse.rs:12".into(),
        },
        outcome: None,
    }));
    h.type_text("/tasks");
    h.press(Key::Enter);
    h.press(Key::Enter);
    assert!(h.app.is_task_view_open());
    h.event(sub(Event::AssistantMessage {
        content: json!([{"type": "text", "text": "Found it; reading the file."}]),
        incomplete: false,
    }));
    h.event(sub(started("r1", "Read src/parse.rs")));
    insta::assert_snapshot!("task_view_of_a_running_agent", screen(&mut h, 80, 8, 0));
}
