//! Snapshots of every prompt state, drawn through the whole app on a TestBackend: each preview
//! kind, each option focused, a rejected hunk, side by side at 160 columns, unified at 80,
//! "1 of 3", the feedback input, and the notice when the core replaced a request. Previews of
//! other calls are built here as the tools build them (labelled fields).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;

use super::tests::{edit_request, plan_request};
use crate::protocol::{Display, Event, Field, PermissionMode, PermissionRequest, RequestKind};
use crate::tui::app::tests::{Harness, request, session};
use crate::tui::input::Key;
use crate::tui::terminal::TestScreen;

pub(super) fn screen(h: &mut Harness, width: u16, height: u16) -> String {
    let mut s = TestScreen::new(width, height);
    let now = h
        .app
        .status()
        .working_since
        .map_or_else(Instant::now, |t| t + Duration::from_secs(3));
    s.terminal
        .draw(|f| h.app.render_at(f, now))
        .unwrap_or_else(|never| match never {});
    s.text()
}

/// A harness with a session, a prompt typed, and `req` pending.
pub(super) fn asking(req: PermissionRequest) -> Harness {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("please do it");
    h.press(Key::Enter);
    h.event(Event::TurnStarted { turn_id: 1 });
    h.event(Event::PermissionRequest(req));
    h
}

pub(super) fn tool_request(tool: &str, title: &str, input: serde_json::Value) -> PermissionRequest {
    PermissionRequest {
        id: 1,
        call_id: "call-1".into(),
        tool: tool.into(),
        title: title.into(),
        input,
        reason: format!("{tool} asks in default mode"),
        preview: None,
        session_scope: None,
        saveable_rule: None,
        background_task: None,
        kind: RequestKind::Tool,
    }
}

#[test]
fn edit_diff_unified_at_80_columns() {
    let mut h = asking(edit_request(1, "/work/project"));
    insta::assert_snapshot!(screen(&mut h, 80, 40));
}

#[test]
fn edit_diff_side_by_side_at_160_columns() {
    let mut h = asking(edit_request(1, "/work/project"));
    insta::assert_snapshot!(screen(&mut h, 160, 40));
}

#[test]
fn edit_with_the_second_hunk_rejected() {
    let mut h = asking(edit_request(1, "/work/project"));
    h.press(Key::Tab);
    h.press(Key::Char(' '));
    insta::assert_snapshot!(screen(&mut h, 100, 40));
}

#[test]
fn new_file() {
    let mut req = edit_request(1, "/work/project");
    req.tool = "Write".into();
    req.title = "Write src/new.rs".into();
    req.preview = Some(Display::Diff {
        path: PathBuf::from("/work/project/src/new.rs"),
        before: String::new(),
        after: "pub fn answer() -> u32 {\n    42\n}\n".into(),
    });
    req.session_scope = Some("edits to src/new.rs".into());
    req.saveable_rule = None;
    let mut h = asking(req);
    insta::assert_snapshot!(screen(&mut h, 80, 26));
}

#[test]
fn bash_command() {
    let mut req = request(1, true);
    let command = "cargo test --workspace -- --nocapture";
    req.input = json!({
        "command": command,
        "description": "Run the whole test suite",
    });
    req.preview = Some(Display::Fields {
        fields: vec![
            Field::code("$", "bash", command),
            Field::text("what", "Run the whole test suite"),
            Field::text("in", "/work/project"),
        ],
    });
    let mut h = asking(req);
    insta::assert_snapshot!(screen(&mut h, 80, 24));
}

#[test]
fn web_fetch() {
    let mut req = tool_request(
        "WebFetch",
        "WebFetch https://docs.rs/ratatui/latest/ratatui/",
        json!({"url": "https://docs.rs/ratatui/latest/ratatui/", "prompt": "How do I draw a table?"}),
    );
    req.preview = Some(Display::Fields {
        fields: vec![
            Field::text("url", "https://docs.rs/ratatui/latest/ratatui/"),
            Field::text("domain", "docs.rs"),
            Field::text("prompt", "How do I draw a table?"),
        ],
    });
    req.session_scope = Some("domain:docs.rs".into());
    req.saveable_rule = Some("WebFetch(domain:docs.rs)".into());
    let mut h = asking(req);
    insta::assert_snapshot!(screen(&mut h, 80, 24));
}

