//! Screen tests of the whole TUI: the App driven through the test harness and drawn at a fixed
//! instant on an in-memory terminal, compared with insta snapshots (layouts at several sizes,
//! the status line, prompts, pickers, slash-command output). `screen` is shared with other
//! test modules.

use std::time::{Duration, Instant};

use crate::protocol::{Event, PermissionMode, Usage};
use crate::tui::app::tests::{Harness, finished, request, session};
use crate::tui::input::{Key, KeyInput};
use crate::tui::terminal::TestScreen;

/// The screen as text after drawing at a fixed instant (`working` seconds into the turn).
pub(crate) fn screen(h: &mut Harness, width: u16, height: u16, working: u64) -> String {
    let mut s = TestScreen::new(width, height);
    let now = h
        .app
        .status
        .working_since
        .map_or_else(Instant::now, |t| t + Duration::from_secs(working));
    s.terminal
        .draw(|f| h.app.render_at(f, now))
        .unwrap_or_else(|never| match never {});
    s.text()
}

fn usage() -> Event {
    Event::Usage {
        last: Usage {
            input_tokens: 1200,
            output_tokens: 340,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 30_800,
        },
        total: Usage {
            input_tokens: 4100,
            output_tokens: 1250,
            cache_creation_input_tokens: 2000,
            cache_read_input_tokens: 61_600,
        },
        total_cost_usd: 0.0312,
        context_window: 200_000,
        model: "claude-sonnet-4-5".into(),
    }
}

#[test]
fn empty_screen() {
    let mut h = Harness::new();
    insta::assert_snapshot!(screen(&mut h, 80, 12, 0));
}

#[test]
fn status_line_with_usage_and_mode() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::AcceptEdits));
    h.event(usage());
    insta::assert_snapshot!(screen(&mut h, 100, 8, 0));
}

#[test]
fn a_status_line_command_replaces_the_built_in_text() {
    use crate::tui::app::AppEvent;
    use crate::tui::status_command::styled_line;
    let mut h = Harness::new();
    h.event(session(PermissionMode::AcceptEdits));
    h.event(usage());
    h.type_text("hi");
    h.press(Key::Enter);
    let line = styled_line("\u{1b}[1;36m[Sonnet 4.5]\u{1b}[0m \u{1b}]0;x\u{7}📁 project | $0.03");
    h.app.handle_app_event(AppEvent::StatusLine(Ok(line)));
    let text = screen(&mut h, 80, 8, 4);
    assert!(
        !text.contains("claude-sonnet-4-5"),
        "the built-in text is gone"
    );
    insta::assert_snapshot!(text);
    // A failing command shows nothing there, and the built-in text stays away.
    h.app
        .handle_app_event(AppEvent::StatusLine(Err("failed (exit 1)".into())));
    let last = screen(&mut h, 80, 8, 4)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        last.trim_end(),
        " accept edits  ⠋ working 4s · esc to interrupt"
    );
}

#[test]
fn a_prompt_with_at_mentions_says_what_was_attached() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("compare @notes.txt with @shot.png");
    h.press(Key::Enter);
    h.event(Event::TurnStarted { turn_id: 1 });
    for message in [
        "Attached @notes.txt (read 2 lines)",
        "Attached @shot.png (image 640x480)",
        "@.env was not attached: a deny rule covers it.",
    ] {
        h.event(Event::Notice {
            message: message.into(),
        });
    }
    insta::assert_snapshot!(screen(&mut h, 80, 12, 1));
}

#[test]
fn the_todo_list_sits_above_the_composer_and_ctrl_g_hides_it() {
    use crate::protocol::{Todo, TodoStatus};
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    let todo = |content: &str, active: &str, status| Todo {
        content: content.into(),
        active_form: active.into(),
        status,
    };
    h.event(Event::TodosUpdated {
        todos: vec![
            todo(
                "Read the parser",
                "Reading the parser",
                TodoStatus::Completed,
            ),
            todo(
                "Fix the off-by-one",
                "Fixing the off-by-one",
                TodoStatus::InProgress,
            ),
            todo("Run the tests", "Running the tests", TodoStatus::Pending),
        ],
    });
    insta::assert_snapshot!(screen(&mut h, 60, 10, 0));
    h.key(KeyInput::ctrl('g'));
    assert!(!screen(&mut h, 60, 10, 0).contains("Run the tests"));
}

