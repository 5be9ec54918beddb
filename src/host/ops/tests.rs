//! The host's answers, driven through [`handle`] with real files, real transcripts and real
//! `sh` runs: memory files, saved sessions, the status-line command, and that the core's ops
//! pass through untouched.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::*;
use crate::config::appearance::StatusLineSetting;
use crate::protocol::StatusLineInput;

fn facts(dir: &Path) -> SessionFacts {
    SessionFacts {
        project_dir: dir.to_path_buf(),
        project_root: dir.to_path_buf(),
        sessions_dir: dir.join("sessions"),
        data_root: dir.join("data"),
        transcript_path: dir.join("sess-1.jsonl"),
        pick_session: false,
        bypass_allowed: false,
        settings_broken: Vec::new(),
        status_line: None,
        output_style: "Explanatory".into(),
        api_key_source: "none".into(),
        tool_env: vec![("STATUS_GREETING".into(), "ahoy".into())],
        demo: false,
        plugins: Vec::new(),
        plugin_problems: Vec::new(),
    }
}

fn side(facts: SessionFacts) -> HostSide {
    HostSide::new(facts, None, Registry::default())
}

/// Send `op` to the host and wait for its answer.
async fn ask(side: &HostSide, op: HostOp) -> HostEvent {
    let (tx, mut rx) = mpsc::unbounded_channel();
    assert_eq!(handle(Op::Host(op), side, &tx), None, "the host answers it");
    let event = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await;
    match event {
        Ok(Some(Event::Host(event))) => event,
        other => panic!("expected a host event, got {other:?}"),
    }
}

fn input(cwd: &Path) -> StatusLineInput {
    StatusLineInput {
        session_id: "sess-1".into(),
        model: "claude-sonnet-4-5-20250929".into(),
        cwd: cwd.to_path_buf(),
        cost_usd: 0.25,
        duration_ms: 1500,
        lines_added: 12,
        lines_removed: 3,
    }
}

#[test]
fn the_cores_ops_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let op = Op::Submit { text: "hi".into() };
    assert_eq!(handle(op.clone(), &side(facts(dir.path())), &tx), Some(op));
    assert!(rx.try_recv().is_err());
}

#[tokio::test]
async fn memory_files_are_read_written_and_noted_and_only_markdown_by_absolute_path() {
    let dir = tempfile::tempdir().unwrap();
    let side = side(facts(dir.path()));
    let path = dir.path().join("CLAUDE.md");
    // Missing: empty, to be created.
    let read = ask(&side, HostOp::ReadMemoryFile { path: path.clone() }).await;
    assert_eq!(
        read,
        HostEvent::MemoryFile {
            path: path.clone(),
            content: Ok(String::new())
        }
    );
    let written = ask(
        &side,
        HostOp::WriteMemoryFile {
            path: path.clone(),
            content: "# Rules\nbe brief".into(),
        },
    )
    .await;
    assert_eq!(
        written,
        HostEvent::MemoryWritten {
            path: path.clone(),
            note: false,
            result: Ok(())
        }
    );
    let noted = ask(
        &side,
        HostOp::AddMemoryNote {
            path: path.clone(),
            note: " always use tabs ".into(),
        },
    )
    .await;
    assert!(matches!(
        noted,
        HostEvent::MemoryWritten {
            note: true,
            result: Ok(()),
            ..
        }
    ));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "# Rules\nbe brief\n- always use tabs\n"
    );
    // A note to a file in a folder that does not exist yet creates both.
    let user = dir.path().join("home/.claude/CLAUDE.md");
    ask(
        &side,
        HostOp::AddMemoryNote {
            path: user.clone(),
            note: "short answers".into(),
        },
    )
    .await;
    assert_eq!(std::fs::read_to_string(&user).unwrap(), "- short answers\n");
    // Not a memory file: refused, nothing written.
    for path in [PathBuf::from("CLAUDE.md"), dir.path().join(".bashrc")] {
        let refused = ask(
            &side,
            HostOp::WriteMemoryFile {
                path: path.clone(),
                content: "x".into(),
            },
        )
        .await;
        let HostEvent::MemoryWritten {
            result: Err(why), ..
        } = refused
        else {
            panic!("{path:?} was not refused: {refused:?}");
        };
        assert!(why.ends_with("is not a memory file"), "{why}");
    }
    assert!(!dir.path().join(".bashrc").exists());
}

