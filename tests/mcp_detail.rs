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
    // The temp dir's name has a random part of fixed length: masked in place.
    let name = tmp.display().to_string();
    let masked: String = name
        .chars()
        .enumerate()
        .map(|(i, c)| if i + 6 >= name.len() { 'X' } else { c })
        .collect();
    s.text().replace(&name, &masked)
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
    let servers: Vec<McpServerInfo> = runtime.block_on(async {
        let host = Host::new();
        let mut spec = SessionSpec::new(proj.clone(), ClientKind::Tui);
        spec.trust = TrustDecision::Trusted;
        let mut session = host.open(spec).await.expect("the session opens");
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

    // The connection's own error depends on a race (the server's exit against cairn's first
    // message: `connection closed` or `Broken pipe`); the plain words above do not. The
    // snapshots show one of them.
    let error = db.error.clone().unwrap_or_default();
    assert!(error.starts_with("handshake failed: "), "{error}");
    let mut servers = servers;
    servers[0].error = Some("handshake failed: connection closed: initialize response".into());

    let (tx, _ops) = tokio::sync::mpsc::unbounded_channel();
    let config = AppConfig {
        cwd: proj.clone(),
        bypass_allowed: false,
        highlighter: Highlighter::plain(),
    };
    let mut app = App::new(config, History::in_memory(Vec::new()), tx);
    app.handle_core_event(&Event::Host(HostEvent::McpServers {
        servers: servers.clone(),
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
    let detail = screen(&mut app, 60, 30, &root);
    assert!(detail.contains("hint: set DB_PATH"), "{detail}");
    insta::assert_snapshot!("mcp_detail_60_columns", detail);
}
