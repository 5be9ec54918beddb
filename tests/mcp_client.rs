//! The MCP client against the reference servers from npm (`@modelcontextprotocol/server-
//! everything` and `server-filesystem`, pinned in tests/mcp-servers/package.json), as real
//! child processes and a real HTTP server on 127.0.0.1. `.ci/run` installs them into
//! `target/mcp-servers`; without them the tests say so loudly and pass, unless `CI` is set, in
//! which case a missing server fails the test.
//!
//! One server process is shared across the asserts of a test where the scenario allows.

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;
#[path = "support/mcp_servers.rs"]
mod mcp_servers;
#[path = "support/trust.rs"]
mod trust;
#[path = "support/workspace.rs"]
mod workspace;

use mcp_servers::servers_dir;

use std::time::{Duration, Instant};

use cairn::mcp::manager::ApprovalChoice;
use cairn::mcp::{McpManager, McpOptions, Sources, Status, Timeouts, config, start_servers};
use cairn::tools::{LateTools, ToolHandle, ToolKind, ToolResultBlock};
use serde_json::json;
use workspace::{Workspace, run};

fn everything(dir: &std::path::Path) -> String {
    dir.join("server-everything/dist/index.js")
        .display()
        .to_string()
}

/// Calls bounded by `call`; servers get 20 s to start.
fn calls(call: Duration) -> Timeouts {
    Timeouts {
        startup: Duration::from_secs(20),
        call,
    }
}

/// Start the servers of an inline `--mcp-config`, strict, and wait for them.
async fn start(
    ws: &Workspace,
    servers: serde_json::Value,
    timeouts: Timeouts,
) -> (McpManager, LateTools) {
    mcp_servers::start(ws.root(), servers, timeouts).await
}

fn tool(manager: &McpManager, name: &str) -> ToolHandle {
    let tools = manager.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in {names:?}"))
}

