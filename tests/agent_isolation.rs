//! `isolation: worktree`, end to end through the real core, real git and the scripted model
//! server: an isolated sub-agent works in a temporary git worktree of the project (relative
//! paths, the permission gate's working directory), the real tree stays as it was, a worktree
//! with changes is kept and named in the result, one without is removed with its branch; no
//! git repository, or a repository whose configuration could run programs, refuses the run
//! before anything runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use cairn::config::LoadedSettings;
use cairn::llm::Provider;
use cairn::protocol::{Decision, Event, PermissionMode, PermissionRequest};
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;

use agent::{Agent, Setup, finished, tool_results};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.email=t@t", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A project that is a git repository with one commit holding `src/a.rs`, and an agent
/// `iso` (role `ISO-ROLE`) with `front` in its frontmatter.
fn repo(front: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap().join("proj");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/a.rs"), "fn a() {}\n").unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "src/a.rs"]);
    git(&dir, &["commit", "-qm", "start"]);
    write_agent(&dir, front);
    (tmp, dir)
}

fn write_agent(dir: &Path, front: &str) {
    write_named(dir, "iso", front);
}

/// `.claude/agents/<name>.md` with `front`, its role `<NAME>-ROLE`.
fn write_named(dir: &Path, name: &str, front: &str) {
    let agents = dir.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    let role = name.to_uppercase();
    std::fs::write(
        agents.join(format!("{name}.md")),
        format!("---\nname: {name}\ndescription: the {name} agent\n{front}---\n{role}-ROLE\n"),
    )
    .unwrap();
}

fn call(id: &str, name: &str, input: Value) -> Value {
    json!({"id": id, "name": name, "input": input})
}

/// Runs the main conversation, which calls `agent_input` once; the sub-agent whose system
/// prompt holds `role` plays `turns`. Permission requests are answered "no" and returned.
async fn run(
    dir: &Path,
    mode: PermissionMode,
    agent_input: Value,
    role: &str,
    turns: Value,
) -> (Agent, Vec<Event>, Vec<PermissionRequest>) {
    let by_system = json!([{"system_contains": role, "turns": turns}]);
    run_scripted(dir, mode, agent_input, by_system).await
}

/// As [`run`], with the sub-agents' scripts (`by_system`) given whole.
async fn run_scripted(
    dir: &Path,
    mode: PermissionMode,
    agent_input: Value,
    by_system: Value,
) -> (Agent, Vec<Event>, Vec<PermissionRequest>) {
    let script = json!({
        "turns": [{"tool_calls": [call("c1", "Agent", agent_input)]}, {"text": "done"}],
        "by_system": by_system
    });
    let mut setup = Setup::in_dir(dir, Provider::Anthropic);
    setup.agents = cairn::commands::agents::discover(dir, None).items;
    let settings = LoadedSettings {
        project_root: dir.to_path_buf(),
        project_dir: dir.to_path_buf(),
        ..LoadedSettings::default()
    };
    setup.gate = agent::gate_in_mode(dir, &settings, Vec::new(), mode);
    let mut agent = Agent::start(&script, setup);
    agent.submit("go");
    let mut asked = Vec::new();
    let events = agent
        .run_turn_answering(|req| {
            asked.push(req.clone());
            Decision::DenyOnce
        })
        .await;
    assert_eq!(finished(&events).1, "done");
    (agent, events, asked)
}

/// The Agent call's result as the main conversation's second request carried it.
fn agent_result(agent: &Agent) -> (String, bool) {
    let body = agent
        .server
        .requests()
        .iter()
        .rev()
        .find(|r| !r.body.to_string().contains("ISO-ROLE") && r.body.to_string().contains("c1"))
        .map(|r| r.body.clone())
        .unwrap();
    tool_results(&body).remove(0)
}

/// The sub-agent's requests (those whose system prompt holds `role`).
fn sub_requests(agent: &Agent, role: &str) -> Vec<Value> {
    agent
        .server
        .requests()
        .iter()
        .filter(|r| r.body["system"].to_string().contains(role))
        .map(|r| r.body.clone())
        .collect()
}

