//! The fields of a custom agent's file that shape its run, end to end through the real core
//! and the scripted model server: `effort` (extended thinking on Anthropic, `reasoning_effort`
//! on OpenAI-compatible servers), and a wrong shape named with its file and line, never
//! widening what the agent may do.

use cairn::llm::Provider;
use serde_json::{Value, json};
use std::sync::Arc;

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;
#[path = "support/probe.rs"]
mod probe;

use agent::{Agent, Setup, finished};

/// Writes `.claude/agents/<name>.md` with `front` after its name and description, and a body
/// `<NAME>-ROLE`.
fn write_agent(dir: &std::path::Path, name: &str, front: &str) {
    let agents = dir.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join(format!("{name}.md")),
        format!(
            "---\nname: {name}\ndescription: the {name} agent\n{front}---\n{}-ROLE\n",
            name.to_uppercase()
        ),
    )
    .unwrap();
}

fn agent_call(id: &str, agent: &str, prompt: &str) -> Value {
    json!({"id": id, "name": "Agent", "input": {
        "description": format!("ask {agent}"), "prompt": prompt, "subagent_type": agent}})
}

/// The body of the first request whose system prompt contains `role`.
fn first_body(agent: &Agent, role: &str) -> Value {
    agent
        .server
        .requests()
        .iter()
        .find(|r| r.body.to_string().contains(role))
        .map(|r| r.body.clone())
        .unwrap_or_else(|| panic!("no request for {role}"))
}

/// Runs the main conversation, which calls each of `agents` once; each answers "ok".
async fn run_agents(dir: &std::path::Path, provider: Provider, agents: &[&str]) -> Agent {
    run_with(dir, provider, agents, |_| {}).await
}

/// As [`run_agents`], with `tune` changing the session's setup first.
async fn run_with(
    dir: &std::path::Path,
    provider: Provider,
    agents: &[&str],
    tune: impl FnOnce(&mut Setup),
) -> Agent {
    let found = cairn::commands::agents::discover(dir, None);
    let calls: Vec<Value> = agents
        .iter()
        .enumerate()
        .map(|(i, a)| agent_call(&format!("c{i}"), a, "go"))
        .collect();
    let script = json!({
        "turns": [{"tool_calls": calls}, {"text": "done"}],
        "by_system": agents.iter().map(|a| json!({
            "system_contains": format!("{}-ROLE", a.to_uppercase()),
            "turns": [{"text": "ok"}]
        })).collect::<Vec<_>>()
    });
    let mut setup = Setup::in_dir(dir, provider);
    setup.agents = found.items;
    setup.max_tokens = 16_384;
    tune(&mut setup);
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("ask them").await;
    assert_eq!(finished(&events).1, "done");
    agent
}

#[tokio::test]
async fn effort_gives_anthropic_requests_a_thinking_budget_below_max_tokens() {
    let tmp = tempfile::tempdir().unwrap();
    write_agent(tmp.path(), "deep", "effort: high\n");
    write_agent(tmp.path(), "quick", "effort: low\n");
    write_agent(tmp.path(), "plain", "");
    let agent = run_agents(tmp.path(), Provider::Anthropic, &["deep", "quick", "plain"]).await;
    let deep = first_body(&agent, "DEEP-ROLE");
    let max = deep["max_tokens"].as_u64().unwrap();
    assert_eq!(
        deep["thinking"],
        json!({"type": "enabled", "budget_tokens": 12_288})
    );
    assert!(12_288 < max, "{max}");
    assert_eq!(
        first_body(&agent, "QUICK-ROLE")["thinking"],
        json!({"type": "enabled", "budget_tokens": 4_000})
    );
    assert!(first_body(&agent, "PLAIN-ROLE").get("thinking").is_none());
    // The session's own requests keep theirs.
    assert!(agent.request_body(0).get("thinking").is_none());
}

#[tokio::test]
async fn effort_sets_reasoning_effort_on_openai_compatible_requests() {
    let tmp = tempfile::tempdir().unwrap();
    write_agent(tmp.path(), "deep", "effort: max\n");
    write_agent(tmp.path(), "quick", "effort: medium\n");
    write_agent(tmp.path(), "plain", "");
    let agent = run_agents(tmp.path(), Provider::OpenAi, &["deep", "quick", "plain"]).await;
    assert_eq!(first_body(&agent, "DEEP-ROLE")["reasoning_effort"], "high");
    assert_eq!(
        first_body(&agent, "QUICK-ROLE")["reasoning_effort"],
        "medium"
    );
    assert!(
        first_body(&agent, "PLAIN-ROLE")
            .get("reasoning_effort")
            .is_none()
    );
    assert!(agent.request_body(0).get("reasoning_effort").is_none());
}

