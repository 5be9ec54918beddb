//! `/mcp` with a server that really fails: a project server (approved in
//! `.claude/settings.local.json`) whose command writes why to stderr and exits, run by a real
//! host; the host's list carries its status in plain words, its stderr lines, its command and
//! its file, and the TUI's App shows them at 60 columns, nothing cut (issue #27 item 8).

use std::path::Path;
use std::time::{Duration, Instant};

use cairn::host::{ClientKind, Host, SessionSpec, TrustDecision};
use cairn::protocol::{Event, HostEvent, HostOp, McpServerInfo, Op};
use cairn::tui::app::{App, AppConfig};
use cairn::tui::composer::history::History;
use cairn::tui::highlight::Highlighter;
use cairn::tui::input::{InputEvent, Key, KeyInput};
use cairn::tui::terminal::TestScreen;
use serde_json::json;

#[path = "support/llm.rs"]
mod llm;

const FAILING: &str = "echo 'cannot open database /srv/none/app.db: no such file' >&2; \
                       echo 'hint: set DB_PATH' >&2; exit 3";

fn screen(app: &mut App, width: u16, height: u16, tmp: &Path) -> String {
    let mut s = TestScreen::new(width, height);
    s.terminal
        .draw(|f| app.render_at(f, Instant::now()))
        .unwrap_or_else(|never| match never {});
    // The temp dir's name ends in a random part of fixed length: masked wherever it shows
    // (the log's path holds it too, in the project's data folder name).
    let name = tmp.display().to_string();
    let random = &name[name.len() - 6..];
    s.text().replace(random, "XXXXXX")
}

/// `servers` with the temp dir's random part masked in their log paths (wrapped, the path
/// would split it where `screen` cannot find it).
fn masked_logs(mut servers: Vec<McpServerInfo>, tmp: &Path) -> Vec<McpServerInfo> {
    let name = tmp.display().to_string();
    let random = &name[name.len() - 6..];
    for s in &mut servers {
        s.log = s.log.as_ref().map(|l| l.replace(random, "XXXXXX"));
    }
    servers
}

