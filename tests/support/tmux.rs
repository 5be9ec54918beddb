//! Driving the real `cairn` binary in tmux for end-to-end tests: one tmux server (own socket)
//! per test, a fake home, the scripted model server on 127.0.0.1, send-keys in and
//! capture-pane out. Shared by `tests/e2e_*.rs` (each uses part of it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn::llm::scripted::{Script, ScriptedServer};
use serde_json::Value;

/// How long a step may take before the test gives up (debug build, 2 busy cores).
pub const STEP: Duration = Duration::from_secs(20);

pub fn have_tmux() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Returns from the calling test, saying why, when tmux is not installed.
macro_rules! require_tmux {
    () => {
        if !$crate::tmux::have_tmux() {
            eprintln!("tmux not installed: skipping");
            return;
        }
    };
}
pub(crate) use require_tmux;

/// One tmux server (own socket) running cairn in one window, in `project`.
pub struct Tmux {
    socket: PathBuf,
    session: String,
    _home: tempfile::TempDir,
}

impl Tmux {
    pub fn start(server: &ScriptedServer, project: &Path, extra_args: &[&str]) -> Tmux {
        Tmux::start_with_env(server, project, (120, 40), "", extra_args)
    }

    /// `size`: columns and rows; `env`: extra `NAME=value` words for cairn's environment,
    /// quoted for `sh`.
    pub fn start_with_env(
        server: &ScriptedServer,
        project: &Path,
        size: (u16, u16),
        env: &str,
        extra_args: &[&str],
    ) -> Tmux {
        Tmux::launch(server, project, size, env, extra_args, true)
    }

    /// As [`Tmux::start`], in a folder the fake home has never trusted: cairn asks first.
    pub fn start_untrusted(server: &ScriptedServer, project: &Path) -> Tmux {
        Tmux::launch(server, project, (120, 40), "", &[], false)
    }

    /// The fake home (`HOME`).
    pub fn home(&self) -> &Path {
        self._home.path()
    }

    fn launch(
        server: &ScriptedServer,
        project: &Path,
        size: (u16, u16),
        env: &str,
        extra_args: &[&str],
        trusted: bool,
    ) -> Tmux {
        let home = tempfile::tempdir().unwrap();
        if trusted {
            // A person who trusted the project once (the trust question has tests of its own).
            let dir = project
                .canonicalize()
                .unwrap_or_else(|_| project.to_path_buf());
            let record = serde_json::json!({
                "projects": { dir.to_string_lossy(): { "hasTrustDialogAccepted": true } }
            });
            std::fs::write(home.path().join(".claude.json"), record.to_string()).unwrap();
        }
        let socket = home.path().join("tmux.sock");
        let session = "cairn-review".to_string();
        let mut cmdline = format!(
            "env -i PATH={path} HOME={home} TERM=xterm-256color CAIRN_DATA_DIR={home}/data \
             ANTHROPIC_BASE_URL={base} ANTHROPIC_API_KEY=test {env} {bin} --model test-model",
            path = std::env::var("PATH").unwrap_or_default(),
            home = home.path().display(),
            base = server.anthropic_base_url(),
            bin = env!("CARGO_BIN_EXE_cairn"),
        );
        for a in extra_args {
            cmdline.push(' ');
            cmdline.push_str(a);
        }
        // Keep the pane after cairn exits, so its summary (or a crash message) can be read.
        cmdline.push_str("; echo cairn-exited=$?; sleep 30");
        let status = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null", "new-session", "-d", "-s", &session])
            .args(["-x", &size.0.to_string(), "-y", &size.1.to_string()])
            .arg("-c")
            .arg(project)
            .arg(cmdline)
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        Tmux {
            socket,
            session,
            _home: home,
        }
    }

    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn send_keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.session.as_str()];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Type text literally (no key-name interpretation).
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", &self.session, "-l", text]);
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", &self.session])
    }

    /// Poll the screen until it contains `needle`; every screen seen on the way is returned too,
    /// so a test can assert that something never showed up in between.
    pub fn wait_for_all(&self, needle: &str) -> Vec<String> {
        let start = Instant::now();
        let mut seen = Vec::new();
        loop {
            let screen = self.screen();
            let done = screen.contains(needle);
            seen.push(screen);
            if done {
                return seen;
            }
            if start.elapsed() > STEP {
                panic!(
                    "timed out waiting for {needle:?}; screen:\n{}",
                    seen.last().map_or("", String::as_str)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Poll the screen until `check` holds; `what` names it in the failure.
    pub fn wait_until(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < STEP,
                "timed out waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn wait_until_gone(&self, needle: &str) {
        self.wait_until(&format!("{needle:?} to go away"), |s| !s.contains(needle));
    }

    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_for_all(needle).pop().unwrap_or_default()
    }

    /// Poll until `check` holds for the file at `path` (the write lands after the key press).
    pub fn wait_for_file(&self, path: &Path, check: impl Fn(Option<&[u8]>) -> bool) {
        let start = Instant::now();
        loop {
            let bytes = std::fs::read(path).ok();
            if check(bytes.as_deref()) {
                return;
            }
            if start.elapsed() > STEP {
                panic!(
                    "timed out waiting for {}: now {:?}; screen:\n{}",
                    path.display(),
                    bytes.map(|b| String::from_utf8_lossy(&b).into_owned()),
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn resize(&self, width: u16, height: u16) {
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

    /// Type a prompt and send it, once the UI is up.
    pub fn submit(&self, prompt: &str) {
        self.wait_for("test-model");
        self.type_text(prompt);
        self.send_keys(&["Enter"]);
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

pub fn server(script: Value) -> ScriptedServer {
    ScriptedServer::start(Script::from_json(&script.to_string()).unwrap()).unwrap()
}

/// Every `tool_result` block the request carried, as (tool_use_id, text, is_error).
pub fn tool_results(body: &Value) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] != "tool_result" {
                continue;
            }
            let text = match &block["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            out.push((
                block["tool_use_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                text,
                block["is_error"].as_bool().unwrap_or(false),
            ));
        }
    }
    out
}

/// The tool result for `id` in the last request that carried one (every later request
/// carries the whole history, so also the first result), as (text, is_error).
pub fn result_for(server: &ScriptedServer, id: &str) -> (String, bool) {
    let requests = server.requests();
    requests
        .iter()
        .rev()
        .flat_map(|r| tool_results(&r.body))
        .find(|(tid, _, _)| tid == id)
        .map(|(_, text, err)| (text, err))
        .unwrap_or_else(|| panic!("no tool_result for {id} in {} requests", requests.len()))
}
