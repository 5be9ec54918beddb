//! Running hooks: the person's own commands at points of the session (Claude Code format; the
//! configuration is parsed in `config::hooks`). The matching commands of one event run
//! in parallel, each once even when several groups list it, under `sh -c` in the project
//! directory with `CLAUDE_PROJECT_DIR` and `CAIRN_PROJECT_DIR` set and the event's JSON on
//! stdin. Exit 0 = fine (stdout parsed as JSON when it starts with `{`), exit 2 = block (stderr
//! is the reason), anything else = a non-blocking error reported to the person. A hook that
//! outlives its timeout, or prints more than [`OUTPUT_CAP`], is killed with its whole process
//! group, and counts as failed (see [`HookRun::failure`]). Nothing a hook does can crash
//! cairn; what the outcome means for each event is read in [`super`].

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt;

use crate::config::hooks::{HookCommand, HookEvent, HooksConfig, matcher_matches};

/// What is kept of a hook's stdout and of its stderr. A hook that prints more is killed and
/// counts as failed: its verdict cannot be trusted, and its output must not fill memory.
pub const OUTPUT_CAP: usize = 1 << 20;

/// What one hook command did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookRun {
    pub command: String,
    /// None when it was killed or could not start.
    pub exit_code: Option<i32>,
    /// At most [`OUTPUT_CAP`] bytes of it.
    pub stdout: String,
    /// At most [`OUTPUT_CAP`] bytes of it.
    pub stderr: String,
    pub timed_out: bool,
    /// It printed more than [`OUTPUT_CAP`] on stdout or stderr and was killed.
    pub overflowed: bool,
    /// The signal that ended it, when something other than cairn killed it.
    pub signal: Option<i32>,
    /// stdout parsed, when it was a JSON object.
    pub json: Option<Map<String, Value>>,
    /// Why stdout, which starts with `{`, is not a JSON object.
    pub bad_json: Option<String>,
}

/// Notices quote at most this much of a hook's stderr.
const QUOTED_STDERR: usize = 2_000;

impl HookRun {
    /// Exit code 2: block, with stderr as the reason (Claude Code's convention).
    pub fn blocked(&self) -> bool {
        self.exit_code == Some(2)
    }

    /// Why the hook's answer cannot be used: it timed out, printed too much, was killed,
    /// could not start, exited with a code other than 0 or 2, or printed broken JSON. `None`
    /// for a hook that answered. Such a hook never allows or decides anything; for
    /// non-blocking events it is only worth telling the person.
    pub fn failure(&self, event: HookEvent) -> Option<String> {
        let what = format!("{} hook `{}`", event.name(), self.command);
        if self.timed_out {
            return Some(format!("{what} timed out and was killed"));
        }
        if self.overflowed {
            return Some(format!(
                "{what} printed more than {} MiB and was killed; its output is not used",
                OUTPUT_CAP >> 20
            ));
        }
        if let Some(sig) = self.signal {
            return Some(format!("{what} was killed by signal {sig}"));
        }
        let mut stderr = self.stderr.trim();
        if stderr.len() > QUOTED_STDERR {
            let mut end = QUOTED_STDERR;
            while !stderr.is_char_boundary(end) {
                end -= 1;
            }
            stderr = &stderr[..end];
        }
        match self.exit_code {
            Some(2) => None,
            Some(0) => self
                .bad_json
                .as_ref()
                .map(|e| format!("{what} printed invalid JSON ({e}); its output is not used")),
            code => Some(format!(
                "{what} failed ({}): {stderr}",
                code.map_or("could not run".to_string(), |c| format!("exit {c}")),
            )),
        }
    }

    /// `hookSpecificOutput.<key>`, or a top-level `<key>`.
    pub fn field(&self, key: &str) -> Option<&Value> {
        let json = self.json.as_ref()?;
        json.get("hookSpecificOutput")
            .and_then(|h| h.get(key))
            .or_else(|| json.get(key))
    }

    pub fn field_str(&self, key: &str) -> Option<&str> {
        self.field(key).and_then(Value::as_str)
    }
}

/// Runs the configured hooks of a session.
#[derive(Debug, Clone, Default)]
pub struct HookRunner {
    pub config: HooksConfig,
    pub project_dir: PathBuf,
    /// Added to each hook's environment (the settings' `env`).
    pub env: Vec<(String, String)>,
}

impl HookRunner {
    pub fn new(config: HooksConfig, project_dir: PathBuf) -> HookRunner {
        HookRunner::with_env(config, project_dir, Vec::new())
    }

