//! The ops a session's host answers itself, through the real host: sessions opened with
//! `Host::open` against the scripted model server on 127.0.0.1, ops sent on the client's
//! connection and the host's answers read from its events — two sessions in two projects at
//! once (the host lists both), a project MCP server waiting for approval (listed, refused, the
//! answer kept in the project's local settings and the server never started), a memory file,
//! the `statusLine` command, the project's saved sessions after a turn, the plugins of a
//! session opened with a plugin folder (`/plugin`), and the open sessions after one is closed.

use std::path::Path;
use std::time::Duration;

use cairn::host::{ClientKind, Host, SessionHandle, SessionSpec, TrustDecision};
use cairn::protocol::{Event, HostEvent, HostOp, McpApproval, Op, StatusLineInput, TurnEnd};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

#[path = "support/llm.rs"]
mod llm;

/// The next answer of the host, skipping the core's events.
async fn host_event(events: &mut UnboundedReceiver<Event>) -> HostEvent {
    let wait = async {
        loop {
            match events.recv().await {
                Some(Event::Host(event)) => return event,
                Some(_) => {}
                None => panic!("the session ended"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .expect("no answer from the host")
}

async fn open(host: &Host, dir: &Path) -> SessionHandle {
    let mut spec = SessionSpec::new(dir.to_path_buf(), ClientKind::Tui);
    spec.trust = TrustDecision::Trusted;
    host.open(spec).await.expect("the session opens")
}

fn ask(session: &SessionHandle, op: HostOp) {
    session.conn.ops.send(Op::Host(op)).unwrap();
}

#[test]
fn the_host_answers_its_ops_for_each_of_its_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (home, proj_a, proj_b) = (root.join("home"), root.join("proj-a"), root.join("proj-b"));
    for dir in [&home, &proj_a.join(".claude"), &proj_b] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(
        proj_a.join(".mcp.json"),
        r#"{"mcpServers": {"probe": {"command": "sh", "args": ["-c", "touch mcp-ran; sleep 30"]}}}"#,
    )
    .unwrap();
    std::fs::write(
        proj_a.join(".claude/settings.json"),
        r#"{"statusLine": {"type": "command", "command": "printf 'in %s' \"$(basename \"$PWD\")\"", "padding": 1}}"#,
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let server = llm::scripted(&json!({"turns": [{"text": "hello back"}]}));
    // SAFETY: this binary's only test; the runtime's threads are idle (nothing was spawned
    // that reads the environment).
    unsafe {
        std::env::set_var("HOME", &home);
        std::env::set_var("XDG_CONFIG_HOME", home.join(".config"));
        std::env::set_var("CAIRN_DATA_DIR", root.join("data"));
        std::env::set_var("ANTHROPIC_BASE_URL", server.anthropic_base_url());
        std::env::set_var("ANTHROPIC_API_KEY", "test-key");
    }
    runtime.block_on(async {
        let host = Host::new();
        let mut a = open(&host, &proj_a).await;
        let mut b = open(&host, &proj_b).await;

        // The host's open sessions: both, each in its own project.
        ask(&b, HostOp::ListOpenSessions);
        let HostEvent::OpenSessions { sessions } = host_event(&mut b.conn.events).await else {
            panic!("expected the open sessions")
        };
        let mut dirs: Vec<_> = sessions.iter().map(|s| s.project_dir.clone()).collect();
        dirs.sort();
        assert_eq!(dirs, [proj_a.clone(), proj_b.clone()]);

        // The project server waits for approval; refusing it is remembered, it never runs.
        ask(&a, HostOp::McpServers);
        let HostEvent::McpServers { servers } = host_event(&mut a.conn.events).await else {
            panic!("expected the MCP servers")
        };
        assert_eq!(servers.len(), 1, "{servers:?}");
        assert_eq!(servers[0].name, "probe");
        let runs = servers[0].waiting.clone().unwrap_or_default();
        assert!(runs.contains("touch mcp-ran"), "{runs}");
        ask(
            &a,
            HostOp::McpApprove {
                name: "probe".into(),
                choice: McpApproval::Refuse,
            },
        );
        let answer = host_event(&mut a.conn.events).await;
        // The servers changed too (the one waiting is gone); the answer is among the events.
        let answer = match answer {
            HostEvent::McpServers { .. } => host_event(&mut a.conn.events).await,
            other => other,
        };
        let HostEvent::McpAnswer { result: Ok(line) } = answer else {
            panic!("expected the approval's answer, got {answer:?}")
        };
        assert!(line.contains("probe"), "{line}");
        // Claude Code's file, where the notice about the waiting server says to look.
        let local = std::fs::read_to_string(proj_a.join(".claude/settings.local.json")).unwrap();
        let local: serde_json::Value = serde_json::from_str(&local).unwrap();
        assert_eq!(local["disabledMcpjsonServers"], json!(["probe"]));
        assert!(!proj_a.join("mcp-ran").exists());
        // Session b has no servers.
        ask(&b, HostOp::McpServers);
        assert_eq!(
            host_event(&mut b.conn.events).await,
            HostEvent::McpServers {
                servers: Vec::new()
            }
        );

        // A memory file is the host's to write.
        let memory = proj_b.join("CLAUDE.md");
        ask(
            &b,
            HostOp::WriteMemoryFile {
                path: memory.clone(),
                content: "be brief\n".into(),
            },
        );
        assert_eq!(
            host_event(&mut b.conn.events).await,
            HostEvent::MemoryWritten {
                path: memory.clone(),
                note: false,
                result: Ok(())
            }
        );
        assert_eq!(std::fs::read_to_string(&memory).unwrap(), "be brief\n");

        // The statusLine command of a's settings runs in a's project, padded.
        let input = StatusLineInput {
            session_id: a.conn.session_id.clone(),
            model: "test-model".into(),
            cwd: proj_a.clone(),
            cost_usd: 0.0,
            duration_ms: 10,
            lines_added: 0,
            lines_removed: 0,
        };
        ask(&a, HostOp::StatusLine { input });
        let status = loop {
            match host_event(&mut a.conn.events).await {
                HostEvent::StatusLine { text } => break text,
                HostEvent::McpServers { .. } => {}
                other => panic!("unexpected {other:?}"),
            }
        };
        assert_eq!(status, Ok(" in proj-a".into()));

        // After a turn in a, a new session in the same project lists it to resume.
        a.conn
            .ops
            .send(Op::Submit {
                text: "say hello".into(),
            })
            .unwrap();
        let finished = async {
            while let Some(event) = a.conn.events.recv().await {
                if let Event::TurnFinished { end, .. } = event {
                    return end;
                }
            }
            panic!("the session ended")
        };
        let end = tokio::time::timeout(Duration::from_secs(20), finished)
            .await
            .unwrap();
        assert_eq!(end, TurnEnd::Completed);
        let mut c = open(&host, &proj_a).await;
        ask(&c, HostOp::ListSavedSessions);
        let HostEvent::SavedSessions { sessions } = host_event(&mut c.conn.events).await else {
            panic!("expected the saved sessions")
        };
        let saved = sessions
            .iter()
            .find(|s| s.id == a.conn.session_id)
            .unwrap_or_else(|| panic!("a's session is not listed: {sessions:?}"));
        assert_eq!(saved.first_prompt, "say hello");
        assert_eq!(saved.prompts, 1);
        // b's project has none.
        ask(&b, HostOp::ListSavedSessions);
        let HostEvent::SavedSessions { sessions } = host_event(&mut b.conn.events).await else {
            panic!("expected the saved sessions")
        };
        assert!(sessions.is_empty(), "{sessions:?}");

        // A session with the fixture plugin lists it with what it contributes; its MCP server
        // names a variable that is not set, which is a problem line, not a failure.
        let mut spec = SessionSpec::new(proj_b.clone(), ClientKind::Tui);
        spec.trust = TrustDecision::Trusted;
        spec.plugin_dirs = vec![
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/plugins/marketplace/plugins/demo-kit"),
        ];
        let mut d = host.open(spec).await.expect("the session opens");
        ask(&d, HostOp::Plugins);
        let HostEvent::Plugins { plugins, problems } = host_event(&mut d.conn.events).await else {
            panic!("expected the plugins")
        };
        assert_eq!(plugins.len(), 1, "{plugins:?}");
        assert_eq!(plugins[0].id, "demo-kit@inline");
        assert!(
            plugins[0].detail.starts_with("v1.0.0 (--plugin-dir)"),
            "{plugins:?}"
        );
        assert_eq!(
            plugins[0].contributes,
            [
                "commands: /demo-kit:hello, /demo-kit:tools:count",
                "skills: demo-kit:greeting",
                "agents: demo-kit:reviewer",
                "hooks: UserPromptSubmit",
                "language servers: plugin:demo-kit:fake",
            ]
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("CAIRN_EVERYTHING_JS is not set")),
            "{problems:?}"
        );
        host.close(&d.conn.session_id);

        // Once b is closed, the host lists the others.
        host.close(&b.conn.session_id);
        ask(&c, HostOp::ListOpenSessions);
        let HostEvent::OpenSessions { sessions } = host_event(&mut c.conn.events).await else {
            panic!("expected the open sessions")
        };
        let mut ids: Vec<_> = sessions.into_iter().map(|s| s.session_id).collect();
        ids.sort();
        let mut want = vec![a.conn.session_id.clone(), c.conn.session_id.clone()];
        want.sort();
        assert_eq!(ids, want);
    });
}