fn worktrees(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir.join(".claude/worktrees")) {
        Ok(entries) => entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn agent_branches(dir: &Path) -> String {
    git(dir, &["branch", "--list", "worktree-agent-*"])
}

#[tokio::test]
async fn an_isolated_agent_changes_its_worktree_only_and_the_result_names_it() {
    let (_tmp, dir) = repo("isolation: worktree\n");
    let real = dir.join("real.txt");
    let turns = json!([
        {"tool_calls": [
            call("w1", "Write", json!({"file_path": "notes.txt", "content": "n\n"})),
            call("r1", "Read", json!({"file_path": "src/a.rs"}))
        ]},
        {"tool_calls": [
            call("e1", "Edit", json!({"file_path": "src/a.rs",
                "old_string": "fn a() {}", "new_string": "fn a() { 1 }"})),
            call("w2", "Write", json!({"file_path": ".claude/settings.json", "content": "{}"})),
            call("w3", "Write", json!({"file_path": real, "content": "x\n"}))
        ]},
        {"text": "edited"}
    ]);
    let input = json!({"description": "edit", "prompt": "edit a", "subagent_type": "iso"});
    let (agent, _events, asked) =
        run(&dir, PermissionMode::AcceptEdits, input, "ISO-ROLE", turns).await;
    // The real tree is as it was.
    assert_eq!(
        std::fs::read_to_string(dir.join("src/a.rs")).unwrap(),
        "fn a() {}\n"
    );
    assert!(!dir.join("notes.txt").exists() && !real.exists());
    // The worktree has the changes; the project's own status does not list the copy.
    let status = git(&dir, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(
        status.contains(".claude/agents/iso.md") && !status.contains("worktrees"),
        "{status}"
    );
    let trees = worktrees(&dir);
    assert_eq!(trees.len(), 1, "{trees:?}");
    let tree = &trees[0];
    let name = tree.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("iso-"), "{name}");
    assert_eq!(
        std::fs::read_to_string(tree.join("notes.txt")).unwrap(),
        "n\n"
    );
    assert_eq!(
        std::fs::read_to_string(tree.join("src/a.rs")).unwrap(),
        "fn a() { 1 }\n"
    );
    assert!(!tree.join(".claude/settings.json").exists());
    // In acceptEdits, only the protected path and the real tree were asked about.
    let reasons: Vec<&str> = asked.iter().map(|r| r.reason.as_str()).collect();
    assert_eq!(asked.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].contains(&format!(
            "{}, a protected path",
            tree.join(".claude/settings.json").display()
        )),
        "{reasons:?}"
    );
    assert!(
        reasons[1].contains(&format!(
            "{}, outside the working directories",
            real.display()
        )),
        "{reasons:?}"
    );
    // The sub-agent's calls in its tree succeeded; the ones refused said so.
    let last = sub_requests(&agent, "ISO-ROLE").pop().unwrap();
    let results = tool_results(&last);
    assert!(!results[2].1, "the edit: {results:?}");
    assert!(results[3].1 && results[4].1, "{results:?}");
    // Its system prompt names the worktree as its working directory.
    let first = &sub_requests(&agent, "ISO-ROLE")[0];
    assert!(first["system"].to_string().contains(&name), "{first}");
    // The result names the kept worktree and its branch, which exists.
    let (text, is_error) = agent_result(&agent);
    let branch = agent_branches(&dir)
        .trim()
        .trim_start_matches("+ ")
        .to_string();
    assert!(branch.starts_with("worktree-agent-"), "{branch}");
    assert!(!is_error, "{text}");
    assert!(
        text.contains(&format!(
            "kept with its changes: {} (branch {branch})",
            tree.display()
        )),
        "{text}"
    );
}

