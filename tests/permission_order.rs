//! Permission before information: the real agent (scripted model on 127.0.0.1, real executor,
//! gate and file tools) calls each file tool on an existing and a missing file under a path it
//! may not touch. The model must read the same refusal for both, so a denial never tells
//! whether a file exists, and the tool must not have run.

use std::time::Duration;

use cairn::config::load_settings;
use cairn::llm::Provider;
use cairn::permissions::{GateConfig, PermissionGate};
use cairn::protocol::{Decision, PermissionMode};
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;
#[path = "support/workspace.rs"]
mod workspace;

use agent::{Agent, Setup, tool_results};
use workspace::Homes;

type Ws = Homes;

/// The workspace of these tests: `proj/` (with `secret/`) and `outside/` each hold a
/// `present.txt` and a subdirectory `there/`.
fn ws() -> Ws {
    let ws = Homes::new();
    for d in ["proj/secret/there", "proj/src", "outside/there"] {
        std::fs::create_dir_all(ws.root.join(d)).unwrap();
    }
    for f in [
        "proj/secret/present.txt",
        "proj/.git/present.txt",
        "proj/src/present.txt",
        "outside/present.txt",
    ] {
        ws.write(f, "a line\n");
    }
    ws
}

struct GateSpec {
    deny: Vec<String>,
    mode: PermissionMode,
    interactive: bool,
}

/// A gate in `mode`, interactive or not, with no command-line deny rules.
fn spec(mode: PermissionMode, interactive: bool) -> GateSpec {
    GateSpec {
        deny: Vec::new(),
        mode,
        interactive,
    }
}

/// Run one model turn making `calls`, and return the tool results the model got (text,
/// is_error), in call order. Any permission request is denied and counted.
async fn run_calls(
    ws: &Ws,
    spec: GateSpec,
    calls: &[(&str, Value)],
) -> (Vec<(String, bool)>, usize) {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| json!({"id": format!("c{i}"), "name": name, "input": input}))
        .collect();
    let script = json!({"turns": [{"tool_calls": tool_calls}, {"text": "done"}]});
    let settings = load_settings(&ws.proj, None, &ws.env(), cairn::config::Trust::Trusted);
    assert!(
        settings.diagnostics.is_empty(),
        "{:?}",
        settings.diagnostics
    );
    let gate = PermissionGate::new(GateConfig {
        cli_deny: spec.deny,
        mode: spec.mode,
        interactive: spec.interactive,
        ..ws.gate_config(&settings)
    })
    .unwrap();
    let mut agent = Agent::start(
        &script,
        Setup {
            provider: Provider::Anthropic,
            project_dir: ws.proj.clone(),
            data_dir: ws.data.clone(),
            transcript: false,
            session_id: "s-order",
            gate,
            hooks: settings.hooks.clone(),
            max_turns: None,
            idle: Duration::from_secs(30),
            retry: llm::fast_retry(1, 10, 10),
            tools: Vec::new(),
            ..Setup::in_dir(&ws.proj, Provider::Anthropic)
        },
    );
    agent.submit("go");
    let mut asked = 0;
    agent
        .run_turn_answering(|_| {
            asked += 1;
            Decision::DenyOnce
        })
        .await;
    let results = tool_results(&agent.request_body(1));
    assert_eq!(results.len(), calls.len(), "{results:?}");
    (results, asked)
}

/// The calls of every file tool on `present` and `missing` (files), or on `dir` and
/// `dir/there` and `dir/nowhere` (searches). Returned in pairs: existing, then missing.
fn file_tool_calls(dir: &str, edits_only: bool) -> Vec<(&'static str, Value)> {
    let present = format!("{dir}/present.txt");
    let missing = format!("{dir}/missing.txt");
    let mut calls = Vec::new();
    for path in [&present, &missing] {
        calls.push(("Write", json!({"file_path": path, "content": "new\n"})));
    }
    for path in [&present, &missing] {
        calls.push((
            "Edit",
            json!({"file_path": path, "old_string": "a line", "new_string": "b line"}),
        ));
    }
    for path in [&present, &missing] {
        calls.push((
            "MultiEdit",
            json!({"file_path": path, "edits": [{"old_string": "a line", "new_string": "b"}]}),
        ));
    }
    if !edits_only {
        for path in [&present, &missing] {
            calls.push(("Read", json!({"file_path": path})));
        }
        let (there, nowhere) = (format!("{dir}/there"), format!("{dir}/nowhere"));
        for path in [&there, &nowhere] {
            calls.push(("Glob", json!({"pattern": "*.txt", "path": path})));
        }
        for path in [&there, &nowhere] {
            calls.push(("Grep", json!({"pattern": "line", "path": path})));
        }
    }
    calls
}