#[tokio::test]
async fn saved_sessions_are_the_projects_transcripts_newest_first() {
    use crate::session::transcript::Transcript;
    let dir = tempfile::tempdir().unwrap();
    let facts = facts(dir.path());
    for (id, prompt) in [("s-old", "fix the parser"), ("s-new", "add a --json flag")] {
        let mut t = Transcript::at(facts.sessions_dir.join(format!("{id}.jsonl")), id)
            .with_header(dir.path(), Some("main".into()));
        t.append(&crate::llm::Message::user_text(prompt));
        std::thread::sleep(Duration::from_millis(20));
    }
    let HostEvent::SavedSessions { sessions } =
        ask(&side(facts.clone()), HostOp::ListSavedSessions).await
    else {
        panic!()
    };
    let got: Vec<(&str, &str, usize, Option<&str>)> = sessions
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                s.first_prompt.as_str(),
                s.prompts,
                s.branch.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("s-new", "add a --json flag", 1, Some("main")),
            ("s-old", "fix the parser", 1, Some("main"))
        ]
    );
    assert_eq!(sessions[1].path, facts.sessions_dir.join("s-old.jsonl"));
}

#[tokio::test]
async fn no_mcp_servers_is_an_empty_list_and_answers_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let side = side(facts(dir.path()));
    assert_eq!(
        ask(&side, HostOp::McpServers).await,
        HostEvent::McpServers {
            servers: Vec::new()
        }
    );
    assert_eq!(
        ask(
            &side,
            HostOp::McpReconnect {
                name: "docs".into()
            }
        )
        .await,
        HostEvent::McpAnswer {
            result: Err("no MCP server named \"docs\"".into())
        }
    );
}

#[test]
fn the_status_input_json_has_claude_codes_shape() {
    let facts = facts(Path::new("/work/project"));
    let v = status_line::input_json(&facts, &input(Path::new("/work/project/sub")));
    assert_eq!(v["hook_event_name"], "Status");
    assert_eq!(v["session_id"], "sess-1");
    assert_eq!(v["transcript_path"], "/work/project/sess-1.jsonl");
    assert_eq!(v["cwd"], "/work/project/sub");
    assert_eq!(v["model"]["id"], "claude-sonnet-4-5-20250929");
    assert_eq!(v["model"]["display_name"], "Sonnet 4.5");
    assert_eq!(v["workspace"]["current_dir"], "/work/project/sub");
    assert_eq!(v["workspace"]["project_dir"], "/work/project");
    assert_eq!(v["output_style"]["name"], "Explanatory");
    assert_eq!(v["cost"]["total_cost_usd"], 0.25);
    assert_eq!(v["cost"]["total_duration_ms"], 1500);
    assert_eq!(v["cost"]["total_lines_added"], 12);
    assert_eq!(v["cost"]["total_lines_removed"], 3);
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn display_names_of_models() {
    use status_line::display_name;
    assert_eq!(display_name("claude-opus-4-1-20250805"), "Opus 4.1");
    assert_eq!(display_name("claude-3-5-haiku-20241022"), "Haiku 3.5");
    assert_eq!(display_name("claude-sonnet-4"), "Sonnet 4");
    assert_eq!(display_name("gpt-4o"), "gpt-4o");
    assert_eq!(display_name("claude-instant"), "claude-instant");
}

#[tokio::test]
async fn a_real_status_script_reads_the_json_and_its_first_line_comes_back_padded() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("statusline.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ninput=$(cat)\nprintf '%s' \"$input\" > seen.json\n\
         name=$(printf '%s' \"$input\" | sed 's/.*\"display_name\":\"\\([^\"]*\\)\".*/\\1/')\n\
         printf '\\033[1;32m%s\\033[0m in %s\\nsecond line\\n' \"$name\" \"$STATUS_GREETING\"\n",
    )
    .unwrap();
    let mut facts = facts(dir.path());
    facts.status_line = Some(StatusLineSetting {
        command: format!("sh {}", script.display()),
        padding: 2,
    });
    let answer = ask(
        &side(facts),
        HostOp::StatusLine {
            input: input(dir.path()),
        },
    )
    .await;
    assert_eq!(
        answer,
        HostEvent::StatusLine {
            text: Ok("  \u{1b}[1;32mSonnet 4.5\u{1b}[0m in ahoy".into())
        }
    );
    // It ran in the project directory and was given the session's facts.
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(seen["session_id"], "sess-1");
    assert_eq!(seen["model"]["id"], "claude-sonnet-4-5-20250929");
    assert_eq!(seen["output_style"]["name"], "Explanatory");
}

