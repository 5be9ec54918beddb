//! What one request costs and what it waits for, with the real binary against the scripted
//! model on 127.0.0.1: the built-in tools' descriptions stay within a token budget, and MCP
//! servers that are still starting never hold up the first request (the system prompt names
//! them as connecting; ToolSearch waits for them and then answers).
//!
//! Tokens are estimated as characters / 4 (no tokenizer runs offline); BENCHMARKS.md uses the
//! same estimate.

use std::path::{Path, PathBuf};
use std::process::Output;

use cairn::llm::scripted::ScriptedServer;
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;
#[path = "support/trust.rs"]
mod trust;

/// The most the built-in tools of the first request may take, in estimated tokens.
const TOOLS_BUDGET: usize = 3000;

fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// A tool as the request carries it: name, description and schema.
fn tool_tokens(tool: &Value) -> usize {
    tokens(tool["name"].as_str().unwrap_or(""))
        + tokens(tool["description"].as_str().unwrap_or(""))
        + tokens(&tool["input_schema"].to_string())
}

fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/fake_server.py")
}

/// Run `cairn -p <prompt>` in a fresh trusted project pointed at `server` (Anthropic format),
/// with `args` before the prompt.
async fn cairn(server: &ScriptedServer, project: &Path, args: &[&str], prompt: &str) -> Output {
    cairn_env(server, project, args, prompt, &[]).await
}

/// As [`cairn`], with `env` set too.
async fn cairn_env(
    server: &ScriptedServer,
    project: &Path,
    args: &[&str],
    prompt: &str,
    env: &[(&str, &str)],
) -> Output {
    let home = tempfile::tempdir().unwrap();
    trust::trust_folder(home.path(), project);
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.current_dir(project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("CAIRN_DATA_DIR", home.path().join("data"))
        .env("ANTHROPIC_BASE_URL", server.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .envs(env.iter().copied())
        .args(args)
        .args(["-p", prompt])
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    tokio::time::timeout(std::time::Duration::from_secs(60), cmd.output())
        .await
        .expect("cairn did not finish")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_tools_fit_the_token_budget() {
    let server = llm::scripted(&json!({"turns": [{"text": "hello"}]}));
    let project = tempfile::tempdir().unwrap();
    let out = cairn(&server, project.path(), &[], "hi").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = &server.requests()[0].body;
    let tools = first["tools"].as_array().unwrap();
    let mut rows: Vec<(String, usize)> = tools
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), tool_tokens(t)))
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.1));
    let total: usize = rows.iter().map(|r| r.1).sum();
    // The table is the figure BENCHMARKS.md records (cargo test ... -- --nocapture).
    for (name, n) in &rows {
        println!("{name:<16} {n:>5}");
    }
    println!("{:<16} {total:>5}  ({} tools)", "total", rows.len());
    assert!(
        total <= TOOLS_BUDGET,
        "the built-in tools take {total} tokens, over the budget of {TOOLS_BUDGET}: {rows:?}"
    );
}

/// Input tokens of a whole session: the system prompt, tools and messages of every request.
fn session_tokens(server: &ScriptedServer) -> usize {
    server
        .requests()
        .iter()
        .map(|r| {
            tokens(&r.body["system"].to_string())
                + tokens(&r.body["tools"].to_string())
                + tokens(&r.body["messages"].to_string())
        })
        .sum()
}

fn read_edit_script() -> Value {
    serde_json::from_str(include_str!("../assets/bench/read-edit.json")).unwrap()
}

