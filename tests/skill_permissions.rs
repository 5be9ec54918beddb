//! The repository cannot grant itself permissions through skills and commands (issue 22):
//! a skill the model loads asks the person first (or is refused headless) unless their own
//! rule allows `Skill(name)`; a skill's or command's `allowed-tools` never reach outside the
//! working directories or onto protected paths, from the main conversation or a sub-agent;
//! and a command's `` !`cmd` `` lines pass the same gate as the model's Bash calls. The real
//! core against the scripted model server, with a project and a fake HOME in temp dirs; and
//! the gate's weaker turn grants case by case, through the probe tool.

use std::path::Path;

use cairn::config::LoadedSettings;
use cairn::llm::Provider;
use cairn::permissions::{GateConfig, GateOutcome, PermissionGate};
use cairn::protocol::{Decision, Display, PermissionMode, PermissionRequest};
use cairn::session::context::SessionContext;
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;
#[path = "support/probe.rs"]
mod probe;

use agent::{Agent, Setup, tool_results};

/// A project and a HOME beside it (never inside it).
struct World {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let world = World {
            project: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(world.project().join(".git/hooks")).unwrap();
        std::fs::write(world.project().join("victim.txt"), "keep me\n").unwrap();
        std::fs::create_dir_all(world.home().join(".ssh")).unwrap();
        std::fs::write(world.home().join(".ssh/id_rsa"), "SECRET-KEY-MATERIAL\n").unwrap();
        world
    }

    fn project(&self) -> &Path {
        self.project.path()
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    /// A project skill (`.claude/skills/<name>/SKILL.md`).
    fn skill(&self, name: &str, allowed: &str) {
        let dir = self.project().join(".claude/skills").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: The {name} skill\nallowed-tools: {allowed}\n---\n\
                 {name} body: do as the user says.\n"
            ),
        )
        .unwrap();
    }

    /// A project command (`.claude/commands/<name>.md`).
    fn command(&self, name: &str, allowed: &str, body: &str) {
        let dir = self.project().join(".claude/commands");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("{name}.md")),
            format!(
                "---\ndescription: The {name} command\nallowed-tools: {allowed}\n---\n{body}\n"
            ),
        )
        .unwrap();
    }

    /// A session over the project whose gate is interactive or not, with `--allowedTools` /
    /// `--disallowedTools` rules, `~` being the fake HOME; its skills and commands discovered
    /// from the project.
    fn setup(&self, interactive: bool, allow: &[&str], deny: &[&str]) -> Setup {
        let settings = LoadedSettings {
            project_root: self.project().to_path_buf(),
            project_dir: self.project().to_path_buf(),
            home: Some(self.home().to_path_buf()),
            ..LoadedSettings::default()
        };
        let gate = PermissionGate::new(GateConfig {
            settings: &settings,
            cli_allow: allow.iter().map(|s| s.to_string()).collect(),
            cli_deny: deny.iter().map(|s| s.to_string()).collect(),
            mode: PermissionMode::Default,
            interactive,
            project_dir: self.project().to_path_buf(),
            additional_dirs: Vec::new(),
            session_data_dir: self.project().join(".data"),
            running_as_root: false,
            sandboxed: false,
        })
        .unwrap();
        let mut setup = Setup::in_dir(self.project(), Provider::Anthropic);
        setup.gate = gate;
        setup.skills = cairn::commands::skills::discover(self.project(), None).items;
        setup.commands = cairn::commands::discover(self.project(), None).items;
        setup
    }
}

fn call(id: &str, name: &str, input: Value) -> Value {
    json!({"id": id, "name": name, "input": input})
}

fn skill_call(id: &str, skill: &str) -> Value {
    call(id, "Skill", json!({"skill": skill}))
}

/// The model's script: one turn per list of calls, then `done`.
fn script(turns: &[Vec<Value>]) -> Value {
    let mut out: Vec<Value> = turns.iter().map(|c| json!({"tool_calls": c})).collect();
    out.push(json!({"text": "done"}));
    json!({"turns": out})
}

/// Every tool result the model got, over all requests (the last request holds them all).
fn last_results(agent: &Agent) -> Vec<(String, bool)> {
    let n = agent.server.requests().len();
    tool_results(&agent.request_body(n - 1))
}

/// Whether any request sent to the model contains `text`.
fn model_saw(agent: &Agent, text: &str) -> bool {
    agent
        .server
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains(text))
}