#[tokio::test]
async fn a_hanging_status_script_is_killed_and_a_failing_or_missing_one_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let run = |command: &str, timeout| {
        let mut job = status_line::Job::new(
            &SessionFacts {
                status_line: Some(StatusLineSetting {
                    command: command.into(),
                    padding: 3,
                }),
                ..facts(dir.path())
            },
            &input(dir.path()),
        )
        .unwrap();
        job.hook.timeout = timeout;
        job.run()
    };
    let hung = run("echo early; sleep 30", Duration::from_millis(200)).await;
    assert!(
        hung.as_ref().is_err_and(|e| e.contains("timed out")),
        "{hung:?}"
    );
    let failed = run("echo partial; echo oops >&2; exit 3", status_line::TIMEOUT).await;
    assert_eq!(failed, Err("failed (exit 3) oops".into()));
    assert_eq!(run("true", status_line::TIMEOUT).await, Ok(String::new()));
    let unset = ask(
        &side(facts(dir.path())),
        HostOp::StatusLine {
            input: input(dir.path()),
        },
    )
    .await;
    assert_eq!(
        unset,
        HostEvent::StatusLine {
            text: Err("no statusLine command is configured".into())
        }
    );
}

#[tokio::test]
async fn language_servers_are_listed_watched_and_restarted_through_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let declared = vec![crate::config::lsp_servers::LspServerSetting {
        name: "fake".into(),
        command: "sh".into(),
        args: vec!["-c".into(), "exit 3".into()],
        extension_to_language: [(".x".to_string(), "x".to_string())].into(),
        env: Default::default(),
        initialization_options: None,
        settings: None,
        startup_timeout_ms: Some(500),
        source: "test".into(),
    }];
    let path = std::env::var("PATH").unwrap_or_default();
    let (specs, _) =
        crate::lsp::spec::resolve(&declared, Some(&path), dir.path(), &Default::default());
    let manager = Arc::new(crate::lsp::LspManager::new(specs, dir.path().join("lsp")));
    let side = side(facts(dir.path())).with_lsp(Some(Arc::clone(&manager)));
    let (tx, mut rx) = mpsc::unbounded_channel();
    assert_eq!(handle(Op::Host(HostOp::LspServers), &side, &tx), None);
    let next = |rx: &mut mpsc::UnboundedReceiver<Event>| {
        let got = rx.try_recv();
        async move {
            match got {
                Ok(Event::Host(HostEvent::LspServers { servers })) => servers,
                _ => panic!("expected the servers"),
            }
        }
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let first = next(&mut rx).await;
    let fake = first.iter().find(|s| s.name == "fake").unwrap();
    assert_eq!(fake.state, crate::protocol::LspState::NotStarted);
    // A start that fails: the watcher says so by itself.
    let file = dir.path().join("a.x");
    assert!(manager.server_for(&file, dir.path()).await.is_err());
    let mut failed = None;
    for _ in 0..100 {
        if let Ok(Event::Host(HostEvent::LspServers { servers })) = rx.try_recv() {
            failed = servers.into_iter().find(|s| s.name == "fake");
            if matches!(
                failed.as_ref().map(|s| &s.state),
                Some(crate::protocol::LspState::Failed { .. })
            ) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let failed = failed.unwrap();
    let crate::protocol::LspState::Failed { error } = &failed.state else {
        panic!("{failed:?}")
    };
    assert!(
        error.starts_with("language server `fake` failed to initialise"),
        "{error}"
    );
    assert_eq!(failed.root.as_deref(), Some(dir.path()));

    let restarted = ask(
        &side,
        HostOp::LspRestart {
            name: "fake".into(),
        },
    )
    .await;
    assert_eq!(
        restarted,
        HostEvent::LspAnswer {
            result: Ok("fake was not running; the next call that needs it starts it".into())
        }
    );
    let none = ask(&side, HostOp::Diagnostics).await;
    assert_eq!(none, HostEvent::Diagnostics { files: Vec::new() });
    side.ended.cancel();
}