#[tokio::test]
async fn an_isolated_agent_that_only_reads_leaves_no_worktree_or_branch() {
    let (_tmp, dir) = repo("isolation: worktree\n");
    let turns = json!([
        {"tool_calls": [
            call("r1", "Read", json!({"file_path": "src/a.rs"})),
            call("b1", "Bash", json!({"command": "pwd"}))
        ]},
        {"text": "read it"}
    ]);
    let input = json!({"description": "look", "prompt": "read a", "subagent_type": "iso"});
    let (agent, _events, asked) =
        run(&dir, PermissionMode::Default, input, "ISO-ROLE", turns).await;
    assert!(asked.is_empty(), "{asked:?}");
    // It did run in a worktree (its prompt names one), which is gone with its branch.
    let first = &sub_requests(&agent, "ISO-ROLE")[0];
    assert!(
        first["system"]
            .to_string()
            .contains(".claude/worktrees/iso-"),
        "{first}"
    );
    let results = tool_results(&sub_requests(&agent, "ISO-ROLE")[1]);
    assert!(
        !results[0].1 && results[0].0.contains("fn a() {}"),
        "{results:?}"
    );
    // Bash starts in the worktree (and `pwd` there needs no question).
    let tree = format!("{}/.claude/worktrees/iso-", dir.display());
    assert!(!results[1].1 && results[1].0.contains(&tree), "{results:?}");
    assert!(worktrees(&dir).is_empty(), "{:?}", worktrees(&dir));
    assert_eq!(agent_branches(&dir), "");
    assert_eq!(git(&dir, &["worktree", "list"]).lines().count(), 1);
    let (text, is_error) = agent_result(&agent);
    assert!(!is_error && text.starts_with("read it"), "{text}");
    assert!(!text.contains("worktree"), "{text}");
}

#[tokio::test]
async fn the_calls_isolation_outside_a_git_repository_fails_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let input = json!({"description": "edit", "prompt": "edit a", "isolation": "worktree"});
    let turns = json!([{"text": "should not run"}]);
    let (agent, _events, _asked) = run(
        &dir,
        PermissionMode::Default,
        input,
        "general-purpose agent",
        turns,
    )
    .await;
    let (text, is_error) = agent_result(&agent);
    assert!(is_error, "{text}");
    assert!(
        text.contains(&format!(
            "The general-purpose agent failed: it cannot run in an isolated worktree: {} is not \
             in a git repository; `isolation: worktree` needs one",
            dir.display()
        )),
        "{text}"
    );
    assert!(sub_requests(&agent, "general-purpose agent").is_empty());
    assert!(!dir.join(".claude").exists());
}

#[tokio::test]
async fn a_repository_whose_config_could_run_programs_refuses_the_run() {
    let (tmp, dir) = repo("isolation: worktree\n");
    let marker = std::fs::canonicalize(tmp.path()).unwrap().join("pwned");
    let config = dir.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[core]\n\tfsmonitor = touch {}\n",
        marker.display()
    ));
    std::fs::write(&config, text).unwrap();
    let turns = json!([{"text": "should not run"}]);
    let input = json!({"description": "edit", "prompt": "edit a", "subagent_type": "iso"});
    let (agent, _events, _asked) =
        run(&dir, PermissionMode::Default, input, "ISO-ROLE", turns).await;
    let (text, is_error) = agent_result(&agent);
    assert!(is_error, "{text}");
    assert!(
        text.contains("The iso agent failed: it cannot run in an isolated worktree: the repository's git configuration could make git run programs")
            && text.contains("core.fsmonitor")
            && text.contains("so cairn does not run git there"),
        "{text}"
    );
    assert!(sub_requests(&agent, "ISO-ROLE").is_empty());
    assert!(worktrees(&dir).is_empty());
    assert!(!marker.exists(), "git ran the repository's fsmonitor");
}

