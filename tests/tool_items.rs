//! The smaller tool rules of issue 25, each driven by the scripted model through the real
//! core, executor and gate, on both wire formats: Edit's `expected_replacements`, TodoWrite's
//! one task in progress, AskUserQuestion's short headers, the Bash limits the environment sets
//! and `CLAUDE_ENV_FILE`.

use std::path::Path;
use std::time::Duration;

use cairn::config::hooks::{HookCommand, HookEvent, HookGroup, HooksConfig};
use cairn::config::layers::{Layer, Origin};
use cairn::llm::Provider;
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;

use agent::{Agent, Setup, tool_results};

/// Play one model turn per call in `calls` (each `(name, input)`), then a final text; allow
/// every request; return what the model was sent as the calls' results, in order.
async fn run_calls(setup: Setup, calls: &[(&str, Value)]) -> Vec<(String, bool)> {
    let mut turns: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| {
            json!({"tool_calls": [{"id": format!("call_{i}"), "name": name, "input": input}]})
        })
        .collect();
    turns.push(json!({"text": "done"}));
    let mut agent = Agent::start(&json!({ "turns": turns }), setup);
    agent.prompt("go").await;
    let last = agent.server.requests().len() - 1;
    // The OpenAI-compatible format has no error flag: an error result reads `Error: …`.
    tool_results(&agent.request_body(last))
        .into_iter()
        .map(|(text, is_error)| match text.strip_prefix("Error: ") {
            Some(rest) => (rest.to_string(), true),
            None => (text, is_error),
        })
        .collect()
}

