//! Rendering tests: the conversation drawn into a ratatui `TestBackend`, snapshotted as text.
//! All use `Highlighter::plain()` so they are deterministic, except the one that waits for the
//! real highlighter to colour a Rust block.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use serde_json::json;
use unicode_width::UnicodeWidthStr;

use super::*;
use crate::protocol::{CallOutcome, Display, PermissionRequest, RequestKind, SearchMatch};

fn text_of(buf: &Buffer) -> String {
    let mut rows = Vec::new();
    for y in 0..buf.area.height {
        let mut row = String::new();
        let mut skip = 0;
        for x in 0..buf.area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            skip = sym.width().saturating_sub(1);
            row.push_str(sym);
        }
        rows.push(row.trim_end().to_string());
    }
    rows.join("\n")
}

/// The column where `needle` starts in a rendered row.
fn col_of(row: &str, needle: &str) -> u16 {
    let idx = row.find(needle).unwrap();
    row[..idx].width() as u16
}

fn draw(conv: &mut Conversation, w: u16, h: u16, scroll: &mut ScrollState) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal
        .draw(|f| conv.render(f.area(), f.buffer_mut(), scroll))
        .unwrap();
    terminal.backend().buffer().clone()
}

fn screen(conv: &mut Conversation, w: u16, h: u16) -> String {
    text_of(&draw(conv, w, h, &mut ScrollState::default()))
}

fn conv() -> Conversation {
    Conversation::new(Highlighter::plain())
}

fn delta(conv: &mut Conversation, text: &str) {
    conv.apply_event(&Event::TextDelta {
        text: text.to_string(),
    });
}

fn started(conv: &mut Conversation, id: &str, tool: &str, title: &str) {
    conv.apply_event(&Event::ToolCallStarted {
        call_id: id.into(),
        tool: tool.into(),
        title: title.into(),
        input: json!({}),
        kind: Default::default(),
    });
}