async fn wait_disconnected(manager: &McpManager, server: &str) {
    let s = manager.server(server).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.is_connected().await {
        assert!(
            Instant::now() < deadline,
            "the killed server still looks connected"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Wait until `server` shows as failed without any call (its death noticed by itself).
async fn wait_failed(manager: &McpManager, server: &str) {
    let s = manager.server(server).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !matches!(s.status(), Status::Failed(_)) {
        assert!(
            Instant::now() < deadline,
            "the killed server is not shown as failed: {}",
            s.status()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        s.status()
            .to_string()
            .contains("disconnected (its process exited)"),
        "{}",
        s.status()
    );
}

fn kill(pid: u32) {
    // SAFETY: plain signal to a child process this test started.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
}

#[tokio::test]
async fn everything_over_stdio_tools_results_validation_timeout_and_a_restart_after_every_death() {
    let Some(dir) = servers_dir() else { return };
    let mut ws = Workspace::new();
    let (manager, _late) = start(
        &ws,
        json!({"every thing": {"command": "node", "args": [everything(&dir), "stdio"]}}),
        calls(Duration::from_millis(1500)),
    )
    .await;
    let server = manager.server("every thing").unwrap();
    assert!(
        matches!(server.status(), Status::Connected { .. }),
        "{}",
        server.status()
    );

    // Names normalised; tools are MCP-kind; `readOnlyHint` lets a call run beside others but
    // never makes it read-only for the permission gate.
    let echo = tool(&manager, "mcp__every_thing__echo");
    assert_eq!(echo.kind(), ToolKind::Mcp);
    let parsed = echo.parse(&json!({"message": "hi"})).unwrap();
    assert!(!echo.is_read_only(&parsed) && echo.is_concurrency_safe(&parsed));
    let out = run(
        echo.as_ref(),
        json!({"message": "hello there"}),
        &ws.call_ctx(),
    )
    .await
    .unwrap();
    assert!(!out.is_error);
    assert!(
        out.content.text().contains("hello there"),
        "{:?}",
        out.content
    );

    let sum = tool(&manager, "mcp__every_thing__get-sum");
    let out = run(sum.as_ref(), json!({"a": 2, "b": 40}), &ws.call_ctx())
        .await
        .unwrap();
    assert!(out.content.text().contains("42"), "{:?}", out.content);

    // Validation happens here, before the call, and names the field.
    let err = sum.parse(&json!({"a": "two", "b": 1})).err().unwrap();
    assert!(
        err.message
            .starts_with("InputValidationError: mcp__every_thing__get-sum"),
        "{}",
        err.message
    );
    assert!(err.message.contains("/a"), "{}", err.message);
    let err = sum.parse(&json!({"a": 1})).err().unwrap();
    assert!(
        err.message.contains("\"b\" is a required property"),
        "{}",
        err.message
    );

    let image = tool(&manager, "mcp__every_thing__get-tiny-image");
    let out = run(image.as_ref(), json!({}), &ws.call_ctx())
        .await
        .unwrap();
    assert!(
        out.content
            .blocks()
            .iter()
            .any(|b| matches!(b, ToolResultBlock::Image { .. })),
        "{:?}",
        out.content.text()
    );

    // A call that outlives MCP_TOOL_TIMEOUT (1.5 s here) is cancelled with a clear message.
    let long = tool(&manager, "mcp__every_thing__trigger-long-running-operation");
    let started = Instant::now();
    let err = run(
        long.as_ref(),
        json!({"duration": 30, "steps": 2}),
        &ws.call_ctx(),
    )
    .await
    .err()
    .unwrap();
    assert!(
        err.message.contains("timed out after 1.5 s"),
        "{}",
        err.message
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // Progress notifications become the call's tool progress.
    let out = run(
        long.as_ref(),
        json!({"duration": 0.4, "steps": 2}),
        &ws.call_ctx(),
    )
    .await
    .unwrap();
    assert!(!out.is_error, "{:?}", out.content);
    let mut progress = Vec::new();
    while let Ok(event) = ws.events.try_recv() {
        if let cairn::protocol::Event::ToolCallProgress { output, .. } = event {
            progress.push(output);
        }
    }
    assert!(progress.iter().any(|p| p.contains("1/2")), "{progress:?}");
    // An interrupt (the call's cancel token) ends the call at once.
    let ctx = ws.call_ctx();
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let err = run(long.as_ref(), json!({"duration": 30, "steps": 2}), &ctx)
        .await
        .err()
        .unwrap();
    assert_eq!(err.message, "Interrupted by the user");
    assert!(started.elapsed() < Duration::from_secs(1));
    // The server is still usable afterwards.
    run(
        echo.as_ref(),
        json!({"message": "still here"}),
        &ws.call_ctx(),
    )
    .await
    .unwrap();

    // Killed three times mid-session: each death is noticed at once (the server shows as
    // failed before any call), and each next call restarts it and succeeds.
    let mut pids = vec![server.pid().await.unwrap()];
    for round in 1..=3 {
        kill(*pids.last().unwrap());
        wait_failed(&manager, "every thing").await;
        assert!(
            manager.failing().contains(&"every thing".to_string()),
            "round {round}: {:?}",
            manager.status_lines()
        );
        let message = format!("again {round}");
        let out = run(echo.as_ref(), json!({"message": message}), &ws.call_ctx())
            .await
            .unwrap_or_else(|e| panic!("round {round}: {}", e.message));
        assert!(out.content.text().contains(&message), "{:?}", out.content);
        assert!(matches!(server.status(), Status::Connected { .. }));
        let pid = server.pid().await.unwrap();
        assert!(!pids.contains(&pid), "round {round}: not a new process");
        pids.push(pid);
    }
    manager.shutdown().await;
}

/// server-everything serving `mode` (`streamableHttp` or `sse`) on a free loopback port, once
/// it accepts connections.
async fn serve_everything(dir: &std::path::Path, mode: &str) -> (tokio::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = tokio::process::Command::new("node")
        .args([everything(dir), mode.into()])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "the {mode} server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (child, port)
}

/// Connects to `server` (one entry of an `--mcp-config`) and echoes through it.
async fn echo_through(ws: &Workspace, server: serde_json::Value, message: &str) {
    let (manager, _late) =
        start(ws, json!({ "web": server }), calls(Duration::from_secs(10))).await;
    let echo = tool(&manager, "mcp__web__echo");
    let out = run(echo.as_ref(), json!({ "message": message }), &ws.call_ctx())
        .await
        .unwrap();
    assert!(out.content.text().contains(message), "{:?}", out.content);
    manager.shutdown().await;
}

#[tokio::test]
async fn everything_over_streamable_http_and_legacy_sse_on_loopback() {
    let Some(dir) = servers_dir() else { return };
    let ws = Workspace::new();
    let (mut http, port) = serve_everything(&dir, "streamableHttp").await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    echo_through(
        &ws,
        json!({"type": "http", "url": url, "headers": {"X-Test": "1"}}),
        "over http",
    )
    .await;
    let _ = http.kill().await;

    let (mut sse, port) = serve_everything(&dir, "sse").await;
    let url = format!("http://127.0.0.1:{port}/sse");
    echo_through(
        &ws,
        json!({"type": "sse", "url": url, "headers": {"X-Test": "1"}}),
        "over sse",
    )
    .await;
    let _ = sse.kill().await;
}

#[tokio::test]
async fn filesystem_over_stdio_reads_a_temp_file() {
    let Some(dir) = servers_dir() else { return };
    let ws = Workspace::new();
    ws.write("notes.txt", "a line from the test\n");
    let fs = dir
        .join("server-filesystem/dist/index.js")
        .display()
        .to_string();
    let root = ws.root().display().to_string();
    let (manager, _late) = start(
        &ws,
        json!({"fs": {"command": "node", "args": [fs, root]}}),
        calls(Duration::from_secs(10)),
    )
    .await;
    let tools = manager.tools();
    let read = tools
        .iter()
        .find(|t| t.name() == "mcp__fs__read_text_file" || t.name() == "mcp__fs__read_file")
        .cloned()
        .unwrap();
    let path = ws.path("notes.txt").display().to_string();
    let out = run(read.as_ref(), json!({"path": path}), &ws.call_ctx())
        .await
        .unwrap();
    assert!(
        out.content.text().contains("a line from the test"),
        "{:?}",
        out.content
    );
    // A path outside its roots is the server's error, carried as an error result or message.
    match run(
        read.as_ref(),
        json!({"path": "/etc/hostname"}),
        &ws.call_ctx(),
    )
    .await
    {
        Ok(out) => assert!(out.is_error, "{:?}", out.content),
        Err(e) => assert!(!e.message.is_empty()),
    }
    manager.shutdown().await;
}

/// A loopback HTTP server that answers every request with 401 and a bearer challenge.
async fn unauthorised_server() -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\n\
                          Content-Length: 0\r\nConnection: close\r\n\r\n",
                    )
                    .await;
            });
        }
    });
    port
}