#[test]
fn a_wrong_effort_is_named_with_its_line_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    write_agent(tmp.path(), "odd", "tools: [Read]\neffort: extreme\n");
    write_agent(tmp.path(), "list", "effort: [high]\n");
    let found = cairn::commands::agents::discover(tmp.path(), None);
    assert_eq!(found.items.len(), 2, "{:?}", found.problems);
    assert!(found.items.iter().all(|a| a.effort.is_none()));
    let odd = found
        .problems
        .iter()
        .find(|p| p.contains("odd.md"))
        .unwrap();
    assert!(
        odd.ends_with(
            "odd.md:5: `effort` should be low, medium, high, xhigh or max, not text; the agent \
             reasons as the session's requests do"
        ),
        "{odd}"
    );
    let list = found
        .problems
        .iter()
        .find(|p| p.contains("list.md"))
        .unwrap();
    assert!(
        list.contains("list.md:4: `effort` should be text, not a list"),
        "{list}"
    );
}

#[test]
fn a_thinking_budget_always_leaves_room_for_the_answer() {
    use cairn::llm::Effort;
    assert_eq!(Effort::Max.thinking_budget(2_000), Some(1_500));
    // Under the API's minimum budget: no thinking at all rather than a refused request.
    assert_eq!(Effort::High.thinking_budget(1_024), None);
    assert_eq!(Effort::Max.thinking_budget(64_000), Some(31_999));
}

/// The names of the tools a request offered.
fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// Two MCP servers of the session, `github` and `db`, with a tool each.
fn two_servers() -> cairn::tools::LateTools {
    let late = cairn::tools::LateTools::default();
    for (server, tool) in [("github", "mcp__github__issues"), ("db", "mcp__db__query")] {
        let probe: cairn::tools::ToolHandle = Arc::new(probe::Probe::named(tool, true));
        late.replace(server, vec![probe]);
    }
    late
}

#[tokio::test]
async fn mcp_servers_named_by_an_agent_give_it_their_tools_beside_its_list() {
    let tmp = tempfile::tempdir().unwrap();
    write_agent(
        tmp.path(),
        "lister",
        "tools: [Read]\nmcpServers:\n  - github\n",
    );
    write_agent(
        tmp.path(),
        "denied",
        "tools: Read\nmcpServers: [github]\ndisallowedTools: mcp__github__issues\n",
    );
    write_agent(
        tmp.path(),
        "odd",
        "tools: [Read]\nmcpServers:\n  github: {}\n",
    );
    write_agent(tmp.path(), "plain", "tools: [Read]\n");
    write_agent(tmp.path(), "every", "");
    let found = cairn::commands::agents::discover(tmp.path(), None);
    let odd = found
        .problems
        .iter()
        .find(|p| p.contains("odd.md"))
        .unwrap();
    assert!(
        odd.ends_with(
            "odd.md:6: `mcpServers` should be a list of server names or definitions, not a \
             mapping; the agent gets no servers of its own"
        ),
        "{odd}"
    );
    let agents = ["lister", "denied", "odd", "plain", "every"];
    let agent = run_with(tmp.path(), Provider::Anthropic, &agents, |s| {
        s.late_tools = two_servers();
        // Offered whole (not deferred behind ToolSearch), so the request names them.
        s.tool_search.mode = cairn::agent::deferral::ToolSearchMode::Never;
    })
    .await;
    let offered = |role: &str| tool_names(&first_body(&agent, role));
    assert_eq!(offered("LISTER-ROLE"), ["Read", "mcp__github__issues"]);
    assert_eq!(offered("DENIED-ROLE"), ["Read"]);
    assert_eq!(offered("ODD-ROLE"), ["Read"]);
    assert_eq!(offered("PLAIN-ROLE"), ["Read"]);
    // Without a `tools` list it has every tool, both servers' too.
    let every = offered("EVERY-ROLE");
    assert!(
        every.contains(&"mcp__github__issues".to_string()),
        "{every:?}"
    );
    assert!(every.contains(&"mcp__db__query".to_string()), "{every:?}");
}

