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