#[tokio::test]
async fn a_missing_command_keeps_its_error_and_nothing_hangs() {
    let ws = Workspace::new();
    let started = Instant::now();
    let port = unauthorised_server().await;
    // One server that does not exist, one that never answers the handshake, and two remote
    // ones that want a login.
    let (manager, late) = start(
        &ws,
        json!({
            "ghost": {"command": "/nonexistent/cairn-no-such-server", "args": []},
            "mute": {"command": "sleep", "args": ["31.25"]},
            "login-http": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")},
            "login-sse": {"type": "sse", "url": format!("http://127.0.0.1:{port}/sse")},
        }),
        Timeouts {
            startup: Duration::from_secs(1),
            call: Duration::from_secs(1),
        },
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let status = manager.server("mute").unwrap().status();
    assert_eq!(
        status,
        Status::Failed("did not start within 1 s (MCP_TIMEOUT)".into())
    );
    // The mute server's process (group) is gone, not left behind.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let alive = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| c == b"sleep\x0031.25\x00");
    assert!(!alive, "the server that timed out is still running");
    let status = manager.server("ghost").unwrap().status();
    let Status::Failed(why) = status else {
        panic!("expected a failure, got {status}")
    };
    assert!(
        why.contains("cannot start") && why.contains("cairn-no-such-server"),
        "{why}"
    );
    for name in ["login-http", "login-sse"] {
        let status = manager.server(name).unwrap().status();
        let Status::Failed(why) = status else {
            panic!("{name}: expected a failure, got {status}")
        };
        assert!(
            why.contains("401") && why.contains("OAuth for MCP servers is not supported yet"),
            "{name}: {why}"
        );
    }
    assert!(late.snapshot().1.is_empty());
}

/// The `cairn` binary in a temp project (trusted) with a temp HOME.
fn cairn_in(project: &std::path::Path, home: &std::path::Path) -> tokio::process::Command {
    trust::trust_folder(home, project);
    mcp_servers::cairn_command(project, home)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_session_offers_and_calls_a_server_tool_and_mcp_list_reports() {
    let Some(dir) = servers_dir() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {
        "ev": {"command": "node", "args": [everything(&dir)]},
        "ghost": {"command": "/nonexistent/cairn-ghost"},
    }})
    .to_string();
    // A project server nobody approved is reported, not started.
    std::fs::write(
        project.path().join(".mcp.json"),
        r#"{"mcpServers": {"repo": {"command": "node", "args": ["-e", "1"]}}}"#,
    )
    .unwrap();
    let server = llm::scripted(&json!({"turns": [
        {"tool_calls": [{"id": "m1", "name": "mcp__ev__echo", "input": {"message": "from the model"}}]},
        {"text": "done"}]}));
    let out = cairn_in(project.path(), home.path())
        .args([
            "-p",
            "echo it",
            "--mcp-config",
            &config,
            "--allowedTools",
            "mcp__ev__echo",
        ])
        .env("ANTHROPIC_BASE_URL", server.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("\"repo\" (.mcp.json) needs approval"),
        "{stderr}"
    );
    assert!(
        stderr.contains("MCP server \"ghost\" failed: cannot start"),
        "{stderr}"
    );
    let requests = server.requests();
    let first = requests[0].body.to_string();
    assert!(first.contains("mcp__ev__echo"), "the tool was not offered");
    let second = requests[1].body.to_string();
    assert!(second.contains("Echo: from the model"), "{second}");

    let out = cairn_in(project.path(), home.path())
        .args(["mcp", "list", "--mcp-config", &config])
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("ev: node ") && stdout.contains("[cli] - ✓ connected ("),
        "{stdout}"
    );
    assert!(
        stdout.contains("ghost: /nonexistent/cairn-ghost [cli] - ✗ failed: cannot start"),
        "{stdout}"
    );
    assert!(stdout.contains("needs approval"), "{stdout}");
}