#[test]
fn custom_commands_are_offered_and_sent_for_the_core_to_expand() {
    let mut h = Harness::new();
    let crate::protocol::Event::SessionConfigured(mut info) = session(PermissionMode::Default)
    else {
        panic!()
    };
    let command =
        |name: &str, description: &str, hint: Option<&str>| crate::protocol::CommandInfo {
            name: name.into(),
            description: description.into(),
            argument_hint: hint.map(str::to_string),
            skill: hint.is_none(),
            aliases: Vec::new(),
        };
    info.commands = vec![
        command("greet", "Greet someone", Some("<name>")),
        command("team:greet", "Greet a teammate", Some("<name> <city>")),
        command("staging", "Deploy the app to staging", None),
    ];
    h.event(Event::SessionConfigured(info));
    h.type_text("/g");
    insta::assert_snapshot!(screen(&mut h, 80, 12, 0));
    h.press(Key::Backspace);
    h.type_text("greet Ada");
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [crate::protocol::Op::Submit {
            text: "/greet Ada".into()
        }]
    );
}

/// Issue 26: a skill answers to its directory's name too; an unknown `/name` is not sent, and
/// the notice names the closest commands.
#[test]
fn a_skill_alias_is_sent_and_an_unknown_command_is_not() {
    let mut h = Harness::new();
    let crate::protocol::Event::SessionConfigured(mut info) = session(PermissionMode::Default)
    else {
        panic!()
    };
    info.commands = vec![crate::protocol::CommandInfo {
        name: "spec".into(),
        description: "Write a spec".into(),
        argument_hint: None,
        skill: true,
        aliases: vec!["project-spec".into()],
    }];
    h.event(Event::SessionConfigured(info));
    h.type_text("/project-spec todo app");
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [crate::protocol::Op::Submit {
            text: "/project-spec todo app".into()
        }]
    );
    h.type_text("/spek todo");
    h.press(Key::Enter);
    assert!(h.sent().is_empty());
    let text = screen(&mut h, 100, 12, 0);
    assert!(
        text.contains("Unknown command /spek. Did you mean /spec?"),
        "{text}"
    );
}

#[test]
fn slash_memory_lists_the_loaded_files_then_the_new_ones() {
    let home = directories::BaseDirs::new()
        .map(|b| b.home_dir().display().to_string())
        .unwrap_or_default();
    let mut h = Harness::new();
    let Event::SessionConfigured(mut info) = session(PermissionMode::Default) else {
        panic!()
    };
    info.cwd = "/work/proj".into();
    info.memory_files = vec![
        ("project".into(), "/work/proj/CLAUDE.md".into()),
        ("imported".into(), "/work/proj/docs/style.md".into()),
    ];
    h.event(Event::SessionConfigured(info));
    h.type_text("/memory");
    h.press(Key::Enter);
    // The user's file is under the real HOME: checked here, left out of the snapshot.
    let shown = screen(&mut h, 90, 14, 0);
    let user = format!("User memory (new)            {home}/.claude/CLAUDE.md");
    assert!(home.is_empty() || shown.contains(&user), "{shown}");
    let shown: Vec<&str> = shown
        .lines()
        .filter(|l| !l.contains("User memory"))
        .collect();
    insta::assert_snapshot!(shown.join("\n"));
    h.press(Key::Down);
    assert_eq!(
        h.press(Key::Enter),
        [crate::tui::app::AppAction::EditMemoryFile {
            path: "/work/proj/docs/style.md".into()
        }]
    );
}

#[test]
fn slash_model_offers_the_aliases_and_sends_the_pick() {
    let mut h = Harness::new();
    let Event::SessionConfigured(mut info) = session(PermissionMode::Default) else {
        panic!()
    };
    info.model_choices = crate::config::model::Aliases::anthropic(&|_| None).choices();
    h.event(Event::SessionConfigured(info));
    h.type_text("/model");
    h.press(Key::Enter);
    insta::assert_snapshot!(screen(&mut h, 90, 12, 0));
    h.press(Key::Down);
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [crate::protocol::Op::SetModel {
            model: "sonnet".into()
        }]
    );
    h.type_text("/model claude-3-7-sonnet");
    h.press(Key::Enter);
    assert_eq!(
        h.sent().last(),
        Some(&crate::protocol::Op::SetModel {
            model: "claude-3-7-sonnet".into()
        })
    );
}

