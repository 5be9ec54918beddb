//! `/rewind` in the TUI: Esc Esc and `/rewind` ask the core for the points, the list (newest
//! first, undo on top) and the numbered choices are drawn, a digit picks, the confirmation for
//! files changed outside cairn, and the prompt back in the composer after a rewind.

use std::path::PathBuf;

use super::tests::{Harness, session};
use super::*;
use crate::protocol::{Event, RewindPoint, RewindTarget};
use crate::tui::input::Key;
use crate::tui::render::tests::screen;

fn points() -> Event {
    let point = |id: &str, text: &str, code, changed: &[&str]| RewindPoint {
        id: id.into(),
        text: text.into(),
        code,
        conversation: true,
        not_undone: Vec::new(),
        changed: changed.iter().map(|s| s.to_string()).collect(),
    };
    Event::RewindPoints {
        points: vec![
            point(
                "p3",
                "now add tests for the parser",
                true,
                &["tests/parser.rs"],
            ),
            point(
                "p2",
                "fix the off-by-one in peek\nand explain it",
                true,
                &["src/parser.rs", "src/lexer.rs"],
            ),
            point("p1", "read the parser", false, &[]),
        ],
        undo: Some("rewind to \"make it faster\"".into()),
    }
}

#[test]
fn esc_esc_on_an_idle_empty_composer_asks_for_the_points() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.press(Key::Esc);
    assert!(h.sent().is_empty(), "one Esc only arms");
    assert_eq!(
        h.app.session.status.hint.as_deref(),
        Some("Esc again to rewind")
    );
    h.press(Key::Esc);
    assert_eq!(h.sent(), [Op::RewindList]);
    // Not with text in the composer, and not while a turn runs (Esc interrupts then).
    h.type_text("draft");
    h.press(Key::Esc);
    h.press(Key::Esc);
    assert!(h.sent().is_empty());
    h.app.input.composer.clear();
    h.event(Event::TurnStarted { turn_id: 1 });
    h.press(Key::Esc);
    h.press(Key::Esc);
    assert!(h.sent().iter().all(|op| *op == Op::Interrupt));
}

#[test]
fn the_prompt_list_then_numbered_choices_then_the_rewind() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("/rewind");
    h.press(Key::Enter);
    assert_eq!(h.sent(), [Op::RewindList]);
    h.event(points());
    insta::assert_snapshot!("rewind_prompt_list", screen(&mut h, 90, 12, 0));
    // The second prompt (below the undo row and the newest).
    h.press(Key::Down);
    h.press(Key::Down);
    h.press(Key::Enter);
    insta::assert_snapshot!("rewind_choices", screen(&mut h, 90, 12, 0));
    h.press(Key::Char('3'));
    assert_eq!(
        h.sent(),
        [Op::Rewind {
            target: RewindTarget::Prompt { id: "p2".into() },
            code: true,
            conversation: false,
            confirmed: false,
        }]
    );
    assert!(h.app.picker().is_none());
}

#[test]
fn undo_is_offered_on_top_and_a_prompt_without_checkpoint_rewinds_the_conversation_only() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.event(points());
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [Op::Rewind {
            target: RewindTarget::UndoLast,
            code: true,
            conversation: true,
            confirmed: false,
        }]
    );
    h.event(points());
    for _ in 0..3 {
        h.press(Key::Down);
    }
    h.press(Key::Enter);
    // 1 (code and conversation) is refused: no checkpoint before that prompt.
    h.press(Key::Char('1'));
    assert!(h.sent().is_empty());
    h.event(points());
    for _ in 0..3 {
        h.press(Key::Down);
    }
    h.press(Key::Enter);
    h.press(Key::Char('2'));
    assert_eq!(
        h.sent(),
        [Op::Rewind {
            target: RewindTarget::Prompt { id: "p1".into() },
            code: false,
            conversation: true,
            confirmed: false,
        }]
    );
    // 4 cancels.
    h.event(points());
    h.press(Key::Down);
    h.press(Key::Enter);
    h.press(Key::Char('4'));
    assert!(h.sent().is_empty());
    assert!(h.app.picker().is_none());
}

#[test]
fn outside_changes_are_confirmed_and_the_prompt_comes_back_into_the_composer() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    let target = RewindTarget::Prompt { id: "p2".into() };
    h.event(Event::RewindNeedsConfirmation {
        target: target.clone(),
        code: true,
        conversation: true,
        files: vec![PathBuf::from("/work/project/src/parser.rs")],
    });
    insta::assert_snapshot!("rewind_confirm", screen(&mut h, 90, 12, 0));
    h.press(Key::Char('1'));
    assert_eq!(
        h.sent(),
        [Op::Rewind {
            target,
            code: true,
            conversation: true,
            confirmed: true,
        }]
    );
    h.event(Event::HistoryRestored { items: Vec::new() });
    h.event(Event::Rewound {
        summary: "Files: 2 restored (src/parser.rs, src/lexer.rs), 1 removed (tests/parser.rs), 0 recreated.".into(),
        prompt: Some("fix the off-by-one in peek".into()),
    });
    assert_eq!(h.app.composer_text(), "fix the off-by-one in peek");
    // Nothing to rewind: a notice, no picker.
    h.event(Event::RewindPoints {
        points: Vec::new(),
        undo: None,
    });
    assert!(h.app.picker().is_none());
}

#[test]
fn after_a_rewind_diff_shows_the_files_as_they_are_now() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new();
    h.app.session.cwd = dir.path().to_path_buf();
    let changed = |h: &mut Harness, name: &str, before: &str, after: &str| {
        h.event(Event::ToolCallFinished {
            call_id: name.into(),
            is_error: false,
            display: crate::protocol::Display::Diff {
                path: dir.path().join(name),
                before: before.into(),
                after: after.into(),
            },
            outcome: None,
        });
    };
    changed(&mut h, "kept.rs", "1\n", "2\n");
    changed(&mut h, "put_back.rs", "a\n", "b\n");
    changed(&mut h, "created.rs", "", "new\n");
    // The rewind restored put_back.rs, removed created.rs; kept.rs was changed once more since.
    std::fs::write(dir.path().join("kept.rs"), "3\n").unwrap();
    std::fs::write(dir.path().join("put_back.rs"), "a\n").unwrap();
    h.event(Event::Rewound {
        summary: "Files: 1 restored (src/parser.rs), 1 removed (tests/parser.rs), 0 recreated."
            .into(),
        prompt: None,
    });
    let files: Vec<_> = h.app.session_changes().files().collect();
    assert_eq!(files, [(std::path::Path::new("kept.rs"), "1\n", "3\n")]);
    assert_eq!(h.app.session_changes().lines_changed(), (3, 2));
}

/// Issue 29: what rewinding the code cannot undo is counted in the list and named above the
/// choices once a prompt is picked.
#[test]
fn what_a_rewind_cannot_undo_is_named_before_choosing() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("/rewind");
    h.press(Key::Enter);
    h.event(Event::RewindPoints {
        points: vec![RewindPoint {
            id: "p1".into(),
            text: "regenerate the fixtures".into(),
            code: true,
            conversation: true,
            not_undone: vec![
                "/tmp/fixtures/out.json (written outside the working directories)".into(),
                "/work/project/data/big.bin (over the 5 MiB size cap)".into(),
            ],
            changed: Vec::new(),
        }],
        undo: None,
    });
    insta::assert_snapshot!("rewind_list_not_undone", screen(&mut h, 90, 12, 0));
    h.press(Key::Enter);
    insta::assert_snapshot!("rewind_choices_not_undone", screen(&mut h, 90, 16, 0));
}
