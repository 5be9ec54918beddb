//! Snapshots of how the panel shares the screen and names things (issue #27, items 4 and 9):
//! an Edit prompt at 60x20 lists its options on one line under the model's sentence and the
//! diff, `?` lists them all, 120x35 shows both hunks; questions number their own options and
//! show multi-select keys only when several may be chosen; a plan is named in words before and
//! after approval.

use serde_json::json;

use super::snapshot_tests::{asking, screen};
use super::tests::{edit_request, plan_request};
use crate::protocol::{
    CallOutcome, Decision, Display, Event, Op, PermissionMode, PermissionRequest, Question,
    QuestionOption, RequestKind,
};
use crate::tui::app::tests::{Harness, session};
use crate::tui::input::Key;

const SENTENCE: &str = "I'll rename line 2 and line 18 so they read as words.";

/// The model says what it is about to do, then asks to edit.
fn explained_edit() -> Harness {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("please do it");
    h.press(Key::Enter);
    h.event(Event::TurnStarted { turn_id: 1 });
    h.event(Event::TextDelta {
        text: SENTENCE.into(),
    });
    h.event(Event::PermissionRequest(edit_request(1, "/work/project")));
    h
}

#[test]
fn a_small_window_lists_the_options_on_one_line_under_the_sentence_and_the_diff() {
    let mut h = explained_edit();
    let text = screen(&mut h, 60, 20);
    assert!(
        text.contains("1 yes · 2 session · 3 no · 4 tell the model… · ? more"),
        "{text}"
    );
    assert!(text.contains("I'll rename line 2"), "{text}");
    assert!(text.contains("line two"), "{text}");
    assert!(!text.contains("Tab hunk"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn question_mark_lists_every_option_and_the_keys() {
    let mut h = explained_edit();
    h.press(Key::Char('?'));
    let text = screen(&mut h, 60, 20);
    assert!(text.contains("7/s  always allow"), "{text}");
    assert!(text.contains("Tab hunk"), "{text}");
    insta::assert_snapshot!(text);
    // And back.
    h.press(Key::Char('?'));
    assert!(screen(&mut h, 60, 20).contains("? more"));
}

#[test]
fn the_one_line_options_pick_what_they_show() {
    for (key, want) in [
        ('1', Some(Decision::AllowOnce)),
        ('2', Some(Decision::AllowSession)),
        ('3', Some(Decision::DenyOnce)),
        ('4', None),
    ] {
        let mut h = explained_edit();
        let _ = screen(&mut h, 60, 20);
        h.press(Key::Char(key));
        let sent: Vec<Decision> = h
            .sent()
            .into_iter()
            .filter_map(|op| match op {
                Op::PermissionDecision { decision, .. } => Some(decision),
                _ => None,
            })
            .collect();
        assert_eq!(
            sent,
            want.clone().into_iter().collect::<Vec<_>>(),
            "key {key}"
        );
        if want.is_none() {
            // "tell the model…" opens the input.
            let text = screen(&mut h, 60, 20);
            assert!(text.contains("Tell the model what to do instead"), "{text}");
        }
    }
}

#[test]
fn a_120x35_window_shows_both_hunks_and_the_sentence() {
    let mut h = explained_edit();
    let text = screen(&mut h, 120, 35);
    assert!(text.contains("I'll rename line 2"), "{text}");
    assert!(text.contains("line eighteen"), "{text}");
    assert!(text.contains("line 18b"), "{text}");
    insta::assert_snapshot!(text);
}

fn one_question(multi: bool) -> PermissionRequest {
    let option = |label: &str| QuestionOption {
        label: label.into(),
        description: String::new(),
    };
    PermissionRequest {
        id: 1,
        call_id: "call-1".into(),
        tool: "AskUserQuestion".into(),
        title: "Question: Database".into(),
        input: json!({}),
        reason: "the model asks you".into(),
        preview: None,
        session_scope: None,
        saveable_rule: None,
        background_task: None,
        kind: RequestKind::Questions {
            questions: vec![Question {
                question: "Which database?".into(),
                header: "Database".into(),
                options: vec![option("Postgres"), option("SQLite"), option("MySQL")],
                multi_select: multi,
            }],
        },
    }
}

#[test]
fn a_single_choice_question_numbers_its_options_and_says_it_once() {
    let mut h = asking(one_question(false));
    let text = screen(&mut h, 80, 20);
    assert_eq!(text.matches("Which database?").count(), 1, "{text}");
    assert!(!text.contains("AskUserQuestion"), "{text}");
    assert!(!text.contains("toggle"), "{text}");
    assert!(!text.contains("done"), "{text}");
    assert!(text.contains("  4    type an answer of your own"), "{text}");
    insta::assert_snapshot!(text);
    h.press(Key::Char('3'));
    let sent = h.sent();
    assert!(
        sent.contains(&Op::PermissionDecision {
            request_id: 1,
            decision: Decision::Answers {
                answers: vec!["MySQL".into()]
            }
        }),
        "{sent:?}"
    );
}

#[test]
fn a_plan_is_named_in_words_before_and_after_approval() {
    let mut h = asking(plan_request(1));
    let before = screen(&mut h, 80, 26);
    assert!(!before.contains("ExitPlanMode"), "{before}");
    h.press(Key::Char('1'));
    h.event(Event::ToolCallFinished {
        call_id: "call-1".into(),
        is_error: false,
        display: Display::Empty,
        outcome: Some(CallOutcome::PlanApproved),
    });
    let after = screen(&mut h, 80, 12);
    assert!(after.contains("Plan · approved"), "{after}");
    assert!(!after.contains("allowed once"), "{after}");
    insta::assert_snapshot!(format!("{before}\n---- after ----\n{after}"));
}
