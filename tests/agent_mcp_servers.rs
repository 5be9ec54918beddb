//! An agent's own MCP servers (`mcpServers` entries that define one), with the reference
//! server `@modelcontextprotocol/server-everything` over stdio, through the real core and the
//! scripted model server: started for the agent's run only (its requests list their tools,
//! the session's do not), a call reaching the server through the gate (allowed by a rule, else
//! asked), `disallowedTools` taking its tools away, the server gone when the run ends (in the
//! foreground and in the background), a server that does not start said and the agent running
//! without it, a session server of the same name hidden from it; and, through the `cairn`
//! binary, a project agent's server not started in a folder that is not trusted (and started
//! once it is).

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;
#[path = "support/mcp_servers.rs"]
mod mcp_servers;
#[path = "support/probe.rs"]
mod probe;
#[path = "support/trust.rs"]
mod trust;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent::{Agent, Setup, finished};
use cairn::config::LoadedSettings;
use cairn::llm::Provider;
use cairn::protocol::{Event, TaskStatus};
use serde_json::{Value, json};

fn everything(dir: &Path) -> String {
    dir.join("server-everything/dist/index.js")
        .display()
        .to_string()
}

/// An agent file `<dir>/<name>.md` with a `tools` list and `servers` as its `mcpServers`
/// (JSON is YAML), its role `<NAME>-ROLE`, and `extra` frontmatter.
fn write_agent(dir: &Path, name: &str, servers: Value, extra: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join(format!("{name}.md")),
        format!(
            "---\nname: {name}\ndescription: the {name} agent\ntools: [Read]\nmcpServers: \
             {servers}\n{extra}---\n{}-ROLE\n",
            name.to_uppercase()
        ),
    )
    .unwrap();
}

/// server-everything over stdio, writing its process id to `pid` first (`exec` keeps it).
fn everything_writing_pid(servers: &Path, pid: &Path) -> Value {
    json!({"command": "sh", "args": ["-c",
        format!("echo $$ > '{}'; exec node '{}' stdio", pid.display(), everything(servers))]})
}