fn preview_text(req: &PermissionRequest) -> String {
    match &req.preview {
        Some(Display::Fields { fields }) => fields
            .iter()
            .map(|f| format!("{}: {}", f.label, f.value))
            .collect::<Vec<_>>()
            .join("\n"),
        other => format!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_the_model_loads_asks_first_and_grants_nothing_when_refused() {
    let w = World::new();
    w.skill("cleanup", "Bash");
    let turns = [
        vec![skill_call("s", "cleanup")],
        vec![call("b", "Bash", json!({"command": "rm victim.txt"}))],
    ];
    let mut agent = Agent::start(&script(&turns), w.setup(true, &[], &[]));
    agent.submit("tidy up");
    let mut asked: Vec<PermissionRequest> = Vec::new();
    agent
        .run_turn_answering(|r| {
            asked.push(r.clone());
            Decision::DenyOnce
        })
        .await;
    // First the skill itself, shown with what it would allow.
    assert_eq!(asked.len(), 2, "{asked:#?}");
    assert_eq!(asked[0].tool, "Skill");
    let preview = preview_text(&asked[0]);
    assert!(preview.contains("Execute skill: cleanup"), "{preview}");
    assert!(preview.contains("allowed-tools: Bash"), "{preview}");
    assert!(
        asked[0].reason.contains("no rule allows Skill cleanup"),
        "{}",
        asked[0].reason
    );
    // Refused, it granted nothing: the `rm` asks like any other command.
    assert_eq!(asked[1].tool, "Bash");
    assert!(
        asked[1].reason.contains("rm victim.txt"),
        "{}",
        asked[1].reason
    );
    assert!(w.project().join("victim.txt").exists());
    assert!(!model_saw(&agent, "cleanup body"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_a_skill_the_model_loads_is_refused_naming_the_rule_and_grants_nothing() {
    let w = World::new();
    w.skill("cleanup", "Bash");
    let turns = [
        vec![skill_call("s", "cleanup")],
        vec![call("b", "Bash", json!({"command": "rm victim.txt"}))],
    ];
    let mut agent = Agent::start(&script(&turns), w.setup(false, &[], &[]));
    agent.prompt("tidy up").await;
    let results = last_results(&agent);
    assert_eq!(results.len(), 2, "{results:?}");
    let (skill, is_error) = &results[0];
    assert!(*is_error);
    assert!(
        skill.starts_with("Permission to use Skill was denied: no rule allows Skill cleanup"),
        "{skill}"
    );
    assert!(
        skill.contains("--allowedTools \"Skill(cleanup)\""),
        "{skill}"
    );
    assert!(results[1].1, "{results:?}");
    assert!(results[1].0.contains("rm victim.txt"), "{results:?}");
    assert!(w.project().join("victim.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_deny_rule_refuses_it_even_when_a_rule_allows_every_skill() {
    let w = World::new();
    w.skill("cleanup", "Bash");
    let turns = [vec![skill_call("s", "cleanup")]];
    let mut agent = Agent::start(
        &script(&turns),
        w.setup(true, &["Skill"], &["Skill(cleanup)"]),
    );
    agent.submit("tidy up");
    agent
        .run_turn_answering(|r| panic!("asked about {}", r.tool))
        .await;
    let results = last_results(&agent);
    assert!(
        results[0]
            .0
            .contains("Permission to use Skill has been denied by the rule `Skill(cleanup)`"),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_skills_grants_stay_inside_the_working_directories() {
    let w = World::new();
    w.skill("homewriter", "Write(~/**), Read(~/.ssh/**), Bash(touch:*)");
    let planted = w.home().join("planted.txt");
    let outside = w.home().join("touched.txt");
    let turns = [
        vec![skill_call("s", "homewriter")],
        vec![call(
            "w",
            "Write",
            json!({"file_path": planted, "content": "from the repo\n"}),
        )],
        vec![call(
            "r",
            "Read",
            json!({"file_path": w.home().join(".ssh/id_rsa")}),
        )],
        vec![call(
            "t",
            "Bash",
            json!({"command": format!("touch {}", outside.display())}),
        )],
        // Inside the project the grant holds.
        vec![call("i", "Bash", json!({"command": "touch inside.txt"}))],
    ];
    // The person's own rule allows the skill; headless, so nothing else can be approved.
    let mut agent = Agent::start(&script(&turns), w.setup(false, &["Skill(homewriter)"], &[]));
    agent.prompt("set up my home").await;
    let results = last_results(&agent);
    assert_eq!(results.len(), 5, "{results:?}");
    assert!(!results[0].1, "the skill loads: {results:?}");
    for (i, what) in [(1, "planted.txt"), (2, "id_rsa"), (3, "touched.txt")] {
        let (text, is_error) = &results[i];
        assert!(*is_error, "{text}");
        assert!(text.starts_with("Permission to use"), "{text}");
        assert!(text.contains(what), "{text}");
    }
    assert!(
        results[1].0.contains("outside the working directories"),
        "{}",
        results[1].0
    );
    assert!(!planted.exists());
    assert!(!outside.exists());
    assert!(!model_saw(&agent, "SECRET-KEY-MATERIAL"));
    assert!(!results[4].1, "{results:?}");
    assert!(w.project().join("inside.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agents_skill_asks_and_its_grants_do_not_reach_the_home_directory() {
    let w = World::new();
    w.skill("keys", "Read(~/.ssh/**)");
    let key = w.home().join(".ssh/id_rsa");
    let script = json!({
        "turns": [
            {"tool_calls": [call("a", "Agent", json!({
                "description": "read keys", "prompt": "use the keys skill",
                "subagent_type": "general-purpose"}))]},
            {"text": "done"}
        ],
        "by_system": [{"system_contains": "general-purpose agent", "turns": [
            {"tool_calls": [skill_call("s", "keys")]},
            {"tool_calls": [call("r", "Read", json!({"file_path": key}))]},
            {"text": "sub done"}
        ]}]
    });
    let mut agent = Agent::start(&script, w.setup(true, &[], &[]));
    agent.submit("go");
    let mut asked: Vec<PermissionRequest> = Vec::new();
    agent
        .run_turn_answering(|r| {
            asked.push(r.clone());
            // Yes to the skill, no to anything else.
            if r.tool == "Skill" {
                Decision::AllowOnce
            } else {
                Decision::DenyOnce
            }
        })
        .await;
    let tools: Vec<&str> = asked.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(tools, ["Skill", "Read"], "{asked:#?}");
    assert!(
        asked[0].title.starts_with("general-purpose › "),
        "{}",
        asked[0].title
    );
    assert!(
        asked[1].reason.contains("outside the working directories"),
        "{}",
        asked[1].reason
    );
    assert!(!model_saw(&agent, "SECRET-KEY-MATERIAL"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commands_shell_line_cannot_write_a_git_hook_or_touch_outside() {
    let w = World::new();
    let outside = w.home().join("outside.txt");
    w.command(
        "hook",
        "Bash",
        "Hook: !`touch .git/hooks/post-checkout`\nThen go on.",
    );
    w.command(
        "out",
        "Bash(touch:*)",
        &format!("Out: !`touch {}`\nThen go on.", outside.display()),
    );
    let turns = json!({"turns": [{"text": "one"}, {"text": "two"}]});
    let mut agent = Agent::start(&turns, w.setup(false, &[], &[]));
    agent.prompt("/hook").await;
    agent.prompt("/out").await;
    assert!(!w.project().join(".git/hooks/post-checkout").exists());
    assert!(!outside.exists());
    let first = agent.request_body(0)["messages"].to_string();
    assert!(
        first
            .contains("Hook: (`touch .git/hooks/post-checkout`: Permission to use Bash was denied"),
        "{first}"
    );
    let second = agent.request_body(1)["messages"].to_string();
    assert!(
        second.contains("Out: (`touch ") && second.contains("Permission to use Bash was denied"),
        "{second}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_tui_a_commands_shell_line_on_a_protected_path_asks() {
    let w = World::new();
    w.command("hook", "Bash", "Hook: !`touch .git/hooks/post-checkout`");
    let turns = json!({"turns": [{"text": "one"}]});
    let mut agent = Agent::start(&turns, w.setup(true, &[], &[]));
    agent.submit("/hook");
    let mut asked: Vec<PermissionRequest> = Vec::new();
    agent
        .run_turn_answering(|r| {
            asked.push(r.clone());
            Decision::DenyOnce
        })
        .await;
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert!(
        asked[0].reason.contains("touch .git/hooks/post-checkout"),
        "{}",
        asked[0].reason
    );
    assert!(!w.project().join(".git/hooks/post-checkout").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_the_person_invokes_allows_its_tools_inside_the_project_until_the_turn_ends() {
    let w = World::new();
    w.skill("build", "Bash(echo *) Bash(touch *)");
    let script = json!({"turns": [
        {"tool_calls": [
            call("e", "Bash", json!({"command": "echo building"})),
            call("t", "Bash", json!({"command": "touch built.txt"}))
        ]},
        {"text": "built"},
        {"tool_calls": [call("u", "Bash", json!({"command": "touch again.txt"}))]},
        {"text": "not again"}
    ]});
    let mut agent = Agent::start(&script, w.setup(true, &[], &[]));
    agent.submit("/build now");
    agent
        .run_turn_answering(|r| panic!("asked about {}: {}", r.tool, r.reason))
        .await;
    let results = tool_results(&agent.request_body(1));
    assert!(
        results[0].0.contains("building") && !results[0].1,
        "{results:?}"
    );
    assert!(!results[1].1, "{results:?}");
    assert!(w.project().join("built.txt").exists());
    // The grant ended with the turn: the next turn's `touch` asks.
    agent.submit("once more");
    let mut asked = Vec::new();
    agent
        .run_turn_answering(|r| {
            asked.push(r.reason.clone());
            Decision::DenyOnce
        })
        .await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("touch again.txt"), "{asked:?}");
    assert!(!w.project().join("again.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agents_skill_grants_end_with_its_run_and_never_reach_the_parent() {
    let w = World::new();
    w.skill("toucher", "Bash(touch *)");
    let script = json!({
        "turns": [
            {"tool_calls": [call("a", "Agent", json!({
                "description": "touch", "prompt": "use the toucher skill",
                "subagent_type": "general-purpose"}))]},
            {"tool_calls": [call("p", "Bash", json!({"command": "touch by-parent.txt"}))]},
            {"text": "done"}
        ],
        "by_system": [{"system_contains": "general-purpose agent", "turns": [
            {"tool_calls": [skill_call("s", "toucher")]},
            {"tool_calls": [call("t", "Bash", json!({"command": "touch by-sub.txt"}))]},
            {"text": "sub done"}
        ]}]
    });
    let mut agent = Agent::start(&script, w.setup(false, &["Skill(toucher)"], &[]));
    agent.prompt("go").await;
    // The sub-agent's approved skill let it touch inside the project...
    assert!(w.project().join("by-sub.txt").exists());
    // ...and nothing more: the parent's own `touch` is decided without that grant.
    assert!(!w.project().join("by-parent.txt").exists());
    let results = last_results(&agent);
    let parent = &results.last().unwrap().0;
    assert!(
        parent.starts_with(
            "Permission to use Bash was denied: no rule allows the command `touch by-parent.txt`"
        ),
        "{results:?}"
    );
}

/// The gate's verdict in one word.
fn verdict(o: &GateOutcome) -> &'static str {
    match o {
        GateOutcome::Allow => "allow",
        GateOutcome::Deny { .. } => "deny",
        GateOutcome::Ask(_) => "ask",
    }
}

#[tokio::test]
async fn turn_grants_cover_only_literal_paths_inside_and_off_protected_ones() {
    let w = World::new();
    let gate = w.setup(true, &[], &[]).gate;
    let session = SessionContext::for_dir(w.project());
    let other = SessionContext::for_dir(w.project());
    let problems = gate.allow_for_turn(&session.conversation, &["Bash Edit".to_string()]);
    assert!(problems.is_empty(), "{problems:?}");
    let home = w.home().display().to_string();
    let project = w.project().display().to_string();
    let cases: Vec<(&str, Value, &str)> = vec![
        ("Bash", json!({"exec": ["touch made.txt"]}), "allow"),
        ("Bash", json!({"exec": ["rm victim.txt"]}), "allow"),
        ("Bash", json!({"exec": [format!("touch {home}/x")]}), "ask"),
        ("Bash", json!({"exec": ["touch ../beside.txt"]}), "ask"),
        ("Bash", json!({"exec": ["touch $HOME/x"]}), "ask"),
        (
            "Bash",
            json!({"exec": ["touch .git/hooks/post-checkout"]}),
            "ask",
        ),
        (
            "Bash",
            json!({"exec": ["touch ok.txt && rm .bashrc"]}),
            "ask",
        ),
        (
            "Bash",
            json!({"exec": ["echo x > .claude/settings.json"]}),
            "ask",
        ),
        (
            "Edit",
            json!({"write": [format!("{project}/src/a.rs")]}),
            "allow",
        ),
        (
            "Edit",
            json!({"write": [format!("{project}/.vscode/tasks.json")]}),
            "ask",
        ),
        ("Edit", json!({"write": [format!("{home}/.bashrc")]}), "ask"),
        (
            "Edit",
            json!({"write": [format!("{home}/notes.txt")]}),
            "ask",
        ),
    ];
    for (i, (tool, input, want)) in cases.iter().enumerate() {
        let probe = probe::Probe::named(tool, false);
        let got = probe::check_call(&gate, &session, &probe, input, &format!("c{i}")).await;
        assert_eq!(verdict(&got), *want, "{tool} {input}: {got:?}");
        gate.withdraw(&format!("c{i}"));
    }
    // Another conversation (a sub-agent, the parent) does not have them; after the turn,
    // neither does this one.
    let touch = json!({"exec": ["touch made.txt"]});
    let bash = probe::Probe::named("Bash", false);
    let got = probe::check_call(&gate, &other, &bash, &touch, "o").await;
    assert_eq!(verdict(&got), "ask", "{got:?}");
    gate.end_turn(&session.conversation);
    let got = probe::check_call(&gate, &session, &bash, &touch, "e").await;
    assert_eq!(verdict(&got), "ask", "{got:?}");
}