fn setup(dir: &Path, provider: Provider) -> Setup {
    Setup::in_dir(dir, provider)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_expected_replacements_must_match_the_count() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x = 1\nx = 1\nx = 1\n").unwrap();
        let path = file.display().to_string();
        let edit = |n: u64| {
            json!({"file_path": path, "old_string": "x = 1", "new_string": "x = 2",
                   "expected_replacements": n})
        };
        let results = run_calls(
            setup(dir.path(), provider),
            &[
                ("Read", json!({"file_path": path})),
                ("Edit", edit(2)),
                ("Edit", edit(3)),
            ],
        )
        .await;
        assert_eq!(
            results[1],
            (
                "Expected 2 replacements but found 3 matches of the string to replace. No edit \
                 was made.\nString: x = 1"
                    .to_string(),
                true
            ),
            "{provider:?}"
        );
        assert!(!results[2].1, "{provider:?}: {}", results[2].0);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "x = 2\nx = 2\nx = 2\n"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn todo_write_takes_at_most_one_task_in_progress() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        let todo = |s: &str, status: &str| json!({"content": s, "activeForm": s, "status": status});
        let two = json!({"todos": [todo("a", "in_progress"), todo("b", "pending"),
                                   todo("c", "in_progress")]});
        let one = json!({"todos": [todo("a", "in_progress"), todo("b", "pending")]});
        let results = run_calls(
            setup(dir.path(), provider),
            &[("TodoWrite", two), ("TodoWrite", one)],
        )
        .await;
        assert_eq!(
            results[0],
            (
                "2 tasks are in_progress (todos[0], todos[2]); keep at most one task in_progress \
                 at a time."
                    .to_string(),
                true
            ),
            "{provider:?}"
        );
        assert!(!results[1].1, "{provider:?}: {}", results[1].0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_question_headers_are_at_most_twelve_characters() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        let ask = |header: &str| {
            json!({"questions": [{"question": "Which database?", "header": header,
                "multiSelect": false,
                "options": [{"label": "Postgres", "description": "relational"},
                            {"label": "SQLite", "description": "a file"}]}]})
        };
        let results = run_calls(
            setup(dir.path(), provider),
            &[("AskUserQuestion", ask("Database choice"))],
        )
        .await;
        assert_eq!(
            results[0],
            (
                "questions[0].header \"Database choice\" is 15 characters; a header is at most \
                 12 (a short label such as \"Auth method\")."
                    .to_string(),
                true
            ),
            "{provider:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_limits_come_from_the_environment() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        let mut s = setup(dir.path(), provider);
        s.env = vec![
            ("BASH_DEFAULT_TIMEOUT_MS".into(), "300".into()),
            ("BASH_MAX_TIMEOUT_MS".into(), "2000".into()),
            ("BASH_MAX_OUTPUT_LENGTH".into(), "100".into()),
        ];
        let results = run_calls(
            s,
            &[
                ("Bash", json!({"command": "sleep 5"})),
                ("Bash", json!({"command": "true", "timeout": 5000})),
                ("Bash", json!({"command": "printf 'y%.0s' $(seq 1 500)"})),
            ],
        )
        .await;
        assert_eq!(
            results[0],
            ("Command timed out after 0.3 s".to_string(), true),
            "{provider:?}"
        );
        assert!(
            results[1].1
                && results[1]
                    .0
                    .starts_with("timeout 5000 ms is more than the maximum of 2000 ms (2 s)"),
            "{provider:?}: {:?}",
            results[1]
        );
        let out = &results[2].0;
        assert!(
            !out.contains(&"y".repeat(200)) && out.contains("characters truncated"),
            "{provider:?}: output was not cut to about 100 characters: {out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_env_file_written_by_a_session_start_hook_is_sourced_before_each_command() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        let mut s = setup(dir.path(), provider);
        s.hooks = HooksConfig {
            groups: vec![HookGroup {
                event: HookEvent::SessionStart,
                matcher: String::new(),
                commands: vec![HookCommand {
                    command: "echo 'export VENV_NAME=from-hook' >> \"$CLAUDE_ENV_FILE\"".into(),
                    timeout: Duration::from_secs(30),
                }],
                origin: Origin {
                    layer: Layer::User,
                    source: "test".into(),
                },
            }],
        };
        let results = run_calls(
            s,
            &[
                ("Bash", json!({"command": "echo \"venv=$VENV_NAME\""})),
                ("Bash", json!({"command": "echo \"again=$VENV_NAME\""})),
            ],
        )
        .await;
        assert_eq!(
            results[0],
            ("venv=from-hook".to_string(), false),
            "{provider:?}"
        );
        assert_eq!(
            results[1],
            ("again=from-hook".to_string(), false),
            "{provider:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_prompt_carries_the_bash_tools_own_guidance() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        let mut agent = Agent::start(
            &json!({"turns": [{"text": "hi"}]}),
            setup(dir.path(), provider),
        );
        agent.prompt("hello").await;
        let body = agent.request_body(0).to_string();
        assert!(
            body.contains("Prefer the dedicated tools over shell commands: Read over cat")
                && body.contains("Never run destructive or irreversible commands"),
            "{provider:?}"
        );
    }
}

/// A gate in acceptEdits mode over project `dir`.
fn accept_edits_gate(dir: &Path) -> cairn::permissions::PermissionGate {
    let settings = cairn::config::LoadedSettings {
        project_root: dir.to_path_buf(),
        project_dir: dir.to_path_buf(),
        ..Default::default()
    };
    agent::gate_in_mode(
        dir,
        &settings,
        Vec::new(),
        cairn::protocol::PermissionMode::AcceptEdits,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sensitive_paths_ask_before_a_write_even_in_accept_edits() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str| {
            let p = dir.path().join(rel).display().to_string();
            json!({"file_path": p, "content": "SECRET=1\n"})
        };
        let files = [
            "src/ok.txt",
            ".env",
            ".env.local",
            "node_modules/x/index.js",
            ".ssh/config",
            ".gnupg/gpg.conf",
        ];
        let mut turns: Vec<Value> = files
            .iter()
            .enumerate()
            .map(|(i, f)| json!({"tool_calls": [{"id": format!("w{i}"), "name": "Write", "input": write(f)}]}))
            .collect();
        turns.push(json!({"text": "done"}));
        let mut s = setup(dir.path(), provider);
        s.gate = accept_edits_gate(dir.path());
        let mut agent = Agent::start(&json!({ "turns": turns }), s);
        agent.submit("go");
        let mut asked = Vec::new();
        agent
            .run_turn_answering(|req| {
                asked.push(req.title.clone());
                cairn::protocol::Decision::DenyOnce
            })
            .await;
        assert_eq!(asked.len(), 5, "{provider:?}: {asked:?}");
        assert!(dir.path().join("src/ok.txt").is_file(), "{provider:?}");
        for f in &files[1..] {
            assert!(
                !dir.path().join(f).exists(),
                "{provider:?}: {f} was written"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_through_a_symlink_names_the_file_that_changes() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let target = dir.path().join("real/config.toml");
        std::fs::write(&target, "a = 1\n").unwrap();
        let link = dir.path().join("config.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let path = link.display().to_string();
        let results = run_calls(
            setup(dir.path(), provider),
            &[
                ("Read", json!({"file_path": path})),
                (
                    "Edit",
                    json!({"file_path": path, "old_string": "a = 1", "new_string": "a = 2"}),
                ),
            ],
        )
        .await;
        let note = format!(
            "Note: {path} is a symbolic link; the file written is its target {}.",
            target.canonicalize().unwrap().display()
        );
        assert!(
            results[1].0.ends_with(&note),
            "{provider:?}: {}",
            results[1].0
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "a = 2\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_and_glob_stop_at_their_time_budget_with_a_partial_result() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        for d in 0..40 {
            let sub = dir.path().join(format!("d{d}"));
            std::fs::create_dir(&sub).unwrap();
            for f in 0..100 {
                std::fs::write(sub.join(format!("f{f}.txt")), "needle\n").unwrap();
            }
        }
        let mut s = setup(dir.path(), provider);
        s.env = vec![("CAIRN_SEARCH_TIMEOUT_MS".into(), "1".into())];
        let results = run_calls(
            s,
            &[
                ("Glob", json!({"pattern": "**/*.txt"})),
                ("Grep", json!({"pattern": "needle", "output_mode": "count"})),
            ],
        )
        .await;
        let note = "(The search stopped at its time budget of 1 ms: these results are partial. \
                    Search a narrower path or pattern for the rest.)";
        for (text, is_error) in &results {
            assert!(!is_error && text.ends_with(note), "{provider:?}: {text}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_output_blocks_for_a_background_shell_and_task_stop_stops_one() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        let results = run_calls(
            setup(dir.path(), provider),
            &[
                (
                    "Bash",
                    json!({"command": "sleep 0.5; echo finished", "run_in_background": true}),
                ),
                (
                    "TaskOutput",
                    json!({"task_id": "bash_1", "block": true, "timeout": 20000}),
                ),
                (
                    "Bash",
                    json!({"command": "sleep 30", "run_in_background": true}),
                ),
                ("TaskStop", json!({"task_id": "bash_2"})),
                ("BashOutput", json!({"bash_id": "bash_2"})),
            ],
        )
        .await;
        assert!(
            results[0]
                .0
                .contains("Read its output with TaskOutput (task_id \"bash_1\")"),
            "{provider:?}: {}",
            results[0].0
        );
        assert!(
            results[1]
                .0
                .starts_with("<status>completed</status>\n<exit_code>0</exit_code>")
                && results[1].0.contains("<stdout>\nfinished\n</stdout>"),
            "{provider:?}: {}",
            results[1].0
        );
        assert!(!results[3].1, "{provider:?}: {}", results[3].0);
        assert!(
            results[4].0.starts_with("<status>killed</status>"),
            "{provider:?}: {}",
            results[4].0
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_search_answers_in_the_notes_form() {
    for provider in llm::BOTH {
        let dir = tempfile::tempdir().unwrap();
        let lines: String = (1..=105).map(|i| format!("hit {i}\n")).collect();
        std::fs::write(dir.path().join("a.txt"), lines).unwrap();
        std::fs::write(dir.path().join("b.rs"), "hit in rust\n").unwrap();
        let results = run_calls(
            setup(dir.path(), provider),
            &[
                ("grep_search", json!({"pattern": "hit", "include": "*.txt"})),
                ("grep_search", json!({"pattern": "absent"})),
                ("Grep", json!({"pattern": "hit"})),
            ],
        )
        .await;
        let a = dir.path().join("a.txt").display().to_string();
        let want: Vec<String> = (1..=100).map(|i| format!("{a}:{i}:hit {i}")).collect();
        assert_eq!(
            results[0],
            (
                format!("{}\n... and 5 more matches", want.join("\n")),
                false
            ),
            "{provider:?}"
        );
        assert_eq!(
            results[1],
            ("No matches found.".to_string(), false),
            "{provider:?}"
        );
        assert!(
            results[2].0.starts_with("Found 2 files\n"),
            "{provider:?}: {}",
            results[2].0
        );
    }
}
