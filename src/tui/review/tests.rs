//! Snapshot and behaviour tests of the diff view: real texts, a real `TestBackend`, the buffer
//! compared as text (and styles checked cell by cell where text cannot show them).

use std::path::PathBuf;
use std::sync::Arc;

use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::{DiffView, FileKind, Layout, ReviewKey};

const BEFORE: &str = "\
use std::io;

fn main() {
    let name = \"world\";
    println!(\"hello {name}\");
}

fn helper(x: u32) -> u32 {
    x + 1
}

fn other() {
\tlet total = compute(1, 2);
    report(total);
}

fn last() {}
";

const AFTER: &str = "\
use std::io;

fn main() {
    let name = \"cairn\";
    println!(\"hello {name}\");
}

fn helper(x: u32) -> u32 {
    x + 1
}

fn other() {
\tlet total = compute(1, 3);
    report(total);
    println!(\"done\");
}

fn last() {}
";

fn view() -> DiffView {
    DiffView::new(PathBuf::from("src/main.rs"), BEFORE.into(), AFTER.into())
}

fn draw(view: &mut DiffView, width: u16, height: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    term.draw(|f| view.render(f.area(), f.buffer_mut()))
        .unwrap();
    term.backend().to_string()
}

fn buffer(view: &mut DiffView, width: u16, height: u16) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    view.render(buf.area, &mut buf);
    buf
}

/// The row of `buf` as text.
fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_string())
        .collect()
}

/// The first cell of the first occurrence of `needle` on any row.
fn find(buf: &Buffer, needle: &str) -> (u16, u16) {
    for y in 0..buf.area.height {
        if let Some(i) = row_text(buf, y).find(needle) {
            // Rows here are ASCII up to the needle, so the byte index is the column.
            return (i as u16, y);
        }
    }
    panic!("{needle:?} not on screen");
}

