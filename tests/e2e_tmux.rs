//! The real `cairn` binary in a real terminal: tmux runs it against the scripted model server on
//! 127.0.0.1; keys go in with send-keys and the screen comes back with capture-pane.
//!
//! Skipped (with a message) when tmux is not installed; CI installs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn::llm::scripted::{Script, ScriptedServer};
use serde_json::{Value, json};

fn have_tmux() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One tmux server (own socket) running cairn in one window.
struct Tmux {
    socket: PathBuf,
    session: String,
    _home: tempfile::TempDir,
    pub project: tempfile::TempDir,
}

impl Tmux {
    fn start(server: &ScriptedServer, width: u16, height: u16, extra_args: &[&str]) -> Tmux {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let socket = home.path().join("tmux.sock");
        let session = "cairn-e2e".to_string();
        let mut cmdline = format!(
            "env -i PATH={path} HOME={home} TERM=xterm-256color CAIRN_DATA_DIR={home}/data \
             ANTHROPIC_BASE_URL={base} ANTHROPIC_API_KEY=test {bin} --model test-model",
            path = std::env::var("PATH").unwrap_or_default(),
            home = home.path().display(),
            base = server.anthropic_base_url(),
            bin = env!("CARGO_BIN_EXE_cairn"),
        );
        for a in extra_args {
            cmdline.push(' ');
            cmdline.push_str(a);
        }
        // Keep the pane after cairn exits, so the summary it prints can be read.
        cmdline.push_str("; echo cairn-exited=$?; sleep 30");
        let status = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null", "new-session", "-d", "-s", &session])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .arg("-c")
            .arg(project.path())
            .arg(cmdline)
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        Tmux {
            socket,
            session,
            _home: home,
            project,
        }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn send_keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.session.as_str()];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Type text literally (no key-name interpretation).
    fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", &self.session, "-l", text]);
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", &self.session])
    }

    fn wait_for(&self, needle: &str, timeout: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {needle:?}; screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn resize(&self, width: u16, height: u16) {
        self.tmux(&[
            "resize-window",
            "-t",
            &self.session,
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }

    fn project(&self) -> &Path {
        self.project.path()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

async fn server(script: Value) -> ScriptedServer {
    ScriptedServer::start(Script::from_json(&script.to_string()).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_prompt_gets_a_streamed_answer() {
    if !have_tmux() {
        eprintln!("tmux not installed: skipping");
        return;
    }
    let s = server(
        json!({"turns": [{"text": "Hello from the scripted model. All good.",
                                     "chunk_chars": 5, "delay_ms": 10}]}),
    )
    .await;
    let t = Tmux::start(&s, 100, 30, &[]);
    t.wait_for("test-model", Duration::from_secs(10));
    t.type_text("say hello");
    t.send_keys(&["Enter"]);
    let screen = t.wait_for("All good.", Duration::from_secs(10));
    assert!(
        screen.contains("say hello"),
        "the prompt stays visible:\n{screen}"
    );
    let body = s.requests()[0].body.to_string();
    assert!(body.contains("say hello"));
    // Ctrl+D on an empty composer quits and leaves the summary on the normal screen.
    t.send_keys(&["C-d"]);
    let screen = t.wait_for("cairn session", Duration::from_secs(5));
    assert!(screen.contains("tokens in"), "{screen}");
    let screen = t.wait_for("cairn-exited=0", Duration::from_secs(5));
    assert!(
        !screen.contains("Type a message"),
        "the UI is gone:\n{screen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resizing_mid_stream_reflows_and_keeps_streaming() {
    if !have_tmux() {
        eprintln!("tmux not installed: skipping");
        return;
    }
    let words: Vec<String> = (1..=40).map(|i| format!("word{i}")).collect();
    let text = format!("{} THE-END", words.join(" "));
    let s = server(json!({"turns": [{"text": text, "chunk_chars": 4, "delay_ms": 40}]})).await;
    let t = Tmux::start(&s, 120, 30, &[]);
    t.wait_for("test-model", Duration::from_secs(10));
    t.type_text("stream please");
    t.send_keys(&["Enter"]);
    t.wait_for("word3", Duration::from_secs(10));
    t.resize(60, 20);
    let screen = t.wait_for("THE-END", Duration::from_secs(20));
    for line in screen.lines() {
        assert!(
            line.chars().count() <= 60,
            "line wider than the window: {line:?}"
        );
    }
    assert!(screen.contains("word40"), "{screen}");
    assert!(t.project().exists());
}
