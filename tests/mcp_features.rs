//! MCP beyond tools, through `cairn -p` and the scripted model, against the reference server
//! `@modelcontextprotocol/server-everything` (pinned in tests/mcp-servers/package.json, installed
//! by `.ci/run`) and a tiny node server of our own for `list_changed`: the resource tools with
//! Claude Code's names and shapes, `@server:uri` mentions, embedded resources under their URI
//! header, roots, server prompts as `/mcp__server__prompt`, and a tool list the model sees
//! change when the server says it changed. Each test asserts what the model received.

#[path = "support/llm.rs"]
mod llm;
#[path = "support/mcp_servers.rs"]
mod mcp_servers;
#[path = "support/trust.rs"]
mod trust;

use std::path::Path;
use std::time::Duration;

use cairn::llm::scripted::RecordedRequest;
use mcp_servers::servers_dir;
use serde_json::{Value, json};

fn everything(dir: &Path) -> String {
    dir.join("server-everything/dist/index.js")
        .display()
        .to_string()
}

/// Run `cairn -p <prompt>` in a fresh trusted project with `servers` as `--mcp-config` and the
/// scripted model playing `turns`; `extra` args after. Returns whether it succeeded, its
/// stderr, what the model was sent, and the project's path.
async fn cairn_p(
    servers: Value,
    prompt: &str,
    turns: Value,
    extra: &[&str],
) -> (bool, String, Vec<RecordedRequest>, std::path::PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let model = llm::scripted(&json!({ "turns": turns }));
    let config = json!({ "mcpServers": servers }).to_string();
    trust::trust_folder(home.path(), project.path());
    let out = mcp_servers::cairn_command(project.path(), home.path())
        .args(["-p", prompt, "--mcp-config", &config, "--strict-mcp-config"])
        .args(extra)
        .env("ANTHROPIC_BASE_URL", model.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .output();
    let out = tokio::time::timeout(Duration::from_secs(90), out)
        .await
        .expect("cairn -p did not finish")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let root = project.path().canonicalize().unwrap();
    (out.status.success(), stderr, model.requests(), root)
}

/// The tool names a request offered.
fn tools(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect()
}

/// The text of the tool result for call `id` in `request`.
fn tool_result(request: &RecordedRequest, id: &str) -> String {
    let messages = request.body["messages"].as_array().unwrap();
    for m in messages {
        for block in m["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" && block["tool_use_id"] == id {
                return match &block["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    other => other.to_string(),
                };
            }
        }
    }
    panic!("no result for {id} in {}", request.body);
}

const FEATURES: &str = "demo://resource/static/document/features.md";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_mentions_embedded_resources_and_roots_reach_the_model() {
    let Some(dir) = servers_dir() else { return };
    let (ok, stderr, requests, root) = cairn_p(
        json!({"ev": {"command": "node", "args": [everything(&dir)]}}),
        &format!("summarise @ev:{FEATURES} please"),
        json!([
            {"tool_calls": [
                {"id": "l1", "name": "ListMcpResourcesTool", "input": {"server": "ev"}},
                {"id": "l2", "name": "ListMcpResourcesTool", "input": {"server": "nope"}},
                {"id": "r1", "name": "ReadMcpResourceTool", "input": {"server": "ev", "uri": FEATURES}},
                {"id": "g1", "name": "mcp__ev__get-resource-reference", "input": {}},
                {"id": "t1", "name": "mcp__ev__get-roots-list", "input": {}},
            ]},
            {"text": "done"},
        ]),
        &["--allowedTools", "mcp__ev"],
    )
    .await;
    assert!(ok, "{stderr}");
    assert_eq!(requests.len(), 2, "{stderr}");

    // The mention: the resource's text after the prompt, under its URI header.
    let first = requests[0].body["messages"][0].to_string();
    assert!(
        first.contains(&format!("[Resource from ev at {FEATURES}] ")),
        "{first}"
    );
    assert!(first.contains("summarise @ev:"), "{first}");
    // The resource tools join the MCP tools, after the built-ins.
    let offered = tools(&requests[0]);
    for name in [
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        "mcp__ev__get-roots-list",
    ] {
        assert!(offered.iter().any(|t| t == name), "{name}: {offered:?}");
    }

    // The list: Claude Code's shape, each item naming its server.
    let list: Value = serde_json::from_str(&tool_result(&requests[1], "l1")).unwrap();
    let item = list
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["uri"] == FEATURES)
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(item["server"], "ev");
    assert_eq!(item["name"], "features.md");
    assert_eq!(item["mimeType"], "text/markdown");
    assert_eq!(
        tool_result(&requests[1], "l2"),
        "Server \"nope\" not found. Available servers: ev"
    );
    // The read: `{"contents": [{uri, mimeType, text}]}`.
    let read: Value = serde_json::from_str(&tool_result(&requests[1], "r1")).unwrap();
    assert_eq!(read["contents"][0]["uri"], FEATURES);
    assert_eq!(read["contents"][0]["mimeType"], "text/markdown");
    assert!(
        read["contents"][0]["text"].as_str().unwrap().len() > 20,
        "{read}"
    );
    // An embedded resource in a tool result keeps its URI header.
    let reference = tool_result(&requests[1], "g1");
    assert!(
        reference.contains("[Resource from ev at demo://resource/dynamic/text/1] "),
        "{reference}"
    );
    // Roots: the server asked for them and got the project as a file URI.
    let roots = tool_result(&requests[1], "t1");
    assert!(
        roots.contains(&format!("URI: file://{}", root.display())),
        "{roots}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_prompt_is_expanded_with_arguments_by_position_and_by_name() {
    let Some(dir) = servers_dir() else { return };
    let servers = json!({"ev": {"command": "node", "args": [everything(&dir)]}});
    let (ok, stderr, requests, _) = cairn_p(
        servers.clone(),
        "/mcp__ev__args-prompt Austin state=Texas",
        json!([{"text": "sunny"}]),
        &[],
    )
    .await;
    assert!(ok, "{stderr}");
    let sent = requests[0].body["messages"][0].to_string();
    assert!(sent.contains("What's weather in Austin, Texas?"), "{sent}");
    assert!(!sent.contains("/mcp__ev__args-prompt"), "{sent}");

    let (_, stderr, requests, _) = cairn_p(
        servers.clone(),
        "/mcp__ev__args-prompt \"New York\" NY",
        json!([{"text": "rain"}]),
        &[],
    )
    .await;
    let sent = requests[0].body["messages"][0].to_string();
    assert!(
        sent.contains("What's weather in New York, NY?"),
        "{stderr}\n{sent}"
    );

    // A required argument missing: said, and nothing is sent.
    let (_, stderr, requests, _) = cairn_p(
        servers,
        "/mcp__ev__args-prompt state=Texas",
        json!([{"text": "never"}]),
        &[],
    )
    .await;
    assert!(requests.is_empty(), "{:?}", requests[0].body);
    assert!(
        stderr.contains("/mcp__ev__args-prompt needs the argument: city"),
        "{stderr}"
    );
}

/// A server whose tool `add` adds a tool `added` and says so with `list_changed`; it answers the
/// call only after the client has read the new list.
const CHANGING_SERVER: &str = r#"
const readline = require('readline');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const tools = [{name: 'add', description: 'Adds a tool.', inputSchema: {type: 'object'}}];
let pending = null;
readline.createInterface({input: process.stdin}).on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.method === 'initialize') {
    send({jsonrpc: '2.0', id: m.id, result: {protocolVersion: m.params.protocolVersion,
      capabilities: {tools: {listChanged: true}}, serverInfo: {name: 'changing', version: '1'}}});
  } else if (m.method === 'tools/list') {
    send({jsonrpc: '2.0', id: m.id, result: {tools}});
    if (pending !== null) {
      send({jsonrpc: '2.0', id: pending, result: {content: [{type: 'text', text: 'added one'}]}});
      pending = null;
    }
  } else if (m.method === 'tools/call' && m.params.name === 'add') {
    tools.push({name: 'added', description: 'New.', inputSchema: {type: 'object'}});
    pending = m.id;
    send({jsonrpc: '2.0', method: 'notifications/tools/list_changed'});
  } else if (m.method === 'tools/call' && m.params.name === 'added') {
    send({jsonrpc: '2.0', id: m.id, result: {content: [{type: 'text', text: 'the new tool ran'}]}});
  } else if (m.id !== undefined) {
    send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'no such method'}});
  }
});
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_change_reaches_the_model_in_the_same_session() {
    // Only node is needed; it comes with the reference servers.
    if servers_dir().is_none() {
        return;
    }
    let scripts = tempfile::tempdir().unwrap();
    let script = scripts.path().join("changing.js");
    std::fs::write(&script, CHANGING_SERVER).unwrap();
    let (ok, stderr, requests, _) = cairn_p(
        json!({"s": {"command": "node", "args": [script.display().to_string()]}}),
        "grow",
        json!([
            {"tool_calls": [{"id": "a1", "name": "mcp__s__add", "input": {}}]},
            {"tool_calls": [{"id": "a2", "name": "mcp__s__added", "input": {}}]},
            {"text": "done"},
        ]),
        &["--allowedTools", "mcp__s"],
    )
    .await;
    assert!(ok, "{stderr}");
    assert_eq!(requests.len(), 3, "{stderr}");
    assert!(!tools(&requests[0]).contains(&"mcp__s__added".to_string()));
    assert!(
        tools(&requests[1]).contains(&"mcp__s__added".to_string()),
        "{:?}",
        tools(&requests[1])
    );
    assert_eq!(tool_result(&requests[2], "a2"), "the new tool ran");
}