fn long_texts(n: usize) -> (String, String) {
    let before: String = (1..=n).map(|i| format!("line {i}\n")).collect();
    let after: String = (1..=n)
        .map(|i| {
            if i % 10 == 5 {
                format!("line {i} changed\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    (before, after)
}

#[test]
fn unified_80_columns() {
    let mut v = view();
    insta::assert_snapshot!(draw(&mut v, 80, 24));
    assert_eq!(v.layout(), Layout::Unified);
}

#[test]
fn side_by_side_at_160_columns() {
    let mut v = view();
    insta::assert_snapshot!(draw(&mut v, 160, 20));
    assert_eq!(v.layout(), Layout::SideBySide);
}

#[test]
fn rejected_hunk() {
    let mut v = view();
    assert!(v.handle_key(ReviewKey::ToggleHunk));
    let buf = buffer(&mut v, 80, 24);
    insta::assert_snapshot!(draw(&mut v, 80, 24));
    // The rejected added line is struck through and grey, not green.
    let (x, y) = find(&buf, "\"cairn\"");
    let cell = &buf[(x, y)];
    assert!(cell.modifier.contains(Modifier::CROSSED_OUT));
    assert_eq!(cell.fg, Color::DarkGray);
    assert_ne!(cell.bg, Color::Indexed(22));
}

#[test]
fn focused_second_hunk_after_tab() {
    let mut v = view();
    draw(&mut v, 80, 12);
    assert!(v.handle_key(ReviewKey::NextHunk));
    assert_eq!(v.focused_hunk(), Some(1));
    insta::assert_snapshot!(draw(&mut v, 80, 12));
}

#[test]
fn new_file() {
    let mut v = DiffView::new(
        PathBuf::from("notes.md"),
        String::new(),
        "# Notes\n\n- first\n- second\n".into(),
    );
    assert_eq!(v.kind(), FileKind::New);
    insta::assert_snapshot!(draw(&mut v, 60, 8));
    // Side by side makes no sense for a new file: it stays unified even when wide.
    draw(&mut v, 160, 8);
    assert_eq!(v.layout(), Layout::Unified);
}

#[test]
fn deleted_file() {
    let mut v = DiffView::new(PathBuf::from("old.txt"), "one\ntwo\n".into(), String::new());
    assert_eq!(v.kind(), FileKind::Deleted);
    insta::assert_snapshot!(draw(&mut v, 60, 6));
}

#[test]
fn long_diff_scrolled() {
    let (before, after) = long_texts(60);
    let mut v = DiffView::new(PathBuf::from("long.txt"), before, after);
    draw(&mut v, 60, 12);
    for key in [ReviewKey::PageDown, ReviewKey::Down, ReviewKey::Down] {
        assert!(v.handle_key(key));
    }
    insta::assert_snapshot!(draw(&mut v, 60, 12));
}

#[test]
fn narrow_40_columns() {
    let mut v = view();
    insta::assert_snapshot!(draw(&mut v, 40, 14));
}

#[test]
fn long_lines_are_clipped_with_a_marker_at_20_columns() {
    let mut v = view();
    let buf = buffer(&mut v, 20, 8);
    assert_eq!(row_text(&buf, 0), "src/main.rs  +3 -2,›");
    assert_eq!(row_text(&buf, 1), "▶ @@ -1,7 +1,7 @@  ›");
    assert_eq!(row_text(&buf, 5), " 4    -     let nam›");
    assert_eq!(row_text(&buf, 2), " 1  1   use std::io;");
}

#[test]
fn wide_characters_are_never_split() {
    let mut v = DiffView::new(
        PathBuf::from("w.txt"),
        "世界世界世界
"
        .into(),
        "世界世界世界!
"
        .into(),
    );
    let buf = buffer(&mut v, 14, 4);
    // "1   - " takes 6 columns; 8 are left, one goes to the marker, so three wide characters
    // fit and the fourth is not cut in half (a wide character's second cell reads as a blank).
    assert_eq!(row_text(&buf, 2), "1   - 世 界 世  ›");
}

#[test]
fn changed_words_are_emphasized() {
    let mut v = view();
    let buf = buffer(&mut v, 80, 24);
    let (x, y) = find(&buf, "\"cairn\"");
    assert_eq!(buf[(x + 1, y)].bg, Color::Indexed(28));
    assert!(buf[(x + 1, y)].modifier.contains(Modifier::BOLD));
    // The unchanged words of the same line keep the plain added tint.
    let (lx, ly) = find(&buf, "let name = \"cairn\"");
    assert_eq!(ly, y);
    assert_eq!(buf[(lx, ly)].bg, Color::Indexed(22));
    let (rx, ry) = find(&buf, "\"world\"");
    assert_eq!(buf[(rx + 1, ry)].bg, Color::Indexed(124));
}

#[test]
fn the_highlighter_colours_lines_and_keeps_the_diff_tint() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = calls.clone();
    let mut v = view().with_highlighter(Arc::new(move |ext, line| {
        assert_eq!(ext, "rs");
        seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let (head, tail) = line.split_at(line.find("fn").unwrap_or(0));
        Some(vec![
            (Style::new().bg(Color::Blue), head.to_string()),
            (Style::new().fg(Color::Magenta), tail.to_string()),
        ])
    }));
    let buf = buffer(&mut v, 80, 24);
    let (x, y) = find(&buf, "fn other");
    assert_eq!(buf[(x, y)].fg, Color::Magenta);
    let first = calls.load(std::sync::atomic::Ordering::SeqCst);
    assert!(first > 0);
    // Cached: a second frame asks for nothing new.
    buffer(&mut v, 80, 24);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), first);
    // The highlighter's background never hides the added tint.
    let (ax, ay) = find(&buf, "println!(\"done\")");
    assert_eq!(buf[(ax, ay)].bg, Color::Indexed(22));
}

#[test]
fn a_file_without_extension_passes_its_name_to_the_highlighter() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut v = DiffView::new(PathBuf::from("dir/Makefile"), "a\n".into(), "b\n".into())
        .with_highlighter(Arc::new(move |ext, _| {
            log.lock().unwrap().push(ext.to_string());
            None
        }));
    buffer(&mut v, 40, 5);
    assert_eq!(*seen.lock().unwrap(), vec!["Makefile", "Makefile"]);
    // Not ready yet: asked again on the next frame.
    buffer(&mut v, 40, 5);
    assert_eq!(seen.lock().unwrap().len(), 4);
}

