//! Screen tests of the whole TUI: the App driven through the test harness and drawn at a fixed
//! instant on an in-memory terminal, compared with insta snapshots (layouts at several sizes,
//! the status line, prompts, pickers, slash-command output). `screen` is shared with other
//! test modules.

use std::time::{Duration, Instant};

use crate::protocol::{
    Event, HostEvent, HostOp, McpApproval, McpServerInfo, Op, PermissionMode, Usage,
};
use crate::tui::app::tests::{Harness, finished, request, session};
use crate::tui::input::{Key, KeyInput};
use crate::tui::terminal::TestScreen;

/// The screen as text after drawing at a fixed instant (`working` seconds into the turn).
pub(crate) fn screen(h: &mut Harness, width: u16, height: u16, working: u64) -> String {
    let mut s = TestScreen::new(width, height);
    let now = h
        .app
        .status()
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
        text.contains("Unknown command /spek. Did you mean /spec, /lsp?"),
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
    // The host reads the picked file; then the event loop opens it in the editor.
    assert_eq!(h.press(Key::Enter), []);
    let path = std::path::PathBuf::from("/work/proj/docs/style.md");
    assert_eq!(
        h.sent(),
        [Op::Host(HostOp::ReadMemoryFile { path: path.clone() })]
    );
    h.event(Event::Host(HostEvent::MemoryFile {
        path: path.clone(),
        content: Ok("use tabs\n".into()),
    }));
    assert_eq!(
        h.app.take_actions(),
        [crate::tui::app::AppAction::EditMemoryFile {
            path: path.clone(),
            content: "use tabs\n".into()
        }]
    );
    // Changed text goes back to the host; its answer is shown.
    h.app
        .memory_edited(&path, "use tabs\n", Ok("use spaces\n".into()));
    assert_eq!(
        h.sent(),
        [Op::Host(HostOp::WriteMemoryFile {
            path: path.clone(),
            content: "use spaces\n".into()
        })]
    );
    h.event(Event::Host(HostEvent::MemoryWritten {
        path: path.clone(),
        note: false,
        result: Err("Permission denied (os error 13)".into()),
    }));
    let shown = screen(&mut h, 90, 14, 0);
    assert!(
        shown.contains("Could not save /work/proj/docs/style.md: Permission denied"),
        "{shown}"
    );
    // Unchanged text is not written.
    h.app.memory_edited(&path, "x", Ok("x".into()));
    assert_eq!(h.sent(), []);
}

