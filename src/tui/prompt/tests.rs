//! App-harness tests of the prompt: a PermissionRequest plus key presses produce exactly the
//! right `Op::PermissionDecision`, and the prompt reacts to the editor and to requests the core
//! replaced. Snapshots of the drawn states are in `snapshot_tests.rs`.

use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::protocol::{Display, Event, FileChange, SessionInfo};
use crate::tui::app::AppAction;
use crate::tui::app::tests::{Harness, request, session};
use crate::tui::input::{Key, KeyInput};

/// Twenty lines; the edit changes line 2 and line 18 (two hunks).
pub(crate) fn before_text() -> String {
    (1..=20).map(|i| format!("line {i}\n")).collect()
}

pub(crate) fn after_text() -> String {
    before_text()
        .replace("line 2\n", "line two\n")
        .replace("line 18\n", "line eighteen\nline 18b\n")
}

/// An Edit request on `<root>/src/lib.rs` with the two-hunk diff.
pub(crate) fn edit_request(id: u64, root: &str) -> PermissionRequest {
    let path = PathBuf::from(format!("{root}/src/lib.rs"));
    PermissionRequest {
        id,
        call_id: format!("call-{id}"),
        tool: "Edit".into(),
        title: "Edit src/lib.rs".into(),
        input: json!({
            "file_path": path,
            "old_string": "line 2\n",
            "new_string": "line two\n",
        }),
        reason: "edits ask in default mode".into(),
        preview: Some(Display::Diff {
            path,
            before: before_text(),
            after: after_text(),
        }),
        session_scope: Some("edits to src/lib.rs".into()),
        saveable_rule: Some("Edit(src/lib.rs)".into()),
        background_task: None,
        kind: RequestKind::Tool,
    }
}

pub(crate) fn plan_request(id: u64) -> PermissionRequest {
    PermissionRequest {
        id,
        call_id: format!("call-{id}"),
        tool: "ExitPlanMode".into(),
        title: "Plan".into(),
        input: json!({}),
        reason: "the model has a plan".into(),
        preview: None,
        session_scope: None,
        saveable_rule: None,
        background_task: None,
        kind: RequestKind::PlanApproval {
            plan: "# Plan\n\n1. Read `src/lib.rs`\n2. Rename **line 2**\n3. Run the tests\n".into(),
        },
    }
}

pub(super) fn decision(h: &mut Harness) -> Vec<Decision> {
    h.sent()
        .into_iter()
        .filter_map(|op| match op {
            Op::PermissionDecision { decision, .. } => Some(decision),
            _ => None,
        })
        .collect()
}

fn answer(req: PermissionRequest, keys: &[KeyInput]) -> Vec<Decision> {
    let mut h = Harness::new();
    h.event(Event::PermissionRequest(req));
    for k in keys {
        h.key(*k);
    }
    decision(&mut h)
}

fn k(c: char) -> KeyInput {
    KeyInput::plain(Key::Char(c))
}

fn p(code: Key) -> KeyInput {
    KeyInput::plain(code)
}

#[test]
fn each_option_key_gives_its_decision() {
    let edit = || edit_request(1, "/work/project");
    assert_eq!(answer(edit(), &[k('1')]), [Decision::AllowOnce]);
    assert_eq!(answer(edit(), &[k('y')]), [Decision::AllowOnce]);
    assert_eq!(answer(edit(), &[k('2')]), [Decision::AllowSession]);
    assert_eq!(answer(edit(), &[k('a')]), [Decision::AllowSession]);
    assert_eq!(answer(edit(), &[k('3')]), [Decision::DenyOnce]);
    assert_eq!(answer(edit(), &[k('n')]), [Decision::DenyOnce]);
    assert_eq!(answer(edit(), &[p(Key::Esc)]), [Decision::DenyOnce]);
    assert_eq!(answer(edit(), &[k('5')]), [Decision::DenySession]);
    assert_eq!(answer(edit(), &[k('d')]), [Decision::DenySession]);
    assert_eq!(answer(edit(), &[k('6')]), [Decision::AllowAllEditsSession]);
    assert_eq!(answer(edit(), &[k('w')]), [Decision::AllowAllEditsSession]);
    assert_eq!(answer(edit(), &[k('7')]), [Decision::AlwaysAllow]);
    assert_eq!(answer(edit(), &[k('s')]), [Decision::AlwaysAllow]);
    // No saveable rule and no edit: five options, `6` does nothing.
    assert_eq!(answer(request(1, false), &[k('6')]), []);
    assert_eq!(
        answer(request(1, false), &[k('5')]),
        [Decision::DenySession]
    );
    // "All edits" is only for edits: the rule's option takes the next number.
    assert_eq!(answer(request(1, true), &[k('6')]), [Decision::AlwaysAllow]);
    assert_eq!(answer(request(1, true), &[k('7')]), []);
}

