//! Per-conversation working roots in the permission gate: a conversation set to work in its
//! own worktree of the project (an isolated sub-agent) is judged against that copy — inside it
//! is inside, protected names count below its root, project rules speak about it — while the
//! real project is outside it; every other conversation is judged exactly as before.

use std::path::{Path, PathBuf};

use cairn::config::LoadedSettings;
use cairn::permissions::{GateConfig, GateOutcome, PermissionGate};
use cairn::protocol::PermissionMode;
use cairn::session::context::SessionContext;
use serde_json::json;

#[path = "support/probe.rs"]
mod probe;

use probe::{Probe, check_call};

struct Ws {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    tree: PathBuf,
}

fn ws() -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(tmp.path()).unwrap().join("proj");
    let tree = project.join(".claude/worktrees/helper-1a2b");
    for d in ["src", ".claude", "keep"] {
        std::fs::create_dir_all(project.join(d)).unwrap();
        std::fs::create_dir_all(tree.join(d)).unwrap();
    }
    Ws {
        _tmp: tmp,
        project,
        tree,
    }
}

fn gate(
    dir: &Path,
    mode: PermissionMode,
    interactive: bool,
    allow: &[&str],
    deny: &[&str],
) -> PermissionGate {
    let settings = LoadedSettings {
        project_root: dir.to_path_buf(),
        project_dir: dir.to_path_buf(),
        ..LoadedSettings::default()
    };
    PermissionGate::new(GateConfig {
        settings: &settings,
        cli_allow: allow.iter().map(|s| s.to_string()).collect(),
        cli_deny: deny.iter().map(|s| s.to_string()).collect(),
        mode,
        interactive,
        project_dir: dir.to_path_buf(),
        additional_dirs: Vec::new(),
        session_data_dir: dir.join(".data"),
        running_as_root: false,
        sandboxed: false,
    })
    .unwrap()
}

/// A session of the isolated conversation (working in `tree`), registered with `gate`.
fn isolated(gate: &PermissionGate, tree: &Path) -> std::sync::Arc<SessionContext> {
    let session = SessionContext::for_dir(tree);
    gate.set_conversation_root(&session.conversation, tree);
    session
}

async fn write(gate: &PermissionGate, session: &SessionContext, path: &Path) -> GateOutcome {
    let edit = Probe::named("Edit", false);
    let input = json!({"write": [path]});
    let outcome = check_call(gate, session, &edit, &input, "w").await;
    gate.withdraw("w");
    outcome
}

async fn read(gate: &PermissionGate, session: &SessionContext, path: &Path) -> GateOutcome {
    let read = Probe::named("Read", true);
    check_call(gate, session, &read, &json!({"read": [path]}), "r").await
}

fn reason(outcome: &GateOutcome) -> String {
    match outcome {
        GateOutcome::Ask(req) => req.reason.clone(),
        GateOutcome::Deny { message } => message.clone(),
        GateOutcome::Allow => "allowed".into(),
    }
}

#[tokio::test]
async fn accept_edits_allows_the_worktree_and_asks_for_the_real_tree_and_protected_paths() {
    let ws = ws();
    let gate = gate(&ws.project, PermissionMode::AcceptEdits, true, &[], &[]);
    let main = SessionContext::for_dir(&ws.project);
    let agent = isolated(&gate, &ws.tree);
    assert_eq!(
        gate.conversation_root(&agent.conversation),
        Some(ws.tree.clone())
    );
    // The agent's own tree is its working directory, though it lies under `.claude/`.
    let own = ws.tree.join("src/a.rs");
    assert_eq!(write(&gate, &agent, &own).await, GateOutcome::Allow);
    assert_eq!(
        write(&gate, &agent, &ws.tree.join("notes.txt")).await,
        GateOutcome::Allow
    );
    // Its `.claude/settings.json` is protected, as the project's is.
    let settings = write(&gate, &agent, &ws.tree.join(".claude/settings.json")).await;
    assert!(
        matches!(&settings, GateOutcome::Ask(_)) && reason(&settings).contains("a protected path"),
        "{settings:?}"
    );
    // The real project is outside its working directories.
    let real = write(&gate, &agent, &ws.project.join("src/a.rs")).await;
    assert!(
        matches!(&real, GateOutcome::Ask(_))
            && reason(&real).contains("outside the working directories"),
        "{real:?}"
    );
    // The session's conversation is judged as always: the project is inside, and the
    // worktree is under its protected `.claude/`.
    assert_eq!(
        write(&gate, &main, &ws.project.join("src/a.rs")).await,
        GateOutcome::Allow
    );
    let from_main = write(&gate, &main, &own).await;
    assert!(
        reason(&from_main).contains("a protected path"),
        "{from_main:?}"
    );
    // Once forgotten, the conversation is the session's again.
    gate.forget_conversation(&agent.conversation);
    assert_eq!(gate.conversation_root(&agent.conversation), None);
    assert!(reason(&write(&gate, &agent, &own).await).contains("a protected path"));
}