/// Each pair of results (existing, missing) must be the same refusal, once the names differ.
fn assert_same_refusals(calls: &[(&str, Value)], results: &[(String, bool)], expect: &str) {
    for (pair, call) in results.chunks(2).zip(calls.chunks(2)) {
        let tool = call[0].0;
        let norm = |s: &str| {
            s.replace("present.txt", "FILE")
                .replace("missing.txt", "FILE")
                .replace("/there", "/DIR")
                .replace("/nowhere", "/DIR")
        };
        assert!(pair[0].1 && pair[1].1, "{tool}: both are errors: {pair:?}");
        assert_eq!(
            norm(&pair[0].0),
            norm(&pair[1].0),
            "{tool}: an existing and a missing file got different answers"
        );
        assert!(
            pair[0].0.contains(expect),
            "{tool}: not the refusal expected ({expect}): {}",
            pair[0].0
        );
    }
}

fn assert_untouched(ws: &Ws, dir: &str) {
    let base = ws.proj.join(dir);
    assert_eq!(
        std::fs::read_to_string(base.join("present.txt")).unwrap(),
        "a line\n"
    );
    assert!(
        !base.join("missing.txt").exists(),
        "a denied write created a file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_answers_the_same_for_existing_and_missing_files() {
    let ws = ws();
    let dir = ws.proj.join("secret").to_string_lossy().into_owned();
    let calls = file_tool_calls(&dir, false);
    let (results, asked) = run_calls(
        &ws,
        GateSpec {
            deny: vec!["Read(./secret/**)".into()],
            ..spec(PermissionMode::Default, true)
        },
        &calls,
    )
    .await;
    assert_eq!(asked, 0, "a deny rule never asks");
    assert_same_refusals(
        &calls,
        &results,
        "has been denied by the rule `Read(./secret/**)`",
    );
    assert_untouched(&ws, "secret");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_path_is_refused_headless_before_the_file_is_read() {
    let ws = ws();
    let dir = ws.proj.join(".git").to_string_lossy().into_owned();
    let calls = file_tool_calls(&dir, true);
    let (results, _) = run_calls(&ws, spec(PermissionMode::AcceptEdits, false), &calls).await;
    assert_same_refusals(&calls, &results, "no one can be asked");
    assert_untouched(&ws, ".git");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_outside_the_working_dirs_is_refused_headless_alike() {
    let ws = ws();
    let dir = ws.root.join("outside").to_string_lossy().into_owned();
    let calls = file_tool_calls(&dir, false);
    let (results, _) = run_calls(&ws, spec(PermissionMode::Default, false), &calls).await;
    assert_same_refusals(&calls, &results, "outside the working directories");
    assert_eq!(
        std::fs::read_to_string(ws.root.join("outside/present.txt")).unwrap(),
        "a line\n"
    );
    assert!(!ws.root.join("outside/missing.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_denial_wins_over_a_validation_error() {
    let ws = ws();
    std::fs::create_dir_all(ws.proj.join(".claude")).unwrap();
    std::fs::write(
        ws.proj.join(".claude/settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Write|Edit|MultiEdit", "hooks": [
            {"type": "command", "command": "echo 'no edits in src' >&2; exit 2"}]}]}})
        .to_string(),
    )
    .unwrap();
    let dir = ws.proj.join("src").to_string_lossy().into_owned();
    let calls = file_tool_calls(&dir, true);
    let (results, asked) = run_calls(&ws, spec(PermissionMode::AcceptEdits, true), &calls).await;
    assert_eq!(asked, 0);
    assert_same_refusals(
        &calls,
        &results,
        "A PreToolUse hook denied this call: no edits in src",
    );
    assert_untouched(&ws, "src");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_call_still_gets_its_validation_error() {
    let ws = ws();
    let file = ws
        .proj
        .join("src/present.txt")
        .to_string_lossy()
        .into_owned();
    let calls = [(
        "Edit",
        json!({"file_path": file, "old_string": "a line", "new_string": "b line"}),
    )];
    let (results, asked) = run_calls(&ws, spec(PermissionMode::AcceptEdits, true), &calls).await;
    assert_eq!(asked, 0);
    assert!(results[0].1);
    assert!(
        results[0].0.contains("has not been read yet"),
        "{}",
        results[0].0
    );
    assert_untouched(&ws, "src");
}

/// Asking is not denying, but the question must still come before the tool looks: a search
/// outside the working directories asks first whether or not its directory exists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_outside_asks_before_it_says_whether_the_directory_exists() {
    let ws = ws();
    let dir = ws.root.join("outside").to_string_lossy().into_owned();
    let calls: Vec<(&str, Value)> = file_tool_calls(&dir, false)
        .into_iter()
        .filter(|(name, _)| matches!(*name, "Glob" | "Grep"))
        .collect();
    let (results, asked) = run_calls(&ws, spec(PermissionMode::Default, true), &calls).await;
    assert_eq!(
        asked,
        calls.len(),
        "every search was asked about: {results:?}"
    );
    assert_same_refusals(&calls, &results, "The tool use was rejected");
}
