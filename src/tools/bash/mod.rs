//! The Bash tool: runs a command with the user's shell and returns its output, plus the
//! BashOutput and KillShell tools that manage commands started with `run_in_background`.
//!
//! Invariants: each call is a fresh shell (environment changes do not persist) in its own
//! process group; the working directory does persist — the shell records its final directory
//! and the session keeps it only when it lies inside a working directory, otherwise the cwd is
//! reset to the project directory and the result says so. Output past [`MAX_OUTPUT_CHARS`]
//! keeps head and tail and spills to a file (the shared `spill` policy). A command counts as
//! read-only only when `shell::is_read_only` says so. When the client offers its terminals
//! (`shell::client`), a foreground command runs there (`client_run`), under the same timeout,
//! interrupt and output limits; background shells always run here.

mod background;
mod client_run;
pub mod process;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

pub use background::{BackgroundShells, BashOutputTool, KillShellTool, ShellOutput, ShellStatus};

use crate::files::paths::tilde_path;
use crate::protocol::{Display, Field};
use crate::session::context::SessionContext;
use crate::tools::spill::{head_tail, limit_result};
use crate::tools::{Access, Preview, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use process::{Ending, RunOutcome};

/// Default and maximum timeouts, in milliseconds (`BASH_DEFAULT_TIMEOUT_MS` and
/// `BASH_MAX_TIMEOUT_MS` change them).
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Characters of output the model gets before head+tail truncation and a spill file
/// (`BASH_MAX_OUTPUT_LENGTH` changes it).
pub const MAX_OUTPUT_CHARS: usize = 30_000;

/// The limits of one session's Bash calls: the defaults, or what the environment (the
/// settings' `env` over cairn's own) says. A value that is not a positive whole number is
/// ignored; the default timeout never exceeds the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub default_timeout_ms: u64,
    pub max_timeout_ms: u64,
    pub max_output_chars: usize,
}

impl Limits {
    pub fn from_env(env: &[(String, String)]) -> Limits {
        let num = |name: &str| {
            crate::shell::env_policy::tool_var(env, name)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|n| *n > 0)
        };
        let max_timeout_ms = num("BASH_MAX_TIMEOUT_MS").unwrap_or(MAX_TIMEOUT_MS);
        let default_timeout_ms = num("BASH_DEFAULT_TIMEOUT_MS")
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .min(max_timeout_ms);
        let max_output_chars = num("BASH_MAX_OUTPUT_LENGTH")
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            .unwrap_or(MAX_OUTPUT_CHARS);
        Limits {
            default_timeout_ms,
            max_timeout_ms,
            max_output_chars,
        }
    }
}

/// The script sourced before each command (`CLAUDE_ENV_FILE`: the person's own, or the one
/// the session gives its SessionStart hooks), when it exists.
fn env_file(env: &[(String, String)]) -> Option<PathBuf> {
    let path = PathBuf::from(crate::shell::env_policy::tool_var(env, ENV_FILE_VAR)?);
    (path.is_absolute() && path.is_file()).then_some(path)
}

/// The variable naming the script sourced before each command (Claude Code's name).
pub const ENV_FILE_VAR: &str = "CLAUDE_ENV_FILE";
/// Characters of each stream kept in the display value (people see the spill note too).
const DISPLAY_CHARS: usize = 30_000;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command to run.
    pub command: String,
    /// Milliseconds (default 120000, at most 600000).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// What it does, in 5-10 words.
    #[serde(default)]
    pub description: Option<String>,
    /// Return a task id at once (servers, watchers); read with TaskOutput, stop with TaskStop.
    #[serde(default)]
    pub run_in_background: Option<bool>,
}

/// Runs shell commands. Shares the background-shell registry with BashOutput and KillShell.
pub struct BashTool {
    shells: Arc<BackgroundShells>,
}

pub const NAME: &str = "Bash";

impl BashTool {
    pub fn new(shells: Arc<BackgroundShells>) -> BashTool {
        BashTool { shells }
    }

    /// The tool name and input of a call running `command`, for callers that run a command
    /// as the model would (a slash command's `` !`cmd` `` parts).
    pub fn call(command: &str, description: &str) -> (String, serde_json::Value) {
        let input = serde_json::json!({ "command": command, "description": description });
        (NAME.to_string(), input)
    }
}

