//! Sub-agents end to end over real HTTP: the real core runs Agent calls against the scripted
//! model server, which answers each sub-agent's conversation apart (`by_system`). Parallel
//! runs, permission requests answered by the parent's client, interrupts, background runs
//! whose reports come back as reminders, nesting depth, stream-json's `parent_tool_use_id`,
//! and the Explore agent's read-only Bash and fast model.

use std::time::Duration;

use cairn::cli::OutputFormat;
use cairn::commands::agents::AgentDef;
use cairn::config::model::Aliases;
use cairn::llm::Provider;
use cairn::protocol::{Decision, Event, Op, TaskStatus, TurnEnd};
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;

use agent::{Agent, Setup, finished, tool_results};

fn def(dir: &std::path::Path, name: &str, role: &str, tools: &[&str]) -> AgentDef {
    AgentDef {
        name: name.into(),
        description: format!("the {name} agent"),
        tools: Some(tools.iter().map(|t| t.to_string()).collect()),
        disallowed_tools: Vec::new(),
        model: None,
        color: None,
        prompt: role.into(),
        path: dir.join(format!("{name}.md")),
        ..Default::default()
    }
}

fn agent_call(id: &str, agent: &str, prompt: &str) -> Value {
    json!({"id": id, "name": "Agent", "input": {
        "description": format!("ask {agent}"), "prompt": prompt, "subagent_type": agent}})
}

