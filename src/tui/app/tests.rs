//! The App harness: events and key presses in, state and Ops out, no terminal.

use std::path::PathBuf;

use serde_json::json;
use tokio::sync::mpsc;

use super::*;
use crate::protocol::{
    Decision, Event, PermissionRequest, RequestKind, SessionInfo, TurnEnd, Usage,
};
use crate::tui::input::{Key, Mods};

pub(crate) struct Harness {
    pub app: App,
    pub ops: mpsc::UnboundedReceiver<Op>,
}

impl Harness {
    pub fn new() -> Harness {
        Harness::with_history(History::in_memory(Vec::new()))
    }

    pub fn with_history(history: History) -> Harness {
        let (tx, ops) = mpsc::unbounded_channel();
        let config = AppConfig {
            cwd: PathBuf::from("/work/project"),
            bypass_allowed: false,
            highlighter: Highlighter::plain(),
        };
        Harness {
            app: App::new(config, history, tx),
            ops,
        }
    }

    pub fn key(&mut self, key: KeyInput) -> Vec<AppAction> {
        self.app.handle_input(InputEvent::Key(key))
    }

    pub fn press(&mut self, code: Key) -> Vec<AppAction> {
        self.key(KeyInput::plain(code))
    }

    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.press(Key::Char(c));
        }
    }

    pub fn event(&mut self, event: Event) {
        self.app.handle_core_event(&event);
    }

    /// The Ops sent since the last call.
    pub fn sent(&mut self) -> Vec<Op> {
        let mut out = Vec::new();
        while let Ok(op) = self.ops.try_recv() {
            out.push(op);
        }
        out
    }
}

pub(crate) fn session(mode: PermissionMode) -> Event {
    Event::SessionConfigured(SessionInfo {
        session_id: "sess-1234".into(),
        model: "claude-sonnet-4-5".into(),
        model_label: String::new(),
        provider: "anthropic".into(),
        cwd: PathBuf::from("/work/project"),
        tools: vec!["Read".into()],
        mode,
        demo: false,
        commands: Vec::new(),
        memory_files: Vec::new(),
        model_choices: Vec::new(),
        auto_compact_pct: 85,
        agents: Vec::new(),
    })
}

pub(crate) fn finished(turn_id: u64) -> Event {
    Event::TurnFinished {
        turn_id,
        end: TurnEnd::Completed,
        text: String::new(),
        num_turns: 1,
    }
}

pub(crate) fn request(id: u64, saveable: bool) -> PermissionRequest {
    PermissionRequest {
        id,
        call_id: format!("call-{id}"),
        tool: "Bash".into(),
        title: "Bash npm test".into(),
        input: json!({"command": "npm test"}),
        reason: "Bash commands ask before running".into(),
        preview: Some(crate::protocol::Display::Fields {
            fields: vec![
                crate::protocol::Field::code("$", "bash", "npm test"),
                crate::protocol::Field::text("in", "/work/project"),
            ],
        }),
        session_scope: Some("npm test *".into()),
        saveable_rule: saveable.then(|| "Bash(npm test *)".into()),
        background_task: None,
        kind: RequestKind::Tool,
    }
}

fn submit(text: &str) -> Op {
    Op::Submit { text: text.into() }
}

#[test]
fn enter_submits_and_clears_the_composer() {
    let mut h = Harness::new();
    h.type_text("hello there");
    assert_eq!(h.app.composer_text(), "hello there");
    assert!(h.press(Key::Enter).is_empty());
    assert_eq!(h.sent(), [submit("hello there")]);
    assert_eq!(h.app.composer_text(), "");
    assert!(h.app.is_turn_running());
    assert_eq!(h.app.conversation().len(), 1);
    // Whitespace only: nothing is sent.
    h.event(finished(1));
    h.type_text("   ");
    h.press(Key::Enter);
    assert_eq!(h.sent(), []);
}