#[async_trait]
impl Tool for BashTool {
    type Input = BashInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new(NAME, ToolKind::Execute).aliases(&["run_shell"])
    }

    fn description(&self) -> String {
        format!(
            "Runs a shell command; returns stdout, then stderr. A `cd` inside the project \
             holds for later calls; variables do not. stdin is closed (pass --yes). Output over \
             {MAX_OUTPUT_CHARS} characters is cut in the middle and saved to a file you can Read."
        )
    }

    fn prompt(&self) -> String {
        "- Prefer the dedicated tools over shell commands: Read over cat/head/tail, Grep over \
grep/rg, Glob over find/ls, Edit and Write over sed, awk or echo redirections.\n\
- Quote paths that contain spaces, and use absolute paths rather than cd where you can.\n\
- Never run destructive or irreversible commands (rm -rf, git push --force, git reset --hard, \
dropping data) unless the user asked for them; never skip git hooks, and commit or push only \
when asked.\n\
- Start servers and watchers with run_in_background, not a trailing `&`."
            .into()
    }

    fn is_concurrency_safe(&self, input: &BashInput) -> bool {
        self.is_read_only(input)
    }

    fn is_read_only(&self, input: &BashInput) -> bool {
        crate::shell::is_read_only(&input.command)
    }

    fn title(&self, input: &BashInput, _ctx: &SessionContext) -> String {
        let first = input.command.lines().next().unwrap_or("").trim();
        let mut title = format!("Bash {}", truncate_chars(first, 100));
        if input.command.trim().lines().nth(1).is_some() || first.chars().count() > 100 {
            title.push_str(" …");
        }
        title
    }

    fn accesses(&self, input: &BashInput, ctx: &SessionContext) -> Vec<Access> {
        vec![Access::Exec {
            command: input.command.clone(),
            cwd: ctx.cwd(),
        }]
    }

    async fn validate(&self, input: &BashInput, ctx: &ToolContext) -> Result<(), ToolError> {
        if input.command.trim().is_empty() {
            return Err(ToolError::new(
                "The command is empty. Give a command to run.",
            ));
        }
        let max = Limits::from_env(ctx.session.tool_env()).max_timeout_ms;
        if let Some(t) = input.timeout
            && t > max
        {
            return Err(ToolError::new(format!(
                "timeout {t} ms is more than the maximum of {max} ms ({}). Use a smaller \
                 timeout, or run_in_background for longer commands.",
                seconds(max)
            )));
        }
        Ok(())
    }

    async fn preview(
        &self,
        input: &BashInput,
        ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        let mut fields = vec![Field::code("$", "bash", input.command.clone())];
        if let Some(what) = input
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
        {
            fields.push(Field::text("what", what));
        }
        fields.push(Field::text("in", tilde_path(&ctx.session.cwd())));
        if input.run_in_background == Some(true) {
            fields.push(Field::text("runs", "in the background"));
        }
        Ok(Some(Preview {
            display: Display::Fields { fields },
            new_content: None,
        }))
    }

    async fn call(&self, input: BashInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.validate(&input, ctx).await?;
        let session = &ctx.session;
        let mut notes = Vec::new();
        let mut cwd = session.cwd();
        if !cwd.is_dir() {
            cwd = session.project_dir.clone();
            session.set_cwd(cwd.clone());
            notes.push(format!("Shell cwd was reset to {}", cwd.display()));
        }
        // A call whose run was stopped (the session is ending) starts nothing new.
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new("Interrupted: the command was not started."));
        }
        let shell = process::shell_program();
        let limits = Limits::from_env(session.tool_env());
        // The environment file is sourced first, on the command's line (see the trap below).
        let sourced = env_file(session.tool_env())
            .map(|f| format!(". {}; ", shell_quote(&f.to_string_lossy())))
            .unwrap_or_default();
        if input.run_in_background.unwrap_or(false) {
            let id = self
                .shells
                .start(
                    &shell,
                    &format!("{sourced}{}", input.command),
                    &cwd,
                    session.tool_env(),
                    Some(background::ShellOrigin {
                        session: Arc::clone(&ctx.session),
                        call_id: ctx.call_id.clone(),
                        command: input.command.clone(),
                    }),
                )
                .map_err(|e| ToolError::new(format!("Could not start {shell}: {e}")))?;
            let mut text = format!(
                "Started background shell {id}\nRead its output with TaskOutput (task_id \
                 \"{id}\") and stop it with TaskStop (task_id \"{id}\")."
            );
            for note in notes {
                text.push('\n');
                text.push_str(&note);
            }
            return Ok(ToolOutput::with_display(
                text.clone(),
                Display::Text { text },
            ));
        }
        let timeout_ms = input.timeout.unwrap_or(limits.default_timeout_ms).max(1);
        let cwd_file = cwd_record_path(&session.data_dir);
        let script = match &cwd_file {
            // On one line with the command so the shell's "line N" messages match the command.
            // A syntax error then skips the trap too, but such a command cannot have moved.
            Some(f) => format!("{}; {sourced}{}", cwd_trap(f), input.command),
            None => format!("{sourced}{}", input.command),
        };
        let timeout = Duration::from_millis(timeout_ms);
        let outcome = match session.client_terminal() {
            // The editor runs it in a terminal of its own, shown live in the call.
            Some(terminal) => {
                let run = client_run::ClientRun {
                    call_id: &ctx.call_id,
                    shell: &shell,
                    script: &script,
                    cwd: &cwd,
                    env: session.tool_env(),
                    timeout,
                    cancel: &ctx.cancel,
                };
                let (outcome, note) = client_run::run(terminal, run)
                    .await
                    .map_err(ToolError::new)?;
                notes.extend(note);
                outcome
            }
            None => {
                let child = process::spawn(&shell, &script, &cwd, session.tool_env())
                    .map_err(|e| ToolError::new(format!("Could not start {shell}: {e}")))?;
                let progress = ctx.progress.clone();
                process::run_foreground(child, timeout, &ctx.cancel, |tail| progress.output(tail))
                    .await
            }
        };
        if let Some(f) = &cwd_file {
            if let Some(note) = update_cwd(session, f) {
                notes.push(note);
            }
            let _ = std::fs::remove_file(f);
        }
        Ok(shape_result(
            &input.command,
            (timeout_ms, limits.max_output_chars),
            outcome,
            notes,
            ctx,
        ))
    }
}