/// An Agent call that starts `agent` in the background to find the parser.
fn background_call(id: &str, agent: &str) -> Value {
    json!({"id": id, "name": "Agent", "input": {
        "description": "find the parser", "prompt": "find parse()",
        "subagent_type": agent, "run_in_background": true}})
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

/// Index of the request whose system prompt contains `role`, the `n`-th of them.
fn nth_request(agent: &Agent, role: &str, n: usize) -> Option<usize> {
    agent
        .server
        .requests()
        .iter()
        .enumerate()
        .filter(|(_, r)| r.body["system"].to_string().contains(role))
        .map(|(i, _)| i)
        .nth(n)
}

/// The events a sub-agent sent, unwrapped, with the Agent call they belong to.
fn sub_events(events: &[Event]) -> Vec<(String, Event)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Subagent {
                parent_call_id,
                event,
                ..
            } => Some((parent_call_id.clone(), (**event).clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn two_agent_calls_run_at_the_same_time() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.rs"), "fn a() {}\n").unwrap();
    // Each sub-agent globs, then answers; its first answer streams slowly.
    let sub_turns = |name: &str| {
        json!([
            {"tool_calls": [{"id": format!("{name}-g"), "name": "Glob", "input": {"pattern": "*.rs"}}],
             "delay_ms": 20},
            {"text": format!("{name} done")}
        ])
    };
    let script = json!({
        "turns": [
            {"tool_calls": [agent_call("a1", "alpha", "look"), agent_call("a2", "beta", "look")]},
            {"text": "both done"}
        ],
        "by_system": [
            {"system_contains": "ALPHA-ROLE", "turns": sub_turns("alpha")},
            {"system_contains": "BETA-ROLE", "turns": sub_turns("beta")}
        ]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = vec![
        def(tmp.path(), "alpha", "ALPHA-ROLE", &["Glob"]),
        def(tmp.path(), "beta", "BETA-ROLE", &["Glob"]),
    ];
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("ask both").await;
    assert_eq!(finished(&events).1, "both done");
    // Run one after the other, each agent's second request would come before the other's
    // first; at the same time, both first requests come before either second one.
    let alpha_second = nth_request(&agent, "ALPHA-ROLE", 1).unwrap();
    let beta_second = nth_request(&agent, "BETA-ROLE", 1).unwrap();
    let alpha_first = nth_request(&agent, "ALPHA-ROLE", 0).unwrap();
    let beta_first = nth_request(&agent, "BETA-ROLE", 0).unwrap();
    assert!(
        alpha_first < beta_second && beta_first < alpha_second,
        "alpha {alpha_first},{alpha_second} beta {beta_first},{beta_second}"
    );
    let results = tool_results(&agent.request_body(agent.server.requests().len() - 1));
    assert_eq!(report(&results[0].0), "alpha done");
    assert_eq!(report(&results[1].0), "beta done");
}

#[tokio::test]
async fn a_sub_agents_permission_request_is_answered_by_the_parents_client() {
    let tmp = tempfile::tempdir().unwrap();
    let script = json!({
        "turns": [
            {"tool_calls": [{"id": "a1", "name": "Agent", "input": {
                "description": "make a file", "prompt": "touch made.txt"}}]},
            {"text": "made"}
        ],
        "by_system": [{"system_contains": "general-purpose agent", "turns": [
            {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "touch made.txt"}}]},
            {"text": "touched"}
        ]}]
    });
    let mut agent = Agent::start(&script, Setup::in_dir(tmp.path(), Provider::Anthropic));
    agent.submit("go");
    let mut asked = Vec::new();
    let events = agent
        .run_turn_answering(|req| {
            asked.push((req.call_id.clone(), req.title.clone()));
            Decision::AllowOnce
        })
        .await;
    assert_eq!(finished(&events).0, TurnEnd::Completed);
    assert_eq!(
        asked,
        [(
            "b1".to_string(),
            "general-purpose › Bash touch made.txt".to_string()
        )]
    );
    assert!(tmp.path().join("made.txt").exists());
    // Its call reached the client tagged with the Agent call.
    let subs = sub_events(&events);
    assert!(
        subs.iter().any(|(p, e)| p == "a1"
            && matches!(e, Event::ToolCallFinished { call_id, is_error: false, .. } if call_id == "b1")),
        "{subs:?}"
    );
}

#[tokio::test]
async fn interrupting_the_turn_stops_its_sub_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let script = json!({
        "turns": [
            {"tool_calls": [agent_call("a1", "alpha", "look"), agent_call("a2", "beta", "look")]},
            {"text": "never"}
        ],
        "by_system": [
            {"system_contains": "ALPHA-ROLE", "turns": [
                {"text": "x", "faults": [{"keep_alive_forever_ms": 20}]}]},
            {"system_contains": "BETA-ROLE", "turns": [
                {"text": "x", "faults": [{"keep_alive_forever_ms": 20}]}]}
        ]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = vec![
        def(tmp.path(), "alpha", "ALPHA-ROLE", &["Glob"]),
        def(tmp.path(), "beta", "BETA-ROLE", &["Glob"]),
    ];
    let mut agent = Agent::start(&script, setup);
    agent.submit("go");
    // Interrupt once both sub-agents are waiting on their model.
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while nth_request(&agent, "BETA-ROLE", 0).is_none()
        || nth_request(&agent, "ALPHA-ROLE", 0).is_none()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the sub-agents never started"
        );
        if let Ok(Some(e)) =
            tokio::time::timeout(Duration::from_millis(20), agent.handle.events.recv()).await
        {
            events.push(e);
        }
    }
    agent.handle.ops.send(Op::Interrupt).unwrap();
    events.extend(agent.run_turn().await);
    assert_eq!(finished(&events).0, TurnEnd::Interrupted);
    for id in ["a1", "a2"] {
        let result = events.iter().find_map(|e| match e {
            Event::ToolCallFinished {
                call_id,
                is_error,
                display,
                ..
            } if call_id == id => Some((*is_error, format!("{display:?}"))),
            _ => None,
        });
        let (is_error, text) = result.expect("the Agent call finished");
        assert!(is_error && text.contains("interrupted"), "{text}");
    }
    // Nothing more was asked of the model: neither sub-agent went on.
    assert_eq!(agent.server.requests().len(), 3);
}