#[test]
fn prompts_typed_during_a_turn_are_queued_and_sent_one_per_finished_turn() {
    let mut h = Harness::new();
    h.type_text("first");
    h.press(Key::Enter);
    h.event(Event::TurnStarted { turn_id: 1 });
    h.type_text("second");
    h.press(Key::Enter);
    h.type_text("third");
    h.press(Key::Enter);
    assert_eq!(h.sent(), [submit("first")]);
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["second", "third"]);
    h.event(finished(1));
    assert_eq!(h.sent(), [submit("second")]);
    assert_eq!(h.app.queued().collect::<Vec<_>>(), ["third"]);
    assert!(h.app.is_turn_running());
    h.event(Event::TurnStarted { turn_id: 2 });
    h.event(finished(2));
    assert_eq!(h.sent(), [submit("third")]);
    h.event(finished(3));
    assert_eq!(h.sent(), []);
    assert!(!h.app.is_turn_running());
}

#[test]
fn esc_interrupts_only_a_running_turn() {
    let mut h = Harness::new();
    h.press(Key::Esc);
    assert_eq!(h.sent(), []);
    h.type_text("go");
    h.press(Key::Enter);
    h.sent();
    h.press(Key::Esc);
    assert_eq!(h.sent(), [Op::Interrupt]);
}

#[test]
fn ctrl_c_interrupts_then_clears_then_quits_on_the_second_press() {
    let mut h = Harness::new();
    h.type_text("run");
    h.press(Key::Enter);
    h.sent();
    assert!(h.key(KeyInput::ctrl('c')).is_empty());
    assert_eq!(h.sent(), [Op::Interrupt]);
    h.event(finished(1));
    h.type_text("draft");
    assert!(h.key(KeyInput::ctrl('c')).is_empty());
    assert_eq!(h.app.composer_text(), "");
    assert!(h.key(KeyInput::ctrl('c')).is_empty());
    assert_eq!(
        h.app.status().hint.as_deref(),
        Some("Press Ctrl+C again to quit")
    );
    assert_eq!(h.key(KeyInput::ctrl('c')), [AppAction::Quit]);
    // Another key disarms.
    let mut h = Harness::new();
    h.key(KeyInput::ctrl('c'));
    h.type_text("x");
    h.key(KeyInput::ctrl('u'));
    h.press(Key::Backspace);
    assert!(h.key(KeyInput::ctrl('c')).is_empty());
}

#[test]
fn ctrl_d_quits_only_on_an_empty_composer() {
    let mut h = Harness::new();
    h.type_text("ab");
    h.press(Key::Left);
    assert!(h.key(KeyInput::ctrl('d')).is_empty());
    assert_eq!(h.app.composer_text(), "a");
    h.press(Key::Backspace);
    assert_eq!(h.key(KeyInput::ctrl('d')), [AppAction::Quit]);
}

#[test]
fn shift_tab_cycles_the_mode_and_tells_the_core() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    for _ in 0..3 {
        h.press(Key::BackTab);
    }
    assert_eq!(
        h.sent(),
        [
            Op::SetMode {
                mode: PermissionMode::AcceptEdits
            },
            Op::SetMode {
                mode: PermissionMode::Plan
            },
            Op::SetMode {
                mode: PermissionMode::Default
            },
        ]
    );
    // Started in bypass: the cycle may come back to it.
    let mut h = Harness::new();
    h.event(session(PermissionMode::BypassPermissions));
    for _ in 0..3 {
        h.press(Key::BackTab);
    }
    assert_eq!(h.app.mode(), PermissionMode::Plan);
    h.press(Key::BackTab);
    assert_eq!(h.app.mode(), PermissionMode::BypassPermissions);
    h.event(Event::ModeChanged {
        mode: PermissionMode::Plan,
    });
    assert_eq!(h.app.mode(), PermissionMode::Plan);
}

