//! Tool cells after the fact (issue #27, items 1–3, and #24's diagnostics under an edit): an
//! edit's changed lines collapsed, Ctrl+O on the visible turn's cells or the focused one, a
//! resumed session's cells as they looked live, a compaction (resumed or live) as one row, the
//! problems a language server found after an edit.

use std::path::PathBuf;

use serde_json::json;

use crate::protocol::{CallKind, CallOutcome, Display, Event, HistoryItem, PermissionMode};
use crate::tui::app::tests::{Harness, finished, session};
use crate::tui::input::{Key, KeyInput, Mods};
use crate::tui::render::tests::screen;

fn started(id: &str, tool: &str, title: &str) -> Event {
    Event::ToolCallStarted {
        call_id: id.into(),
        tool: tool.into(),
        title: title.into(),
        input: json!({}),
        kind: CallKind::Other,
    }
}

fn done(id: &str, display: Display, outcome: Option<CallOutcome>) -> Event {
    Event::ToolCallFinished {
        call_id: id.into(),
        is_error: false,
        display,
        outcome,
    }
}

/// `n` numbered lines, `fn line_i() {}`.
fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("fn line_{i}() {{}}\n")).collect()
}

fn diff(before: String, after: String) -> Display {
    Display::Diff {
        path: PathBuf::from("/work/project/src/lib.rs"),
        before,
        after,
    }
}

/// An edit of `src/lib.rs` that replaces line 20 of 40 with two lines.
fn small_edit() -> Display {
    let before = lines(40);
    let after = before.replace("fn line_20() {}\n", "fn twenty() {}\nfn twenty_one() {}\n");
    diff(before, after)
}

fn command(stdout: &str) -> Display {
    Display::Command {
        command: "cargo test".into(),
        stdout: stdout.into(),
        stderr: String::new(),
        exit_code: Some(0),
        timed_out: false,
    }
}

fn turn(h: &mut Harness) {
    h.event(session(PermissionMode::AcceptEdits));
    h.event(Event::TurnStarted { turn_id: 1 });
}

fn ctrl_o(h: &mut Harness) {
    h.key(KeyInput::ctrl('o'));
}