fn agent_call(id: &str, agent: &str) -> Value {
    json!({"id": id, "name": "Agent", "input": {
        "description": format!("ask {agent}"), "prompt": "go", "subagent_type": agent}})
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// The bodies of the requests whose system prompt does (`true`) or does not contain `role`.
fn bodies(agent: &Agent, role: &str, with: bool) -> Vec<Value> {
    agent
        .server
        .requests()
        .iter()
        .filter(|r| r.body["system"].to_string().contains(role) == with)
        .map(|r| r.body.clone())
        .collect()
}

/// A session in `dir` whose agents are those of `agents_dir` (the user's), whose MCP logs go
/// to `dir/logs`, allowing `mcp__own__echo` by rule, with tools offered whole.
fn setup(dir: &Path, home: &Path) -> Setup {
    let found = cairn::commands::agents::discover(dir, Some(home));
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    let mut setup = Setup::in_dir(dir, Provider::Anthropic);
    setup.agents = found.items;
    let settings = LoadedSettings {
        project_root: dir.to_path_buf(),
        project_dir: dir.to_path_buf(),
        ..LoadedSettings::default()
    };
    setup.gate = agent::gate_allowing(dir, &settings, vec!["mcp__own__echo".into()]);
    setup.tool_search.mode = cairn::agent::deferral::ToolSearchMode::Never;
    let mut options = cairn::mcp::McpOptions::from_env(dir.to_path_buf(), &|_| None);
    options.log_dir = Some(dir.join("logs"));
    setup.agent_servers = Some(Arc::new(cairn::mcp::run_servers::RunServerStarter::new(
        options,
    )));
    setup
}

/// Whether process `pid` has ended (gone, or a zombie no one has reaped yet).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// The process id in `file`, once the server has written it.
fn pid_in(file: &Path) -> u32 {
    std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .parse()
        .unwrap()
}

/// Wait (at most 10 s) until `pid` has ended.
async fn wait_ended(pid: u32) {
    for _ in 0..200 {
        if ended(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the agent's server (pid {pid}) still runs after its run ended");
}

fn user_agents(home: &Path) -> PathBuf {
    home.join(".claude/agents")
}

#[tokio::test]
async fn a_user_agents_own_server_serves_its_run_only_and_stops_when_the_run_ends() {
    let Some(servers) = mcp_servers::servers_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("proj"), tmp.path().join("home"));
    std::fs::create_dir_all(&dir).unwrap();
    let pid = tmp.path().join("own.pid");
    write_agent(
        &user_agents(&home),
        "helper",
        json!([{"own": everything_writing_pid(&servers, &pid)}]),
        "",
    );
    let echo = json!({"id": "e1", "name": "mcp__own__echo", "input": {"message": "hi-from-agent"}});
    let script = json!({
        "turns": [{"tool_calls": [agent_call("c1", "helper")]}, {"text": "done"}],
        "by_system": [{"system_contains": "HELPER-ROLE", "turns": [
            {"tool_calls": [echo]}, {"text": "echoed"}
        ]}]
    });
    let mut agent = Agent::start(&script, setup(&dir, &home));
    agent.submit("go");
    // The rule allows the call: no one is asked.
    let events = agent
        .run_turn_answering(|r| panic!("asked about {}", r.title))
        .await;
    assert_eq!(finished(&events).1, "done");
    let own = bodies(&agent, "HELPER-ROLE", true);
    assert_eq!(own.len(), 2);
    let offered = tool_names(&own[0]);
    assert!(
        offered.contains(&"mcp__own__echo".to_string()),
        "{offered:?}"
    );
    assert!(offered.contains(&"Read".to_string()), "{offered:?}");
    // The call reached the server and its answer the agent's next request.
    let results = agent::tool_results(&own[1]);
    assert_eq!(results.len(), 1);
    assert!(!results[0].1, "{results:?}");
    assert!(results[0].0.contains("Echo: hi-from-agent"), "{results:?}");
    // The session's own requests never offer the agent's server.
    let main = bodies(&agent, "HELPER-ROLE", false);
    assert_eq!(main.len(), 2);
    for body in &main {
        let names = tool_names(body);
        assert!(
            !names.iter().any(|n| n.starts_with("mcp__own")),
            "{names:?}"
        );
    }
    let report = agent::tool_results(&main[1]);
    assert!(report[0].0.starts_with("echoed"), "{report:?}");
    // The run ended: the server is gone, and its log says why.
    wait_ended(pid_in(&pid)).await;
    let log = std::fs::read_to_string(dir.join("logs/agent-helper/own.log")).unwrap();
    assert!(log.contains("[cairn] connected"), "{log}");
    assert!(
        log.contains("[cairn] stopped: the agent's run ended"),
        "{log}"
    );
}

#[tokio::test]
async fn a_server_that_does_not_start_is_said_the_agent_runs_without_it_and_its_name_hides_the_sessions()
 {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("proj"), tmp.path().join("home"));
    std::fs::create_dir_all(&dir).unwrap();
    write_agent(
        &user_agents(&home),
        "helper",
        json!([
            {"ghost": {"command": "/nonexistent/cairn-no-such-server"}},
            {"unset": {"command": "${CAIRN_TEST_NO_SUCH_VARIABLE}"}}
        ]),
        "",
    );
    let script = json!({
        "turns": [{"tool_calls": [agent_call("c1", "helper")]}, {"text": "done"}],
        "by_system": [{"system_contains": "HELPER-ROLE", "turns": [{"text": "worked"}]}]
    });
    let setup = setup(&dir, &home);
    // The session has a server of the same name: the agent's own replaces it for its run.
    let session_tool: cairn::tools::ToolHandle =
        Arc::new(probe::Probe::named("mcp__ghost__session_tool", true));
    setup.late_tools.replace("ghost", vec![session_tool]);
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("go").await;
    assert_eq!(finished(&events).1, "done");
    let own = bodies(&agent, "HELPER-ROLE", true);
    assert_eq!(own.len(), 1, "the agent ran");
    assert_eq!(tool_names(&own[0]), ["Read"]);
    let main = bodies(&agent, "HELPER-ROLE", false);
    assert!(tool_names(&main[0]).contains(&"mcp__ghost__session_tool".to_string()));
    let notices: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Notice { message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    let ghost = "The helper agent's MCP server \"ghost\" did not start: ";
    assert!(
        notices
            .iter()
            .any(|n| n.starts_with(ghost) && n.ends_with(". The agent runs without it.")),
        "{notices:?}"
    );
    assert!(
        notices.contains(
            &"The helper agent's MCP server \"unset\" did not start: environment variable \
              CAIRN_TEST_NO_SUCH_VARIABLE is not set (write ${CAIRN_TEST_NO_SUCH_VARIABLE:-default} \
              for a default). The agent runs without it."
        ),
        "{notices:?}"
    );
    assert!(
        notices.contains(
            &"The helper agent defines its own MCP server \"ghost\": it replaces the session's \
              server of that name for the agent's run."
        ),
        "{notices:?}"
    );
    // The Agent call's result says so after the report.
    let report = &agent::tool_results(&main[1])[0].0;
    assert!(report.starts_with("worked\n\n(The MCP server "), "{report}");
    assert!(
        report.contains(
            "\n\n(The MCP server \"ghost\" of the helper agent did not start, and it ran \
             without it: cannot start \"/nonexistent/cairn-no-such-server\": "
        ),
        "{report}"
    );
    assert!(
        report.contains("(The MCP server \"unset\" of the helper agent did not start"),
        "{report}"
    );
}

#[tokio::test]
async fn a_background_agents_server_stops_when_its_run_ends() {
    let Some(servers) = mcp_servers::servers_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("proj"), tmp.path().join("home"));
    std::fs::create_dir_all(&dir).unwrap();
    let pid = tmp.path().join("own.pid");
    write_agent(
        &user_agents(&home),
        "helper",
        json!([{"own": everything_writing_pid(&servers, &pid)}]),
        "background: true\n",
    );
    let echo =
        json!({"id": "e1", "name": "mcp__own__echo", "input": {"message": "from-the-background"}});
    let script = json!({
        "turns": [
            {"tool_calls": [agent_call("c1", "helper")]},
            {"text": "started"},
            {"text": "noted"}
        ],
        "by_system": [{"system_contains": "HELPER-ROLE", "turns": [
            {"tool_calls": [echo]}, {"text": "echoed in the background"}
        ]}]
    });
    let mut agent = Agent::start(&script, setup(&dir, &home));
    let events = agent.prompt("go").await;
    assert_eq!(finished(&events).1, "started");
    // Until the background run ends.
    let status = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match agent.handle.events.recv().await {
                Some(Event::BackgroundTask(t)) if t.status != TaskStatus::Running => {
                    return t.status;
                }
                Some(_) => {}
                None => panic!("the core stopped"),
            }
        }
    })
    .await
    .expect("the background run ends");
    assert_eq!(status, TaskStatus::Completed);
    let own = bodies(&agent, "HELPER-ROLE", true);
    let results = agent::tool_results(&own[1]);
    assert!(
        results[0].0.contains("Echo: from-the-background"),
        "{results:?}"
    );
    wait_ended(pid_in(&pid)).await;
    let log = std::fs::read_to_string(dir.join("logs/agent-helper/own.log")).unwrap();
    assert!(
        log.contains("[cairn] stopped: the agent's run ended"),
        "{log}"
    );
}

