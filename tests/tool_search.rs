//! Deferred tools and ToolSearch through the real agent core, against the scripted model over
//! both wire formats, with the real `@modelcontextprotocol/server-everything` over stdio as the
//! deferred MCP tools (skipped loudly when the servers are not installed, as in mcp_client.rs).
//!
//! What matters: a deferred tool cannot be called before it is loaded, `select:` and keywords
//! load it, the loaded tool then works, and loading never rewrites the prompt prefix of the
//! next request (measured on the request bodies the server got).

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;
#[path = "support/mcp_servers.rs"]
mod mcp_servers;

use std::time::Duration;

use agent::{Agent, Setup, finished, tool_results};
use cairn::agent::deferral::{ToolSearchConfig, ToolSearchMode};
use cairn::llm::Provider;
use cairn::mcp::{McpManager, Timeouts};
use cairn::protocol::TurnEnd;
use cairn::tools::LateTools;
use serde_json::{Value, json};

const ECHO: &str = "mcp__ev__echo";

/// server-everything over stdio as server `ev`, connected, its tools in the returned list.
async fn everything(project: &std::path::Path) -> Option<(McpManager, LateTools)> {
    connected(project, false).await
}

/// server-everything as `ev` and, with `filesystem`, server-filesystem (on `project`) as `fs`.
async fn connected(project: &std::path::Path, filesystem: bool) -> Option<(McpManager, LateTools)> {
    let dir = mcp_servers::servers_dir()?;
    let script = dir.join("server-everything/dist/index.js");
    let mut servers = json!({"ev": {"command": "node", "args": [script, "stdio"]}});
    if filesystem {
        let fs = dir.join("server-filesystem/dist/index.js");
        servers["fs"] = json!({"command": "node", "args": [fs, project]});
    }
    let timeouts = Timeouts {
        startup: Duration::from_secs(20),
        call: Duration::from_secs(20),
    };
    let (manager, late) = mcp_servers::start(project, servers, timeouts).await;
    assert!(late.snapshot().1.iter().any(|t| t.name() == ECHO));
    Some((manager, late))
}

fn setup(dir: &std::path::Path, provider: Provider, late: LateTools, refs: bool) -> Setup {
    let mut s = Setup::in_dir(dir, provider);
    s.late_tools = late;
    s.tool_search = ToolSearchConfig {
        mode: ToolSearchMode::Always,
        references: Some(refs),
    };
    s
}

/// The tool names of a request, in order, whatever the wire format.
fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().or(t["function"]["name"].as_str()))
        .map(str::to_string)
        .collect()
}

fn strip_cache_control(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("cache_control");
            o.values_mut().for_each(strip_cache_control);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_cache_control),
        _ => {}
    }
}

/// The prompt of a request as the server caches it: tools, then system, then each message,
/// one JSON text per part (cache breakpoints left out: they move by design).
fn prompt_parts(body: &Value) -> Vec<String> {
    let mut body = body.clone();
    strip_cache_control(&mut body);
    let mut parts: Vec<String> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(Value::to_string)
        .collect();
    parts.push(body["system"].to_string());
    parts.extend(
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(Value::to_string),
    );
    parts
}