/// The host's list of servers, as the TUI gets it, carries what the `/` and `@` pickers offer:
/// each server's prompts as commands and its resources as `server:uri`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_lists_each_servers_prompts_and_resources_for_the_pickers() {
    use cairn::host::{ClientKind, Host, SessionSpec, TrustDecision};
    use cairn::protocol::{Event, HostEvent, HostOp, Op};
    let Some(dir) = servers_dir() else { return };
    let project = tempfile::tempdir().unwrap();
    let model = llm::scripted(&json!({"turns": [{"text": "hi"}]}));
    let mut spec = SessionSpec::new(project.path().to_path_buf(), ClientKind::Tui);
    spec.trust = TrustDecision::Trusted;
    // A real model (the scripted one), or the host would open its demo, which runs no servers.
    spec.model.base_url = Some(model.anthropic_base_url());
    spec.settings = Some(json!({"env": {"ANTHROPIC_API_KEY": "test-key"}}).to_string());
    spec.mcp.configs = vec![
        json!({"mcpServers": {"ev": {"command": "node", "args": [everything(&dir)]}}}).to_string(),
    ];
    spec.mcp.strict = true;
    let mut session = Host::new().open(spec).await.expect("the session opens");
    session.conn.ops.send(Op::Host(HostOp::McpServers)).unwrap();
    let wait = async {
        loop {
            match session.conn.events.recv().await {
                Some(Event::Host(HostEvent::McpServers { servers }))
                    if servers.iter().any(|s| !s.prompts.is_empty()) =>
                {
                    return servers;
                }
                Some(_) => {}
                None => panic!("the session ended"),
            }
        }
    };
    let servers = tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .expect("the server's prompts were never listed");
    let ev = servers.iter().find(|s| s.name == "ev").unwrap();
    let args = ev
        .prompts
        .iter()
        .find(|p| p.name == "mcp__ev__args-prompt")
        .unwrap_or_else(|| panic!("{:?}", ev.prompts));
    assert_eq!(args.argument_hint.as_deref(), Some("<city> <state>"));
    assert!(args.description.ends_with("(MCP)"), "{}", args.description);
    assert!(
        ev.resources.contains(&format!("ev:{FEATURES}")),
        "{:?}",
        ev.resources
    );
}