#[test]
fn slash_model_offers_the_aliases_and_sends_the_pick() {
    let mut h = Harness::new();
    let Event::SessionConfigured(mut info) = session(PermissionMode::Default) else {
        panic!()
    };
    info.model_choices = [
        ("opus", "claude-opus-4-5"),
        ("sonnet", "claude-sonnet-4-5"),
        ("haiku", "claude-haiku-4-5"),
        (
            "opusplan",
            "claude-opus-4-5 in plan mode, claude-sonnet-4-5 otherwise",
        ),
    ]
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .to_vec();
    h.event(Event::SessionConfigured(info));
    h.type_text("/model");
    h.press(Key::Enter);
    let text = screen(&mut h, 90, 12, 0);
    assert!(text.contains("claude-sonnet-4-5  ✓ current"), "{text}");
    insta::assert_snapshot!(text);
    // The cursor starts on the model in use: one down is the next one.
    h.press(Key::Down);
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [crate::protocol::Op::SetModel {
            model: "haiku".into()
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
    use crate::protocol::{HistoryItem, SavedSession};
    let saved = |id: &str, prompt: &str| SavedSession {
        id: id.into(),
        path: format!("/data/projects/p/{id}.jsonl").into(),
        first_prompt: prompt.into(),
        modified: std::time::SystemTime::now(),
        prompts: 1,
        branch: Some("main".into()),
    };
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    // A list nobody asked for opens nothing.
    h.event(Event::Host(HostEvent::SavedSessions {
        sessions: vec![saved("s-new", "add a --json flag")],
    }));
    assert!(h.app.picker().is_none());
    h.type_text("/resume");
    h.press(Key::Enter);
    assert_eq!(h.sent(), [Op::Host(HostOp::ListSavedSessions)]);
    h.event(Event::Host(HostEvent::SavedSessions {
        sessions: vec![
            saved("s-new", "add a --json flag"),
            saved("s-old", "fix the parser"),
            // The session running now is not offered.
            saved("sess-1234", "this one"),
        ],
    }));
    insta::assert_snapshot!("resume_picker", screen(&mut h, 80, 10, 0));
    h.press(Key::Down);
    h.press(Key::Enter);
    assert_eq!(
        h.sent(),
        [Op::Resume {
            path: "/data/projects/p/s-old.jsonl".into()
        }]
    );
    let tool = |id: &str, title: &str, is_error| HistoryItem::Tool {
        call_id: id.into(),
        title: title.into(),
        is_error,
        display: None,
        outcome: None,
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

/// The host's list of MCP servers: two running (one failed), and `waiting` ones.
fn mcp_servers(waiting: &[(&str, &str)]) -> Event {
    let server = |name: &str, detail: &str, failed| McpServerInfo {
        name: name.into(),
        detail: detail.into(),
        failed,
        ..McpServerInfo::default()
    };
    let mut servers = vec![
        server(
            "everything",
            "(project, stdio): connected (11 tools)",
            false,
        ),
        server("docs", "(user, http): failed: connection refused", true),
    ];
    for (name, runs) in waiting {
        servers.push(McpServerInfo {
            waiting: Some(runs.to_string()),
            ..server(
                name,
                "(project): needs approval (add it to enabledMcpjsonServers)",
                false,
            )
        });
    }
    Event::Host(HostEvent::McpServers { servers })
}

#[test]
fn slash_mcp_lists_the_servers_to_reconnect_and_the_status_row_shows_a_failure() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.type_text("/mcp");
    h.press(Key::Enter);
    assert!(screen(&mut h, 100, 12, 0).contains("No MCP servers are configured"));
    h.app.watch_mcp();
    assert_eq!(h.sent(), [Op::Host(HostOp::McpServers)]);
    h.event(mcp_servers(&[]));
    h.event(mcp_servers(&[("local-db", "node db.js")]));
    h.type_text("/mcp");
    h.press(Key::Enter);
    insta::assert_snapshot!(screen(&mut h, 100, 14, 0));
    // Enter on a server shows its detail; 1 there asks the host to reconnect it; the host's
    // answer is shown.
    h.press(Key::Down);
    h.press(Key::Enter);
    assert_eq!(h.sent(), []);
    h.press(Key::Char('1'));
    assert_eq!(
        h.sent(),
        [Op::Host(HostOp::McpReconnect {
            name: "docs".into()
        })]
    );
    h.event(Event::Host(HostEvent::McpAnswer {
        result: Ok("Reconnecting to MCP server \"docs\"…".into()),
    }));
    assert!(screen(&mut h, 100, 14, 0).contains("Reconnecting to MCP server \"docs\""));
}

fn approve(name: &str, choice: McpApproval) -> Op {
    Op::Host(HostOp::McpApprove {
        name: name.into(),
        choice,
    })
}

/// Issue #27 item 7: one picker per server, each warning printed twice. Every waiting server
/// is asked about at once, in one checklist answered with keys like every other prompt.
#[test]
fn the_waiting_project_servers_are_asked_about_once_in_a_checklist() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    let waiting = [
        ("local-db", "node db.js --port 5"),
        ("search", "npx search-mcp"),
    ];
    h.event(mcp_servers(&waiting));
    insta::assert_snapshot!(screen(&mut h, 100, 16, 0));
    // 1 checks local-db (the checklist stays, checked); Esc postpones both (nothing saved).
    h.press(Key::Char('1'));
    let shown = screen(&mut h, 100, 16, 0);
    assert!(shown.contains("1. [x] local-db"), "{shown}");
    assert!(shown.contains("2. [ ] search"), "{shown}");
    assert_eq!(shown.matches("New MCP servers found").count(), 1, "{shown}");
    h.press(Key::Esc);
    assert_eq!(h.sent(), []);
    let text = screen(&mut h, 100, 16, 0);
    assert!(
        text.contains("MCP servers \"local-db\", \"search\" were not started; you will be asked"),
        "{text}"
    );
    // A later list (the servers changed) does not ask again.
    h.event(mcp_servers(&waiting[1..]));
    assert!(h.app.picker().is_none());
    // /mcp, Enter on the waiting one asks about it alone; saving with it unchecked refuses it.
    h.type_text("/mcp");
    h.press(Key::Enter);
    for _ in 0..2 {
        h.press(Key::Down);
    }
    h.press(Key::Enter);
    let shown = screen(&mut h, 100, 16, 0);
    assert!(shown.contains("1. [ ] search"), "{shown}");
    h.press(Key::Char('2'));
    assert_eq!(h.sent(), [approve("search", McpApproval::Refuse)]);
    h.event(Event::Host(HostEvent::McpAnswer {
        result: Err("could not save the choice: disk full".into()),
    }));
    assert!(screen(&mut h, 100, 16, 0).contains("could not save the choice: disk full"));
}

/// The checklist's last row approves every waiting server and the future ones.
#[test]
fn the_checklist_can_approve_all_servers_and_the_future_ones() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.event(mcp_servers(&[("a", "run-a"), ("b", "run-b")]));
    h.press(Key::Char('4'));
    assert_eq!(h.sent(), [approve("a", McpApproval::UseAll)]);
    assert!(h.app.picker().is_none());
}

/// Issue #27 item 7: pressing `1`, as every other prompt invites, closed the picker and typed
/// `1` into the composer, approving nothing. Digits answer the checklist.
#[test]
fn digits_answer_the_mcp_checklist_and_type_nothing() {
    let mut h = Harness::new();
    h.event(session(PermissionMode::Default));
    h.event(mcp_servers(&[
        ("local-db", "node db.js --port 5"),
        ("search", "npx search-mcp"),
    ]));
    h.press(Key::Char('1'));
    h.press(Key::Char('3'));
    assert_eq!(
        h.sent(),
        [
            approve("local-db", McpApproval::UseThis),
            approve("search", McpApproval::Refuse)
        ]
    );
    assert_eq!(h.app.composer_text(), "");
    assert!(h.app.picker().is_none());
}

#[test]
fn a_hash_note_goes_to_the_host_for_the_memory_file_the_person_picks() {
    let mut h = Harness::new();
    let Event::SessionConfigured(mut info) = session(PermissionMode::Default) else {
        panic!()
    };
    info.cwd = "/work/proj".into();
    h.event(Event::SessionConfigured(info));
    h.type_text("# always use tabs");
    h.press(Key::Enter);
    let shown = screen(&mut h, 100, 14, 0);
    assert!(shown.contains("Project memory, local"), "{shown}");
    assert!(h.sent().is_empty(), "nothing goes to the model");
    h.press(Key::Enter);
    let path = std::path::PathBuf::from("/work/proj/CLAUDE.md");
    assert_eq!(
        h.sent(),
        [Op::Host(HostOp::AddMemoryNote {
            path: path.clone(),
            note: "always use tabs".into()
        })]
    );
    h.event(Event::Host(HostEvent::MemoryWritten {
        path,
        note: true,
        result: Ok(()),
    }));
    assert!(screen(&mut h, 100, 14, 0).contains("Saved to /work/proj/CLAUDE.md."));
    // Esc drops a note.
    h.type_text("#forget this");
    h.press(Key::Enter);
    h.press(Key::Esc);
    assert!(h.sent().is_empty());
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