/// How many leading parts two prompts share.
fn shared_prefix(a: &[String], b: &[String]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Call echo before loading it, load it with `query`, call it, finish.
fn script(query: &str) -> Value {
    json!({"turns": [
        {"tool_calls": [{"id": "early", "name": ECHO, "input": {"message": "too soon"}}]},
        {"tool_calls": [{"id": "search", "name": "ToolSearch", "input": {"query": query}}]},
        {"tool_calls": [{"id": "late", "name": ECHO, "input": {"message": "hello"}}]},
        {"text": "Done."}]})
}

fn assert_refused_then_echoed(agent: &Agent) {
    let refused = &tool_results(&agent.request_body(1))[0];
    // (Chat completions have no error flag: the text says so.)
    assert!(refused.1 || refused.0.starts_with("Error: "), "{refused:?}");
    assert!(
        refused.0.contains(&format!(
            "{ECHO} is a deferred tool and its schema is not loaded yet"
        )) && refused
            .0
            .contains(&format!("ToolSearch (query \"select:{ECHO}\")")),
        "{refused:?}"
    );
    let echoed = &tool_results(&agent.request_body(3))[2];
    assert!(!echoed.1 && echoed.0.contains("Echo: hello"), "{echoed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_defers_with_defer_loading_and_loads_by_reference_keeping_the_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_manager, late)) = everything(dir.path()).await else {
        return;
    };
    let mut agent = Agent::start(
        &script(&format!("select:{ECHO}")),
        setup(dir.path(), Provider::Anthropic, late, true),
    );
    let events = agent.prompt("echo something").await;
    assert_eq!(finished(&events).0, TurnEnd::Completed);
    assert_refused_then_echoed(&agent);

    let requests = agent.server.requests();
    let first = &requests[0].body;
    // Every tool travels; the MCP tools with defer_loading, under the beta.
    let echo = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == ECHO)
        .unwrap();
    assert_eq!(echo["defer_loading"], json!(true));
    assert_eq!(
        requests[0].header("anthropic-beta"),
        Some("advanced-tool-use-2025-11-20")
    );
    // The system prompt names the deferred tools (by name alone: there are more than eight).
    let system = first["system"][0]["text"].as_str().unwrap();
    assert!(
        system.contains("\n- mcp__ev__<name>: echo, get-annotated-message, "),
        "{system}"
    );
    // ToolSearch's result is the reference alone.
    let search = requests[2].body["messages"][4]["content"][0].clone();
    assert_eq!(search["tool_use_id"], "search");
    assert_eq!(
        search["content"],
        json!([{"type": "tool_reference", "tool_name": ECHO}])
    );
    // Loading rewrote nothing: each request's whole prompt is the next one's prefix.
    for pair in requests.windows(2) {
        let (a, b) = (prompt_parts(&pair[0].body), prompt_parts(&pair[1].body));
        assert_eq!(shared_prefix(&a, &b), a.len(), "{a:?}\n{b:?}");
        assert_eq!(pair[0].body["tools"], pair[1].body["tools"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_appends_loaded_tools_at_the_end_and_a_resumed_session_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_manager, late)) = everything(dir.path()).await else {
        return;
    };
    let mut agent = Agent::start(
        &script("echo back"),
        setup(dir.path(), Provider::OpenAi, late.clone(), false),
    );
    let events = agent.prompt("echo something").await;
    assert_eq!(finished(&events).0, TurnEnd::Completed);
    assert_refused_then_echoed(&agent);

    let requests = agent.server.requests();
    let before = tool_names(&requests[1].body);
    assert!(!before.iter().any(|n| n.starts_with("mcp__")), "{before:?}");
    assert!(before.iter().any(|n| n == "ToolSearch"));
    // The keyword query loaded echo: appended after the tools there were.
    let after = tool_names(&requests[2].body);
    assert_eq!(after[..before.len()], before[..]);
    assert!(
        after[before.len()..].contains(&ECHO.to_string()),
        "{after:?}"
    );
    // The result lists the schema as text (no references on this wire).
    let search = &tool_results(&requests[2].body)[1].0;
    assert!(
        search.contains(&format!("<function>{{\"name\":\"{ECHO}\"")),
        "{search}"
    );
    // Prefix: the old tool list and every earlier message are kept.
    let (a, b) = (
        prompt_parts(&requests[1].body),
        prompt_parts(&requests[2].body),
    );
    assert!(shared_prefix(&a, &b) >= before.len());
    let messages = |body: &Value| body["messages"].as_array().unwrap().clone();
    let (m1, m2) = (messages(&requests[1].body), messages(&requests[2].body));
    assert_eq!(m2[..m1.len()], m1[..]);

    // Resume: the loaded tool is in the transcript's state and sent again.
    drop(agent);
    let resumed = cairn::session::resume::load(&dir.path().join(".data/t.jsonl")).unwrap();
    assert!(resumed.loaded_tools.iter().any(|n| n == ECHO));
    let mut s = setup(dir.path(), Provider::OpenAi, late, false);
    s.resume = Some(resumed);
    let mut again = Agent::start(&json!({"turns": [{"text": "ok"}]}), s);
    again.prompt("more").await;
    let names = tool_names(&again.request_body(0));
    assert!(names.contains(&ECHO.to_string()), "{names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_without_references_appends_schemas_and_a_refusing_endpoint_switches_to_it() {
    let dir = tempfile::tempdir().unwrap();
    // No MCP needed: EnterPlanMode is a deferred built-in. The endpoint refuses defer_loading
    // once; the session then sends loaded tools whole.
    let refusal = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "tools.3.defer_loading: Extra inputs are not permitted"}});
    let script = json!({"turns": [
        {"faults": [{"status": 400, "body": refusal}],
         "tool_calls": [{"id": "s", "name": "ToolSearch",
                         "input": {"query": "plan mode", "max_results": 1}}]},
        {"text": "Loaded."}]});
    let mut s = Setup::in_dir(dir.path(), Provider::Anthropic);
    s.tool_search.references = Some(true);
    let mut agent = Agent::start(&script, s);
    let events = agent.prompt("plan it").await;
    assert_eq!(finished(&events).0, TurnEnd::Completed, "{events:?}");
    // ToolSearch only reads: nobody is asked.
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, cairn::protocol::Event::PermissionRequest(_)))
    );
    let requests = agent.server.requests();
    assert_eq!(
        requests.len(),
        3,
        "refused, retried whole, after the search"
    );
    assert!(requests[0].body.to_string().contains("defer_loading"));
    assert!(!requests[1].body.to_string().contains("defer_loading"));
    assert_eq!(requests[1].header("anthropic-beta"), None);
    assert!(!tool_names(&requests[1].body).contains(&"EnterPlanMode".to_string()));
    // The keyword search loaded the best match, appended at the end with its schema as text.
    let names = tool_names(&requests[2].body);
    assert_eq!(names.last().map(String::as_str), Some("EnterPlanMode"));
    let result = &tool_results(&requests[2].body)[0].0;
    assert!(
        result.starts_with("Loaded 1 tool: EnterPlanMode."),
        "{result}"
    );
    assert!(!result.contains("tool_reference"), "{result}");
}