#[test]
fn mcp_tool() {
    let args = json!({"repo": "cairn/cairn", "title": "Crash on start", "labels": ["bug"]});
    let mut req = tool_request(
        "mcp__github__create_issue",
        "mcp__github__create_issue",
        args.clone(),
    );
    let pretty = serde_json::to_string_pretty(&args).unwrap();
    req.preview = Some(Display::Fields {
        fields: vec![
            Field::text("server", "github"),
            Field::text("tool", "create_issue"),
            Field::code("arguments", "json", pretty),
        ],
    });
    let mut h = asking(req);
    insta::assert_snapshot!(screen(&mut h, 80, 28));
}

#[test]
fn a_skill_the_model_wants_to_load() {
    // As the gate asks for a repository's skill (issue 22): what it would allow is in view.
    let mut req = tool_request("Skill", "Skill deploy", json!({"skill": "deploy"}));
    req.reason = "no rule allows Skill deploy".into();
    req.preview = Some(Display::Fields {
        fields: vec![
            Field::text("Execute skill", "deploy"),
            Field::text("description", "Deploy the app to staging"),
            Field::text("allowed-tools", "Bash(touch *), Read"),
            Field::text("model", "haiku"),
            Field::text("from", "/work/project/.claude/skills/deploy"),
        ],
    });
    req.session_scope = Some("Skill deploy".into());
    req.saveable_rule = Some("Skill(deploy)".into());
    let mut h = asking(req);
    insta::assert_snapshot!(screen(&mut h, 80, 24));
}

#[test]
fn plan_approval() {
    let mut h = asking(plan_request(1));
    insta::assert_snapshot!(screen(&mut h, 80, 26));
}

#[test]
fn plan_keep_planning_asks_what_to_change() {
    let mut h = asking(plan_request(1));
    h.press(Key::Char('3'));
    h.type_text("add a test first");
    insta::assert_snapshot!(screen(&mut h, 80, 26));
}

#[test]
fn feedback_input() {
    let mut h = asking(request(1, false));
    h.press(Key::Char('4'));
    h.type_text("run only the unit tests");
    insta::assert_snapshot!(screen(&mut h, 80, 20));
}

#[test]
fn each_option_focused() {
    let mut h = asking(edit_request(1, "/work/project"));
    let mut out = String::new();
    for i in 0..7 {
        let text = screen(&mut h, 80, 40);
        // Only the option rows: they are what changes.
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| {
                let rest = l.strip_prefix("› ").or_else(|| l.strip_prefix("  "));
                let mut c = rest.unwrap_or_default().chars();
                matches!((c.next(), c.next()), (Some('1'..='7'), Some('/')))
            })
            .collect();
        out.push_str(&format!("focus {i}:\n{}\n", rows.join("\n")));
        h.press(Key::Down);
    }
    insta::assert_snapshot!(out);
}

#[test]
fn one_of_three() {
    let mut h = asking(request(1, false));
    h.event(Event::PermissionRequest(request(2, false)));
    h.event(Event::PermissionRequest(request(3, false)));
    insta::assert_snapshot!(screen(&mut h, 80, 22));
}

#[test]
fn a_request_replaced_because_its_file_changed_on_disk() {
    let mut h = asking(edit_request(1, "/work/project"));
    h.event(Event::FileChangedOnDisk {
        path: PathBuf::from("/work/project/src/lib.rs"),
        change: crate::protocol::FileChange::Modified,
    });
    let mut req = edit_request(2, "/work/project");
    req.call_id = "call-1".into();
    req.preview = Some(Display::Diff {
        path: PathBuf::from("/work/project/src/lib.rs"),
        before: "line 0\nline 2\n".into(),
        after: "line 0\nline two\n".into(),
    });
    h.event(Event::PermissionRequestUpdated {
        request: req,
        note: "src/lib.rs changed on disk: the change was planned again against the new \
               content"
            .into(),
    });
    insta::assert_snapshot!(screen(&mut h, 80, 40));
}

#[test]
fn session_diff_overlay() {
    let mut h = Harness::new();
    for (call, path, before, after) in [
        ("a", "src/a.rs", "fn a() {}\n", "fn a() -> u8 { 1 }\n"),
        ("b", "README.md", "", "# Title\n"),
    ] {
        h.event(Event::ToolCallFinished {
            call_id: call.into(),
            is_error: false,
            display: Display::Diff {
                path: PathBuf::from(format!("/work/project/{path}")),
                before: before.into(),
                after: after.into(),
            },
            outcome: None,
        });
    }
    h.type_text("/diff");
    h.press(Key::Enter);
    h.press(Key::Right);
    insta::assert_snapshot!(screen(&mut h, 100, 14));
}