#[test]
fn numbers_are_contiguous_in_the_order_shown_and_each_picks_its_option() {
    for req in [
        edit_request(1, "/work/project"),
        request(1, false),
        request(1, true),
    ] {
        let edit = req.tool == "Edit";
        let shown = choices(&req, edit);
        let keys: Vec<String> = shown.iter().enumerate().map(|(i, c)| c.keys(i)).collect();
        for (i, key) in keys.iter().enumerate() {
            assert!(key.starts_with(&(i + 1).to_string()), "{keys:?}");
        }
        for (i, c) in shown.iter().enumerate() {
            let digit = char::from_digit(u32::try_from(i + 1).unwrap(), 10).unwrap();
            let got = answer(req.clone(), &[k(digit)]);
            match decision_of(c.action) {
                Some(d) => assert_eq!(got, [d], "{} {}", digit, c.label),
                // "tell the model": the input opens, nothing is sent yet.
                None => assert_eq!(got, [], "{} {}", digit, c.label),
            }
        }
    }
}

#[test]
fn feedback_text_goes_to_the_model() {
    let mut keys = vec![k('4')];
    keys.extend("use cargo nextest".chars().map(k));
    keys.push(p(Key::Enter));
    assert_eq!(
        answer(request(1, false), &keys),
        [Decision::DenyWithFeedback {
            feedback: "use cargo nextest".into()
        }]
    );
    // `f`, then typing: the letters go to the input, not to the options (`y`, `n`, `s`).
    let mut keys = vec![k('f')];
    keys.extend("say yes".chars().map(k));
    keys.push(p(Key::Backspace));
    keys.push(p(Key::Enter));
    assert_eq!(
        answer(request(1, false), &keys),
        [Decision::DenyWithFeedback {
            feedback: "say ye".into()
        }]
    );
    // Empty feedback is a plain "no".
    assert_eq!(
        answer(request(1, false), &[k('f'), p(Key::Enter)]),
        [Decision::DenyOnce]
    );
}

#[test]
fn up_down_and_enter_choose_the_focused_option() {
    let mut h = Harness::new();
    h.event(Event::PermissionRequest(edit_request(1, "/work/project")));
    h.press(Key::Down);
    h.press(Key::Down);
    let focused = h.app.permission_prompt().and_then(|p| p.focused_choice());
    assert_eq!(focused.map(|c| c.keys(2)), Some("3/n".to_string()));
    h.press(Key::Down);
    h.press(Key::Down);
    h.press(Key::Down);
    h.press(Key::Up);
    h.press(Key::Enter);
    assert_eq!(decision(&mut h), [Decision::DenySession]);
    // Enter on a fresh prompt: the first option.
    assert_eq!(
        answer(request(2, false), &[p(Key::Enter)]),
        [Decision::AllowOnce]
    );
}

#[test]
fn partial_hunks_send_exactly_the_accepted_hunk() {
    // Reject the second hunk: only line 2 changes.
    let keys = [p(Key::Tab), k(' '), k('1')];
    let got = answer(edit_request(1, "/work/project"), &keys);
    let [Decision::AllowEdited { content, note, .. }] = got.as_slice() else {
        panic!("expected AllowEdited, got {got:?}");
    };
    assert_eq!(*content, before_text().replace("line 2\n", "line two\n"));
    assert!(note.contains("rejected"), "{note}");
    assert!(note.contains("+line eighteen"), "{note}");
    // A trimmed diff keeps the grant of the option chosen.
    let keys = [p(Key::Tab), k(' '), k('2')];
    let got = answer(edit_request(1, "/work/project"), &keys);
    let [Decision::AllowEdited { grant, .. }] = got.as_slice() else {
        panic!("expected AllowEdited, got {got:?}");
    };
    assert_eq!(*grant, Some(crate::protocol::Grant::Session));
    // Rejected and accepted again: the plain decision.
    let keys = [k(' '), k(' '), k('2')];
    assert_eq!(
        answer(edit_request(1, "/work/project"), &keys),
        [Decision::AllowSession]
    );
    // R then A: all accepted.
    let keys = [k('R'), k('A'), k('1')];
    assert_eq!(
        answer(edit_request(1, "/work/project"), &keys),
        [Decision::AllowOnce]
    );
    // Reject all, then "no" stays a plain no.
    let keys = [k('R'), k('3')];
    assert_eq!(
        answer(edit_request(1, "/work/project"), &keys),
        [Decision::DenyOnce]
    );
}