#[tokio::test]
async fn read_only_calls_pass_inside_the_worktree_and_ask_in_the_real_tree() {
    let ws = ws();
    let gate = gate(&ws.project, PermissionMode::Default, true, &[], &[]);
    let agent = isolated(&gate, &ws.tree);
    assert_eq!(
        read(&gate, &agent, &ws.tree.join("src/a.rs")).await,
        GateOutcome::Allow
    );
    let real = read(&gate, &agent, &ws.project.join("src/a.rs")).await;
    assert!(
        reason(&real).contains("outside the working directories"),
        "{real:?}"
    );
    // A shell command's paths are judged the same way: `touch` in acceptEdits, in its tree.
    gate.set_mode(PermissionMode::AcceptEdits);
    let bash = Probe::named("Bash", false);
    let touch = json!({"exec": ["touch notes.txt"]});
    assert_eq!(
        check_call(&gate, &agent, &bash, &touch, "b").await,
        GateOutcome::Allow
    );
    let outside = json!({"exec": [format!("touch {}", ws.project.join("x").display())]});
    let asked = check_call(&gate, &agent, &bash, &outside, "b2").await;
    assert!(matches!(asked, GateOutcome::Ask(_)), "{asked:?}");
}

#[tokio::test]
async fn project_rules_speak_about_the_worktree_and_never_widen_to_the_real_tree() {
    let ws = ws();
    let gate = gate(
        &ws.project,
        PermissionMode::Default,
        true,
        &["Edit(src/**)"],
        &["Edit(/keep/**)"],
    );
    let agent = isolated(&gate, &ws.tree);
    // `Edit(src/**)` allows the agent's `src/`, not the project's.
    assert_eq!(
        write(&gate, &agent, &ws.tree.join("src/a.rs")).await,
        GateOutcome::Allow
    );
    let real = write(&gate, &agent, &ws.project.join("src/a.rs")).await;
    assert!(matches!(&real, GateOutcome::Ask(_)), "{real:?}");
    // A deny rule anchored at the project refuses the copy too.
    let kept = write(&gate, &agent, &ws.tree.join("keep/x")).await;
    assert!(
        matches!(&kept, GateOutcome::Deny { message } if message.contains("Edit(/keep/**)")),
        "{kept:?}"
    );
    // What "always allow" would save is written relative to the agent's root, so it means
    // the same path of the project.
    let docs = write(&gate, &agent, &ws.tree.join("docs/x.md")).await;
    let GateOutcome::Ask(req) = docs else {
        panic!("{docs:?}")
    };
    assert_eq!(req.saveable_rule.as_deref(), Some("Edit(docs/x.md)"));
}

#[tokio::test]
async fn headless_refuses_a_write_to_the_real_tree_naming_why() {
    let ws = ws();
    let gate = gate(&ws.project, PermissionMode::AcceptEdits, false, &[], &[]);
    let agent = isolated(&gate, &ws.tree);
    assert_eq!(
        write(&gate, &agent, &ws.tree.join("src/a.rs")).await,
        GateOutcome::Allow
    );
    let real = write(&gate, &agent, &ws.project.join("src/a.rs")).await;
    assert!(
        matches!(&real, GateOutcome::Deny { message }
            if message.contains("outside the working directories")),
        "{real:?}"
    );
}

#[tokio::test]
async fn a_read_guard_for_the_isolated_conversation_denies_the_copies_of_denied_paths() {
    let ws = ws();
    let gate = gate(
        &ws.project,
        PermissionMode::Default,
        true,
        &[],
        &["Read(/keep/**)"],
    );
    let agent = isolated(&gate, &ws.tree);
    let guard = gate.read_guard();
    let copy = ws.tree.join("keep/x");
    // The session's guard judges the path as it is (under `.claude/worktrees/`, not `/keep`).
    assert!(guard.denied(&ws.project.join("keep/x")));
    assert!(!guard.denied(&copy));
    // The agent's sees the copy as the project's `keep/x`.
    assert!(guard.for_conversation(&agent.conversation).denied(&copy));
    assert!(
        !guard
            .for_conversation(&agent.conversation)
            .denied(&ws.tree.join("src/a.rs"))
    );
    assert!(!guard.for_conversation("another").denied(&copy));
    // The gate's own check of a Read call agrees.
    let read = read(&gate, &agent, &copy).await;
    assert!(matches!(read, GateOutcome::Deny { .. }), "{read:?}");
}