#[test]
fn permission_requests_are_answered_in_order_with_one_decision_each() {
    let mut h = Harness::new();
    h.type_text("test it");
    h.press(Key::Enter);
    h.sent();
    for id in [7, 8, 9] {
        h.event(Event::PermissionRequest(request(id, id == 9)));
    }
    assert_eq!(h.app.permission_prompt().map(|p| p.len()), Some(3));
    // Typing goes to the prompt, not the composer.
    h.press(Key::Char('x'));
    assert_eq!(h.app.composer_text(), "");
    h.press(Key::Char('2'));
    // "Always allow" needs a saveable rule: ignored for request 8.
    h.press(Key::Char('6'));
    h.press(Key::Char('4'));
    h.type_text("use cargo");
    h.press(Key::Enter);
    h.press(Key::Char('s'));
    assert_eq!(
        h.sent(),
        [
            Op::PermissionDecision {
                request_id: 7,
                decision: Decision::AllowSession
            },
            Op::PermissionDecision {
                request_id: 8,
                decision: Decision::DenyWithFeedback {
                    feedback: "use cargo".into()
                }
            },
            Op::PermissionDecision {
                request_id: 9,
                decision: Decision::AlwaysAllow
            },
        ]
    );
    assert!(h.app.permission_prompt().is_none());
    // Keys reach the composer again.
    h.press(Key::Char('y'));
    assert_eq!(h.app.composer_text(), "y");
}

#[test]
fn permission_keys_deny_and_the_turn_end_drops_stale_requests() {
    let mut h = Harness::new();
    h.event(Event::PermissionRequest(request(1, false)));
    h.press(Key::Esc);
    h.event(Event::PermissionRequest(request(2, false)));
    h.press(Key::Char('5'));
    h.event(Event::PermissionRequest(request(3, false)));
    h.press(Key::Char('y'));
    assert_eq!(
        h.sent(),
        [
            Op::PermissionDecision {
                request_id: 1,
                decision: Decision::DenyOnce
            },
            Op::PermissionDecision {
                request_id: 2,
                decision: Decision::DenySession
            },
            Op::PermissionDecision {
                request_id: 3,
                decision: Decision::AllowOnce
            },
        ]
    );
    h.event(Event::PermissionRequest(request(4, false)));
    h.event(finished(1));
    assert!(h.app.permission_prompt().is_none());
    h.press(Key::Char('1'));
    assert_eq!(h.sent(), []);
}

#[test]
fn plan_approval_chooses_the_next_mode() {
    let mut h = Harness::new();
    let mut req = request(5, false);
    req.kind = RequestKind::PlanApproval {
        plan: "1. read\n2. edit".into(),
    };
    h.event(Event::PermissionRequest(req));
    h.press(Key::Char('1'));
    assert_eq!(
        h.sent(),
        [Op::PermissionDecision {
            request_id: 5,
            decision: Decision::ApprovePlan {
                mode: PermissionMode::AcceptEdits
            }
        }]
    );
}

#[test]
fn up_and_down_walk_the_history_and_restore_the_draft() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.jsonl");
    let mut h = Harness::with_history(History::load(path.clone()));
    for p in ["one", "two"] {
        h.type_text(p);
        h.press(Key::Enter);
        h.event(finished(1));
    }
    h.press(Key::Up);
    assert_eq!(h.app.composer_text(), "two");
    h.press(Key::Up);
    assert_eq!(h.app.composer_text(), "one");
    h.press(Key::Up);
    assert_eq!(h.app.composer_text(), "one");
    h.press(Key::Down);
    assert_eq!(h.app.composer_text(), "two");
    h.press(Key::Down);
    assert_eq!(h.app.composer_text(), "");
    // A draft is kept while walking.
    h.type_text("dr");
    h.press(Key::Up);
    assert_eq!(
        h.app.composer_text(),
        "dr",
        "Up on edited text moves the cursor"
    );
    // Persisted for the next session of the project.
    let again = Harness::with_history(History::load(path));
    assert_eq!(again.app.input.composer.history().entries(), ["one", "two"]);
}