#[test]
fn the_editor_round_trip_writes_the_persons_version() {
    let mut h = Harness::new();
    h.event(Event::PermissionRequest(edit_request(4, "/work/project")));
    let actions = h.press(Key::Char('e'));
    assert_eq!(
        actions,
        [AppAction::EditInEditor {
            request_id: 4,
            path: PathBuf::from("src/lib.rs"),
            content: after_text(),
        }]
    );
    let mine = after_text().replace("line two", "line 2 (mine)");
    h.app.editor_finished(4, Ok(mine.clone()));
    // A stale id is ignored.
    h.app.editor_finished(99, Ok("nothing".into()));
    h.press(Key::Char('1'));
    let got = decision(&mut h);
    let [Decision::AllowEdited { content, note, .. }] = got.as_slice() else {
        panic!("expected AllowEdited, got {got:?}");
    };
    assert_eq!(*content, mine);
    assert!(note.contains("line 2 (mine)"), "{note}");
}

#[test]
fn a_failed_editor_keeps_the_proposal_and_says_why() {
    let mut h = Harness::new();
    h.event(Event::PermissionRequest(edit_request(4, "/work/project")));
    h.app
        .editor_finished(4, Err("vi exited with status 1".into()));
    let notice = h
        .app
        .permission_prompt()
        .and_then(|p| p.queue.front())
        .and_then(|p| p.notice.clone());
    assert_eq!(
        notice.as_deref(),
        Some("The editor failed: vi exited with status 1")
    );
    h.press(Key::Char('1'));
    assert_eq!(decision(&mut h), [Decision::AllowOnce]);
}

#[test]
fn plan_approval_keys() {
    assert_eq!(
        answer(plan_request(1), &[k('1')]),
        [Decision::ApprovePlan {
            mode: PermissionMode::AcceptEdits
        }]
    );
    assert_eq!(
        answer(plan_request(1), &[k('2')]),
        [Decision::ApprovePlan {
            mode: PermissionMode::Default
        }]
    );
    let mut keys = vec![k('3')];
    keys.extend("add a test first".chars().map(k));
    keys.push(p(Key::Enter));
    assert_eq!(
        answer(plan_request(1), &keys),
        [Decision::DenyWithFeedback {
            feedback: "add a test first".into()
        }]
    );
    // Session-wide answers make no sense for a plan.
    assert_eq!(answer(plan_request(1), &[k('4'), k('6'), k('7')]), []);
}

#[test]
fn answering_resolves_the_tool_cell_and_requests_go_in_order() {
    let mut h = Harness::new();
    for id in 1..=3 {
        h.event(Event::PermissionRequest(request(id, false)));
    }
    assert_eq!(h.app.permission_prompt().map(|p| p.len()), Some(3));
    h.press(Key::Char('1'));
    h.press(Key::Char('3'));
    h.press(Key::Char('2'));
    let ids: Vec<u64> = h
        .sent()
        .into_iter()
        .filter_map(|op| match op {
            Op::PermissionDecision { request_id, .. } => Some(request_id),
            _ => None,
        })
        .collect();
    assert_eq!(ids, [1, 2, 3]);
    assert!(h.app.permission_prompt().is_none());
}

#[test]
fn plan_command_sets_plan_mode() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("/plan");
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [Op::SetMode {
            mode: PermissionMode::Plan
        }]
    );
    assert_eq!(h.app.mode(), PermissionMode::Plan);
}

fn session_in(dir: &std::path::Path) -> Event {
    Event::SessionConfigured(SessionInfo {
        session_id: "sess-1".into(),
        model: "m".into(),
        model_label: String::new(),
        provider: "anthropic".into(),
        cwd: dir.to_path_buf(),
        tools: Vec::new(),
        mode: PermissionMode::Default,
        demo: false,
        commands: Vec::new(),
        memory_files: Vec::new(),
        model_choices: Vec::new(),
        auto_compact_pct: 85,
        agents: Vec::new(),
    })
}

/// The request the core sends when the file under `edit_request(1)` changed on disk and the
/// edit was planned again: a new id, the same call, the diff against the new text.
fn replanned(root: &str) -> (PermissionRequest, String) {
    let mut req = edit_request(7, root);
    req.call_id = "call-1".into();
    req.preview = Some(Display::Diff {
        path: PathBuf::from(format!("{root}/src/lib.rs")),
        before: "line 0\nline 2\n".into(),
        after: "line 0\nline two\n".into(),
    });
    let note = "src/lib.rs changed on disk: the change was planned again against the new content";
    (req, note.to_string())
}

