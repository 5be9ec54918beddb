//! Background shells: commands started with `run_in_background`, the registry that owns them,
//! and the TaskOutput and TaskStop tools (aliases BashOutput, KillShell) that read and stop them
//! and the session's background agents (their records in `session::agent_tasks`).
//!
//! Invariants: one registry per session, shared by Bash, TaskOutput and TaskStop through an
//! `Arc`; every shell leads its own process group, and every group still running is killed
//! when the registry is dropped (cairn exits) or [`BackgroundShells::kill_all`] is called.
//! Unread output is bounded: past [`MAX_UNREAD`] bytes per stream the oldest is dropped and the
//! next read says how much.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::process::read_some;
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::process::{self, signal_group};
use crate::protocol::{BackgroundTask, Display, Event, TaskKind, TaskStatus};
use crate::session::agent_tasks::{AgentTask, AgentTaskState};
use crate::session::context::SessionContext;
use crate::tools::{Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};

/// Unread bytes kept per stream of a background shell.
pub const MAX_UNREAD: usize = 8 * 1024 * 1024;
/// The last bytes of both streams kept for people (`/tasks`), read or not.
pub const TAIL_BYTES: usize = 64 * 1024;

/// Where a background shell is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellStatus {
    Running,
    /// Exited by itself; the code, or None when a signal ended it.
    Completed(Option<i32>),
    /// Stopped with TaskStop or kill_all.
    Killed,
}

impl ShellStatus {
    /// The status as clients see it, and how it ended.
    fn task_status(self) -> (TaskStatus, Option<String>) {
        match self {
            ShellStatus::Running => (TaskStatus::Running, None),
            ShellStatus::Completed(Some(0)) => (TaskStatus::Completed, Some("exit code 0".into())),
            ShellStatus::Completed(Some(code)) => {
                (TaskStatus::Failed, Some(format!("exit code {code}")))
            }
            ShellStatus::Completed(None) => (TaskStatus::Failed, Some("ended by a signal".into())),
            ShellStatus::Killed => (TaskStatus::Stopped, Some("stopped".into())),
        }
    }

    fn word(self) -> &'static str {
        match self {
            ShellStatus::Running => "running",
            ShellStatus::Completed(Some(0)) => "completed",
            ShellStatus::Completed(_) => "failed",
            ShellStatus::Killed => "killed",
        }
    }
}

#[derive(Default)]
struct Unread {
    bytes: Vec<u8>,
    dropped: u64,
}

impl Unread {
    fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > MAX_UNREAD {
            let excess = self.bytes.len() - MAX_UNREAD;
            self.bytes.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    fn take(&mut self) -> (String, u64) {
        let text = String::from_utf8_lossy(&std::mem::take(&mut self.bytes)).into_owned();
        (text, std::mem::take(&mut self.dropped))
    }
}

struct ShellState {
    stdout: Unread,
    stderr: Unread,
    /// Both streams as they came, the last [`TAIL_BYTES`] of them, never read away.
    tail: Vec<u8>,
    status: ShellStatus,
}

impl ShellState {
    fn push(&mut self, data: &[u8], stderr: bool) {
        if stderr {
            self.stderr.push(data);
        } else {
            self.stdout.push(data);
        }
        self.tail.extend_from_slice(data);
        if self.tail.len() > TAIL_BYTES {
            let excess = self.tail.len() - TAIL_BYTES;
            self.tail.drain(..excess);
        }
    }
}

/// Who started a background shell: the conversation told when it ends, and what its
/// [`Event::BackgroundTask`]s say (the Bash call, the command as the model wrote it).
pub struct ShellOrigin {
    pub session: Arc<SessionContext>,
    pub call_id: String,
    pub command: String,
}

impl ShellOrigin {
    fn tell(&self, id: &str, status: ShellStatus, elapsed: Duration) {
        let (status, report) = status.task_status();
        self.session
            .events
            .send(Event::BackgroundTask(BackgroundTask {
                id: id.to_string(),
                kind: TaskKind::Shell,
                agent: "shell".to_string(),
                description: self.command.clone(),
                status,
                elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                call_id: Some(self.call_id.clone()),
                report,
            }));
    }
}

struct Shell {
    command: String,
    /// Kills the group when the shell is forgotten: the registry and its reader task are
    /// both gone (cairn exits).
    group: process::GroupKill,
    state: Mutex<ShellState>,
}

impl Shell {
    fn state(&self) -> MutexGuard<'_, ShellState> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
}

/// The background shells of one session.
#[derive(Default)]
pub struct BackgroundShells {
    shells: Mutex<BTreeMap<String, Arc<Shell>>>,
    next_id: AtomicU64,
}

/// New output of a background shell since the last read.
#[derive(Debug, Clone, PartialEq)]
pub struct ShellOutput {
    pub command: String,
    pub status: ShellStatus,
    pub stdout: String,
    pub stderr: String,
    /// Unread bytes dropped because the buffer was full.
    pub dropped: u64,
}

impl BackgroundShells {
    pub fn new() -> BackgroundShells {
        BackgroundShells::default()
    }

