//! Sessions that last, with the real binary in `-p` against the scripted model: continue after
//! a normal exit, resume by id, fork, and resume after the process was SIGKILLed mid-stream
//! and mid-tool, or its transcript cut mid-line. What the resumed session sends is read from
//! the scripted server.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use cairn::llm::scripted::ScriptedServer;
use serde_json::{Value, json};

#[path = "support/llm.rs"]
mod llm;
#[path = "support/trust.rs"]
mod trust;

struct Env {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let env = Env {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        };
        std::fs::write(env.project.path().join("notes.txt"), "alpha\n").unwrap();
        env
    }

    fn command(&self, server: &ScriptedServer, args: &[&str]) -> tokio::process::Command {
        trust::trust_folder(self.home.path(), self.project.path());
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.current_dir(self.project.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("CAIRN_DATA_DIR", self.home.path().join("data"))
            .env("ANTHROPIC_BASE_URL", server.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "test-key")
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    async fn run(&self, server: &ScriptedServer, args: &[&str]) -> Output {
        let out =
            tokio::time::timeout(Duration::from_secs(30), self.command(server, args).output())
                .await
                .expect("cairn did not finish")
                .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// The transcripts written so far.
    fn transcripts(&self) -> Vec<PathBuf> {
        let projects = self.home.path().join("data/projects");
        let Ok(dirs) = std::fs::read_dir(projects) else {
            return Vec::new();
        };
        dirs.flatten()
            .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect()
    }

    /// Wait until a transcript holds `needle`; its path.
    async fn wait_for_transcript(&self, needle: &str) -> PathBuf {
        for _ in 0..300 {
            for path in self.transcripts() {
                if std::fs::read_to_string(&path).is_ok_and(|t| t.contains(needle)) {
                    return path;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no transcript came to hold {needle}");
    }
}

fn session_id(out: &Output) -> String {
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["session_id"].as_str().unwrap().to_string()
}

/// The messages of the server's `n`th request, as JSON text.
fn messages(server: &ScriptedServer, n: usize) -> String {
    server.requests()[n].body["messages"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_resume_and_fork_carry_the_conversation() {
    let env = Env::new();
    let server = llm::scripted(&json!({"turns": [
        {"text": "Alpha is the answer."},
        {"text": "Still alpha."},
        {"text": "Forked."},
        {"text": "Back on the original."}
    ]}));
    let json = ["--output-format", "json"];
    let first = env
        .run(&server, &[&["-p", "what is in notes?"][..], &json].concat())
        .await;
    let id = session_id(&first);
    let second = env
        .run(
            &server,
            &[&["-p", "--continue", "and again?"][..], &json].concat(),
        )
        .await;
    assert_eq!(session_id(&second), id, "--continue keeps the session");
    let sent = messages(&server, 1);
    for part in ["what is in notes?", "Alpha is the answer.", "and again?"] {
        assert!(sent.contains(part), "{part} missing from {sent}");
    }
    let fork = env
        .run(
            &server,
            &[
                &["-p", "--resume", &id, "--fork-session", "fork it"][..],
                &json,
            ]
            .concat(),
        )
        .await;
    let fork_id = session_id(&fork);
    assert_ne!(fork_id, id);
    assert!(messages(&server, 2).contains("Still alpha."));
    // The fork has its own transcript with the whole history; the original did not get "fork it".
    let transcripts = env.transcripts();
    let read = |id: &str| {
        let path = transcripts
            .iter()
            .find(|p| p.ends_with(format!("{id}.jsonl")))
            .unwrap();
        std::fs::read_to_string(path).unwrap()
    };
    assert!(read(&fork_id).contains("Alpha is the answer."));
    assert!(!read(&id).contains("fork it"));
    env.run(&server, &["-p", "--resume", &id, "and the original?"])
        .await;
    let sent = messages(&server, 3);
    assert!(
        sent.contains("Still alpha.") && !sent.contains("fork it"),
        "{sent}"
    );
    // Nothing to resume by that name: a clear refusal.
    let out = env
        .command(&server, &["-p", "--resume", "no-such-session", "x"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no session no-such-session"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_mid_stream_resumes_with_its_partial_answer() {
    let env = Env::new();
    let long = "The notes file holds one word. ".repeat(40);
    let slow = llm::scripted(&json!({"turns": [
        {"text": long, "chunk_chars": 16, "delay_ms": 40}
    ]}));
    let mut child = env
        .command(&slow, &["-p", "describe notes"])
        .spawn()
        .unwrap();
    // Killed once the transcript holds part of the answer.
    let path = env.wait_for_transcript("The notes file holds").await;
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    // The scripted model answers by how many answers the conversation already has.
    let server = llm::scripted(&json!({"turns": [{"text": "unused"}, {"text": "Carrying on."}]}));
    let out = env.run(&server, &["-p", "--continue", "go on"]).await;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Carrying on.");
    let sent = messages(&server, 0);
    assert!(sent.contains("The notes file holds one word."), "{sent}");
    assert!(
        sent.contains("the session stopped while it was written"),
        "{sent}"
    );
    assert!(sent.contains("go on"));
    assert!(path.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_mid_tool_resumes_with_the_call_interrupted() {
    let env = Env::new();
    let slow = llm::scripted(&json!({"turns": [
        {"tool_calls": [{"id": "sleepy", "name": "Bash", "input": {"command": "sleep 3"}}]},
        {"text": "never"}
    ]}));
    let args = ["-p", "wait a bit", "--allowedTools", "Bash(sleep *)"];
    let mut child = env.command(&slow, &args).spawn().unwrap();
    env.wait_for_transcript("\"sleepy\"").await;
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    let server = llm::scripted(&json!({"turns": [{"text": "unused"}, {"text": "Interrupted."}]}));
    let out = env
        .run(&server, &["-p", "--continue", "what happened?"])
        .await;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Interrupted.");
    let body = &server.requests()[0].body;
    let msgs = body["messages"].as_array().unwrap();
    // user, assistant (the call), user (its result first, then the new prompt).
    assert_eq!(msgs.len(), 3, "{msgs:?}");
    assert_eq!(msgs[1]["content"][0]["id"], "sleepy");
    let result = &msgs[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "sleepy");
    assert_eq!(result["is_error"], true);
    assert!(msgs[2].to_string().contains("what happened?"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transcript_cut_mid_line_or_from_a_newer_cairn() {
    let env = Env::new();
    let server = llm::scripted(&json!({"turns": [
        {"text": "First answer."},
        {"text": "Second answer."},
        {"text": "Resumed fine."}
    ]}));
    env.run(&server, &["-p", "one"]).await;
    env.run(&server, &["-p", "--continue", "two"]).await;
    let path = env.transcripts().pop().unwrap();
    // A crash mid-write: the last line is cut in half.
    let text = std::fs::read_to_string(&path).unwrap();
    let last = text.trim_end().rfind('\n').unwrap() + 1;
    let cut = &text[..last + (text.len() - last) / 2];
    std::fs::write(&path, cut).unwrap();
    let out = env.run(&server, &["-p", "--continue", "three"]).await;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Resumed fine.");
    let sent = messages(&server, 2);
    assert!(
        sent.contains("First answer.") && sent.contains("three"),
        "{sent}"
    );
    // A newer format is refused, and says so.
    write_newer(&path);
    let out = env
        .command(&server, &["-p", "--continue", "four"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("written by a newer cairn"), "{stderr}");
}

fn write_newer(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let header = r#"{"type":"session","version":99,"cwd":"/","sessionId":"s","timestamp":"t"}"#;
    std::fs::write(path, format!("{header}\n{text}")).unwrap();
}