#[test]
fn a_replaced_request_takes_the_old_ones_place_and_is_answered_under_its_new_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_string_lossy().into_owned();
    let mut h = Harness::new();
    h.event(session_in(dir.path()));
    h.event(Event::PermissionRequest(edit_request(1, &root)));
    let (req, note) = replanned(&root);
    h.event(Event::PermissionRequestUpdated {
        request: req,
        note: note.clone(),
    });
    let prompt = h.app.permission_prompt().expect("prompt stays open");
    assert_eq!(prompt.len(), 1);
    assert_eq!(
        prompt.queue.front().and_then(|p| p.notice.clone()),
        Some(note)
    );
    assert_eq!(prompt.diff().map(|d| d.after()), Some("line 0\nline two\n"));
    h.press(Key::Char('1'));
    // The core planned what is shown: a plain "yes" to the new request, nothing rewritten.
    assert_eq!(
        h.sent(),
        [Op::PermissionDecision {
            request_id: 7,
            decision: Decision::AllowOnce
        }]
    );
    assert!(h.app.permission_prompt().is_none());
}

#[test]
fn a_replacement_after_the_answer_asks_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_string_lossy().into_owned();
    let mut h = Harness::new();
    h.event(session_in(dir.path()));
    h.event(Event::PermissionRequest(edit_request(1, &root)));
    h.press(Key::Char('1'));
    assert!(h.app.permission_prompt().is_none());
    // The answer crossed the core's replacement: the person sees the new proposal.
    let (req, note) = replanned(&root);
    h.event(Event::PermissionRequestUpdated { request: req, note });
    let prompt = h.app.permission_prompt().expect("asked again");
    assert_eq!(prompt.current().map(|r| r.id), Some(7));
}

#[test]
fn a_file_changed_on_disk_is_a_notice_in_the_conversation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut h = Harness::new();
    h.event(session_in(dir.path()));
    h.event(Event::FileChangedOnDisk {
        path: dir.path().join("src/lib.rs"),
        change: FileChange::Modified,
    });
    let notice = "src/lib.rs changed on disk — cairn will have the model re-read before editing";
    assert!(
        h.app.conversation().notices().any(|n| n == notice),
        "{:?}",
        h.app.conversation().notices().collect::<Vec<_>>()
    );
}

#[test]
fn diff_command_shows_the_files_changed_in_the_session() {
    let mut h = Harness::new();
    h.type_text("/diff");
    h.press(Key::Enter);
    assert!(!h.app.is_session_diff_open());
    for (call, before, after) in [("a", "1\n", "2\n"), ("b", "2\n", "3\n")] {
        h.event(Event::ToolCallFinished {
            call_id: call.into(),
            is_error: false,
            display: Display::Diff {
                path: PathBuf::from("/work/project/src/x.rs"),
                before: before.into(),
                after: after.into(),
            },
            outcome: None,
        });
    }
    h.event(Event::ToolCallFinished {
        call_id: "c".into(),
        is_error: true,
        display: Display::Diff {
            path: PathBuf::from("/work/project/failed.rs"),
            before: String::new(),
            after: "x".into(),
        },
        outcome: None,
    });
    let files: Vec<_> = h.app.session_changes().files().collect();
    assert_eq!(files, [(std::path::Path::new("src/x.rs"), "1\n", "3\n")]);
    // Each edit counts (the status line's totals), the failed one not.
    assert_eq!(h.app.session_changes().lines_changed(), (2, 2));
    h.type_text("/diff");
    h.press(Key::Enter);
    assert!(h.app.is_session_diff_open());
    h.press(Key::Esc);
    assert!(!h.app.is_session_diff_open());
}

pub(crate) fn questions_request(id: u64) -> PermissionRequest {
    use crate::protocol::{Question, QuestionOption};
    let option = |label: &str| QuestionOption {
        label: label.into(),
        description: format!("about {label}"),
    };
    PermissionRequest {
        id,
        call_id: format!("call-{id}"),
        tool: "AskUserQuestion".into(),
        title: "Ask 2 questions".into(),
        input: json!({}),
        reason: "the model asks you".into(),
        preview: None,
        session_scope: None,
        saveable_rule: None,
        background_task: None,
        kind: RequestKind::Questions {
            questions: vec![
                Question {
                    question: "Which database?".into(),
                    header: "Database".into(),
                    options: vec![option("Postgres"), option("SQLite")],
                    multi_select: false,
                },
                Question {
                    question: "Which checks should run?".into(),
                    header: "Checks".into(),
                    options: vec![option("Lint"), option("Tests"), option("Bench")],
                    multi_select: true,
                },
            ],
        },
    }
}