fn finished(conv: &mut Conversation, id: &str, is_error: bool, display: Display) {
    conv.apply_event(&Event::ToolCallFinished {
        call_id: id.into(),
        is_error,
        display,
        outcome: None,
    });
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

const MARKDOWN: &str = "# Plan\n\nWe will **fix** the `parser` and *test* it.\n\n## Steps\n\n\
1. Read the code\n2. Change it\n   - carefully\n\n| file | lines |\n|------|------:|\n\
| lib.rs | 120 |\n| main.rs | 8 |\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n\
> Note: see [the docs](https://example.com).\n";

#[test]
fn empty() {
    let mut c = conv();
    assert!(c.is_empty());
    insta::assert_snapshot!(screen(&mut c, 40, 4), @"");
}

#[test]
fn streaming_text_shows_the_unfinished_line() {
    let mut c = conv();
    c.push_user("explain the parser");
    c.apply_event(&Event::TurnStarted { turn_id: 1 });
    for piece in ["The parser ", "reads tokens.\n\nThen it bui", "lds a tr"] {
        delta(&mut c, piece);
    }
    insta::assert_snapshot!(screen(&mut c, 50, 8));
}

#[test]
fn markdown_sample() {
    let mut c = conv();
    delta(&mut c, MARKDOWN);
    c.apply_event(&Event::AssistantMessage {
        content: json!([{"type": "text", "text": MARKDOWN}]),
        incomplete: false,
    });
    let buf = draw(&mut c, 60, 28, &mut ScrollState::default());
    insta::assert_snapshot!(text_of(&buf));
    let text = text_of(&buf);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(buf[(2, 0)].fg, Color::Magenta);
    assert!(buf[(2, 0)].modifier.contains(Modifier::BOLD));
    assert!(
        buf[(col_of(rows[2], "fix"), 2)]
            .modifier
            .contains(Modifier::BOLD)
    );
    assert_eq!(buf[(col_of(rows[2], "parser"), 2)].fg, Color::Yellow);
    assert!(
        buf[(col_of(rows[2], "test"), 2)]
            .modifier
            .contains(Modifier::ITALIC)
    );
    assert_eq!(buf[(2, 15)].fg, Color::Yellow, "plain code block style");
    let link = col_of(rows[19], "the docs");
    assert_eq!(buf[(link, 19)].fg, Color::Blue);
    assert!(buf[(link, 19)].modifier.contains(Modifier::UNDERLINED));
}

#[test]
fn markdown_table_shrinks_and_wraps_when_narrow() {
    let mut c = conv();
    let md = "| option | meaning |\n|---|---|\n| `--resume` | continue the most recent session in this directory |\n| `-p` | print mode |\n";
    delta(&mut c, md);
    insta::assert_snapshot!(screen(&mut c, 34, 10));
}

#[test]
fn whole_message_without_deltas_is_shown() {
    let mut c = conv();
    c.apply_event(&Event::TurnStarted { turn_id: 1 });
    c.apply_event(&Event::AssistantMessage {
        content: json!([{"type": "text", "text": "Done: *all* good."}]),
        incomplete: false,
    });
    insta::assert_snapshot!(screen(&mut c, 40, 3), @"● Done: all good.");
    assert_eq!(c.last_answer().as_deref(), Some("Done: *all* good."));
}

#[test]
fn tool_running_with_progress() {
    let mut c = conv();
    started(&mut c, "t1", "Bash", "Bash cargo test");
    c.apply_event(&Event::ToolCallProgress {
        call_id: "t1".into(),
        output: numbered(8),
    });
    insta::assert_snapshot!(screen(&mut c, 50, 9));
    // Ticking moves the spinner and the elapsed time.
    let later = Instant::now() + Duration::from_millis(2_500);
    assert!(c.tick(later));
    assert!(c.is_dirty());
    let ticked = screen(&mut c, 50, 9);
    assert!(ticked.contains(" Bash cargo test · 2s\n"), "{ticked}");
    assert!(!ticked.starts_with("⠋"), "{ticked}");
}

#[test]
fn tool_error_is_red() {
    let mut c = conv();
    started(&mut c, "t1", "Edit", "Edit src/lib.rs");
    finished(
        &mut c,
        "t1",
        true,
        Display::Text {
            text: "String to replace not found in file.\nString: fn old()".into(),
        },
    );
    let buf = draw(&mut c, 50, 4, &mut ScrollState::default());
    insta::assert_snapshot!(text_of(&buf));
    assert_eq!(buf[(0, 0)].fg, Color::Red);
    assert_eq!(buf[(2, 0)].fg, Color::Red);
    assert_eq!(buf[(4, 1)].fg, Color::Red);
}

#[test]
fn long_output_collapses_and_expands() {
    let mut c = conv();
    started(&mut c, "t1", "Read", "Read src/main.rs (lines 1-20)");
    finished(&mut c, "t1", false, Display::Text { text: numbered(20) });
    let collapsed = screen(&mut c, 50, 9);
    insta::assert_snapshot!("long_output_collapsed", collapsed);
    c.toggle_expanded();
    insta::assert_snapshot!("long_output_expanded", screen(&mut c, 50, 24));
    c.toggle_expanded();
    assert_eq!(screen(&mut c, 50, 9), collapsed);
}

#[test]
fn command_output_keeps_its_tail_and_exit_code() {
    let mut c = conv();
    started(&mut c, "t1", "Bash", "Bash npm test");
    finished(
        &mut c,
        "t1",
        true,
        Display::Command {
            command: "npm test".into(),
            stdout: numbered(12),
            stderr: "\u{1b}[31m1 test failed\u{1b}[0m\n".into(),
            exit_code: Some(1),
            timed_out: false,
        },
    );
    insta::assert_snapshot!(screen(&mut c, 50, 9));
}

#[test]
fn attachments_are_one_line_with_type_size_and_pixels() {
    let mut c = conv();
    started(&mut c, "t1", "Screenshot", "Screenshot window");
    finished(
        &mut c,
        "t1",
        false,
        Display::Attachment {
            media_type: "image/png".into(),
            bytes: 48 * 1024 + 300,
            width: Some(640),
            height: Some(480),
            title: None,
        },
    );
    started(&mut c, "t2", "Read", "Read report.pdf");
    finished(
        &mut c,
        "t2",
        false,
        Display::Attachment {
            media_type: "application/pdf".into(),
            bytes: 1_572_864,
            width: None,
            height: None,
            title: Some("report\u{1b}[2J.pdf".into()),
        },
    );
    let screen = screen(&mut c, 60, 6);
    assert!(screen.contains("image/png · 48 KiB · 640×480"), "{screen}");
    // A title from the tool is sanitised like every other tool text.
    assert!(
        screen.contains("report.pdf · application/pdf · 1.5 MiB"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
}

#[test]
fn retry_notice_and_errors_are_inline() {
    let mut c = conv();
    c.apply_event(&Event::Retrying {
        attempt: 2,
        max_attempts: 8,
        delay_ms: 3_500,
        reason: "API overloaded".into(),
        discarded: false,
    });
    c.apply_event(&Event::Error {
        message: "request failed: 401 invalid x-api-key".into(),
    });
    c.push_notice(NoticeKind::Info, "queued: run the tests");
    c.apply_event(&Event::FileChangedOnDisk {
        path: PathBuf::from("src/lib.rs"),
        change: FileChange::Modified,
    });
    let buf = draw(&mut c, 60, 10, &mut ScrollState::default());
    insta::assert_snapshot!(text_of(&buf));
    assert_eq!(buf[(0, 0)].fg, Color::Yellow);
    assert_eq!(buf[(0, 2)].fg, Color::Red);
    assert_eq!(buf[(0, 4)].fg, Color::Blue);
}

#[test]
fn diff_body() {
    let mut c = conv();
    started(&mut c, "t1", "Edit", "Edit src/greet.rs");
    let before = "fn greet() {\n    println!(\"hello\");\n}\n\nfn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\nfn g() {}\n";
    let after = "fn greet() {\n    println!(\"hello, world\");\n}\n\nfn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\nfn g2() {}\n";
    finished(
        &mut c,
        "t1",
        false,
        Display::Diff {
            path: "src/greet.rs".into(),
            before: before.into(),
            after: after.into(),
        },
    );
    c.toggle_expanded();
    let buf = draw(&mut c, 60, 16, &mut ScrollState::default());
    insta::assert_snapshot!(text_of(&buf));
    // Removed line red, added line green, the changed word emphasised.
    let text = text_of(&buf);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(buf[(7, 3)].fg, Color::Red);
    assert_eq!(buf[(7, 4)].fg, Color::Green);
    let changed = col_of(rows[4], ", world");
    assert_eq!(buf[(changed, 4)].bg, Color::Green);
    assert_eq!(buf[(changed - 1, 4)].bg, Color::Reset);
}

#[test]
fn grep_matches_highlight_the_pattern() {
    let mut c = conv();
    started(&mut c, "t1", "Grep", "Grep \"fn ma\\w+\" in src");
    finished(
        &mut c,
        "t1",
        false,
        Display::Matches {
            pattern: r"fn ma\w+".into(),
            matches: vec![
                SearchMatch {
                    path: "src/main.rs".into(),
                    line: Some(3),
                    text: "pub fn main() {".into(),
                },
                SearchMatch {
                    path: "src/cli.rs".into(),
                    line: Some(12),
                    text: "    fn make_args() -> Args {".into(),
                },
            ],
            more: 4,
        },
    );
    let buf = draw(&mut c, 60, 6, &mut ScrollState::default());
    insta::assert_snapshot!(text_of(&buf));
    let row1 = text_of(&buf).lines().nth(1).unwrap().to_string();
    let hit = col_of(&row1, "fn main");
    assert_eq!(buf[(hit, 1)].fg, Color::Red);
    assert_ne!(buf[(hit - 1, 1)].fg, Color::Red);
}

#[test]
fn permission_wait_then_denied_and_interrupted() {
    let mut c = conv();
    c.apply_event(&Event::PermissionRequest(PermissionRequest {
        id: 1,
        call_id: "t1".into(),
        tool: "Bash".into(),
        title: "Bash rm -rf build".into(),
        input: json!({"command": "rm -rf build"}),
        reason: "ask".into(),
        preview: None,
        session_scope: None,
        saveable_rule: None,
        background_task: None,
        kind: RequestKind::Tool,
    }));
    started(&mut c, "t1", "Bash", "Bash rm -rf build");
    assert_eq!(c.len(), 1);
    insta::assert_snapshot!(screen(&mut c, 50, 2), @"? Bash rm -rf build · waiting for permission");
    c.permission_resolved("t1", false);
    assert!(screen(&mut c, 50, 2).contains("waiting for permission"));
    c.apply_event(&Event::ToolCallFinished {
        call_id: "t1".into(),
        is_error: true,
        display: Display::Text {
            text: "The user denied this command.".into(),
        },
        outcome: Some(CallOutcome::Denied),
    });
    started(&mut c, "t2", "Bash", "Bash sleep 100");
    c.apply_event(&Event::TurnFinished {
        turn_id: 1,
        end: TurnEnd::Interrupted,
        text: String::new(),
        num_turns: 1,
    });
    insta::assert_snapshot!(screen(&mut c, 50, 8));
}

#[test]
fn an_allowed_call_runs_after_its_prompt() {
    let mut c = conv();
    started(&mut c, "t1", "Write", "Write notes.md");
    c.apply_event(&Event::PermissionRequest(PermissionRequest {
        id: 1,
        call_id: "t1".into(),
        tool: "Write".into(),
        title: "Write notes.md".into(),
        input: json!({}),
        reason: "ask".into(),
        preview: None,
        session_scope: None,
        saveable_rule: None,
        background_task: None,
        kind: RequestKind::Tool,
    }));
    insta::assert_snapshot!(screen(&mut c, 50, 2), @"? Write notes.md · waiting for permission");
    c.permission_resolved("t1", true);
    insta::assert_snapshot!(screen(&mut c, 50, 2), @"⠋ Write notes.md · 0s");
    finished(&mut c, "t1", false, Display::Empty);
    insta::assert_snapshot!(screen(&mut c, 50, 2), @"● Write notes.md");
}

#[test]
fn thinking_is_one_line_until_expanded() {
    let mut c = conv();
    c.apply_event(&Event::ThinkingDelta {
        text: "The user wants a fix.\nFirst I should read the file and then".into(),
    });
    insta::assert_snapshot!(screen(&mut c, 40, 2), @"✻ Thinking… First I should read the file");
    delta(&mut c, "Reading it now.");
    c.focus_prev();
    assert_eq!(c.focused(), Some(0));
    insta::assert_snapshot!("thinking_collapsed", screen(&mut c, 40, 4));
    c.toggle_expanded();
    insta::assert_snapshot!("thinking_expanded", screen(&mut c, 40, 7));
}

fn mixed_session() -> Conversation {
    let mut c = conv();
    c.push_user("Why does the build fail on CI? It works on my machine.");
    c.apply_event(&Event::TurnStarted { turn_id: 1 });
    delta(
        &mut c,
        "Let me look at the **CI config** and the failing test. 日本語のテキストも表示できます。\n\n",
    );
    started(&mut c, "t1", "Read", "Read .github/workflows/ci.yml");
    finished(&mut c, "t1", false, Display::Text { text: numbered(30) });
    started(&mut c, "t2", "Glob", "Glob **/*.rs");
    finished(
        &mut c,
        "t2",
        false,
        Display::FileList {
            files: vec!["src/main.rs".into(), "src/lib.rs".into()],
            more: 0,
        },
    );
    delta(
        &mut c,
        "The workflow pins **Rust 1.70**, but `let ... else` needs a newer compiler:\n\n- update the toolchain\n- or rewrite the `let else`\n",
    );
    c.apply_event(&Event::AssistantMessage {
        content: json!([]),
        incomplete: false,
    });
    c
}

#[test]
fn narrow_60x20() {
    let mut c = mixed_session();
    insta::assert_snapshot!(screen(&mut c, 60, 20));
}

#[test]
fn wide_160x50() {
    let mut c = mixed_session();
    insta::assert_snapshot!(screen(&mut c, 160, 50));
}

#[test]
fn resize_reflows_and_stays_within_the_width() {
    let mut c = mixed_session();
    for w in [20u16, 33, 60, 97] {
        let buf = draw(&mut c, w, 30, &mut ScrollState::default());
        for line in text_of(&buf).lines() {
            assert!(line.width() <= usize::from(w), "{line:?} wider than {w}");
        }
    }
}

#[test]
fn scrolled_up_shows_the_new_output_marker() {
    let mut c = conv();
    for i in 0..30 {
        c.push_user(&format!("message {i}"));
    }
    let mut scroll = ScrollState::default();
    draw(&mut c, 30, 6, &mut scroll);
    scroll.scroll_up(4);
    let before = text_of(&draw(&mut c, 30, 6, &mut scroll));
    insta::assert_snapshot!(before, @r"
    › message 25

    › message 26

    › message 27
    ");
    assert!(!scroll.new_output_below());
    c.push_user("message 30");
    let after = text_of(&draw(&mut c, 30, 6, &mut scroll));
    assert!(scroll.new_output_below());
    insta::assert_snapshot!(after, @r"
    › message 25

    › message 26

    › message 27
          ↓ new output below
    ");
    scroll.to_bottom();
    insta::assert_snapshot!(text_of(&draw(&mut c, 30, 6, &mut scroll)), @r"
    › message 28

    › message 29

    › message 30
    ");
}

#[test]
fn moving_the_focus_scrolls_it_into_view_and_ctrl_o_acts_on_it() {
    let mut c = conv();
    for i in 0..10 {
        let id = format!("t{i}");
        started(&mut c, &id, "Read", &format!("Read f{i}"));
        finished(&mut c, &id, false, Display::Text { text: numbered(8) });
    }
    let mut scroll = ScrollState::default();
    draw(&mut c, 30, 8, &mut scroll);
    for _ in 0..5 {
        c.focus_prev();
    }
    assert_eq!(c.focused(), Some(5));
    c.toggle_expanded();
    let buf = draw(&mut c, 30, 8, &mut scroll);
    insta::assert_snapshot!(text_of(&buf), @r"
    ● Read f5  ◂
      ⎿ line 1
        line 2
        line 3
        line 4
        line 5
        line 6
        line 7
    ");
    assert!(buf[(0, 0)].modifier.contains(Modifier::REVERSED));
    assert!(!scroll.is_following());
    c.clear_focus();
    c.toggle_expanded();
    scroll.to_bottom();
    assert!(text_of(&draw(&mut c, 30, 8, &mut scroll)).contains("line 8"));
}

#[test]
fn transcript_expands_everything() {
    let mut c = conv();
    started(&mut c, "t1", "Read", "Read a.txt");
    finished(&mut c, "t1", false, Display::Text { text: numbered(8) });
    let mut scroll = ScrollState::default();
    let mut terminal = Terminal::new(TestBackend::new(30, 12)).unwrap();
    terminal
        .draw(|f| c.render_transcript(f.area(), f.buffer_mut(), &mut scroll))
        .unwrap();
    insta::assert_snapshot!(text_of(terminal.backend().buffer()));
    // The normal view is still collapsed.
    assert!(screen(&mut c, 30, 12).contains("+3 lines"));
}

#[test]
fn ten_thousand_entries_render_only_what_is_visible() {
    let mut c = conv();
    for i in 0..10_000 {
        c.push_user(&format!("message {i}"));
    }
    let mut scroll = ScrollState::default();
    let screen = text_of(&draw(&mut c, 40, 4, &mut scroll));
    assert_eq!(screen, "› message 9998\n\n› message 9999\n");
    let laid_out = c
        .cells
        .iter()
        .filter(|cell| cell.pending_highlight(false) || cell.is_laid_out())
        .count();
    assert!(laid_out <= 4, "{laid_out} cells laid out");
}

#[test]
fn real_highlighter_eventually_colours_rust() {
    let mut c = Conversation::new(Highlighter::new());
    delta(&mut c, "```rust\nfn main() {}\n```\n");
    c.apply_event(&Event::AssistantMessage {
        content: json!([]),
        incomplete: false,
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let buf = draw(&mut c, 30, 3, &mut ScrollState::default());
        assert_eq!(text_of(&buf).lines().next(), Some("● fn main() {}"));
        if matches!(buf[(2, 0)].fg, Color::Rgb(..)) {
            break;
        }
        assert!(Instant::now() < deadline, "code never highlighted");
        while !c.is_dirty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn paths_under_the_session_directory_show_relative() {
    let mut c = conv();
    c.apply_event(&Event::SessionConfigured(crate::protocol::SessionInfo {
        session_id: "s".into(),
        model: "m".into(),
        model_label: String::new(),
        provider: "p".into(),
        cwd: "/work/proj".into(),
        tools: vec![],
        mode: crate::protocol::PermissionMode::Default,
        demo: false,
        commands: Vec::new(),
        memory_files: Vec::new(),
        model_choices: Vec::new(),
        auto_compact_pct: 85,
        agents: Vec::new(),
    }));
    started(&mut c, "g", "Grep", "Grep \"TODO\"");
    finished(
        &mut c,
        "g",
        false,
        Display::Matches {
            pattern: "TODO".into(),
            matches: vec![
                crate::protocol::SearchMatch {
                    path: "/work/proj/src/lib.rs".into(),
                    line: Some(3),
                    text: "// TODO: tidy".into(),
                },
                crate::protocol::SearchMatch {
                    path: "/elsewhere/x.rs".into(),
                    line: Some(1),
                    text: "TODO".into(),
                },
            ],
            more: 0,
        },
    );
    let text = screen(&mut c, 80, 8);
    assert!(text.contains("src/lib.rs:3"), "{text}");
    assert!(!text.contains("/work/proj/src"), "{text}");
    assert!(
        text.contains("/elsewhere/x.rs"),
        "outside paths stay absolute:\n{text}"
    );
}

#[test]
fn a_retry_that_discards_removes_the_partial_answer() {
    let mut c = conv();
    c.push_user("hi");
    c.apply_event(&Event::ThinkingDelta {
        text: "pondering".into(),
    });
    delta(&mut c, "a fragmentary");
    c.apply_event(&Event::Retrying {
        attempt: 2,
        max_attempts: 8,
        delay_ms: 500,
        reason: "the response stream broke".into(),
        discarded: true,
    });
    let shown = screen(&mut c, 100, 8);
    assert!(!shown.contains("fragmentary"), "{shown}");
    assert!(!shown.contains("pondering"), "{shown}");
    assert!(shown.contains("hi"), "{shown}");
    assert!(shown.contains("the partial answer was dropped"), "{shown}");
    delta(&mut c, "the whole answer");
    c.apply_event(&Event::AssistantMessage {
        content: json!([{"type": "text", "text": "the whole answer"}]),
        incomplete: false,
    });
    let shown = screen(&mut c, 100, 8);
    assert_eq!(shown.matches("the whole answer").count(), 1, "{shown}");
}
