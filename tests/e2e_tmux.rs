//! The real `cairn` binary in a real terminal: tmux runs it against the scripted model server on
//! 127.0.0.1; keys go in with send-keys and the screen comes back with capture-pane.
//!
//! Skipped (with a message) when tmux is not installed; CI installs it.

use serde_json::json;

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, require_tmux, server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_prompt_gets_a_streamed_answer() {
    require_tmux!();
    let s = server(
        json!({"turns": [{"text": "Hello from the scripted model. All good.",
                                     "chunk_chars": 5, "delay_ms": 10}]}),
    );
    let project = tempfile::tempdir().unwrap();
    let t = Tmux::start_with_env(&s, project.path(), (100, 30), "", &[]);
    t.submit("say hello");
    let screen = t.wait_for("All good.");
    assert!(
        screen.contains("say hello"),
        "the prompt stays visible:\n{screen}"
    );
    let body = s.requests()[0].body.to_string();
    assert!(body.contains("say hello"));
    // Ctrl+D on an empty composer quits and leaves the summary on the normal screen.
    t.send_keys(&["C-d"]);
    let screen = t.wait_for("cairn session");
    assert!(screen.contains("tokens in"), "{screen}");
    let screen = t.wait_for("cairn-exited=0");
    assert!(
        !screen.contains("Type a message"),
        "the UI is gone:\n{screen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resizing_mid_stream_reflows_and_keeps_streaming() {
    require_tmux!();
    let words: Vec<String> = (1..=40).map(|i| format!("word{i}")).collect();
    let text = format!("{} THE-END", words.join(" "));
    let s = server(json!({"turns": [{"text": text, "chunk_chars": 4, "delay_ms": 40}]}));
    let project = tempfile::tempdir().unwrap();
    let t = Tmux::start_with_env(&s, project.path(), (120, 30), "", &[]);
    t.submit("stream please");
    t.wait_for("word3");
    t.resize(60, 20);
    let screen = t.wait_for("THE-END");
    for line in screen.lines() {
        assert!(
            line.chars().count() <= 60,
            "line wider than the window: {line:?}"
        );
    }
    assert!(screen.contains("word40"), "{screen}");
}