#[test]
fn a_finished_edit_shows_its_changed_lines_collapsed() {
    let mut h = Harness::new();
    turn(&mut h);
    h.event(started("e1", "Edit", "Edit src/lib.rs"));
    h.event(done("e1", small_edit(), None));
    h.event(finished(1));
    let text = screen(&mut h, 80, 14, 0);
    // The added lines are visible, with one line of context and the +N −M summary.
    assert!(text.contains("src/lib.rs +2 \u{2212}1"), "{text}");
    assert!(text.contains("20 + fn twenty() {}"), "{text}");
    assert!(text.contains("21 + fn twenty_one() {}"), "{text}");
    assert!(text.contains("19   fn line_19() {}"), "{text}");
    assert!(!text.contains("fn line_17() {}"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn a_long_edit_is_trimmed_from_the_middle() {
    let mut h = Harness::new();
    turn(&mut h);
    let before = lines(40);
    let after = before.replace("fn line_", "fn renamed_");
    h.event(started("e1", "Edit", "Edit src/lib.rs"));
    h.event(done("e1", diff(before, after), None));
    h.event(finished(1));
    let text = screen(&mut h, 80, 20, 0);
    // The first and the last changes show; the middle is left out and says how to see it.
    assert!(text.contains("src/lib.rs +40 \u{2212}40"), "{text}");
    assert!(text.contains("1 - fn line_1() {}"), "{text}");
    assert!(text.contains("40 + fn renamed_40() {}"), "{text}");
    assert!(!text.contains("fn renamed_20() {}"), "{text}");
    assert!(text.contains("… +69 lines (ctrl+o to expand)"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn ctrl_o_expands_every_tool_cell_of_the_turn_and_collapses_them_again() {
    let mut h = Harness::new();
    turn(&mut h);
    let out = |tag: &str| {
        (1..=9)
            .map(|i| format!("{tag} line {i}\n"))
            .collect::<String>()
    };
    h.event(started("b1", "Bash", "Bash cargo build"));
    h.event(done("b1", command(&out("build")), None));
    h.event(started("b2", "Bash", "Bash cargo test"));
    h.event(done("b2", command(&out("test")), None));
    h.event(finished(1));
    let collapsed = screen(&mut h, 80, 30, 0);
    assert!(!collapsed.contains("build line 1"), "{collapsed}");
    assert!(!collapsed.contains("test line 1"), "{collapsed}");
    ctrl_o(&mut h);
    let expanded = screen(&mut h, 80, 30, 0);
    // Both cells, not only the last one.
    assert!(expanded.contains("build line 1"), "{expanded}");
    assert!(expanded.contains("test line 1"), "{expanded}");
    assert!(!expanded.contains("ctrl+o to expand"), "{expanded}");
    insta::assert_snapshot!(expanded);
    ctrl_o(&mut h);
    assert_eq!(screen(&mut h, 80, 30, 0), collapsed);
}

#[test]
fn a_focused_cell_expands_alone_and_shows_its_focus() {
    let mut h = Harness::new();
    turn(&mut h);
    let out: String = (1..=9).map(|i| format!("out {i}\n")).collect();
    h.event(started("b1", "Bash", "Bash cargo build"));
    h.event(done("b1", command(&out), None));
    h.event(started("b2", "Bash", "Bash cargo test"));
    h.event(done("b2", command(&out), None));
    h.event(finished(1));
    // Alt+Up twice: the first cell.
    h.key(KeyInput::new(Key::Up, Mods::ALT));
    h.key(KeyInput::new(Key::Up, Mods::ALT));
    ctrl_o(&mut h);
    let text = screen(&mut h, 80, 30, 0);
    assert!(
        text.contains("Bash cargo build  ◂ ctrl+o to collapse · esc to unfocus"),
        "{text}"
    );
    // The other cell stays collapsed.
    assert_eq!(text.matches("(ctrl+o to expand)").count(), 1, "{text}");
    assert!(text.contains("out 1"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn a_resumed_session_shows_each_call_as_it_looked_live() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    let tool = |id: &str, title: &str, display, outcome| HistoryItem::Tool {
        call_id: id.into(),
        title: title.into(),
        is_error: false,
        display: Some(display),
        outcome,
    };
    h.event(Event::HistoryRestored {
        items: vec![
            HistoryItem::Prompt {
                text: "rename line 20".into(),
            },
            tool(
                "e1",
                "Edit src/lib.rs",
                small_edit(),
                Some(CallOutcome::AllowedEdited),
            ),
            tool(
                "b1",
                "Bash cargo test",
                command("test result: ok. 3 passed\n"),
                Some(CallOutcome::AllowedOnce),
            ),
            HistoryItem::Answer {
                text: "Renamed.".into(),
            },
        ],
    });
    let text = screen(&mut h, 80, 22, 0);
    assert!(
        text.contains("Edit src/lib.rs · allowed with your changes"),
        "{text}"
    );
    assert!(text.contains("20 + fn twenty() {}"), "{text}");
    assert!(text.contains("Bash cargo test · allowed once"), "{text}");
    assert!(text.contains("test result: ok. 3 passed"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn a_compaction_resumes_as_one_notice_with_its_summary_expandable() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    let summary = "## Goal\nFix the parser.\n\n## Done\n- Found the off-by-one in `peek`.";
    h.event(Event::HistoryRestored {
        items: vec![
            HistoryItem::Compacted {
                summary: summary.into(),
            },
            HistoryItem::Prompt {
                text: "go on".into(),
            },
        ],
    });
    let collapsed = screen(&mut h, 80, 10, 0);
    assert!(
        collapsed.contains(
            "≡ Conversation compacted: the model went on from a summary (ctrl+o to expand)"
        ),
        "{collapsed}"
    );
    assert!(!collapsed.contains("Fix the parser."), "{collapsed}");
    insta::assert_snapshot!("compaction_collapsed", collapsed);
    ctrl_o(&mut h);
    let expanded = screen(&mut h, 80, 14, 0);
    assert!(expanded.contains("Found the off-by-one"), "{expanded}");
    insta::assert_snapshot!("compaction_expanded", expanded);
}

#[test]
fn a_live_compaction_is_the_same_row_with_its_summary_expandable() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.event(Event::TurnStarted { turn_id: 1 });
    // As `/compact` reports it: the old notice had no summary to show.
    h.event(Event::Compacted {
        trigger: "manual".into(),
        pre_tokens: 48_200,
        summary: "## Goal\nFix the parser.\n\n## Done\n- Found the off-by-one in `peek`.".into(),
    });
    h.event(finished(1));
    let collapsed = screen(&mut h, 80, 10, 0);
    assert!(
        collapsed.contains("≡ Conversation compacted (/compact, ~48k tokens): the model went on"),
        "{collapsed}"
    );
    assert!(collapsed.contains("(ctrl+o to expand)"), "{collapsed}");
    assert!(!collapsed.contains("Fix the parser."), "{collapsed}");
    insta::assert_snapshot!("live_compaction_collapsed", collapsed);
    ctrl_o(&mut h);
    let expanded = screen(&mut h, 80, 14, 0);
    assert!(expanded.contains("Found the off-by-one"), "{expanded}");
    insta::assert_snapshot!("live_compaction_expanded", expanded);
}

#[test]
fn new_problems_after_an_edit_show_as_a_count_and_expand_to_their_lines() {
    let mut h = Harness::new();
    turn(&mut h);
    h.event(started("e1", "Edit", "Edit src/lib.rs"));
    h.event(done("e1", small_edit(), None));
    h.event(Event::ToolDiagnostics {
        call_id: "e1".into(),
        path: PathBuf::from("/work/project/src/lib.rs"),
        problems: vec![
            "line 20:4 error: cannot find function `line_20` in this scope [E0425]".into(),
            "line 21:4 warning: function `twenty_one` is never used".into(),
        ],
        new: true,
    });
    h.event(finished(1));
    let collapsed = screen(&mut h, 80, 16, 0);
    assert!(
        collapsed.contains("⚠ 2 new problems (ctrl+o to expand)"),
        "{collapsed}"
    );
    assert!(!collapsed.contains("E0425"), "{collapsed}");
    insta::assert_snapshot!("diagnostics_collapsed", collapsed);
    ctrl_o(&mut h);
    let expanded = screen(&mut h, 80, 30, 0);
    assert!(expanded.contains("⚠ 2 new problems"), "{expanded}");
    assert!(
        expanded.contains("line 20:4 error: cannot find function `line_20` in this scope [E0425]"),
        "{expanded}"
    );
    insta::assert_snapshot!("diagnostics_expanded", expanded);
}