#[test]
fn ctrl_r_searches_history_and_esc_restores() {
    let mut h = Harness::with_history(History::in_memory(vec![
        "cargo test".into(),
        "git status".into(),
        "cargo build".into(),
    ]));
    h.type_text("draft");
    h.key(KeyInput::ctrl('r'));
    h.type_text("cargo");
    assert_eq!(h.app.composer_text(), "cargo build");
    h.key(KeyInput::ctrl('r'));
    assert_eq!(h.app.composer_text(), "cargo test");
    h.press(Key::Esc);
    assert_eq!(h.app.composer_text(), "draft");
    h.key(KeyInput::ctrl('r'));
    h.type_text("git");
    h.press(Key::Enter);
    assert_eq!(h.app.composer_text(), "git status");
    assert_eq!(h.sent(), [], "Enter accepts the match without sending");
    h.press(Key::Enter);
    assert_eq!(h.sent(), [submit("git status")]);
}

#[test]
fn large_pastes_collapse_but_are_sent_whole() {
    let mut h = Harness::new();
    let big: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    h.type_text("look: ");
    h.app.handle_input(InputEvent::Paste(big.clone()));
    assert_eq!(h.app.composer_text(), "look: [pasted 40 lines]");
    h.press(Key::Enter);
    assert_eq!(h.sent(), [submit(&format!("look: {big}"))]);
    // Small pastes go in as they are (CRLF normalised).
    h.event(finished(1));
    h.app.handle_input(InputEvent::Paste("a\r\nb".into()));
    assert_eq!(h.app.composer_text(), "a\nb");
}

#[test]
fn newline_keys_and_trailing_backslash() {
    let mut h = Harness::new();
    h.type_text("a");
    h.key(KeyInput::new(Key::Enter, Mods::SHIFT));
    h.type_text("b");
    h.key(KeyInput::ctrl('j'));
    h.type_text("c\\");
    h.press(Key::Enter);
    h.type_text("d");
    assert_eq!(h.app.composer_text(), "a\nb\nc\nd");
    assert_eq!(h.sent(), []);
    h.press(Key::Enter);
    assert_eq!(h.sent(), [submit("a\nb\nc\nd")]);
}

#[test]
fn slash_commands_run_locally() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("/mode plan");
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [Op::SetMode {
            mode: PermissionMode::Plan
        }]
    );
    h.type_text("/mode bypassPermissions");
    h.press(Key::Enter);
    assert_eq!(h.sent(), []);
    assert_eq!(h.app.mode(), PermissionMode::Plan);

    h.type_text("/copy");
    h.press(Key::Enter);
    h.event(Event::TextDelta {
        text: "the answer".into(),
    });
    h.type_text("/copy");
    assert_eq!(
        h.press(Key::Enter),
        [AppAction::CopyToClipboard("the answer".into())]
    );
    h.type_text("/transcript");
    h.press(Key::Enter);
    assert!(h.app.is_transcript_open());
    h.press(Key::Char('q'));
    assert!(!h.app.is_transcript_open());
    let before = h.app.conversation().len();
    h.type_text("/bogus");
    h.press(Key::Enter);
    assert_eq!(h.app.conversation().len(), before + 1);
    h.type_text("/clear");
    h.press(Key::Enter);
    assert!(h.app.conversation().is_empty());
    h.type_text("/exit");
    assert_eq!(h.press(Key::Enter), [AppAction::Quit]);
    assert_eq!(h.sent(), [Op::Clear]);
}

#[test]
fn bang_runs_a_shell_command_and_shows_its_output() {
    let mut h = Harness::new();
    h.type_text("!ls -1");
    assert_eq!(
        h.press(Key::Enter),
        [AppAction::RunShell {
            command: "ls -1".into()
        }]
    );
    assert_eq!(h.sent(), []);
    h.app.handle_app_event(AppEvent::ShellFinished {
        command: "ls -1".into(),
        output: "Cargo.toml\n".into(),
        exit_code: Some(0),
    });
    assert_eq!(h.app.conversation().len(), 1);
}