#[test]
fn questions_are_answered_one_after_another_and_sent_together() {
    let keys = |s: &str| {
        s.chars()
            .map(|c| KeyInput::plain(Key::Char(c)))
            .collect::<Vec<_>>()
    };
    // Option 2 of the first; options 3 and 1 of the multi-select second, then done (5: after
    // the three options and "type an answer").
    let got = answer(questions_request(1), &keys("2315"));
    assert_eq!(
        got,
        [Decision::Answers {
            answers: vec!["SQLite".into(), "Lint, Bench".into()],
        }]
    );
    // A typed answer instead of an option; Esc declines.
    let mut typed = keys("3mysql");
    typed.push(KeyInput::plain(Key::Enter));
    typed.extend(keys("25"));
    assert_eq!(
        answer(questions_request(2), &typed),
        [Decision::Answers {
            answers: vec!["mysql".into(), "Tests".into()],
        }]
    );
    assert_eq!(
        answer(questions_request(3), &[KeyInput::plain(Key::Esc)]),
        [Decision::DenyOnce]
    );
}

#[test]
fn arrows_enter_and_space_answer_questions_as_the_digits_do() {
    use Key::{Down, Enter, Up};
    // Down, Enter picks SQLite; on the multi-select one, Space toggles the focused option
    // (twice on Lint: off again), Enter toggles too, and Enter on "done" sends.
    let keys = [
        p(Down),
        p(Enter),
        k(' '),
        k(' '),
        p(Down),
        p(Down),
        k(' '),
        p(Up),
        p(Enter),
        p(Down),
        p(Down),
        p(Down),
        p(Enter),
    ];
    assert_eq!(
        answer(questions_request(4), &keys),
        [Decision::Answers {
            answers: vec!["SQLite".into(), "Tests, Bench".into()],
        }]
    );
    // Space on a single-select question, or on "type an answer", does nothing.
    let keys = [
        k(' '),
        k('1'),
        p(Down),
        p(Down),
        p(Down),
        k(' '),
        k('1'),
        k('5'),
    ];
    assert_eq!(
        answer(questions_request(5), &keys),
        [Decision::Answers {
            answers: vec!["Postgres".into(), "Lint".into()],
        }]
    );
}

#[test]
fn the_turn_end_keeps_background_agents_requests_until_the_agent_ends() {
    let mut h = Harness::new();
    let background = |id| PermissionRequest {
        background_task: Some("agent-1".into()),
        ..request(id, false)
    };
    h.event(Event::PermissionRequest(request(1, false)));
    h.event(Event::PermissionRequest(background(2)));
    h.event(Event::PermissionRequest(request(3, false)));
    // Typing feedback for the turn's own request, which goes with the turn.
    h.press(Key::Char('4'));
    h.type_text("half");
    h.event(crate::tui::app::tests::finished(1));
    let prompt = h.app.permission_prompt().expect("the background one stays");
    assert_eq!(prompt.len(), 1);
    assert!(!prompt.is_typing_feedback());
    h.press(Key::Char('1'));
    assert_eq!(
        h.sent(),
        [Op::PermissionDecision {
            request_id: 2,
            decision: Decision::AllowOnce
        }]
    );
    assert!(h.app.permission_prompt().is_none());
    // When the agent ends (stopped from /tasks, say), its open request goes with it.
    h.event(Event::PermissionRequest(background(4)));
    h.event(Event::BackgroundTask(crate::protocol::BackgroundTask {
        id: "agent-2".into(),
        agent: "Explore".into(),
        description: "other".into(),
        status: crate::protocol::TaskStatus::Completed,
        elapsed_ms: 5,
        kind: crate::protocol::TaskKind::Agent,
        call_id: None,
        report: None,
    }));
    assert_eq!(h.app.permission_prompt().map(|p| p.len()), Some(1));
    h.event(Event::BackgroundTask(crate::protocol::BackgroundTask {
        id: "agent-1".into(),
        agent: "Explore".into(),
        description: "find".into(),
        status: crate::protocol::TaskStatus::Stopped,
        elapsed_ms: 5,
        kind: crate::protocol::TaskKind::Agent,
        call_id: None,
        report: None,
    }));
    assert!(h.app.permission_prompt().is_none());
    assert_eq!(h.sent(), []);
}
