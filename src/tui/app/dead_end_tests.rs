//! The dead ends of issue #27 item 10, each of which now says something: the start screen's
//! hint and `?` on an empty composer, `/model` marking the model in use, a finished todo list
//! put away at the end of its turn, `/resume` with no other session, and `/rewind` naming what
//! each prompt changed.

use crate::protocol::{
    Event, HostEvent, PermissionMode, RewindPoint, SavedSession, Todo, TodoStatus,
};
use crate::tui::app::tests::{Harness, finished, session};
use crate::tui::input::Key;
use crate::tui::render::tests::screen;

#[test]
fn the_start_screen_says_where_to_begin_and_question_mark_lists_the_keys() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    let text = screen(&mut h, 100, 10, 0);
    assert!(text.contains("? keys and commands"), "{text}");
    assert!(text.contains("Shift+Tab switches the mode"), "{text}");
    insta::assert_snapshot!(text);
    h.press(Key::Char('?'));
    assert_eq!(h.app.composer_text(), "");
    let text = screen(&mut h, 100, 40, 0);
    assert!(text.contains("send (queued while a turn runs)"), "{text}");
    assert!(!text.contains("? keys and commands"), "{text}");
    // In a message `?` is a character like any other.
    h.type_text("why?");
    assert_eq!(h.app.composer_text(), "why?");
}

#[test]
fn a_finished_todo_list_is_put_away_when_its_turn_ends() {
    let todo = |content: &str, status| Todo {
        content: content.into(),
        active_form: content.into(),
        status,
    };
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("fix it");
    h.press(Key::Enter);
    h.event(Event::TurnStarted { turn_id: 1 });
    h.event(Event::TodosUpdated {
        todos: vec![
            todo("Read the parser", TodoStatus::Completed),
            todo("Fix the bug", TodoStatus::InProgress),
        ],
    });
    h.event(finished(1));
    assert!(
        screen(&mut h, 60, 12, 0).contains("Fix the bug"),
        "unfinished: stays"
    );
    h.event(Event::TodosUpdated {
        todos: vec![
            todo("Read the parser", TodoStatus::Completed),
            todo("Fix the bug", TodoStatus::Completed),
        ],
    });
    h.event(finished(1));
    let text = screen(&mut h, 60, 12, 0);
    assert!(!text.contains("☑ Fix the bug"), "{text}");
}

#[test]
fn resume_with_no_other_session_says_so() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("/resume");
    h.press(Key::Enter);
    let sessions: Vec<SavedSession> = Vec::new();
    h.event(Event::Host(HostEvent::SavedSessions { sessions }));
    let text = screen(&mut h, 80, 10, 0);
    assert!(
        text.contains("There is no earlier session of this project to resume."),
        "{text}"
    );
}

#[test]
fn the_rewind_list_names_what_each_prompt_changed() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("/rewind");
    h.press(Key::Enter);
    let point = |id: &str, text: &str, changed: &[&str]| RewindPoint {
        id: id.into(),
        text: text.into(),
        code: true,
        conversation: true,
        not_undone: Vec::new(),
        changed: changed.iter().map(|s| s.to_string()).collect(),
    };
    h.event(Event::RewindPoints {
        points: vec![
            point("p2", "add a test", &["tests/parser.rs"]),
            point("p1", "fix the parser", &["src/parser.rs", "src/lexer.rs"]),
            point("p0", "explain the parser", &[]),
        ],
        undo: None,
    });
    let text = screen(&mut h, 100, 12, 0);
    assert!(text.contains("changed tests/parser.rs"), "{text}");
    assert!(text.contains("changed src/parser.rs and 1 more"), "{text}");
    insta::assert_snapshot!(text);
}