#[test]
fn a_resumed_conversation_is_shown_and_resume_lists_the_sessions() {
    use crate::protocol::HistoryItem;
    use crate::session::transcript::Transcript;
    let dir = tempfile::tempdir().unwrap();
    for (id, prompt) in [("s-old", "fix the parser"), ("s-new", "add a --json flag")] {
        let mut t = Transcript::at(dir.path().join(format!("{id}.jsonl")), id)
            .with_header(dir.path(), Some("main".into()));
        t.append(&crate::llm::Message::user_text(prompt));
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut h = Harness::new();
    h.app.sessions_dir = Some(dir.path().to_path_buf());
    h.event(session(PermissionMode::Default));
    h.type_text("/resume");
    h.press(Key::Enter);
    insta::assert_snapshot!("resume_picker", screen(&mut h, 80, 10, 0));
    h.press(Key::Down);
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [crate::protocol::Op::Resume {
            path: dir.path().join("s-old.jsonl")
        }]
    );
    let tool = |id: &str, title: &str, is_error| HistoryItem::Tool {
        call_id: id.into(),
        title: title.into(),
        is_error,
    };
    h.event(Event::HistoryRestored {
        items: vec![
            HistoryItem::Prompt {
                text: "fix the parser".into(),
            },
            HistoryItem::Answer {
                text: "Reading it first.".into(),
            },
            tool("t1", "Read src/parser.rs", false),
            tool("t2", "Bash cargo test", true),
            HistoryItem::Answer {
                text: "Fixed: the **off-by-one** in `peek`.".into(),
            },
        ],
    });
    insta::assert_snapshot!("resumed_conversation", screen(&mut h, 80, 16, 0));
}

#[test]
fn cost_and_context_reports() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.event(usage());
    h.type_text("/cost");
    h.press(Key::Enter);
    h.type_text("/context");
    h.press(Key::Enter);
    assert_eq!(h.sent(), [crate::protocol::Op::ContextReport]);
    h.event(Event::ContextReport {
        model: "claude-sonnet-4-5".into(),
        window: 200_000,
        parts: vec![
            ("system".into(), 2_900),
            ("memory".into(), 1_200),
            ("tools".into(), 11_800),
            ("messages".into(), 18_100),
        ],
        last_used: Some(32_000),
    });
    insta::assert_snapshot!(screen(&mut h, 100, 16, 0));
}

/// MCP servers for the app without real ones: fixed lines, and the answers it was given.
#[derive(Default)]
struct FakeMcp {
    waiting: std::sync::Mutex<Vec<crate::tui::mcp_panel::WaitingServer>>,
    asked: std::sync::Mutex<Vec<String>>,
}

impl crate::tui::mcp_panel::McpControl for FakeMcp {
    fn lines(&self) -> Vec<String> {
        let mut lines = vec![
            "everything (project, stdio): connected (11 tools)".to_string(),
            "docs (user, http): failed: connection refused".to_string(),
        ];
        for w in self.waiting.lock().unwrap().iter() {
            lines.push(format!(
                "{} (project): needs approval (add it to enabledMcpjsonServers)",
                w.name
            ));
        }
        lines
    }
    fn failing(&self) -> Vec<String> {
        vec!["docs".into()]
    }
    fn waiting(&self) -> Vec<crate::tui::mcp_panel::WaitingServer> {
        self.waiting.lock().unwrap().clone()
    }
    fn approve(
        &self,
        name: &str,
        choice: crate::tui::mcp_panel::ApprovalChoice,
    ) -> Result<String, String> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("{name}: {choice:?}"));
        self.waiting.lock().unwrap().retain(|w| w.name != name);
        Ok(format!("Starting MCP server {name} (remembered in x)."))
    }
    fn reconnect(&self, name: &str) -> Result<(), String> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("{name}: reconnect"));
        Ok(())
    }
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

#[test]
fn slash_mcp_lists_the_servers_to_reconnect_and_the_status_row_shows_a_failure() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("/mcp");
    h.press(Key::Enter);
    assert!(screen(&mut h, 100, 12, 0).contains("No MCP servers are configured"));
    let fake = std::sync::Arc::new(FakeMcp::default());
    fake.waiting
        .lock()
        .unwrap()
        .push(crate::tui::mcp_panel::WaitingServer {
            name: "local-db".into(),
            runs: "node db.js".into(),
        });
    h.app.mcp = Some(fake.clone());
    h.app
        .handle_app_event(crate::tui::app::AppEvent::McpChanged);
    h.type_text("/mcp");
    h.press(Key::Enter);
    insta::assert_snapshot!(screen(&mut h, 100, 14, 0));
    // Enter on a server reconnects it.
    h.press(Key::Down);
    h.press(Key::Enter);
    assert_eq!(*fake.asked.lock().unwrap(), ["docs: reconnect"]);
    assert!(screen(&mut h, 100, 14, 0).contains("Reconnecting to MCP server \"docs\""));
}