    /// As [`HookRunner::new`], with the settings' `env` added to each hook's environment.
    pub fn with_env(
        config: HooksConfig,
        project_dir: PathBuf,
        env: Vec<(String, String)>,
    ) -> HookRunner {
        HookRunner {
            config,
            project_dir,
            env,
        }
    }

    pub fn has(&self, event: HookEvent) -> bool {
        self.config.has(event)
    }

    /// Run every hook of `event` whose matcher selects `match_value`, in parallel, each
    /// distinct command once. `payload` is the event's JSON (common fields included by caller).
    pub async fn run(
        &self,
        event: HookEvent,
        match_value: Option<&str>,
        payload: &Value,
    ) -> Vec<HookRun> {
        let mut commands: Vec<&HookCommand> = Vec::new();
        for group in &self.config.groups {
            if group.event == event && matcher_matches(&group.matcher, match_value) {
                for c in &group.commands {
                    if !commands.iter().any(|k| k.command == c.command) {
                        commands.push(c);
                    }
                }
            }
        }
        let stdin = payload.to_string();
        let runs = commands
            .into_iter()
            .map(|c| run_one(c, &self.project_dir, &self.env, stdin.clone()));
        futures::future::join_all(runs).await
    }
}

/// Run one command under `sh -c` in `project_dir` with `stdin` written to it: its own process
/// group, the settings' `env` over a credential-free environment, output capped, killed with
/// its group at `hook.timeout`. Also runs the status-line command, which is not a hook but
/// needs the same care.
pub async fn run_one(
    hook: &HookCommand,
    project_dir: &Path,
    env: &[(String, String)],
    stdin: String,
) -> HookRun {
    let mut run = HookRun {
        command: hook.command.clone(),
        ..HookRun::default()
    };
    let mut cmd = tokio::process::Command::new("sh");
    crate::shell::env_policy::apply(&mut cmd, env);
    cmd.arg("-c")
        .arg(&hook.command)
        .current_dir(project_dir)
        .env("CLAUDE_PROJECT_DIR", project_dir)
        .env("CAIRN_PROJECT_DIR", project_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so a timeout kills what the hook started too.
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            run.stderr = format!("could not start: {e}");
            return run;
        }
    };
    let pid = child.id();
    if let Some(mut pipe) = child.stdin.take() {
        tokio::spawn(async move {
            // A hook that ignores its input closes the pipe early; that is fine.
            let _ = pipe.write_all(stdin.as_bytes()).await;
        });
    }
    // Dropped before the hook is reaped (the turn was cancelled): its whole group dies.
    let mut group = GroupKill(pid);
    let deadline = tokio::time::Instant::now() + hook.timeout;
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    match tokio::time::timeout_at(deadline, collect(stdout, stderr)).await {
        Ok(out) => {
            run.overflowed = out.overflowed;
            run.stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            run.stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        }
        Err(_) => run.timed_out = true,
    }
    if !run.timed_out && !run.overflowed {
        // Both pipes are closed, yet the hook may still run (it can close them itself): the
        // rest of its time still bounds the wait.
        match tokio::time::timeout_at(deadline, child.wait()).await {
            Ok(Ok(status)) => {
                // Reaped: the pid may be reused from here on, never signal it again. What the
                // hook left running in the background is its own business, as in Claude Code.
                group.0 = None;
                run.exit_code = status.code();
                #[cfg(unix)]
                {
                    use std::os::unix::process::ExitStatusExt;
                    run.signal = status.signal();
                }
            }
            Ok(Err(e)) => run.stderr = format!("could not wait for it: {e}"),
            Err(_) => run.timed_out = true,
        }
    }
    if run.timed_out || run.overflowed {
        // The leader is not reaped yet, so its pid still names the group we created.
        kill_group(group.0.take());
        // SIGKILL ends it at once; reap it so no zombie is left (bounded all the same).
        let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
        return run;
    }
    let text = run.stdout.trim();
    if text.starts_with('{') {
        match serde_json::from_str::<Map<String, Value>>(text) {
            Ok(map) => run.json = Some(map),
            Err(e) => run.bad_json = Some(e.to_string()),
        }
    }
    run
}

/// A hook's output, each stream cut at [`OUTPUT_CAP`].
#[derive(Default)]
struct Collected {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// A stream passed the cap; reading stopped there.
    overflowed: bool,
}