/// `notifications/resources/list_changed`: a resource the server registers mid-session (a
/// gzipped file as a session resource) joins the server's list without a reconnect, and the
/// resource tools offer it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_registered_mid_session_is_listed_after_list_changed() {
    let Some(dir) = servers_dir() else { return };
    let project = tempfile::tempdir().unwrap();
    let timeouts = cairn::mcp::Timeouts {
        startup: Duration::from_secs(20),
        call: Duration::from_secs(20),
    };
    let (manager, _late) = mcp_servers::start(
        project.path(),
        json!({"ev": {"command": "node", "args": [everything(&dir)]}}),
        timeouts,
    )
    .await;
    let server = manager.server("ev").unwrap();
    let uri = "demo://resource/session/hello.gz";
    assert!(!server.lists().resources.iter().any(|r| r.uri == uri));
    let args = json!({"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8=",
                      "outputType": "resourceLink"});
    server
        .call(
            "gzip-file-as-resource",
            args.as_object().unwrap().clone(),
            &tokio_util::sync::CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !server.lists().resources.iter().any(|r| r.uri == uri) {
        assert!(
            std::time::Instant::now() < deadline,
            "the new resource never joined the list"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    manager.shutdown().await;
}

/// `mcp-server-time` from PyPI (`.ci/run` installs it, pinned, into `target/mcp-py`), or None
/// after saying loudly why; under `CI` a missing server fails the test.
fn time_server() -> Option<std::path::PathBuf> {
    let candidates = [
        std::env::var_os("CARGO_TARGET_DIR").map(|t| std::path::PathBuf::from(t).join("mcp-py")),
        Some(std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mcp-py")),
    ];
    for dir in candidates.into_iter().flatten() {
        let bin = dir.join("bin/mcp-server-time");
        if bin.is_file() {
            return Some(bin);
        }
    }
    let msg = "mcp-server-time is not installed: `python3 -m venv target/mcp-py && \
               target/mcp-py/bin/pip install -r tests/mcp-py/requirements.txt` (as .ci/run does)";
    if std::env::var_os("CI").is_some() {
        panic!("{msg}");
    }
    eprintln!("\n!!!!!!!!!! SKIPPED: {msg} !!!!!!!!!!\n");
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_server_from_pypi_answers_the_model() {
    let Some(bin) = time_server() else { return };
    let (ok, stderr, requests, _) = cairn_p(
        json!({"time": {"command": bin, "args": ["--local-timezone", "UTC"]}}),
        "what time is it in Tokyo?",
        json!([
            {"tool_calls": [{"id": "t1", "name": "mcp__time__convert_time", "input": {
                "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}}]},
            {"text": "21:00 there."},
        ]),
        &["--allowedTools", "mcp__time"],
    )
    .await;
    assert!(ok, "{stderr}");
    assert_eq!(requests.len(), 2, "{stderr}");
    let offered = tools(&requests[0]);
    assert!(
        offered.iter().any(|t| t == "mcp__time__get_current_time"),
        "{offered:?}"
    );
    let answer: Value = serde_json::from_str(&tool_result(&requests[1], "t1")).unwrap();
    assert_eq!(answer["target"]["timezone"], "Asia/Tokyo");
    assert!(
        answer["target"]["datetime"]
            .as_str()
            .unwrap()
            .contains("T21:00:00+09:00"),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_on_a_server_covers_its_resources_and_mcp_star_hides_the_resource_tools() {
    let Some(dir) = servers_dir() else { return };
    let servers = json!({
        "ev": {"command": "node", "args": [everything(&dir)]},
        "ok": {"command": "node", "args": [everything(&dir)]}
    });
    let (ok, stderr, requests, _) = cairn_p(
        servers.clone(),
        "read",
        json!([
            {"tool_calls": [
                {"id": "l1", "name": "ListMcpResourcesTool", "input": {"server": "ev"}},
                {"id": "l2", "name": "ListMcpResourcesTool", "input": {}},
                {"id": "l3", "name": "ListMcpResourcesTool", "input": {"server": "ok"}},
                {"id": "r1", "name": "ReadMcpResourceTool", "input": {"server": "ev", "uri": FEATURES}},
                {"id": "r2", "name": "ReadMcpResourceTool", "input": {"server": "ok", "uri": FEATURES}},
            ]},
            {"text": "done"},
        ]),
        &["--disallowedTools", "mcp__ev"],
    )
    .await;
    assert!(ok, "{stderr}");
    // One server denied: the resource tools are still offered (for the other).
    let offered = tools(&requests[0]);
    assert!(
        offered.iter().any(|t| t == "ReadMcpResourceTool"),
        "{offered:?}"
    );
    let denied = "Permission to use ListMcpResourcesTool has been denied by the rule `mcp__ev`";
    for id in ["l1", "l2"] {
        let result = tool_result(&requests[1], id);
        assert!(result.starts_with(denied), "{id}: {result}");
    }
    let result = tool_result(&requests[1], "r1");
    assert!(
        result.starts_with(
            "Permission to use ReadMcpResourceTool has been denied by the rule `mcp__ev`"
        ),
        "{result}"
    );
    // The other server's resources are not covered.
    assert!(tool_result(&requests[1], "l3").contains(FEATURES));
    assert!(tool_result(&requests[1], "r2").contains("\"contents\""));

    // `mcp__*` covers every server: the resource tools are not offered at all.
    let (ok, stderr, requests, _) = cairn_p(
        servers,
        "read",
        json!([{"text": "done"}]),
        &["--disallowedTools", "mcp__*"],
    )
    .await;
    assert!(ok, "{stderr}");
    let offered = tools(&requests[0]);
    assert!(
        !offered
            .iter()
            .any(|t| t.contains("Mcp") || t.starts_with("mcp__")),
        "{offered:?}"
    );
}