#[tokio::test]
async fn a_project_server_approved_in_the_session_starts_is_remembered_and_reconnects() {
    let Some(dir) = servers_dir() else { return };
    let ws = Workspace::new();
    let root = ws.root().to_path_buf();
    std::fs::write(
        root.join(".mcp.json"),
        json!({"mcpServers": {"ev": {"command": "node", "args": [everything(&dir)]}}}).to_string(),
    )
    .unwrap();
    let sources = Sources {
        project_dir: root.clone(),
        claude_json: None,
        cli: Vec::new(),
        strict: false,
    };
    let home = tempfile::tempdir().unwrap();
    let home_s = home.path().display().to_string();
    let env = |k: &str| (k == "HOME").then(|| home_s.clone());
    let load = || {
        let settings =
            cairn::config::load_settings(&root, None, &env, cairn::config::Trust::Trusted);
        config::load(&sources, &settings.mcp_approval, &|_| None)
    };
    let late = LateTools::default();
    let mut options = McpOptions::from_env(root.clone(), &|_| None);
    options.timeouts = calls(Duration::from_secs(10));
    let manager = start_servers(load(), options, late.clone());
    let mut changes = manager.changes();
    assert!(manager.servers().is_empty());
    assert_eq!(manager.unapproved()[0].name, "ev");
    let err = manager
        .approve(&root, "nobody", ApprovalChoice::UseThis)
        .unwrap_err();
    assert!(err.contains("no MCP server \"nobody\" is waiting"), "{err}");

    let line = manager
        .approve(&root, "ev", ApprovalChoice::UseThis)
        .unwrap();
    assert!(
        line.starts_with("Starting MCP server ev (remembered in "),
        "{line}"
    );
    assert!(manager.unapproved().is_empty());
    assert!(manager.wait_settled(Duration::from_secs(30)).await);
    assert!(
        changes.has_changed().unwrap(),
        "the change was not announced"
    );
    changes.mark_unchanged();
    tool(&manager, "mcp__ev__echo");
    // Remembered: the next session starts it without asking.
    let again = load();
    assert!(again.unapproved.is_empty());
    assert_eq!(again.servers[0].name, "ev");

    // Killed, then reconnected on request: a new process, its tools back, the change announced.
    let first = manager.server("ev").unwrap().pid().await.unwrap();
    kill(first);
    wait_disconnected(&manager, "ev").await;
    manager.reconnect("ev").unwrap();
    assert!(manager.wait_settled(Duration::from_secs(30)).await);
    let s = manager.server("ev").unwrap();
    assert!(s.is_connected().await, "{}", s.status());
    assert_ne!(s.pid().await, Some(first));
    assert!(changes.has_changed().unwrap());
    let echo = tool(&manager, "mcp__ev__echo");
    let out = run(echo.as_ref(), json!({"message": "back"}), &ws.call_ctx())
        .await
        .unwrap();
    assert!(out.content.text().contains("back"), "{:?}", out.content);
    assert!(manager.reconnect("nobody").is_err());
    manager.shutdown().await;
}

/// The script server (node) as server `s`, connected; its tools in the returned list.
async fn script(ws: &Workspace) -> (McpManager, LateTools) {
    let script = mcp_servers::script_server(ws.root());
    start(
        ws,
        json!({"s": {"command": "node", "args": [script]}}),
        calls(Duration::from_secs(60)),
    )
    .await
}