#[tokio::test]
async fn an_isolated_agents_own_agents_work_in_its_worktree() {
    let (_tmp, dir) = repo("isolation: worktree\ntools: [Agent, Write]\n");
    write_named(&dir, "inner", "tools: [Write]\n");
    let inner = json!({"description": "write", "prompt": "write", "subagent_type": "inner"});
    let by_system = json!([
        {"system_contains": "ISO-ROLE", "turns": [
            {"tool_calls": [call("n1", "Agent", inner)]},
            {"text": "delegated"}
        ]},
        {"system_contains": "INNER-ROLE", "turns": [
            {"tool_calls": [call("w1", "Write", json!({"file_path": "inner.txt", "content": "i\n"}))]},
            {"text": "wrote"}
        ]}
    ]);
    let input = json!({"description": "delegate", "prompt": "go", "subagent_type": "iso"});
    let (agent, _events, asked) =
        run_scripted(&dir, PermissionMode::AcceptEdits, input, by_system).await;
    assert!(asked.is_empty(), "{asked:?}");
    assert!(!dir.join("inner.txt").exists());
    let trees = worktrees(&dir);
    assert_eq!(trees.len(), 1, "{trees:?}");
    assert_eq!(
        std::fs::read_to_string(trees[0].join("inner.txt")).unwrap(),
        "i\n"
    );
    let inner_first = &sub_requests(&agent, "INNER-ROLE")[0];
    let name = trees[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        inner_first["system"].to_string().contains(&name),
        "{inner_first}"
    );
    let (text, _) = agent_result(&agent);
    assert!(text.contains("kept with its changes"), "{text}");
}

#[tokio::test]
async fn an_unknown_isolation_is_refused_and_a_symlinked_worktrees_dir_too() {
    let (tmp, dir) = repo("");
    let input = json!({"description": "x", "prompt": "x", "subagent_type": "iso",
        "isolation": "sandbox"});
    let turns = json!([{"text": "should not run"}]);
    let (agent, _events, _asked) = run(
        &dir,
        PermissionMode::Default,
        input,
        "ISO-ROLE",
        turns.clone(),
    )
    .await;
    let (text, is_error) = agent_result(&agent);
    assert!(is_error, "{text}");
    assert!(
        text.contains("isolation `sandbox` is not known: the only isolation is \"worktree\""),
        "{text}"
    );
    assert!(sub_requests(&agent, "ISO-ROLE").is_empty());
    // A repository whose `.claude/worktrees` points elsewhere gets no worktree there.
    let elsewhere = std::fs::canonicalize(tmp.path()).unwrap().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join(".claude/worktrees")).unwrap();
    let input = json!({"description": "x", "prompt": "x", "subagent_type": "iso",
        "isolation": "worktree"});
    let (agent, _events, _asked) =
        run(&dir, PermissionMode::Default, input, "ISO-ROLE", turns).await;
    let (text, is_error) = agent_result(&agent);
    assert!(
        is_error && text.contains("is a symbolic link; the worktree is not made through it"),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert!(sub_requests(&agent, "ISO-ROLE").is_empty());
}