fn mcp_config(name: &str, args: &[&str]) -> String {
    let mut argv = vec![fake_server().display().to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    json!({"mcpServers": {name: {"command": "python3", "args": argv}}}).to_string()
}

fn system_of(server: &ScriptedServer, index: usize) -> String {
    server.requests()[index].body["system"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_mcp_tools_add_at_most_a_tenth_to_a_three_turn_session() {
    let run = |config: Option<String>| async move {
        let server = llm::scripted(&read_edit_script());
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("lib.py"), "def f():\n    return 1\n").unwrap();
        let mut args = vec!["--allowedTools", "Edit"];
        let config = config.unwrap_or_default();
        if !config.is_empty() {
            args.extend(["--mcp-config", config.as_str(), "--strict-mcp-config"]);
        }
        // Waiting for the server is the worst case: all 30 tools are known to the first
        // request (without the wait they join later, in a reminder).
        let out = cairn_env(
            &server,
            project.path(),
            &args,
            "make f return 2",
            &[("MCP_CONNECTION_NONBLOCKING", "0")],
        )
        .await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(server.requests().len(), 3);
        server
    };
    let plain = run(None).await;
    let with = run(Some(mcp_config("gh", &["--tools", "30"]))).await;
    // The 30 tools are named (in a reminder: they joined after the system prompt was made),
    // deferred, not offered whole.
    let first = with.requests()[0].body["messages"].to_string();
    assert!(
        first.contains("- mcp__gh__<name>: add_issue_comment, create_branch, create_issue,"),
        "{first}"
    );
    let offered = with.requests()[0].body["tools"].to_string();
    assert!(!offered.contains("mcp__gh__"), "{offered}");
    let (a, b) = (session_tokens(&plain), session_tokens(&with));
    println!(
        "3-turn session: {a} tokens; with 30 MCP tools: {b} (+{}%)",
        (b - a) * 100 / a
    );
    assert!(b * 10 <= a * 11, "{a} -> {b}: more than +10%");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_mcp_server_never_holds_up_a_prompt_that_does_not_need_it() {
    let server = llm::scripted(&json!({"turns": [{"text": "hello"}]}));
    let project = tempfile::tempdir().unwrap();
    let ready = project.path().join("server-ready");
    let ready_arg = ready.display().to_string();
    let config = mcp_config("slow", &["--delay", "20", "--ready-file", &ready_arg]);
    let out = cairn(&server, project.path(), &["--mcp-config", &config], "hi").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hello");
    // The first request went while the server was starting, and said so.
    let system = system_of(&server, 0);
    assert!(
        system.contains("# MCP servers still connecting\\nslow: ToolSearch waits for them"),
        "{system}"
    );
    // cairn finished without waiting out the server's 20 s start.
    assert!(!ready.exists(), "cairn waited for the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_search_waits_for_a_slow_server_and_its_tool_answers() {
    let server = llm::scripted(&json!({"turns": [
        {"tool_calls": [{"id": "s1", "name": "mcp__slow__echo", "input": {"message": "early"}}]},
        {"tool_calls": [{"id": "t1", "name": "ToolSearch",
            "input": {"query": "select:mcp__slow__echo"}}]},
        {"tool_calls": [{"id": "e1", "name": "mcp__slow__echo", "input": {"message": "hi"}}]},
        {"text": "done"},
    ]}));
    let project = tempfile::tempdir().unwrap();
    let config = mcp_config("slow", &["--delay", "2"]);
    let out = cairn(
        &server,
        project.path(),
        &["--mcp-config", &config, "--allowedTools", "mcp__slow__echo"],
        "echo hi",
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(system_of(&server, 0).contains("slow: ToolSearch waits for them"));
    // A direct call while the server starts is told how to get the tool.
    let early = requests[1].body["messages"].to_string();
    assert!(
        early.contains(
            "Error: mcp__slow__echo is not available yet (MCP servers still connecting: slow). \
             Call ToolSearch (query \\\"select:mcp__slow__echo\\\"), which waits for them."
        ),
        "{early}"
    );
    // ToolSearch waited for the server and loaded its tool, which then answered.
    let loaded = requests[2].body["messages"].to_string();
    assert!(
        loaded.contains("Loaded 1 tool: mcp__slow__echo."),
        "{loaded}"
    );
    let echoed = requests[3].body["messages"].to_string();
    assert!(echoed.contains(r#"echo {\"message\": \"hi\"}"#), "{echoed}");
}

/// The TUI's path (the same core, no `-p`): the session starts while the server is still
/// starting, the first request names it as connecting, and ToolSearch waits for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_session_the_first_request_goes_while_a_server_connects() {
    use cairn::mcp::{Approval, McpOptions, Sources, config, start_servers};
    let project = tempfile::tempdir().unwrap();
    let sources = Sources {
        project_dir: project.path().to_path_buf(),
        claude_json: None,
        cli: vec![mcp_config("slow", &["--delay", "2"])],
        strict: true,
    };
    let cfg = config::load(&sources, &Approval::default(), &|_| None);
    let late = cairn::tools::LateTools::default();
    let options = McpOptions::from_env(project.path().to_path_buf(), &|_| None);
    let manager = start_servers(cfg, options, late.clone());
    let mut setup = agent::Setup::in_dir(project.path(), cairn::llm::Provider::Anthropic);
    setup.late_tools = late;
    let script = json!({"turns": [
        {"tool_calls": [{"id": "t1", "name": "ToolSearch", "input": {"query": "select:mcp__slow__echo"}}]},
        {"text": "done"},
    ]});
    let mut session = agent::Agent::start(&script, setup);
    session.prompt("echo hi").await;
    let first = session.request_body(0)["system"].to_string();
    assert!(first.contains("slow: ToolSearch waits for them"), "{first}");
    let second = session.request_body(1)["messages"].to_string();
    assert!(
        second.contains("Loaded 1 tool: mcp__slow__echo."),
        "{second}"
    );
    manager.shutdown().await;
}