    fn map(&self) -> MutexGuard<'_, BTreeMap<String, Arc<Shell>>> {
        match self.shells.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Start `command` with `shell -c` in `cwd`; returns its id (`bash_1`, `bash_2`, ...).
    /// Must be called inside a tokio runtime: a task collects the output. When it exits by
    /// itself, the conversation of `origin` is told, and woken when idle
    /// ([`SessionContext::background_finished`]); a shell TaskStop killed tells no one. Its
    /// client hears of its start and end either way ([`Event::BackgroundTask`]).
    pub fn start(
        &self,
        shell: &str,
        command: &str,
        cwd: &Path,
        env: &[(String, String)],
        origin: Option<ShellOrigin>,
    ) -> std::io::Result<String> {
        let started = Instant::now();
        let process::GroupChild { mut child, group } = process::spawn(shell, command, cwd, env)?;
        let id = format!("bash_{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let entry = Arc::new(Shell {
            command: command.to_string(),
            group,
            state: Mutex::new(ShellState {
                stdout: Unread::default(),
                stderr: Unread::default(),
                tail: Vec::new(),
                status: ShellStatus::Running,
            }),
        });
        self.map().insert(id.clone(), entry.clone());
        if let Some(origin) = &origin {
            origin.tell(&id, ShellStatus::Running, Duration::ZERO);
        }
        let mut out = child.stdout.take();
        let mut err = child.stderr.take();
        let task_id = id.clone();
        tokio::spawn(async move {
            let (mut obuf, mut ebuf) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
            while out.is_some() || err.is_some() {
                tokio::select! {
                    r = read_some(&mut out, &mut obuf) => match r {
                        Ok(n) if n > 0 => entry.state().push(&obuf[..n], false),
                        _ => out = None,
                    },
                    r = read_some(&mut err, &mut ebuf) => match r {
                        Ok(n) if n > 0 => entry.state().push(&ebuf[..n], true),
                        _ => err = None,
                    },
                }
            }
            let code = child.wait().await.ok().and_then(|s| s.code());
            let (ended, last) = {
                let mut st = entry.state();
                let running = st.status == ShellStatus::Running;
                if running {
                    st.status = ShellStatus::Completed(code);
                }
                (running.then_some(st.status), st.status)
            };
            let Some(origin) = origin else { return };
            if let Some(status) = ended {
                let how = match code {
                    Some(code) => format!("{} (exit code {code})", status.word()),
                    None => format!("{} (ended by a signal)", status.word()),
                };
                origin.session.background_finished(format!(
                    "Background shell {task_id} ({}) {how}. Read its output with TaskOutput \
                     (task_id \"{task_id}\").",
                    entry.command
                ));
            }
            // After the reminder, so a prompt sent in answer to the event carries it.
            origin.tell(&task_id, last, started.elapsed());
        });
        Ok(id)
    }

    /// New output since the last read, and the status. None for an unknown id.
    pub fn read(&self, id: &str) -> Option<ShellOutput> {
        let shell = self.map().get(id).cloned()?;
        let mut st = shell.state();
        let (stdout, d1) = st.stdout.take();
        let (stderr, d2) = st.stderr.take();
        Some(ShellOutput {
            command: shell.command.clone(),
            status: st.status,
            stdout,
            stderr,
            dropped: d1 + d2,
        })
    }

    /// What shell `id` put out so far (the last [`TAIL_BYTES`] of both streams, read away or
    /// not) and its status, as clients see them; None for an unknown id.
    pub fn peek(&self, id: &str) -> Option<(String, TaskStatus)> {
        let shell = self.map().get(id).cloned()?;
        let st = shell.state();
        let text = String::from_utf8_lossy(&st.tail).into_owned();
        Some((text, st.status.task_status().0))
    }

    /// Kill a running shell's process group. Err carries the status of a shell that is not
    /// running; None for an unknown id.
    pub fn kill(&self, id: &str) -> Option<Result<String, ShellStatus>> {
        let shell = self.map().get(id).cloned()?;
        let mut st = shell.state();
        if st.status != ShellStatus::Running {
            return Some(Err(st.status));
        }
        signal_group(shell.group.pgid(), libc::SIGKILL);
        st.status = ShellStatus::Killed;
        Some(Ok(shell.command.clone()))
    }