#[test]
fn above_the_line_limit_the_view_is_plain() {
    let (before, after) = long_texts(10_001);
    let mut v =
        DiffView::new(PathBuf::from("big.rs"), before, after).with_highlighter(Arc::new(|_, _| {
            panic!("a plain view never asks the highlighter")
        }));
    let buf = buffer(&mut v, 80, 10);
    let (x, y) = find(&buf, "changed");
    // No word emphasis either: the whole added line has one tint.
    assert_eq!(buf[(x, y)].bg, Color::Indexed(22));
    assert!(!buf[(x, y)].modifier.contains(Modifier::BOLD));
}

#[test]
fn keys_move_focus_toggle_and_switch_layout() {
    let mut v = view();
    draw(&mut v, 80, 10);
    assert_eq!(v.accepted(), vec![true, true]);
    assert!(v.all_accepted());
    v.handle_key(ReviewKey::NextHunk);
    v.handle_key(ReviewKey::NextHunk);
    assert_eq!(v.focused_hunk(), Some(1), "Tab stops at the last hunk");
    v.handle_key(ReviewKey::ToggleHunk);
    assert_eq!(v.accepted(), vec![true, false]);
    assert!(!v.all_accepted());
    assert_eq!(v.summary(), "+3 -2, 1 of 2 hunks accepted");
    v.handle_key(ReviewKey::PrevHunk);
    v.handle_key(ReviewKey::PrevHunk);
    assert_eq!(v.focused_hunk(), Some(0));
    v.handle_key(ReviewKey::RejectAll);
    assert_eq!(v.accepted(), vec![false, false]);
    assert_eq!(v.summary(), "+3 -2, 0 of 2 hunks accepted");
    v.handle_key(ReviewKey::AcceptAll);
    assert_eq!(v.accepted(), vec![true, true]);

    // 80 columns: unified until the person asks; the choice then sticks at any width.
    assert_eq!(v.layout(), Layout::Unified);
    v.handle_key(ReviewKey::ToggleLayout);
    assert_eq!(v.layout(), Layout::SideBySide);
    draw(&mut v, 80, 10);
    assert_eq!(v.layout(), Layout::SideBySide);
    v.handle_key(ReviewKey::ToggleLayout);
    draw(&mut v, 160, 10);
    assert_eq!(v.layout(), Layout::Unified);
}

#[test]
fn scrolling_past_the_focused_hunk_moves_the_focus_to_what_is_visible() {
    let (before, after) = long_texts(60);
    let mut v = DiffView::new(PathBuf::from("long.txt"), before, after);
    draw(&mut v, 60, 8);
    assert_eq!(v.focused_hunk(), Some(0));
    for _ in 0..3 {
        v.handle_key(ReviewKey::PageDown);
    }
    let focus = v.focused_hunk().unwrap();
    assert!(focus > 0);
    // The focused hunk's line numbers are lit on screen, even with its header scrolled away.
    let buf = buffer(&mut v, 60, 8);
    assert!(
        (1..8).any(|y| buf[(0, y)].fg == Color::Yellow || buf[(1, y)].fg == Color::Yellow),
        "{buf:?}"
    );
    // Up from the very top stays at the top.
    for _ in 0..100 {
        v.handle_key(ReviewKey::PageUp);
    }
    v.handle_key(ReviewKey::Up);
    assert!(draw(&mut v, 60, 8).contains("1-7/"));
}

#[test]
fn nothing_to_review_consumes_no_keys() {
    let mut v = DiffView::new(PathBuf::from("same.txt"), "x\n".into(), "x\n".into());
    assert_eq!(v.kind(), FileKind::Unchanged);
    assert!(!v.handle_key(ReviewKey::Down));
    assert!(!v.handle_key(ReviewKey::ToggleHunk));
    assert_eq!(v.summary(), "no changes");
    assert_eq!(v.approved_content(), ("x\n".to_string(), String::new()));
    assert!(draw(&mut v, 40, 3).contains("(no changes)"));
}

#[test]
fn approving_everything_writes_the_proposal_and_tells_nothing() {
    let v = view();
    assert_eq!(v.approved_content(), (AFTER.to_string(), String::new()));
}