/// A fresh file for the shell to record its final directory in, under the session data dir.
fn cwd_record_path(data_dir: &Path) -> Option<PathBuf> {
    let dir = data_dir.join("shell");
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir.join(format!("cwd-{}", uuid::Uuid::new_v4())))
}

/// `trap '<record the final directory in f>' EXIT`, quoted for any path.
fn cwd_trap(f: &Path) -> String {
    let body = format!("pwd -P >| {}", shell_quote(&f.to_string_lossy()));
    format!("trap {} EXIT", shell_quote(&body))
}

/// Quote for POSIX shells: single quotes, with `'` written as `'\''`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Adopt the directory the shell ended in when it lies inside a working directory; otherwise
/// reset to the project directory. Returns a note for the model when the cwd was reset.
fn update_cwd(session: &SessionContext, record: &Path) -> Option<String> {
    let text = std::fs::read_to_string(record).ok()?;
    let dir = PathBuf::from(text.trim_end_matches(['\n', '\r']));
    if dir.as_os_str().is_empty() {
        return None;
    }
    let inside = session.working_dirs().iter().any(|w| {
        let w = std::fs::canonicalize(w).unwrap_or_else(|_| w.clone());
        dir.starts_with(&w)
    });
    if inside {
        session.set_cwd(dir);
        None
    } else {
        let project = session.project_dir.clone();
        session.set_cwd(project.clone());
        Some(format!(
            "Shell cwd was reset to {} (the command ended in {}, outside the working \
             directories)",
            project.display(),
            dir.display()
        ))
    }
}

/// The text for the model (truncated and spilled past the limit) and the display value.
fn shape_result(
    command: &str,
    (timeout_ms, max_output_chars): (u64, usize),
    outcome: RunOutcome,
    notes: Vec<String>,
    ctx: &ToolContext,
) -> ToolOutput {
    let stdout = String::from_utf8_lossy(&outcome.stdout);
    let stderr = String::from_utf8_lossy(&outcome.stderr);
    let (stdout, stderr) = (stdout.trim_end_matches('\n'), stderr.trim_end_matches('\n'));
    let mut body = stdout.to_string();
    if !stderr.is_empty() {
        if !body.is_empty() {
            body.push('\n');
        }
        body.push_str(stderr);
    }
    if outcome.dropped > 0 {
        body.push_str(&format!(
            "\n[{} more bytes of output were not captured]",
            outcome.dropped
        ));
    }
    let exit_code = outcome.status.and_then(|s| s.code());
    let signal = outcome
        .status
        .and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s));
    let (header, is_error) = match outcome.ending {
        Ending::TimedOut => (
            Some(format!("Command timed out after {}", seconds(timeout_ms))),
            true,
        ),
        Ending::Interrupted => (
            Some("Command was interrupted by the user".to_string()),
            true,
        ),
        Ending::Exited => match (exit_code, signal) {
            (Some(0), _) => (None, false),
            (Some(code), _) => (Some(format!("Exit code {code}")), true),
            (None, Some(sig)) => (Some(format!("Command was killed by signal {sig}")), true),
            (None, None) => (
                Some("Command ended without an exit status".to_string()),
                true,
            ),
        },
    };
    let mut content = match header {
        Some(h) if body.is_empty() => h,
        Some(h) => format!("{h}\n{body}"),
        None if body.is_empty() => "(no output)".to_string(),
        None => body,
    };
    for note in notes {
        content.push('\n');
        content.push_str(&note);
    }
    let content = limit_result(
        content,
        max_output_chars,
        &ctx.session.data_dir.join("spill"),
        &ctx.call_id,
    );
    ToolOutput {
        content: content.into(),
        display: Display::Command {
            command: command.to_string(),
            stdout: head_tail(stdout, DISPLAY_CHARS),
            stderr: head_tail(stderr, DISPLAY_CHARS),
            exit_code,
            timed_out: outcome.ending == Ending::TimedOut,
        },
        is_error,
        effects: Vec::new(),
    }
}

/// `1 s`, `1.5 s`.
fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

fn truncate_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(shell_quote("/tmp/a'b"), r"'/tmp/a'\''b'");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("it's a $dir `x`").join("cwd");
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        let script = format!("{}; cd /", cwd_trap(&f));
        let st = std::process::Command::new("bash")
            .args(["-c", &script])
            .status()
            .unwrap();
        assert!(st.success());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "/\n");
    }

    #[test]
    fn timeouts_read_as_seconds() {
        assert_eq!(seconds(120_000), "120 s");
        assert_eq!(seconds(1_500), "1.5 s");
    }
}