#[test]
fn a_waiting_project_server_is_asked_about_at_start_and_the_answer_given_to_the_servers() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    let fake = std::sync::Arc::new(FakeMcp::default());
    for (name, runs) in [
        ("local-db", "node db.js --port 5"),
        ("search", "npx search-mcp"),
    ] {
        fake.waiting
            .lock()
            .unwrap()
            .push(crate::tui::mcp_panel::WaitingServer {
                name: name.into(),
                runs: runs.into(),
            });
    }
    h.app.mcp = Some(fake.clone());
    h.app.ask_mcp_approvals();
    insta::assert_snapshot!(screen(&mut h, 100, 16, 0));
    // 1: use this one; then the next is asked about; Esc postpones it (nothing saved).
    h.press(Key::Enter);
    assert!(screen(&mut h, 100, 16, 0).contains("New MCP server found in .mcp.json: \"search\""));
    h.press(Key::Esc);
    assert_eq!(*fake.asked.lock().unwrap(), ["local-db: UseThis"]);
    let text = screen(&mut h, 100, 16, 0);
    assert!(
        text.contains("\"search\" was not started; you will be asked again"),
        "{text}"
    );
    // /mcp, Enter on the waiting one asks again; 3 refuses it.
    h.type_text("/mcp");
    h.press(Key::Enter);
    for _ in 0..2 {
        h.press(Key::Down);
    }
    h.press(Key::Enter);
    for _ in 0..2 {
        h.press(Key::Down);
    }
    h.press(Key::Enter);
    assert_eq!(
        *fake.asked.lock().unwrap(),
        ["local-db: UseThis", "search: Refuse"]
    );
}

#[test]
fn a_hash_note_is_saved_to_the_memory_file_the_person_picks() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new();
    let Event::SessionConfigured(mut info) = session(PermissionMode::Default) else {
        panic!()
    };
    info.cwd = dir.path().to_path_buf();
    h.event(Event::SessionConfigured(info));
    std::fs::write(dir.path().join("CLAUDE.md"), "# Rules\nbe brief").unwrap();
    h.type_text("# always use tabs");
    h.press(Key::Enter);
    let shown = screen(&mut h, 100, 14, 0);
    assert!(shown.contains("Project memory, local"), "{shown}");
    assert!(h.sent().is_empty(), "nothing goes to the model");
    h.press(Key::Enter);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("CLAUDE.md")).unwrap(),
        "# Rules\nbe brief\n- always use tabs\n"
    );
    assert!(screen(&mut h, 100, 14, 0).contains("Saved to"));
    // Esc drops a note.
    h.type_text("#forget this");
    h.press(Key::Enter);
    h.press(Key::Esc);
    assert!(!dir.path().join("CLAUDE.local.md").exists());
}

#[test]
fn slash_init_is_sent_for_the_core_to_expand() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("/init");
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [crate::protocol::Op::Submit {
            text: "/init".into()
        }]
    );
}

#[test]
fn working_with_a_queued_message() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("explain the build");
    h.press(Key::Enter);
    h.event(Event::TurnStarted { turn_id: 1 });
    h.event(Event::TextDelta {
        text: "The build uses cargo".into(),
    });
    h.type_text("then run the tests");
    h.press(Key::Enter);
    insta::assert_snapshot!(screen(&mut h, 80, 14, 12));
}

#[test]
fn permission_prompt_one_of_two() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("test it");
    h.press(Key::Enter);
    h.event(Event::PermissionRequest(request(1, true)));
    h.event(Event::PermissionRequest(request(2, false)));
    insta::assert_snapshot!(screen(&mut h, 80, 20, 3));
}

#[test]
fn narrow_60x20() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Plan));
    h.event(usage());
    h.type_text("a prompt that is long enough to wrap in a narrow terminal window");
    h.press(Key::Enter);
    h.event(Event::TextDelta {
        text: "An answer.".into(),
    });
    h.event(finished(1));
    h.type_text("next question that also wraps around the composer width");
    insta::assert_snapshot!(screen(&mut h, 60, 20, 0));
}

#[test]
fn wide_160x50() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.event(usage());
    h.type_text("hello");
    h.press(Key::Enter);
    h.event(Event::TextDelta {
        text: "Hi! How can I help?".into(),
    });
    h.event(finished(1));
    h.type_text("/");
    insta::assert_snapshot!(screen(&mut h, 160, 50, 0));
}
