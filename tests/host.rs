//! The session host: two sessions in two project roots, open at once in one process, each
//! working in its own directory (never the process's), each talking to its own model; the
//! host's list of open sessions, and closing one.

#[path = "support/llm.rs"]
mod llm;

use std::path::Path;
use std::time::Duration;

use cairn::host::{ClientKind, Host, SessionHandle, SessionSpec, TrustDecision};
use cairn::protocol::{Event, Op, TurnEnd};
use serde_json::json;

/// A session whose model runs `cat marker.txt` (a path relative to the session's directory),
/// then answers.
fn spec(project: &Path, server: &cairn::llm::scripted::ScriptedServer) -> SessionSpec {
    let mut spec = SessionSpec::new(project.to_path_buf(), ClientKind::Headless);
    spec.model.base_url = Some(server.anthropic_base_url());
    spec.model.model = Some("test-model".into());
    spec.allowed_tools = vec!["Bash(cat marker.txt)".into()];
    spec.trust = TrustDecision::Trusted;
    spec
}

/// Submit `prompt` and wait for the turn's end; the final text.
async fn turn(handle: &mut SessionHandle, prompt: &str) -> String {
    handle
        .conn
        .ops
        .send(Op::Submit {
            text: prompt.into(),
        })
        .unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), handle.conn.events.recv())
            .await
            .expect("the turn ends within 30 s")
            .expect("the session is open");
        if let Event::TurnFinished { end, text, .. } = event {
            assert_eq!(end, TurnEnd::Completed, "{text}");
            return text;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_in_two_projects_run_at_once() {
    let home = tempfile::tempdir().unwrap();
    // SAFETY: this is the only test in this binary; nothing else reads the environment yet.
    unsafe {
        std::env::set_var("HOME", home.path());
        std::env::set_var("CAIRN_DATA_DIR", home.path().join("data"));
        std::env::set_var("ANTHROPIC_API_KEY", "test-key");
        std::env::remove_var("ANTHROPIC_BASE_URL");
        std::env::set_var("CAIRN_CHECKPOINTS", "off");
    }
    let cat = json!({"tool_calls": [{"id": "c", "name": "Bash",
        "input": {"command": "cat marker.txt", "description": "read the marker"}}]});
    let server_a = llm::scripted(&json!({"turns": [cat.clone(), {"text": "done A"}]}));
    let server_b = llm::scripted(&json!({"turns": [cat, {"text": "done B"}]}));
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(a.path().join("marker.txt"), "alpha-marker").unwrap();
    std::fs::write(b.path().join("marker.txt"), "beta-marker").unwrap();
    // The process works somewhere else entirely.
    std::env::set_current_dir(home.path()).unwrap();

    let host = Host::new();
    let mut session_a = host.open(spec(a.path(), &server_a)).await.unwrap();
    let mut session_b = host.open(spec(b.path(), &server_b)).await.unwrap();
    assert_ne!(session_a.conn.session_id, session_b.conn.session_id);
    assert_eq!(session_a.facts.project_dir, a.path());
    assert_eq!(session_b.facts.project_dir, b.path());

    let (text_a, text_b) = tokio::join!(turn(&mut session_a, "go"), turn(&mut session_b, "go"));
    assert_eq!((text_a.as_str(), text_b.as_str()), ("done A", "done B"));
    // Each model saw its own project's file: the command ran in the session's directory.
    let result_a = server_a.requests()[1].body.to_string();
    let result_b = server_b.requests()[1].body.to_string();
    assert!(result_a.contains("alpha-marker"), "{result_a}");
    assert!(result_b.contains("beta-marker"), "{result_b}");
    assert!(!result_a.contains("beta-marker") && !result_b.contains("alpha-marker"));
    // Each transcript is in its own project's folder.
    assert!(session_a.facts.transcript_path.exists());
    assert!(session_b.facts.transcript_path.exists());
    assert_ne!(
        session_a.facts.sessions_dir, session_b.facts.sessions_dir,
        "two projects, two folders of transcripts"
    );

    let mut open: Vec<_> = host
        .sessions()
        .into_iter()
        .map(|s| (s.session_id, s.project_dir))
        .collect();
    open.sort();
    let mut expected = vec![
        (session_a.conn.session_id.clone(), a.path().to_path_buf()),
        (session_b.conn.session_id.clone(), b.path().to_path_buf()),
    ];
    expected.sort();
    assert_eq!(open, expected);

    // Closing A ends A (its events close, though this client still holds its MCP servers and
    // the host watches them for it) and leaves B open and working.
    session_a
        .conn
        .ops
        .send(Op::Host(cairn::protocol::HostOp::McpServers))
        .unwrap();
    assert!(session_a.mcp.is_some());
    host.close(&session_a.conn.session_id);
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        while session_a.conn.events.recv().await.is_some() {}
    })
    .await;
    assert!(closed.is_ok(), "the closed session's events end");
    let ids: Vec<_> = host.sessions().into_iter().map(|s| s.session_id).collect();
    assert_eq!(ids, vec![session_b.conn.session_id.clone()]);
    session_b.conn.ops.send(Op::ContextReport).unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(Event::ContextReport { .. }) = session_b.conn.events.recv().await {
                return;
            }
        }
    })
    .await;
    assert!(answered.is_ok(), "the other session still answers");
}