/// `cairn -p` in `project` (trusted or not) whose model calls the `proj` agent; the notices
/// it printed.
async fn run_binary(project: &Path, home: &Path, trusted: bool) -> String {
    if trusted {
        trust::trust_folder(home, project);
    }
    let model = llm::scripted(&json!({
        "turns": [{"tool_calls": [agent_call("c1", "proj")]}, {"text": "done"}],
        "by_system": [{"system_contains": "PROJ-ROLE", "turns": [{"text": "ok"}]}]
    }));
    let out = mcp_servers::cairn_command(project, home)
        .args(["-p", "go"])
        .env("ANTHROPIC_BASE_URL", model.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .output();
    let out = tokio::time::timeout(Duration::from_secs(90), out)
        .await
        .expect("cairn -p did not finish")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(
        model
            .requests()
            .iter()
            .any(|r| r.body["system"].to_string().contains("PROJ-ROLE")),
        "the agent ran"
    );
    stderr
}

#[tokio::test]
async fn a_project_agents_server_starts_only_in_a_trusted_folder() {
    let Some(servers) = mcp_servers::servers_dir() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let marker = project.path().join("MARKER");
    let server = json!({"command": "sh", "args": ["-c",
        format!("touch '{}'; exec node '{}' stdio", marker.display(), everything(&servers))]});
    write_agent(
        &project.path().join(".claude/agents"),
        "proj",
        json!([{"own": server}]),
        "",
    );
    let stderr = run_binary(project.path(), home.path(), false).await;
    assert!(!marker.exists(), "nothing of an untrusted folder runs");
    assert!(
        stderr.contains(
            "proj.md: the proj agent's own MCP servers (`own`) do not start until you trust \
             this folder"
        ),
        "{stderr}"
    );
    // Once trusted, the same agent's server starts for its run.
    let stderr = run_binary(project.path(), home.path(), true).await;
    assert!(marker.exists(), "{stderr}");
    assert!(!stderr.contains("do not start until you trust"), "{stderr}");
}

#[tokio::test]
async fn an_own_servers_calls_are_asked_about_and_disallowed_tools_take_its_tools_away() {
    let Some(servers) = mcp_servers::servers_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("proj"), tmp.path().join("home"));
    std::fs::create_dir_all(&dir).unwrap();
    let server = json!({"command": "node", "args": [everything(&servers), "stdio"]});
    // `mine` has no rule for its server's tools (the session's allows `own`'s, not these).
    write_agent(
        &user_agents(&home),
        "mine",
        json!([{"mine-srv": server.clone()}]),
        "",
    );
    write_agent(
        &user_agents(&home),
        "picky",
        json!([{"own": server}]),
        "disallowedTools: [mcp__own__echo]\n",
    );
    let echo = json!({"id": "e1", "name": "mcp__mine-srv__echo", "input": {"message": "asked"}});
    let script = json!({
        "turns": [
            {"tool_calls": [agent_call("c1", "mine")]},
            {"tool_calls": [agent_call("c2", "picky")]},
            {"text": "done"}
        ],
        "by_system": [
            {"system_contains": "MINE-ROLE", "turns": [{"tool_calls": [echo]}, {"text": "refused"}]},
            {"system_contains": "PICKY-ROLE", "turns": [{"text": "picked"}]}
        ]
    });
    let mut agent = Agent::start(&script, setup(&dir, &home));
    agent.submit("go");
    let mut asked = Vec::new();
    let events = agent
        .run_turn_answering(|r| {
            asked.push(r.title.clone());
            cairn::protocol::Decision::DenyOnce
        })
        .await;
    assert_eq!(finished(&events).1, "done");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].starts_with("mine › "), "{asked:?}");
    let mine = bodies(&agent, "MINE-ROLE", true);
    let results = agent::tool_results(&mine[1]);
    assert!(results[0].1, "denied: {results:?}");
    assert!(!results[0].0.contains("Echo: asked"), "{results:?}");
    // `picky` gets its server's other tools, not the one it disallows.
    let picky = tool_names(&bodies(&agent, "PICKY-ROLE", true)[0]);
    assert!(!picky.contains(&"mcp__own__echo".to_string()), "{picky:?}");
    assert!(
        picky.iter().any(|n| n.starts_with("mcp__own__")),
        "{picky:?}"
    );
}