#[test]
fn usage_feeds_the_status_line_and_exit_summary() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.event(Event::Usage {
        last: Usage {
            input_tokens: 2000,
            output_tokens: 100,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 18_000,
        },
        total: Usage {
            input_tokens: 5000,
            output_tokens: 700,
            cache_creation_input_tokens: 1000,
            cache_read_input_tokens: 18_000,
        },
        total_cost_usd: 0.0421,
        context_window: 200_000,
        model: "claude-sonnet-4-5".into(),
    });
    assert_eq!(h.app.status().context_percent(), Some(10));
    assert_eq!(
        h.app.exit_summary(),
        "cairn session sess-1234 · tokens in 5000 out 700 cache 19000 · cost $0.0421"
    );
}

#[test]
fn wheel_and_page_keys_scroll_the_view() {
    let mut h = Harness::new();
    h.app.handle_input(InputEvent::ScrollUp);
    assert!(!h.app.scroll.is_following());
    h.key(KeyInput::new(Key::End, Mods::CTRL));
    assert!(h.app.scroll.is_following());
    h.press(Key::PageUp);
    assert!(!h.app.scroll.is_following());
}

#[test]
fn a_prompt_starting_with_a_path_is_not_a_command() {
    let mut h = Harness::new();
    h.type_text("/etc/hosts looks wrong");
    h.press(Key::Enter);
    assert_eq!(h.sent(), [submit("/etc/hosts looks wrong")]);
}

#[test]
fn empty_feedback_is_a_plain_no() {
    let mut h = Harness::new();
    h.event(Event::PermissionRequest(request(3, false)));
    h.press(Key::Char('f'));
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [Op::PermissionDecision {
            request_id: 3,
            decision: Decision::DenyOnce
        }]
    );
}

#[test]
fn a_stopped_core_ends_the_turn_and_says_so() {
    let mut h = Harness::new();
    h.type_text("go");
    h.press(Key::Enter);
    h.event(Event::PermissionRequest(request(1, false)));
    let before = h.app.conversation().len();
    h.app.core_stopped();
    assert!(!h.app.is_turn_running());
    assert!(h.app.permission_prompt().is_none());
    assert_eq!(h.app.conversation().len(), before + 1, "one notice");
}

#[test]
fn recalled_pastes_come_back_whole() {
    let mut h = Harness::new();
    let big: String = (1..=10).map(|i| format!("{i}\n")).collect();
    h.app.handle_input(InputEvent::Paste(big.clone()));
    h.press(Key::Enter);
    h.event(finished(1));
    h.press(Key::Up);
    assert_eq!(h.app.composer_text(), big);
}

#[test]
fn interrupting_puts_queued_prompts_back_into_the_composer() {
    let mut h = Harness::new();
    h.type_text("first");
    h.press(Key::Enter);
    h.type_text("second");
    h.press(Key::Enter);
    h.type_text("third");
    h.press(Key::Enter);
    h.type_text("draft");
    h.press(Key::Esc);
    assert_eq!(h.sent(), [submit("first"), Op::Interrupt]);
    assert_eq!(h.app.queued().count(), 0);
    assert_eq!(h.app.composer_text(), "second\nthird\ndraft");
    h.event(finished(1));
    assert_eq!(h.sent(), [], "nothing goes out by itself after a stop");
}

#[test]
fn ctrl_c_leaves_history_search_with_an_empty_composer() {
    let mut h = Harness::with_history(History::in_memory(vec!["old".into()]));
    h.key(KeyInput::ctrl('r'));
    h.type_text("ol");
    h.key(KeyInput::ctrl('c'));
    assert_eq!(h.app.composer_text(), "");
    h.type_text("new");
    assert_eq!(h.app.composer_text(), "new", "typing edits again");
}