#[test]
fn an_mcp_servers_entry_of_another_shape_is_skipped_with_a_notice() {
    let tmp = tempfile::tempdir().unwrap();
    write_agent(
        tmp.path(),
        "mixed",
        "mcpServers:\n  - github\n  - 42\n  - local:\n      command: echo\n",
    );
    let found = cairn::commands::agents::discover(tmp.path(), None);
    let servers = &found.items[0].mcp_servers;
    assert_eq!(servers.len(), 2, "{servers:?}");
    assert_eq!(servers[0].name(), "github");
    assert_eq!(servers[1].name(), "local");
    assert!(
        found.problems.iter().any(|p| p.ends_with(
            "mixed.md:5: `mcpServers` entry 2 should be a server name or `name: {definition}`; \
             that entry is ignored"
        )),
        "{:?}",
        found.problems
    );
}

/// An agent whose file has hooks: `PreToolUse` and `PostToolUse` for its Glob calls and
/// `Stop`, each appending its payload to `log`.
fn hooked_agent(dir: &std::path::Path, log: &std::path::Path) {
    let cmd = format!("cat >> '{}'; echo >> '{}'", log.display(), log.display());
    write_agent(
        dir,
        "hooked",
        &format!(
            "tools: [Glob]\nhooks:\n  PreToolUse:\n    - matcher: Glob\n      hooks:\n        \
             - type: command\n          command: \"{cmd}\"\n  PostToolUse:\n    - matcher: \
             Glob\n      hooks:\n        - type: command\n          command: \"{cmd}\"\n  \
             Stop:\n    - hooks:\n        - type: command\n          command: \"{cmd}\"\n"
        ),
    );
}