/// The next host list, or answer, the session sends.
async fn next_host_event(events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> HostEvent {
    let wait = async {
        loop {
            if let Some(Event::Host(e)) = events.recv().await {
                return e;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .expect("the host said nothing")
}

/// Turn `name` on or off in `session`: the host's answer line, then its next list.
async fn set_enabled(
    session: &mut cairn::host::SessionHandle,
    name: &str,
    enabled: bool,
) -> (String, Vec<McpServerInfo>) {
    let name = name.to_string();
    session
        .conn
        .ops
        .send(Op::Host(HostOp::McpEnable { name, enabled }))
        .unwrap();
    // The list may come before the answer or after it.
    let (mut answer, mut list) = (None, None);
    loop {
        match next_host_event(&mut session.conn.events).await {
            HostEvent::McpAnswer { result } => answer = Some(result.expect("turned")),
            HostEvent::McpServers { servers } if servers[0].disabled != enabled => {
                list = Some(servers)
            }
            _ => {}
        }
        if let (Some(answer), Some(list)) = (&answer, &list) {
            return (answer.clone(), list.clone());
        }
    }
}

#[test]
fn a_failing_servers_detail_shows_why_in_plain_words_with_its_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (home, proj) = (root.join("home"), root.join("proj"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    std::fs::write(
        proj.join(".mcp.json"),
        json!({"mcpServers": {"db": {"command": "sh", "args": ["-c", FAILING]}}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        proj.join(".claude/settings.local.json"),
        r#"{"enabledMcpjsonServers": ["db"]}"#,
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let server = llm::scripted(&json!({"turns": []}));
    // SAFETY: this binary's only test; nothing else reads the environment yet.
    unsafe {
        std::env::set_var("HOME", &home);
        std::env::set_var("XDG_CONFIG_HOME", home.join(".config"));
        std::env::set_var("CAIRN_DATA_DIR", root.join("data"));
        std::env::set_var("ANTHROPIC_BASE_URL", server.anthropic_base_url());
        std::env::set_var("ANTHROPIC_API_KEY", "test-key");
    }
    let host = Host::new();
    let mut spec = SessionSpec::new(proj.clone(), ClientKind::Tui);
    spec.trust = TrustDecision::Trusted;
    let mut session = runtime
        .block_on(host.open(spec.clone()))
        .expect("the session opens");
    let servers: Vec<McpServerInfo> = runtime.block_on(async {
        session.conn.ops.send(Op::Host(HostOp::McpServers)).unwrap();
        // The list comes again whenever a server changes: until `db` has failed.
        let wait = async {
            loop {
                if let Some(Event::Host(HostEvent::McpServers { servers })) =
                    session.conn.events.recv().await
                    && servers.iter().any(|s| s.failed && s.stderr.len() == 2)
                {
                    return servers;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(20), wait)
            .await
            .expect("the server never failed")
    });
    let db = &servers[0];
    let log = db.log.clone().expect("a log path");
    assert_eq!(
        db.stderr,
        [
            "cannot open database /srv/none/app.db: no such file",
            "hint: set DB_PATH"
        ]
    );
    assert!(db.status.starts_with("failed: "), "{}", db.status);
    assert!(
        !db.status.contains("os error"),
        "plain words: {}",
        db.status
    );
    assert_eq!(db.command, format!("sh -c {FAILING}"));
    assert!(db.source.ends_with("proj/.mcp.json"), "{}", db.source);

    // The connection's own error (`connection closed` or `Broken pipe`, by a race) is in the
    // plain words above and in the log, not shown as the library's text.
    assert_eq!(db.error, None, "no library error beside plain words");
    let (tx, _ops) = tokio::sync::mpsc::unbounded_channel();
    let config = AppConfig {
        cwd: proj.clone(),
        bypass_allowed: false,
        highlighter: Highlighter::plain(),
    };
    let mut app = App::new(config, History::in_memory(Vec::new()), tx);
    app.handle_core_event(&Event::Host(HostEvent::McpServers {
        servers: masked_logs(servers.clone(), &root),
    }));
    let press = |app: &mut App, key: Key| {
        app.handle_input(InputEvent::Key(KeyInput::plain(key)));
    };
    for c in "/mcp".chars() {
        press(&mut app, Key::Char(c));
    }
    press(&mut app, Key::Enter);
    insta::assert_snapshot!("mcp_list_60_columns", screen(&mut app, 60, 12, &root));
    press(&mut app, Key::Enter);
    let detail = screen(&mut app, 60, 34, &root);
    assert!(detail.contains("hint: set DB_PATH"), "{detail}");
    insta::assert_snapshot!("mcp_detail_60_columns", detail);

    // The log file is where the detail says, under the project's data folder, and holds the
    // server's stderr and why it failed.
    assert_eq!(
        Path::new(&log),
        cairn::host::project_data_dir(&root.join("data"), &proj).join("mcp-logs/db.log")
    );
    let text = std::fs::read_to_string(&log).expect("the log file exists");
    assert!(text.contains(" [stderr] hint: set DB_PATH\n"), "{text}");
    assert!(
        text.contains(" [stderr] cannot open database /srv/none/app.db"),
        "{text}"
    );
    assert!(text.contains(" [cairn] starting: sh -c "), "{text}");
    assert!(
        text.contains(" [cairn] failed: handshake failed: "),
        "{text}"
    );

    // Disable (the detail's second action): the server is gone from the session and
    // remembered in the local settings, as Claude Code keeps it.
    let (line, servers) = runtime.block_on(set_enabled(&mut session, "db", false));
    assert!(
        line.starts_with("MCP server \"db\" turned off (remembered in "),
        "{line}"
    );
    let local = proj.join(".claude/settings.local.json");
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert_eq!(settings["disabledMcpjsonServers"], json!(["db"]));
    assert!(servers[0].disabled && !servers[0].failed, "{servers:?}");
    app.handle_core_event(&Event::Host(HostEvent::McpServers {
        servers: masked_logs(servers, &root),
    }));
    press(&mut app, Key::Esc);
    for c in "/mcp".chars() {
        press(&mut app, Key::Char(c));
    }
    press(&mut app, Key::Enter);
    insta::assert_snapshot!("mcp_list_disabled", screen(&mut app, 60, 12, &root));
    press(&mut app, Key::Enter);
    insta::assert_snapshot!("mcp_detail_disabled", screen(&mut app, 60, 24, &root));
    drop(session);

    // The next session does not start it: it is listed as off, and nothing new is logged.
    let mut next = runtime
        .block_on(host.open(spec))
        .expect("the next session opens");
    next.conn.ops.send(Op::Host(HostOp::McpServers)).unwrap();
    let HostEvent::McpServers { servers } =
        runtime.block_on(next_host_event(&mut next.conn.events))
    else {
        panic!("the list first");
    };
    assert!(servers[0].disabled, "{servers:?}");
    runtime.block_on(tokio::time::sleep(Duration::from_millis(500)));
    let starts = |text: &str| text.matches("[cairn] starting").count();
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(starts(&text), 1, "{text}");
    assert!(text.contains(" [cairn] disabled (asked in /mcp)"), "{text}");

    // Enable brings it back: out of the list of refused servers, started (and failing) again.
    let (line, _) = runtime.block_on(set_enabled(&mut next, "db", true));
    assert!(line.starts_with("MCP server \"db\" turned on"), "{line}");
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert_eq!(settings["disabledMcpjsonServers"], json!([]));
    assert_eq!(settings["enabledMcpjsonServers"], json!(["db"]));
    let started = async {
        while starts(&std::fs::read_to_string(&log).unwrap_or_default()) < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(20), started).await })
        .expect("started again");
}