#[test]
fn tool_cells_show_the_outcome_and_later_disk_changes() {
    use crate::protocol::{CallOutcome, FileChange};
    let mut h = Harness::new();
    let outcomes = [
        ("Edit src/a.rs", Some(CallOutcome::AllowedOnce)),
        ("Edit src/b.rs", Some(CallOutcome::AllowedForSession)),
        ("Edit src/c.rs", Some(CallOutcome::AllowedEdited)),
        ("Bash rm -rf target", Some(CallOutcome::Denied)),
        ("Bash curl example.com", Some(CallOutcome::DeniedForSession)),
        ("Read src/d.rs", None),
    ];
    for (i, (title, outcome)) in outcomes.into_iter().enumerate() {
        let call_id = format!("c{i}");
        let file = title.split_once(' ').map_or("", |(_, f)| f);
        h.event(Event::ToolCallStarted {
            call_id: call_id.clone(),
            tool: title.split(' ').next().unwrap_or_default().into(),
            title: title.into(),
            input: json!({"file_path": format!("/work/project/{file}")}),
            kind: Default::default(),
        });
        h.event(Event::ToolCallFinished {
            call_id,
            is_error: matches!(
                outcome,
                Some(CallOutcome::Denied | CallOutcome::DeniedForSession)
            ),
            display: Display::Empty,
            outcome,
        });
    }
    h.event(Event::FileChangedOnDisk {
        path: PathBuf::from("/work/project/src/a.rs"),
        change: FileChange::Modified,
    });
    insta::assert_snapshot!(screen(&mut h, 90, 18));
}

#[test]
fn every_mode_has_its_own_colour() {
    use crate::tui::status::mode_style;
    let modes = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
        PermissionMode::DontAsk,
    ];
    let colours: std::collections::HashSet<_> = modes
        .iter()
        .map(|m| format!("{:?}", mode_style(*m).bg))
        .collect();
    assert_eq!(colours.len(), modes.len());
}

#[test]
fn an_answered_call_stops_waiting_for_permission() {
    let mut h = asking(request(1, false));
    assert!(screen(&mut h, 80, 24).contains("Bash npm test · waiting for permission"));
    h.press(Key::Char('1'));
    let text = screen(&mut h, 80, 24);
    assert!(!text.contains("waiting for permission"), "{text}");
    assert!(text.contains("Bash npm test · 0s"), "{text}");
}

#[test]
fn side_by_side_from_a_140_column_panel_and_v_switches() {
    use crate::tui::review::Layout;
    let layout = |h: &Harness| {
        h.app
            .permission_prompt()
            .and_then(|p| p.diff())
            .map(|d| d.layout())
    };
    let mut h = asking(edit_request(1, "/work/project"));
    screen(&mut h, 139, 40);
    assert_eq!(layout(&h), Some(Layout::Unified));
    screen(&mut h, 140, 40);
    assert_eq!(layout(&h), Some(Layout::SideBySide));
    h.press(Key::Char('v'));
    screen(&mut h, 140, 40);
    assert_eq!(layout(&h), Some(Layout::Unified));
}

#[test]
fn a_long_plan_scrolls_with_j_k_and_page_keys() {
    let mut req = plan_request(1);
    let plan: String = (1..=40).map(|i| format!("{i}. step {i}\n")).collect();
    req.kind = RequestKind::PlanApproval { plan };
    let mut h = asking(req);
    let shows_step_1 = |t: &str| {
        t.lines()
            .any(|l| l.split_whitespace().take(3).eq(["1.", "step", "1"]))
    };
    let first = screen(&mut h, 80, 24);
    assert!(first.contains(" 1-10/40"), "{first}");
    assert!(shows_step_1(&first), "{first}");
    h.press(Key::Char('j'));
    let text = screen(&mut h, 80, 24);
    assert!(text.contains(" 2-11/40"), "{text}");
    assert!(!shows_step_1(&text), "{text}");
    h.press(Key::PageDown);
    h.press(Key::PageDown);
    h.press(Key::PageDown);
    h.press(Key::PageDown);
    let text = screen(&mut h, 80, 24);
    assert!(text.contains("40. step 40"), "{text}");
    assert!(text.contains(" 31-40/40"), "{text}");
    h.press(Key::Char('k'));
    h.press(Key::PageUp);
    // Scrolling never answers: the plan is still waiting.
    assert!(
        h.sent()
            .iter()
            .all(|op| !matches!(op, crate::protocol::Op::PermissionDecision { .. }))
    );
}

#[test]
fn a_multi_select_question_with_one_option_picked() {
    let mut h = asking(super::tests::questions_request(1));
    h.press(Key::Char('1'));
    h.press(Key::Char('2'));
    insta::assert_snapshot!(screen(&mut h, 80, 24));
}