fn fired(log: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn an_agents_hooks_run_for_its_own_calls_and_its_stop_as_subagent_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("hooks.log");
    hooked_agent(tmp.path(), &log);
    let found = cairn::commands::agents::discover(tmp.path(), None);
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    let glob = |id: &str| json!({"id": id, "name": "Glob", "input": {"pattern": "*.md"}});
    let script = json!({
        "turns": [
            {"tool_calls": [glob("main-g")]},
            {"tool_calls": [agent_call("c1", "hooked", "look")]},
            {"text": "done"}
        ],
        "by_system": [{"system_contains": "HOOKED-ROLE", "turns": [
            {"tool_calls": [glob("sub-g")]}, {"text": "looked"}
        ]}]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = found.items;
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("go").await;
    assert_eq!(finished(&events).1, "done");
    let fired = fired(&log);
    let seen: Vec<(String, String)> = fired
        .iter()
        .map(|f| {
            (
                f["hook_event_name"].as_str().unwrap().to_string(),
                f["tool_use_id"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    // The agent's Glob only (not the session's), then its end as SubagentStop.
    assert_eq!(
        seen,
        [
            ("PreToolUse".to_string(), "sub-g".to_string()),
            ("PostToolUse".into(), "sub-g".into()),
            ("SubagentStop".into(), "-".into()),
        ]
    );
}

#[test]
fn an_untrusted_projects_agent_loses_its_hooks_and_a_user_agent_keeps_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (proj, home) = (tmp.path().join("proj"), tmp.path().join("home"));
    hooked_agent(&proj, &tmp.path().join("p.log"));
    let user = home.join(".claude/agents");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("mine.md"),
        "---\ndescription: mine\nhooks:\n  Stop:\n    - hooks:\n        - command: 'true'\n---\nMINE\n",
    )
    .unwrap();
    let mut found = cairn::commands::agents::discover(&proj, Some(&home));
    assert!(found.items.iter().all(|a| a.hooks.is_some()));
    let notices = cairn::agent::subagent_scope::without_untrusted_hooks(&mut found.items, &proj);
    let hooked = found.items.iter().find(|a| a.name == "hooked").unwrap();
    let mine = found.items.iter().find(|a| a.name == "mine").unwrap();
    assert!(hooked.hooks.is_none());
    assert!(mine.hooks.is_some());
    assert_eq!(notices.len(), 1);
    assert!(
        notices[0].ends_with(
            "hooked.md: the hooked agent's `hooks` do not run until you trust this folder"
        ),
        "{notices:?}"
    );
}

#[tokio::test]
async fn hooks_of_the_wrong_shape_skip_the_agent_or_refuse_its_run() {
    let tmp = tempfile::tempdir().unwrap();
    write_agent(tmp.path(), "listed", "hooks: [PreToolUse]\n");
    write_agent(
        tmp.path(),
        "guard",
        "tools: [Glob]\nhooks:\n  PreToolUse: 5\n",
    );
    let found = cairn::commands::agents::discover(tmp.path(), None);
    let listed = found
        .problems
        .iter()
        .find(|p| p.contains("listed.md"))
        .unwrap();
    assert!(
        listed.ends_with(
            "listed.md:4: `hooks` should be a mapping of hook events, not a list; agent \
             skipped (its hooks may guard its calls)"
        ),
        "{listed}"
    );
    assert_eq!(found.items.len(), 1);
    // A PreToolUse entry that is not a list may have lost a guard: the agent does not run.
    let script = json!({
        "turns": [{"tool_calls": [agent_call("c1", "guard", "go")]}, {"text": "done"}],
        "by_system": [{"system_contains": "GUARD-ROLE", "turns": [{"text": "ran"}]}]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = found.items;
    let mut agent = Agent::start(&script, setup);
    agent.prompt("go").await;
    assert!(
        !agent
            .server
            .requests()
            .iter()
            .any(|r| r.body.to_string().contains("GUARD-ROLE"))
    );
    let last = agent.request_body(agent.server.requests().len() - 1);
    let result = agent::tool_results(&last);
    assert!(result[0].1, "{result:?}");
    assert!(
        result[0].0.contains(
            "the guard agent's hooks cannot all be read, and one may guard its calls, so it \
             does not run: "
        ) && result[0]
            .0
            .contains("guard.md:6: `hooks.PreToolUse` must be a list; ignored"),
        "{result:?}"
    );
}

#[tokio::test]
async fn an_agents_memory_is_in_its_prompt_and_only_its_directory_is_writable_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    write_agent(tmp.path(), "keeper", "tools: [Glob]\nmemory: project\n");
    let dir = tmp.path().join(".claude/agent-memory/keeper");
    std::fs::create_dir_all(&dir).unwrap();
    let mut long = String::from("REMEMBERED-FACT\n");
    for n in 2..=250 {
        long.push_str(&format!("line {n}\n"));
    }
    std::fs::write(dir.join("MEMORY.md"), long).unwrap();
    let found = cairn::commands::agents::discover(tmp.path(), None);
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    let write = |id: &str, path: std::path::PathBuf| json!({"id": id, "name": "Write", "input": {"file_path": path, "content": "learned\n"}});
    let script = json!({
        "turns": [{"tool_calls": [agent_call("c1", "keeper", "work")]}, {"text": "done"}],
        "by_system": [{"system_contains": "KEEPER-ROLE", "turns": [
            {"tool_calls": [write("w1", dir.join("notes.md")),
                            write("w2", tmp.path().join("outside.txt"))]},
            {"text": "saved"}
        ]}]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = found.items;
    let mut agent = Agent::start(&script, setup);
    agent.submit("go");
    let events = agent
        .run_turn_answering(|_| cairn::protocol::Decision::AllowOnce)
        .await;
    assert_eq!(finished(&events).1, "done");
    let first = first_body(&agent, "KEEPER-ROLE");
    let system = first["system"].to_string();
    assert!(system.contains("REMEMBERED-FACT"), "{system}");
    assert!(system.contains(&dir.display().to_string()), "{system}");
    assert!(system.contains("line 200") && !system.contains("line 201"));
    assert_eq!(tool_names(&first), ["Glob", "Edit", "Read", "Write"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.md")).unwrap(),
        "learned\n"
    );
    assert!(!tmp.path().join("outside.txt").exists());
    let second = agent
        .server
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("KEEPER-ROLE"))
        .nth(1)
        .map(|r| r.body.clone())
        .unwrap();
    let results = agent::tool_results(&second);
    assert!(!results[0].1, "{results:?}");
    assert!(
        results[1].1
            && results[1]
                .0
                .contains("may use Write only inside its memory directory"),
        "{results:?}"
    );
}

#[test]
fn a_wrong_memory_scope_gives_no_memory_and_a_notice() {
    let tmp = tempfile::tempdir().unwrap();
    write_agent(tmp.path(), "team", "memory: team\n");
    let found = cairn::commands::agents::discover(tmp.path(), None);
    assert_eq!(found.items[0].memory, None);
    assert!(
        found.problems[0].ends_with(
            "team.md:4: `memory` should be user, project or local, not text; the agent has no \
             memory directory"
        ),
        "{:?}",
        found.problems
    );
}