#[test]
fn rejecting_one_of_two_hunks_applies_exactly_the_other() {
    let mut v = view();
    v.handle_key(ReviewKey::ToggleHunk);
    let (content, note) = v.approved_content();
    assert_eq!(
        content,
        BEFORE.replace(
            "compute(1, 2);\n    report(total);\n",
            "compute(1, 3);\n    report(total);\n    println!(\"done\");\n"
        )
    );
    assert!(note.contains("rejected 1 of its 2 hunks"), "{note}");
    assert!(note.contains("Hunk 1 of 2:"), "{note}");
    assert!(
        note.contains("-    let name = \"world\";\n+    let name = \"cairn\";\n"),
        "{note}"
    );
    assert!(
        !note.contains("done"),
        "only the rejected hunk is listed: {note}"
    );

    v.handle_key(ReviewKey::AcceptAll);
    v.handle_key(ReviewKey::NextHunk);
    v.handle_key(ReviewKey::ToggleHunk);
    let (content, note) = v.approved_content();
    assert_eq!(content, BEFORE.replace("\"world\"", "\"cairn\""));
    assert!(note.contains("Hunk 2 of 2:"), "{note}");
    assert!(note.contains("+    println!(\"done\");\n"), "{note}");
}

#[test]
fn an_edited_proposal_is_written_and_the_model_told_the_difference() {
    let mut v = view();
    // Reject the first hunk, then the person edits the second one in their editor.
    v.handle_key(ReviewKey::ToggleHunk);
    v.set_after(AFTER.replace("\"done\"", "\"finished\""));
    assert_eq!(
        v.accepted(),
        vec![false, true],
        "unchanged hunks keep their choice"
    );
    let screen = draw(&mut v, 80, 24);
    assert!(screen.contains("edited by you"), "{screen}");
    let (content, note) = v.approved_content();
    assert_eq!(
        content,
        AFTER
            .replace("\"done\"", "\"finished\"")
            .replace("\"cairn\"", "\"world\"")
    );
    assert!(
        note.contains("The user edited your proposed content for src/main.rs"),
        "{note}"
    );
    assert!(
        note.contains("-    println!(\"done\");\n+    println!(\"finished\");\n"),
        "{note}"
    );
    assert!(
        note.contains("-    let name = \"cairn\";\n+    let name = \"world\";\n"),
        "{note}"
    );

    // Editing back to the proposal tells the model nothing about edits.
    v.set_after(AFTER.to_string());
    v.handle_key(ReviewKey::AcceptAll);
    assert_eq!(v.approved_content(), (AFTER.to_string(), String::new()));
}

fn any_key() -> impl Strategy<Value = ReviewKey> {
    use ReviewKey as K;
    prop::sample::select(vec![
        K::Up,
        K::Down,
        K::PageUp,
        K::PageDown,
        K::NextHunk,
        K::PrevHunk,
        K::ToggleHunk,
        K::AcceptAll,
        K::RejectAll,
        K::ToggleLayout,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn render_never_panics(
        before in prop::collection::vec("[a-c \t\u{4e16}\u{301}\u{1b}é]{0,12}\r?\n?", 0..25),
        after in prop::collection::vec("[a-c \t\u{4e16}\u{301}\u{1b}é]{0,12}\r?\n?", 0..25),
        keys in prop::collection::vec(any_key(), 0..12),
        width in 0u16..200,
        height in 0u16..30,
        x in 0u16..4,
        ext in "(rs|txt|)",
    ) {
        let mut v = DiffView::new(
            PathBuf::from(format!("f.{ext}")), before.concat(), after.concat());
        if ext == "rs" {
            // Segments of up to three characters, each styled; for lines with a `b` the
            // segments misspell the line, which must be ignored, not trusted.
            v = v.with_highlighter(Arc::new(|_, line| {
                let chars: Vec<char> = line.chars().collect();
                let mut segs: Vec<(Style, String)> = chars
                    .chunks(3)
                    .map(|c| (Style::new().fg(Color::Blue).bg(Color::White), c.iter().collect()))
                    .collect();
                if line.contains('b') {
                    segs.push((Style::new(), "x".into()));
                }
                Some(segs)
            }));
        }
        let mut buf = Buffer::empty(Rect::new(0, 0, 200, 30));
        // Areas partly outside the buffer are clipped, not trusted.
        let area = Rect::new(x, 0, width, height);
        v.render(area, &mut buf);
        for k in keys {
            v.handle_key(k);
            v.render(area, &mut buf);
        }
        let accepted = v.accepted();
        let (content, _) = v.approved_content();
        if accepted.iter().all(|a| *a) {
            prop_assert_eq!(content, after.concat());
        }
    }
}