/// Read both pipes to their end, in chunks, keeping at most [`OUTPUT_CAP`] of each. Returns
/// early once either passes the cap (the caller kills the hook): memory stays bounded
/// whatever the hook prints.
async fn collect(
    mut stdout: Option<tokio::process::ChildStdout>,
    mut stderr: Option<tokio::process::ChildStderr>,
) -> Collected {
    let mut c = Collected::default();
    let mut out_buf = vec![0u8; 16 * 1024];
    let mut err_buf = vec![0u8; 16 * 1024];
    while stdout.is_some() || stderr.is_some() {
        let (n, is_out) = tokio::select! {
            n = chunk(&mut stdout, &mut out_buf), if stdout.is_some() => (n, true),
            n = chunk(&mut stderr, &mut err_buf), if stderr.is_some() => (n, false),
        };
        if n == 0 {
            if is_out {
                stdout = None;
            } else {
                stderr = None;
            }
            continue;
        }
        let (kept, buf) = if is_out {
            (&mut c.stdout, &out_buf)
        } else {
            (&mut c.stderr, &err_buf)
        };
        let room = OUTPUT_CAP.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        if n > room {
            c.overflowed = true;
            break;
        }
    }
    c
}

/// The next chunk of a pipe; 0 at its end or on a read error.
async fn chunk<R: tokio::io::AsyncRead + Unpin>(pipe: &mut Option<R>, buf: &mut [u8]) -> usize {
    use tokio::io::AsyncReadExt;
    match pipe {
        Some(p) => p.read(buf).await.unwrap_or(0),
        None => 0,
    }
}

/// Kills a hook's process group when dropped, unless disarmed (`.0 = None`) once reaped.
struct GroupKill(Option<u32>);

impl Drop for GroupKill {
    fn drop(&mut self) {
        kill_group(self.0.take());
    }
}

fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) with a negative pid signals the process group we created for this
        // hook (process_group(0) made its leader's pid the group id); no memory is touched.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// The verdict of UserPromptSubmit, Stop and SessionStart hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookVerdict {
    /// Set when a hook blocked: the reason (for UserPromptSubmit the prompt is dropped and the
    /// reason shown to the person; for Stop the model continues with the reason as input).
    pub blocked: Option<String>,
    /// Text to add to the model's context.
    pub additional_context: Vec<String>,
    /// Non-blocking failures, for the person.
    pub errors: Vec<String>,
}

/// Fold runs into a verdict. `plain_stdout_is_context`: for UserPromptSubmit and SessionStart,
/// plain stdout of a successful hook is context for the model.
pub fn verdict(event: HookEvent, runs: &[HookRun], plain_stdout_is_context: bool) -> HookVerdict {
    let mut v = HookVerdict::default();
    for run in runs {
        if let Some(err) = run.failure(event) {
            v.errors.push(err);
            continue;
        }
        if run.blocked() {
            v.blocked
                .get_or_insert_with(|| run.stderr.trim().to_string());
            continue;
        }
        let stop = run.json.as_ref().and_then(|j| j.get("continue")) == Some(&Value::Bool(false));
        if run.field_str("decision") == Some("block") || stop {
            let reason = run
                .field_str("reason")
                .or_else(|| run.field_str("stopReason"))
                .unwrap_or("blocked by a hook");
            v.blocked.get_or_insert_with(|| reason.to_string());
        }
        if let Some(ctx) = run.field_str("additionalContext") {
            v.additional_context.push(ctx.to_string());
        } else if plain_stdout_is_context && run.json.is_none() && !run.stdout.trim().is_empty() {
            v.additional_context.push(run.stdout.trim().to_string());
        }
    }
    v
}

/// The common fields of every hook's stdin.
pub fn base_payload(
    event: HookEvent,
    session_id: &str,
    transcript_path: &Path,
    cwd: &Path,
    mode: &str,
) -> Map<String, Value> {
    let v = json!({
        "session_id": session_id,
        // Lossy: json! panics on a path that is not UTF-8.
        "transcript_path": transcript_path.to_string_lossy(),
        "cwd": cwd.to_string_lossy(),
        "permission_mode": mode,
        "hook_event_name": event.name(),
    });
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers() {
        assert!(matcher_matches("", Some("Bash")));
        assert!(matcher_matches("*", Some("Bash")));
        assert!(matcher_matches("Edit|Write", Some("Write")));
        assert!(!matcher_matches("Edit|Write", Some("WriteX")));
        assert!(matcher_matches("mcp__.*", Some("mcp__gh__issue")));
        assert!(matcher_matches("Notebook.*", Some("NotebookEdit")));
        assert!(!matcher_matches("Bash", Some("Read")));
    }
}