#[tokio::test]
async fn a_read_only_hint_permits_nothing_it_asks_in_default_mode_and_is_refused_in_plan_mode() {
    use agent::{Agent, Setup, tool_results};
    use cairn::protocol::{Decision, Event, Op, PermissionMode};
    let ws = Workspace::new();
    let (manager, late) = script(&ws).await;
    let wipe = || json!({"tool_calls": [{"id": "w", "name": "mcp__s__wipe", "input": {}}]});
    let mut setup = Setup::in_dir(ws.root(), cairn::llm::Provider::Anthropic);
    setup.late_tools = late;
    // Offered whole (not deferred), so the model calls it at once.
    setup.tool_search.mode = cairn::agent::deferral::ToolSearchMode::Never;
    let script = json!({"turns": [wipe(), {"text": "ok"}, wipe(), {"text": "ok"}]});
    let mut agent = Agent::start(&script, setup);
    let wiped = ws.root().join("wiped");

    // Default mode: the person is asked, says no, and the server is never called.
    agent.submit("wipe");
    let mut asked = Vec::new();
    let events = agent
        .run_turn_answering(|req| {
            asked.push(req.tool.clone());
            Decision::DenyOnce
        })
        .await;
    assert_eq!(asked, ["mcp__s__wipe"], "{events:?}");
    assert!(!wiped.exists(), "the tool ran without asking");

    // Plan mode: refused as a tool that may write, with nobody asked.
    agent
        .handle
        .ops
        .send(Op::SetMode {
            mode: PermissionMode::Plan,
        })
        .unwrap();
    agent.submit("wipe again");
    let events = agent
        .run_turn_answering(|req| panic!("asked in plan mode: {req:?}"))
        .await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::PermissionRequest(_))),
        "{events:?}"
    );
    let results = tool_results(&agent.request_body(3));
    let (text, is_error) = results.last().unwrap();
    assert!(*is_error, "{results:?}");
    assert!(
        text.contains("mcp__s__wipe is not available in plan mode"),
        "{text}"
    );
    assert!(!wiped.exists(), "the tool ran in plan mode");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_30_mb_answer_is_spilled_head_and_tail_and_an_oversized_one_fails_at_once() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let script = mcp_servers::script_server(home.path());
    let config = json!({"mcpServers": {
        "s": {"command": "node", "args": [script]},
        "safe__evil": {"command": "node", "args": [script]},
    }})
    .to_string();
    let server = llm::scripted(&json!({"turns": [
        {"tool_calls": [{"id": "big1", "name": "mcp__s__big", "input": {}}]},
        {"tool_calls": [{"id": "big2", "name": "mcp__s__big", "input": {"size": 70 * 1024 * 1024}}]},
        {"text": "done"}]}));
    let out = cairn_in(project.path(), home.path())
        .args([
            "-p",
            "fetch it",
            "--mcp-config",
            &config,
            "--allowedTools",
            "mcp__s__big",
        ])
        .env("ANTHROPIC_BASE_URL", server.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .output();
    // Generous: the point is that it ends (it used to wait out the ten-minute call timeout).
    let out = tokio::time::timeout(Duration::from_secs(180), out)
        .await
        .expect("cairn -p did not finish")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The ambiguous server name is refused at configuration time, and the run goes on.
    assert!(
        stderr.contains("server \"safe__evil\": the name contains \"__\""),
        "{stderr}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let results = agent::tool_results(&requests[1].body);
    let (text, is_error) = &results[0];
    assert!(!is_error);
    assert!(text.starts_with("HEAD-MARK xxx"), "{}", &text[..100]);
    assert!(text.contains(" characters truncated ...]"));
    assert!(text.contains("xxx TAIL-MARK\n\nThe full output (31457280 characters) was saved to "));
    assert!(text.len() < 200_000, "{}", text.len());
    let path = text
        .split("was saved to ")
        .nth(1)
        .and_then(|rest| rest.split(". Read it").next())
        .unwrap();
    let spilled = std::fs::read_to_string(path).unwrap();
    assert_eq!(spilled.len(), 30 * 1024 * 1024);
    assert!(spilled.ends_with(" TAIL-MARK"));
    // Past 64 MiB the call fails at once with the reason, and the session goes on.
    let results = agent::tool_results(&requests[2].body);
    let (text, is_error) = results.last().unwrap();
    assert!(is_error, "{text}");
    assert!(
        text.contains("the server's answer is 70.0 MiB, more than the 64.0 MiB cairn reads"),
        "{text}"
    );
}