    /// Kill every shell still running (on exit).
    pub fn kill_all(&self) {
        for shell in self.map().values() {
            let mut st = shell.state();
            if st.status == ShellStatus::Running {
                signal_group(shell.group.pgid(), libc::SIGKILL);
                st.status = ShellStatus::Killed;
            }
        }
    }

    /// Ids and commands of all shells, oldest first, with their status.
    pub fn list(&self) -> Vec<(String, String, ShellStatus)> {
        self.map()
            .iter()
            .map(|(id, s)| (id.clone(), s.command.clone(), s.state().status))
            .collect()
    }

    fn unknown(&self, id: &str, session: &SessionContext) -> ToolError {
        let mut ids: Vec<String> = self.list().into_iter().map(|(id, _, _)| id).collect();
        ids.extend(session.agent_tasks.ids());
        let known = if ids.is_empty() {
            "There are no background tasks.".to_string()
        } else {
            format!("Known tasks: {}.", ids.join(", "))
        };
        ToolError::new(format!("No task found with ID: {id}. {known}"))
    }
}

impl Drop for BackgroundShells {
    fn drop(&mut self) {
        self.kill_all();
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashOutputInput {
    /// A shell from Bash or an agent from Agent, started with run_in_background.
    #[serde(alias = "bash_id")]
    pub task_id: String,
    /// Wait for it to finish first (up to `timeout`).
    #[serde(default)]
    pub block: Option<bool>,
    /// Milliseconds (default 30000, at most 600000).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Return only new lines matching this regex (the rest are consumed).
    #[serde(default)]
    pub filter: Option<String>,
}

/// How long a blocking read waits by default, and at most (milliseconds).
pub const BLOCK_DEFAULT_MS: u64 = 30_000;
pub const BLOCK_MAX_MS: u64 = 600_000;

/// Reads new output from a background shell.
pub struct BashOutputTool {
    shells: Arc<BackgroundShells>,
}

impl BashOutputTool {
    pub fn new(shells: Arc<BackgroundShells>) -> BashOutputTool {
        BashOutputTool { shells }
    }

    /// Wait until task `id` is no longer running, `limit` has passed, or the call is
    /// interrupted (an unknown id returns at once; the read then says so).
    async fn wait_for_end(&self, id: &str, limit: Duration, ctx: &ToolContext) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let running = self
                .shells
                .list()
                .into_iter()
                .any(|(i, _, status)| i == id && matches!(status, ShellStatus::Running))
                || ctx
                    .session
                    .agent_tasks
                    .get(id)
                    .is_some_and(|t| t.state == AgentTaskState::Running);
            if !running || tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::select! {
                _ = ctx.cancel.cancelled() => return,
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
    }
}

/// Claude Code's names of the tools that read and stop background tasks.
pub const OUTPUT_NAME: &str = "TaskOutput";
pub const STOP_NAME: &str = "TaskStop";

#[async_trait]
impl Tool for BashOutputTool {
    type Input = BashOutputInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new(OUTPUT_NAME, ToolKind::Execute)
            .aliases(&["BashOutput"])
            .read_only()
            .concurrency_safe()
    }

    fn description(&self) -> String {
        "A background task's new output and status (a shell's exit code, an agent's report \
         once done)."
            .to_string()
    }

    fn title(&self, input: &BashOutputInput, _ctx: &SessionContext) -> String {
        format!("{OUTPUT_NAME} {}", input.task_id)
    }

    async fn validate(&self, input: &BashOutputInput, _ctx: &ToolContext) -> Result<(), ToolError> {
        if let Some(t) = input.timeout
            && t > BLOCK_MAX_MS
        {
            return Err(ToolError::new(format!(
                "timeout {t} ms is more than the maximum of {BLOCK_MAX_MS} ms."
            )));
        }
        compile_filter(input.filter.as_deref()).map(|_| ())
    }

    async fn call(
        &self,
        input: BashOutputInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let filter = compile_filter(input.filter.as_deref())?;
        if input.block == Some(true) {
            let wait = input.timeout.unwrap_or(BLOCK_DEFAULT_MS).min(BLOCK_MAX_MS);
            self.wait_for_end(&input.task_id, Duration::from_millis(wait), ctx)
                .await;
        }
        let Some(out) = self.shells.read(&input.task_id) else {
            return match ctx.session.agent_tasks.get(&input.task_id) {
                Some(task) => Ok(agent_output(&input.task_id, &task)),
                None => Err(self.shells.unknown(&input.task_id, &ctx.session)),
            };
        };
        let keep = |text: &str| -> String {
            match &filter {
                Some(re) => text
                    .lines()
                    .filter(|l| re.is_match(l))
                    .collect::<Vec<_>>()
                    .join("\n"),
                None => text.trim_end_matches('\n').to_string(),
            }
        };
        let (stdout, stderr) = (keep(&out.stdout), keep(&out.stderr));
        let mut text = format!("<status>{}</status>", out.status.word());
        let exit_code = match out.status {
            ShellStatus::Completed(code) => code,
            _ => None,
        };
        if let Some(code) = exit_code {
            text.push_str(&format!("\n<exit_code>{code}</exit_code>"));
        }
        if !stdout.is_empty() {
            text.push_str(&format!("\n<stdout>\n{stdout}\n</stdout>"));
        }
        if !stderr.is_empty() {
            text.push_str(&format!("\n<stderr>\n{stderr}\n</stderr>"));
        }
        if stdout.is_empty() && stderr.is_empty() {
            text.push_str("\n(no new output)");
        }
        if out.dropped > 0 {
            text.push_str(&format!(
                "\n[{} bytes of older unread output were dropped; read more often]",
                out.dropped
            ));
        }
        Ok(ToolOutput::with_display(
            text,
            Display::Command {
                command: out.command,
                stdout,
                stderr,
                exit_code,
                timed_out: false,
            },
        ))
    }
}

/// What TaskOutput says of background agent `id`: its state, and its report once it has one
/// (a running agent has no output before its report).
fn agent_output(id: &str, task: &AgentTask) -> ToolOutput {
    let mut text = format!(
        "<status>{}</status>\n<agent>{id} ({}: {})</agent>",
        task.state.word(),
        task.agent,
        task.description
    );
    match &task.state {
        AgentTaskState::Running => text.push_str(
            "\n(no output yet: the agent's report comes when it finishes; block: true waits \
             for it)",
        ),
        AgentTaskState::Completed(report) => {
            text.push_str(&format!("\n<output>\n{report}\n</output>"))
        }
        AgentTaskState::Failed(why) => text.push_str(&format!("\n<error>{why}</error>")),
        AgentTaskState::Stopped => text.push_str("\n(stopped before it finished; no report)"),
    }
    ToolOutput::with_display(text.clone(), Display::Text { text })
}

fn compile_filter(filter: Option<&str>) -> Result<Option<regex::Regex>, ToolError> {
    match filter.filter(|f| !f.is_empty()) {
        Some(f) => regex::Regex::new(f)
            .map(Some)
            .map_err(|e| ToolError::new(format!("Invalid filter regex `{f}`: {e}"))),
        None => Ok(None),
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillShellInput {
    /// The task id (a shell or an agent).
    #[serde(alias = "shell_id")]
    pub task_id: String,
}

/// Kills a background shell and everything it started.
pub struct KillShellTool {
    shells: Arc<BackgroundShells>,
}

impl KillShellTool {
    pub fn new(shells: Arc<BackgroundShells>) -> KillShellTool {
        KillShellTool { shells }
    }
}

#[async_trait]
impl Tool for KillShellTool {
    type Input = KillShellInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new(STOP_NAME, ToolKind::Execute).aliases(&["KillShell"])
    }

    fn description(&self) -> String {
        "Stops a background task: a shell with its processes, or an agent (no report follows)."
            .to_string()
    }

    fn title(&self, input: &KillShellInput, _ctx: &SessionContext) -> String {
        format!("{STOP_NAME} {}", input.task_id)
    }

    async fn call(
        &self,
        input: KillShellInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        match self.shells.kill(&input.task_id) {
            None => match ctx.session.agent_tasks.stop_by_model(&input.task_id) {
                None => Err(self.shells.unknown(&input.task_id, &ctx.session)),
                Some(Err(state)) => Err(ToolError::new(format!(
                    "Background agent {} is not running, so it cannot be stopped (status: {}).",
                    input.task_id,
                    state.word()
                ))),
                Some(Ok(task)) => Ok(ToolOutput::text(format!(
                    "Successfully stopped background agent: {} ({}: {}); it sends no report.",
                    input.task_id, task.agent, task.description
                ))),
            },
            Some(Err(status)) => Err(ToolError::new(format!(
                "Shell {} is not running, so it cannot be killed (status: {}).",
                input.task_id,
                status.word()
            ))),
            Some(Ok(command)) => Ok(ToolOutput::text(format!(
                "Successfully killed shell: {} ({command})",
                input.task_id
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unread_output_is_bounded() {
        let mut u = Unread::default();
        u.push(&vec![b'a'; MAX_UNREAD]);
        u.push(b"bc");
        let (text, dropped) = u.take();
        assert_eq!(dropped, 2);
        assert_eq!(text.len(), MAX_UNREAD);
        assert!(text.ends_with("abc"));
        assert_eq!(u.take(), (String::new(), 0));
    }
}