#[tokio::test]
async fn a_background_agents_report_reaches_the_model_later_as_a_reminder() {
    let tmp = tempfile::tempdir().unwrap();
    let script = json!({
        "turns": [
            {"tool_calls": [background_call("a1", "alpha")]},
            {"text": "Started it."},
            {"text": "Thanks, noted."}
        ],
        "by_system": [{"system_contains": "ALPHA-ROLE", "turns": [
            {"text": "parse() is in src/parse.rs:12", "delay_ms": 30}
        ]}]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = vec![def(tmp.path(), "alpha", "ALPHA-ROLE", &["Glob"])];
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("look in the background").await;
    assert_eq!(finished(&events).1, "Started it.");
    // The call answered at once, with the id.
    let second = agent
        .server
        .requests()
        .into_iter()
        .filter(|r| !r.body["system"].to_string().contains("ALPHA-ROLE"))
        .nth(1)
        .unwrap();
    let results = tool_results(&second.body);
    assert!(
        results[0].0.contains("in the background as agent-1"),
        "{results:?}"
    );
    // The turn ended before the agent did; its end comes as an event.
    let mut seen = events
        .iter()
        .filter_map(|e| match e {
            Event::BackgroundTask(t) => Some(t.status),
            _ => None,
        })
        .collect::<Vec<_>>();
    while !seen.contains(&TaskStatus::Completed) {
        let e = tokio::time::timeout(Duration::from_secs(30), agent.handle.events.recv())
            .await
            .expect("the background agent did not finish")
            .unwrap();
        if let Event::BackgroundTask(t) = e {
            assert_eq!((t.id.as_str(), t.agent.as_str()), ("agent-1", "alpha"));
            seen.push(t.status);
        }
    }
    assert_eq!(seen, [TaskStatus::Running, TaskStatus::Completed]);
    // The next request of the conversation carries the report as a reminder.
    let events = agent.prompt("anything new?").await;
    assert_eq!(finished(&events).1, "Thanks, noted.");
    let main: Vec<Value> = agent
        .server
        .requests()
        .iter()
        .filter(|r| !r.body["system"].to_string().contains("ALPHA-ROLE"))
        .map(|r| r.body.clone())
        .collect();
    let last = main.last().unwrap()["messages"].to_string();
    assert!(
        last.contains("<system-reminder>")
            && last.contains("Background agent agent-1 (alpha: find the parser) finished")
            && last.contains("parse() is in src/parse.rs:12"),
        "{last}"
    );
    assert!(!main[1]["messages"].to_string().contains("src/parse.rs:12"));
}

#[tokio::test]
async fn sub_agents_nest_only_when_listed_and_stop_at_depth_two() {
    let tmp = tempfile::tempdir().unwrap();
    let script = json!({
        "turns": [
            {"tool_calls": [agent_call("a1", "outer", "delegate")]},
            {"text": "done"}
        ],
        "by_system": [
            {"system_contains": "OUTER-ROLE", "turns": [
                {"tool_calls": [agent_call("a2", "inner", "look")]},
                {"text": "outer done"}
            ]},
            {"system_contains": "INNER-ROLE", "turns": [
                {"tool_calls": [{"id": "g1", "name": "Glob", "input": {"pattern": "*"}}]},
                {"text": "inner done"}
            ]}
        ]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = vec![
        def(tmp.path(), "outer", "OUTER-ROLE", &["Agent", "Glob"]),
        def(tmp.path(), "inner", "INNER-ROLE", &["Task", "Glob"]),
    ];
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("go").await;
    assert_eq!(finished(&events).1, "done");
    let outer = agent.request_body(nth_request(&agent, "OUTER-ROLE", 0).unwrap());
    let inner = agent.request_body(nth_request(&agent, "INNER-ROLE", 0).unwrap());
    assert_eq!(tool_names(&outer), ["Glob", "Agent"]);
    assert_eq!(tool_names(&inner), ["Glob"], "depth 2 gets no Agent tool");
    let outer_last = nth_request(&agent, "OUTER-ROLE", 1).unwrap();
    assert_eq!(
        report(&tool_results(&agent.request_body(outer_last))[0].0),
        "inner done"
    );
    // The inner agent's Glob reached the client wrapped twice: outer call, then inner call.
    let nested = events.iter().any(|e| match e {
        Event::Subagent {
            parent_call_id,
            event,
            ..
        } if parent_call_id == "a1" => matches!(&**event, Event::Subagent {
                parent_call_id, event, ..
            } if parent_call_id == "a2"
                && matches!(&**event, Event::ToolCallStarted { call_id, .. } if call_id == "g1")),
        _ => false,
    });
    assert!(nested, "{events:?}");
    // Every run has its own transcript.
    assert_eq!(
        transcripts(tmp.path()),
        2,
        "every run has its own transcript"
    );
}

#[tokio::test]
async fn built_in_agents_never_get_the_agent_tool_and_explore_gets_read_only_bash_and_haiku() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "hello\n").unwrap();
    let script = json!({
        "turns": [
            {"tool_calls": [
                {"id": "a1", "name": "Agent", "input": {
                    "description": "list", "prompt": "list files", "subagent_type": "Explore"}},
                {"id": "a2", "name": "Agent", "input": {
                    "description": "anything", "prompt": "say hi"}}]},
            {"text": "done"}
        ],
        "by_system": [
            {"system_contains": "read-only explorer", "turns": [
                {"tool_calls": [
                    {"id": "e1", "name": "Bash", "input": {"command": "ls"}},
                    {"id": "e2", "name": "Bash", "input": {"command": "touch made.txt"}}]},
                {"text": "listed"}
            ]},
            {"system_contains": "general-purpose agent", "turns": [{"text": "hi"}]}
        ]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.model = "sonnet".into();
    setup.aliases = Aliases::anthropic(&|_| None);
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("go").await;
    assert_eq!(finished(&events).1, "done");
    let explore = agent.request_body(nth_request(&agent, "read-only explorer", 0).unwrap());
    assert_eq!(explore["model"], "claude-haiku-4-5");
    let names = tool_names(&explore);
    assert!(names.contains(&"Bash".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n == "Agent" || n == "Edit" || n == "Write"),
        "{names:?}"
    );
    let general = agent.request_body(nth_request(&agent, "general-purpose agent", 0).unwrap());
    assert_eq!(general["model"], "claude-sonnet-4-5");
    assert!(!tool_names(&general).contains(&"Agent".to_string()));
    // `ls` ran; `touch` was refused before it could run.
    let second = agent.request_body(nth_request(&agent, "read-only explorer", 1).unwrap());
    let results = tool_results(&second);
    assert!(
        results[0].0.contains("notes.txt") && !results[0].1,
        "{results:?}"
    );
    assert!(
        results[1].1 && results[1].0.contains("read-only"),
        "{results:?}"
    );
    assert!(!tmp.path().join("made.txt").exists());
}

#[tokio::test]
async fn stream_json_sets_parent_tool_use_id_on_a_sub_agents_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let script = json!({
        "turns": [
            {"tool_calls": [agent_call("a1", "alpha", "look")]},
            {"text": "done"}
        ],
        "by_system": [{"system_contains": "ALPHA-ROLE", "turns": [
            {"tool_calls": [{"id": "g1", "name": "Glob", "input": {"pattern": "*"}}]},
            {"text": "alpha done"}
        ]}]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = vec![def(tmp.path(), "alpha", "ALPHA-ROLE", &["Glob"])];
    let agent = Agent::start(&script, setup);
    let (outcome, out) = agent.headless("go", OutputFormat::StreamJson).await;
    assert_eq!(outcome.end, TurnEnd::Completed);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let messages: Vec<(String, Value)> = lines
        .iter()
        .filter(|l| l["type"] == "assistant" || l["type"] == "user")
        .map(|l| {
            (
                l["type"].as_str().unwrap().to_string(),
                l["parent_tool_use_id"].clone(),
            )
        })
        .collect();
    assert_eq!(
        messages,
        [
            ("assistant".to_string(), Value::Null),
            ("assistant".to_string(), json!("a1")),
            ("user".to_string(), json!("a1")),
            ("assistant".to_string(), json!("a1")),
            ("user".to_string(), Value::Null),
            ("assistant".to_string(), Value::Null),
        ]
    );
    let sub_text = lines.iter().find(|l| {
        l["parent_tool_use_id"] == "a1"
            && l["type"] == "assistant"
            && l["message"].to_string().contains("alpha done")
    });
    assert!(sub_text.is_some(), "{lines:?}");
}

#[tokio::test]
async fn headless_says_which_background_agents_it_left_running() {
    let tmp = tempfile::tempdir().unwrap();
    let script = json!({
        "turns": [
            {"tool_calls": [background_call("a1", "alpha")]},
            {"text": "Started it."}
        ],
        "by_system": [{"system_contains": "ALPHA-ROLE", "turns": [
            {"text": "x", "faults": [{"keep_alive_forever_ms": 20}]}
        ]}]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = vec![def(tmp.path(), "alpha", "ALPHA-ROLE", &["Glob"])];
    let agent = Agent::start(&script, setup);
    let (outcome, out) = agent.headless("go", OutputFormat::Text).await;
    assert_eq!(outcome.end, TurnEnd::Completed);
    assert_eq!(out, "Started it.\n");
    assert_eq!(
        outcome.background_left,
        ["agent-1 (alpha: find the parser)"]
    );
}

/// A SubagentStop hook sees the sub-agent finish; blocking sends it back to work with the
/// hook's reason, and the second time the hook is told `stop_hook_active`.
#[tokio::test]
async fn a_subagent_stop_hook_can_send_the_sub_agent_back_once() {
    use cairn::config::hooks::{HookCommand, HookEvent, HookGroup, HooksConfig};
    use cairn::config::layers::{Layer, Origin};
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("hook.log");
    let hook = tmp.path().join("hook.sh");
    std::fs::write(
        &hook,
        format!(
            "cat >> '{log}'; echo >> '{log}'\n\
             if [ ! -e '{log}.blocked' ]; then : > '{log}.blocked';\n\
             echo '{{\"decision\": \"block\", \"reason\": \"also run the tests\"}}'; fi\n",
            log = log.display()
        ),
    )
    .unwrap();
    let script = json!({
        "turns": [
            {"tool_calls": [{"id": "a1", "name": "Agent", "input": {
                "description": "review", "prompt": "review the parser"}}]},
            {"text": "reviewed"}
        ],
        "by_system": [{"system_contains": "general-purpose agent", "turns": [
            {"text": "looks fine"},
            {"text": "looks fine, and the tests pass"}
        ]}]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.hooks = HooksConfig {
        groups: vec![HookGroup {
            event: HookEvent::SubagentStop,
            matcher: String::new(),
            commands: vec![HookCommand {
                command: format!("sh '{}'", hook.display()),
                timeout: Duration::from_secs(10),
            }],
            origin: Origin {
                layer: Layer::Project,
                source: "test".into(),
            },
        }],
    };
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("review it").await;
    assert_eq!(finished(&events).1, "reviewed");
    // The sub-agent was asked again, with the hook's reason as its next input.
    let second = nth_request(&agent, "general-purpose agent", 1).expect("asked again");
    let body = agent.request_body(second);
    let last = body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(last.contains("also run the tests"), "{last}");
    // The parent got the second answer.
    let results = tool_results(&agent.request_body(agent.server.requests().len() - 1));
    assert!(
        results[0].0.starts_with("looks fine, and the tests pass"),
        "{:?}",
        results[0]
    );
    let fired: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(fired.len(), 2, "{fired:?}");
    assert_eq!(fired[0]["hook_event_name"], "SubagentStop");
    assert_eq!(fired[0]["stop_hook_active"], false);
    assert_eq!(fired[1]["stop_hook_active"], true);
}

/// Issue 26: an agent file whose `tools` is a YAML block list got every tool (Write and Edit
/// included); a flow list got none. Read from real files, each sub-agent is offered exactly
/// the tools its file lists, one with a list cairn cannot read none at all, and one that keeps
/// every tool loses those its `disallowedTools` names.
#[tokio::test]
async fn agent_files_offer_exactly_the_tools_their_yaml_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let agents = tmp.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    let files = [
        ("block", "tools:\n  - Read\n  - Grep\n"),
        ("flow", "tools: [Read, Glob]\n"),
        ("odd", "tools:\n  Read: yes\n"),
        ("most", "disallowedTools:\n  - Write\n  - Edit\n"),
    ];
    for (name, tools) in files {
        std::fs::write(
            agents.join(format!("{name}.md")),
            format!(
                "---\nname: {name}\ndescription: >-\n  The {name}\n  agent\n{tools}---\n{}-ROLE\n",
                name.to_uppercase()
            ),
        )
        .unwrap();
    }
    let found = cairn::commands::agents::discover(tmp.path(), None);
    assert_eq!(found.items.len(), 4, "{:?}", found.problems);
    let script = json!({
        "turns": [
            {"tool_calls": [agent_call("1", "block", "go"), agent_call("2", "flow", "go"),
                            agent_call("3", "odd", "go"), agent_call("4", "most", "go")]},
            {"text": "done"}
        ],
        "by_system": files.iter().map(|(name, _)| json!({
            "system_contains": format!("{}-ROLE", name.to_uppercase()),
            "turns": [{"text": "ok"}]
        })).collect::<Vec<_>>()
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = found.items;
    let mut agent = Agent::start(&script, setup);
    agent.prompt("ask them").await;
    let requests = agent.server.requests();
    let offered = |role: &str| {
        let i = nth_request(&agent, role, 0).unwrap();
        tool_names(&requests[i].body)
    };
    assert_eq!(offered("BLOCK-ROLE"), ["Grep", "Read"]);
    assert_eq!(offered("FLOW-ROLE"), ["Glob", "Read"]);
    assert!(offered("ODD-ROLE").is_empty(), "{:?}", offered("ODD-ROLE"));
    let most = offered("MOST-ROLE");
    assert!(most.contains(&"Bash".to_string()), "{most:?}");
    assert!(
        !most.iter().any(|t| t == "Write" || t == "Edit"),
        "{most:?}"
    );
    assert!(
        found.problems.iter().any(|p| p.contains(
            "odd.md:7: `tools` should be a list of names, not a mapping; the agent gets no tools"
        )),
        "{:?}",
        found.problems
    );
}

#[tokio::test]
async fn an_agent_files_mode_turn_limit_skills_and_background_are_applied() {
    let tmp = tempfile::tempdir().unwrap();
    let agents = tmp.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    let write = |name: &str, front: &str| {
        std::fs::write(
            agents.join(format!("{name}.md")),
            format!(
                "---\nname: {name}\ndescription: the {name} agent\n{front}---\n{}-ROLE\n",
                name.to_uppercase()
            ),
        )
        .unwrap();
    };
    write(
        "writer",
        "tools: [Write, Bash]\npermissionMode: acceptEdits\nmaxTurns: 2\nskills:\n  - house-style\n",
    );
    write("boss", "tools: [Bash]\npermissionMode: bypassPermissions\n");
    write("watcher", "tools: [Glob]\nbackground: true\n");
    let found = cairn::commands::agents::discover(tmp.path(), None);
    assert_eq!(found.items.len(), 3, "{:?}", found.problems);
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    let bash = |id: &str, cmd: &str| json!({"id": id, "name": "Bash", "input": {"command": cmd}});
    let script = json!({
        "turns": [
            {"tool_calls": [agent_call("1", "writer", "write notes"),
                            agent_call("2", "boss", "touch"),
                            agent_call("3", "watcher", "watch")]},
            {"text": "done"}
        ],
        "by_system": [
            {"system_contains": "WRITER-ROLE", "turns": [
                {"tool_calls": [{"id": "w1", "name": "Write", "input": {
                    "file_path": tmp.path().join("notes.txt"), "content": "n\n"}}]},
                {"tool_calls": [bash("w2", "make build")]},
                {"text": "never reached: maxTurns is 2"}
            ]},
            {"system_contains": "BOSS-ROLE", "turns": [
                {"tool_calls": [bash("b1", "touch by-boss")]}, {"text": "boss done"}
            ]},
            {"system_contains": "WATCHER-ROLE", "turns": [{"text": "watched"}]}
        ]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = found.items;
    setup.skills = vec![cairn::commands::skills::Skill {
        name: "house-style".into(),
        dir_name: "house-style".into(),
        description: "how we write".into(),
        body: "HOUSE-STYLE: short sentences.".into(),
        dir: tmp.path().join(".claude/skills/house-style"),
        user_invocable: true,
        ..Default::default()
    }];
    let mut agent = Agent::start(&script, setup);
    agent.submit("go");
    let mut asked = Vec::new();
    let events = agent
        .run_turn_answering(|req| {
            asked.push(req.title.clone());
            Decision::AllowOnce
        })
        .await;
    assert_eq!(finished(&events).0, TurnEnd::Completed);
    // acceptEdits: the writer's Write went through unasked, its Bash was asked about; the
    // boss's bypass was not granted (the session may not bypass), so its Bash was asked too.
    asked.sort();
    assert_eq!(
        asked,
        ["boss › Bash touch by-boss", "writer › Bash make build"]
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("notes.txt")).unwrap(),
        "n\n"
    );
    let notices: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Notice { message } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert!(
        notices.iter().any(|n| n.starts_with(
            "The boss agent: its `permissionMode: bypassPermissions` needs a session started with bypass allowed"
        )),
        "{notices:?}"
    );
    // The skill's text came before the writer's task.
    let first = nth_request(&agent, "WRITER-ROLE", 0).unwrap();
    let sent = agent.request_body(first)["messages"][0].to_string();
    let skill = sent.find("HOUSE-STYLE: short sentences.").expect(&sent);
    assert!(
        sent[skill..].contains("Your task:\\n\\nwrite notes"),
        "{sent}"
    );
    // maxTurns: two requests, then stopped.
    assert!(nth_request(&agent, "WRITER-ROLE", 2).is_none());
    // The parent's second request carries the three Agent results.
    let parent = (0..agent.server.requests().len())
        .map(|i| agent.request_body(i))
        .find(|b| !b["system"].to_string().contains("-ROLE") && !tool_results(b).is_empty())
        .unwrap();
    let results = tool_results(&parent);
    assert!(
        results[0]
            .0
            .contains("reached its limit of 2 turns (`maxTurns`)"),
        "{:?}",
        results[0]
    );
    // background: true, though the call did not ask for it.
    assert!(
        results[2]
            .0
            .starts_with("The watcher agent is working in the background as "),
        "{:?}",
        results[2]
    );
}

/// An Agent result without the agentId line that ends it.
fn report(result: &str) -> &str {
    result
        .rsplit_once("\n\nagentId: ")
        .map_or(result, |(r, _)| r)
}

/// The id an Agent result ends with (`agentId: <id> (for resuming …)`).
fn agent_id_of(result: &str) -> String {
    let (_, rest) = result
        .rsplit_once("\n\nagentId: ")
        .unwrap_or_else(|| panic!("no agentId in {result:?}"));
    let (id, why) = rest.split_once(' ').unwrap();
    assert_eq!(
        why,
        "(for resuming to continue this agent's work if needed)"
    );
    id.to_string()
}

/// Index of the first request anywhere in whose body `role` appears (any wire format).
fn first_request_with(agent: &Agent, role: &str) -> usize {
    agent
        .server
        .requests()
        .iter()
        .position(|r| r.body.to_string().contains(role))
        .unwrap_or_else(|| panic!("no request with {role}"))
}

#[tokio::test]
async fn a_sub_agent_is_resumed_with_its_whole_context_after_the_session_is_resumed() {
    for provider in llm::BOTH {
        let tmp = tempfile::tempdir().unwrap();
        let agents = || vec![def(tmp.path(), "finder", "FINDER-ROLE", &["Glob"])];
        // The first session: the finder works on its first task and reports.
        let first = json!({
            "turns": [
                {"tool_calls": [agent_call("a1", "finder", "FIRST-TASK")]},
                {"text": "main done"}
            ],
            "by_system": [{"system_contains": "FINDER-ROLE", "turns": [{"text": "FIRST-REPORT"}]}]
        });
        let mut setup = Setup::in_dir(tmp.path(), provider);
        setup.agents = agents();
        let mut agent = Agent::start(&first, setup);
        assert_eq!(finished(&agent.prompt("find it").await).1, "main done");
        let last = agent.request_body(agent.server.requests().len() - 1);
        let result = tool_results(&last)[0].0.clone();
        assert!(result.starts_with("FIRST-REPORT\n\nagentId: "), "{result}");
        let id = agent_id_of(&result);
        drop(agent);

        // `--resume` of the session; the model resumes the finder, then names an unknown id.
        // (The scripted model answers by how many answers a conversation holds: the first
        // session's two, and the finder's one, come first.)
        let second = json!({
            "turns": [
                {"text": "(first session)"}, {"text": "(first session)"},
                {"tool_calls": [{"id": "b1", "name": "Agent", "input": {
                    "description": "go on", "prompt": "SECOND-TASK", "resume": id}}]},
                {"tool_calls": [{"id": "b2", "name": "Agent", "input": {
                    "description": "go on", "prompt": "x", "resume": "a0000nothere"}}]},
                {"text": "all done"}
            ],
            "by_system": [{"system_contains": "FINDER-ROLE",
                "turns": [{"text": "(its first report)"}, {"text": "SECOND-REPORT"}]}]
        });
        let mut setup = Setup::in_dir(tmp.path(), provider);
        setup.agents = agents();
        setup.resume =
            Some(cairn::session::resume::load(&tmp.path().join(".data/t.jsonl")).unwrap());
        let mut agent = Agent::start(&second, setup);
        let events = agent.prompt("go on").await;
        let last = agent.request_body(agent.server.requests().len() - 1);
        assert_eq!(finished(&events).1, "all done", "{:?}", tool_results(&last));
        // The resumed finder's first request carries its earlier conversation, then the task.
        let sub = agent.request_body(first_request_with(&agent, "FINDER-ROLE"));
        let messages = sub["messages"].to_string();
        let at = |s: &str| {
            messages
                .find(s)
                .unwrap_or_else(|| panic!("{s} not in {messages}"))
        };
        assert!(at("FIRST-TASK") < at("FIRST-REPORT"), "{provider:?}");
        assert!(at("FIRST-REPORT") < at("SECOND-TASK"), "{provider:?}");
        // Its result names the same id; the unknown id is an input error, and nothing ran.
        let last = agent.request_body(agent.server.requests().len() - 1);
        let results = tool_results(&last);
        let results = &results[results.len() - 2..];
        assert!(results[0].0.starts_with("SECOND-REPORT"), "{results:?}");
        assert_eq!(agent_id_of(&results[0].0), id);
        assert!(
            results[1].0.contains(
                "Cannot resume agent 'a0000nothere': no sub-agent with that id in this \
                 session (an id is the agentId an Agent result ends with)"
            ),
            "{results:?}"
        );
        if provider == Provider::Anthropic {
            assert!(results[1].1, "an error result");
        }
        let finder_requests = agent
            .server
            .requests()
            .iter()
            .filter(|r| r.body.to_string().contains("FINDER-ROLE"))
            .count();
        assert_eq!(finder_requests, 1, "{provider:?}");
    }
}

/// How many sub-agent conversations the session's data directory keeps.
fn transcripts(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join(".data/subagents"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.starts_with("agent-") && name.ends_with(".jsonl")
        })
        .count()
}