/// Estimated input tokens of a request as the model reads it (about four bytes a token of its
/// JSON): system, messages, and the tools it sees in full (`defer_loading` ones are not loaded
/// into the context).
fn counted_tokens(body: &Value) -> usize {
    let tools: usize = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["defer_loading"] != json!(true))
        .map(|t| t.to_string().len())
        .sum();
    let rest = body["system"].to_string().len() + body["messages"].to_string().len();
    (tools + rest).div_ceil(4)
}

/// The first request of a one-turn session with `late` tools and `mode`.
async fn first_request(
    dir: &std::path::Path,
    provider: Provider,
    late: LateTools,
    mode: ToolSearchMode,
    refs: bool,
) -> Value {
    let mut s = Setup::in_dir(dir, provider);
    s.late_tools = late;
    s.tool_search = ToolSearchConfig {
        mode,
        references: Some(refs),
    };
    let mut agent = Agent::start(&json!({"turns": [{"text": "Done."}]}), s);
    let events = agent.prompt("hi").await;
    assert_eq!(finished(&events).0, TurnEnd::Completed);
    agent.request_body(0)
}

/// Issue 11's figure: with the tools of server-everything and server-filesystem deferred, the first request costs within
/// 10% of a session without MCP, on both wire formats. The figures are printed for
/// BENCHMARKS.md (`cargo test --test tool_search first_request -- --nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_request_with_deferred_mcp_tools_costs_within_ten_percent_of_none() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_manager, late)) = connected(dir.path(), true).await else {
        return;
    };
    let count = late
        .snapshot()
        .1
        .iter()
        .filter(|t| t.name().starts_with("mcp__"))
        .count();
    for (provider, refs) in [(Provider::Anthropic, true), (Provider::OpenAi, false)] {
        let none = counted_tokens(
            &first_request(
                dir.path(),
                provider,
                LateTools::default(),
                ToolSearchMode::Always,
                refs,
            )
            .await,
        );
        let deferred = counted_tokens(
            &first_request(
                dir.path(),
                provider,
                late.clone(),
                ToolSearchMode::Always,
                refs,
            )
            .await,
        );
        let loaded = counted_tokens(
            &first_request(
                dir.path(),
                provider,
                late.clone(),
                ToolSearchMode::Never,
                refs,
            )
            .await,
        );
        eprintln!(
            "{provider:?}: first request ~{none} tokens without MCP, ~{deferred} with {count} \
             deferred MCP tools ({:+.1}%), ~{loaded} with them all loaded ({:+.1}%)",
            (deferred as f64 / none as f64 - 1.0) * 100.0,
            (loaded as f64 / none as f64 - 1.0) * 100.0,
        );
        assert!(
            deferred * 100 <= none * 110,
            "{provider:?}: {deferred} tokens against {none} without MCP"
        );
        assert!(loaded > deferred, "loading every schema should cost more");
    }
}