#[tokio::test]
async fn a_background_isolated_agent_keeps_its_worktree_and_its_report_names_it() {
    let (_tmp, dir) = repo("isolation: worktree\n");
    let input = json!({"description": "bg", "prompt": "write", "subagent_type": "iso",
        "run_in_background": true});
    let script = json!({
        "turns": [
            {"tool_calls": [call("c1", "Agent", input)]},
            {"text": "waiting"},
            {"text": "got it"}
        ],
        "by_system": [{"system_contains": "ISO-ROLE", "turns": [
            {"tool_calls": [call("w1", "Write", json!({"file_path": "bg.txt", "content": "b\n"}))]},
            {"text": "wrote bg"}
        ]}]
    });
    let mut setup = Setup::in_dir(&dir, Provider::Anthropic);
    setup.agents = cairn::commands::agents::discover(&dir, None).items;
    let settings = LoadedSettings {
        project_root: dir.clone(),
        project_dir: dir.clone(),
        ..LoadedSettings::default()
    };
    setup.gate = agent::gate_in_mode(&dir, &settings, Vec::new(), PermissionMode::AcceptEdits);
    let mut agent = Agent::start(&script, setup);
    agent.submit("go");
    let reported = |agent: &Agent| {
        agent.server.requests().iter().any(|r| {
            let body = r.body.to_string();
            !body.contains("ISO-ROLE") && body.contains("kept with its changes")
        })
    };
    agent.run_turn_answering(|_| Decision::DenyOnce).await;
    if !reported(&agent) {
        // The idle core sends the report by itself when the run ends.
        agent.run_turn_answering(|_| Decision::DenyOnce).await;
    }
    assert!(reported(&agent));
    assert!(!dir.join("bg.txt").exists());
    let trees = worktrees(&dir);
    assert_eq!(trees.len(), 1, "{trees:?}");
    assert_eq!(
        std::fs::read_to_string(trees[0].join("bg.txt")).unwrap(),
        "b\n"
    );
    let body = agent
        .server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .find(|b| !b.contains("ISO-ROLE") && b.contains("kept with its changes"))
        .unwrap();
    assert!(body.contains("wrote bg"), "{body}");
    assert!(body.contains(&trees[0].display().to_string()), "{body}");
}

#[tokio::test]
async fn an_interrupted_isolated_agents_unchanged_worktree_is_removed_all_the_same() {
    let (_tmp, dir) = repo("isolation: worktree\n");
    let input = json!({"description": "x", "prompt": "x", "subagent_type": "iso"});
    let script = json!({
        "turns": [{"tool_calls": [call("c1", "Agent", input)]}, {"text": "done"}],
        "by_system": [{"system_contains": "ISO-ROLE", "turns": [
            {"text": "x", "faults": [{"keep_alive_forever_ms": 20}]}]}]
    });
    let mut setup = Setup::in_dir(&dir, Provider::Anthropic);
    setup.agents = cairn::commands::agents::discover(&dir, None).items;
    let mut agent = Agent::start(&script, setup);
    agent.submit("go");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while sub_requests(&agent, "ISO-ROLE").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "it never started");
        let _ = tokio::time::timeout(
            std::time::Duration::from_millis(20),
            agent.handle.events.recv(),
        )
        .await;
    }
    assert_eq!(worktrees(&dir).len(), 1);
    agent
        .handle
        .ops
        .send(cairn::protocol::Op::Interrupt)
        .unwrap();
    agent.run_turn().await;
    // Its end runs on a task of its own: wait for it.
    while !(worktrees(&dir).is_empty() && agent_branches(&dir).is_empty()) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the worktree stayed: {:?}",
            worktrees(&dir)
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn started_in_a_subdirectory_the_agent_works_in_the_same_place_of_its_worktree() {
    let (_tmp, top) = repo("");
    let dir = top.join("sub");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("b.rs"), "fn b() {}\n").unwrap();
    git(&top, &["add", "sub/b.rs"]);
    git(&top, &["commit", "-qm", "sub"]);
    write_agent(&dir, "isolation: worktree\n");
    let turns = json!([
        {"tool_calls": [call("w1", "Write", json!({"file_path": "b2.txt", "content": "2\n"}))]},
        {"text": "wrote"}
    ]);
    let input = json!({"description": "x", "prompt": "x", "subagent_type": "iso"});
    let (agent, _events, asked) =
        run(&dir, PermissionMode::AcceptEdits, input, "ISO-ROLE", turns).await;
    assert!(asked.is_empty(), "{asked:?}");
    // The worktree is at the repository's top; the agent worked in its `sub/`.
    let trees = worktrees(&top);
    assert_eq!(trees.len(), 1, "{trees:?}");
    assert_eq!(
        std::fs::read_to_string(trees[0].join("sub/b2.txt")).unwrap(),
        "2\n"
    );
    assert!(!dir.join("b2.txt").exists());
    let (text, _) = agent_result(&agent);
    assert!(text.contains(&trees[0].display().to_string()), "{text}");
}
