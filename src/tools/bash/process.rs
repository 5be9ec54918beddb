//! Running one shell command as its own process group: spawning, capturing stdout and stderr,
//! the timeout (SIGTERM to the group, SIGKILL after a grace period), interrupt (SIGKILL at once)
//! and the tail of output reported as progress.
//!
//! Invariants: every process we start leads a new session and process group (no controlling
//! terminal), so signals reach its children too; stdin is /dev/null and there is no TTY, so nothing can wait for input; capture is
//! bounded in memory; when the shell has exited, whatever it left running in its group is killed
//! so no stray process holds our pipes; and a [`GroupChild`] that is dropped — its call
//! cancelled, its task dropped because cairn is exiting and the runtime goes down — kills its
//! whole group, so nothing cairn started outlives it, whatever the timing.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// After SIGTERM, how long the group has before SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// After the shell exits, how long leftover processes may keep its pipes open.
const DRAIN_GRACE: Duration = Duration::from_millis(250);
/// Captured bytes per stream; beyond this output is counted, not kept.
pub const MAX_CAPTURE: usize = 32 * 1024 * 1024;
/// How often progress may be reported, and how many lines it shows.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
const PROGRESS_LINES: usize = 5;

/// The shell to run commands with: `$SHELL` when it is a POSIX-style shell (our wrapper uses
/// `trap` and `>|`), otherwise bash.
pub fn shell_program() -> String {
    let posix = ["bash", "zsh", "sh", "dash", "ksh", "mksh"];
    match std::env::var("SHELL") {
        Ok(s)
            if Path::new(&s)
                .file_name()
                .is_some_and(|n| posix.iter().any(|p| n == *p))
                && Path::new(&s).is_file() =>
        {
            s
        }
        _ => "bash".to_string(),
    }
}

/// Start `script` with `shell -c` in `cwd`, leading its own session and so its own process
/// group. A new session also has no controlling terminal: a program that opens `/dev/tty` to
/// prompt (ssh, sudo, gpg) fails at once instead of stopping the whole group in the background
/// of the TUI's terminal until the timeout.
/// The environment is cairn's own under [`crate::shell::env_policy`] (provider credentials
/// removed) plus `env` (the settings' `env`).
pub fn spawn(
    shell: &str,
    script: &str,
    cwd: &Path,
    env: &[(String, String)],
) -> std::io::Result<GroupChild> {
    let mut cmd = Command::new(shell);
    crate::shell::env_policy::apply(&mut cmd, env);
    cmd.arg("-c")
        .arg(script)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Nothing can answer a credential prompt: fail instead of hanging.
        .env("GIT_TERMINAL_PROMPT", "0");
    // SAFETY: the closure runs in the forked child before exec and only calls setsid, which
    // is async-signal-safe; it allocates nothing and touches no shared state.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let pgid = child.id().unwrap_or(0);
    Ok(GroupChild {
        child,
        group: GroupKill { pgid },
    })
}

/// A started command and the process group it leads.
#[derive(Debug)]
pub struct GroupChild {
    pub child: Child,
    pub group: GroupKill,
}

/// Kills a process group with SIGKILL when dropped. Held for as long as the group may run:
/// when the future or task holding it is dropped (an interrupted call, or every task at once
/// as the runtime shuts down when cairn exits), the group dies with it.
#[derive(Debug)]
pub struct GroupKill {
    pgid: u32,
}

impl GroupKill {
    pub fn pgid(&self) -> u32 {
        self.pgid
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        signal_group(self.pgid, libc::SIGKILL);
    }
}

/// Send `signal` to every process in the group `pgid`.
pub fn signal_group(pgid: u32, signal: libc::c_int) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        return; // never signal "every process" or init's group
    }
    // SAFETY: killpg only sends a signal; it touches no memory of ours.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// How a foreground run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited,
    TimedOut,
    Interrupted,
}

/// Everything a foreground run produced.
#[derive(Debug)]
pub struct RunOutcome {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Bytes beyond [`MAX_CAPTURE`] that were dropped.
    pub dropped: u64,
    pub status: Option<ExitStatus>,
    pub ending: Ending,
}

/// Bounded capture of one stream.
pub(crate) fn append_capped(buf: &mut Vec<u8>, data: &[u8], dropped: &mut u64) {
    let room = MAX_CAPTURE.saturating_sub(buf.len());
    let keep = room.min(data.len());
    buf.extend_from_slice(&data[..keep]);
    *dropped += (data.len() - keep) as u64;
}

/// Read from an optional stream; a missing stream never yields.
pub(super) async fn read_some<R: AsyncRead + Unpin>(
    stream: &mut Option<R>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match stream {
        Some(s) => s.read(buf).await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Run `child` to the end: until it exits, the timeout passes or `cancel` fires. `progress` is
/// called with the last lines of combined output, at most every ~100 ms.
pub async fn run_foreground(
    started: GroupChild,
    timeout: Duration,
    cancel: &CancellationToken,
    mut progress: impl FnMut(String),
) -> RunOutcome {
    let GroupChild { mut child, group } = started;
    let pgid = group.pgid();
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let (mut obuf, mut ebuf) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    let mut outcome = RunOutcome {
        stdout: Vec::new(),
        stderr: Vec::new(),
        dropped: 0,
        status: None,
        ending: Ending::Exited,
    };
    let mut recent: Vec<u8> = Vec::new();
    let mut last_progress: Option<Instant> = None;
    // Output that arrived within the throttle window is reported when the window ends.
    let mut progress_due: Option<Instant> = None;
    let mut timeout_at = Some(Instant::now() + timeout);
    let mut kill_at: Option<Instant> = None;
    let mut drain_until: Option<Instant> = None;
    let mut exited = false;
    loop {
        if exited && out.is_none() && err.is_none() {
            break;
        }
        let mut chunk = None;
        tokio::select! {
            r = read_some(&mut out, &mut obuf) => match r {
                Ok(n) if n > 0 => chunk = Some((true, n)),
                _ => out = None,
            },
            r = read_some(&mut err, &mut ebuf) => match r {
                Ok(n) if n > 0 => chunk = Some((false, n)),
                _ => err = None,
            },
            s = child.wait(), if !exited => {
                exited = true;
                outcome.status = s.ok();
                drain_until = Some(Instant::now() + DRAIN_GRACE);
            }
            _ = sleep_until_opt(timeout_at) => {
                timeout_at = None;
                outcome.ending = Ending::TimedOut;
                signal_group(pgid, libc::SIGTERM);
                kill_at = Some(Instant::now() + KILL_GRACE);
            }
            _ = sleep_until_opt(kill_at) => {
                kill_at = None;
                signal_group(pgid, libc::SIGKILL);
            }
            _ = cancel.cancelled(), if outcome.ending != Ending::Interrupted => {
                outcome.ending = Ending::Interrupted;
                timeout_at = None;
                signal_group(pgid, libc::SIGKILL);
            }
            _ = sleep_until_opt(progress_due) => {
                progress_due = None;
                last_progress = Some(Instant::now());
                progress(last_lines(&recent, PROGRESS_LINES));
            }
            _ = sleep_until_opt(drain_until) => {
                // The shell is gone but something it started still holds the pipes.
                signal_group(pgid, libc::SIGKILL);
                break;
            }
        }
        if let Some((is_stdout, n)) = chunk {
            let data = if is_stdout { &obuf[..n] } else { &ebuf[..n] };
            let target = if is_stdout {
                &mut outcome.stdout
            } else {
                &mut outcome.stderr
            };
            append_capped(target, data, &mut outcome.dropped);
            recent.extend_from_slice(data);
            if recent.len() > 8192 {
                recent.drain(..recent.len() - 4096);
            }
            match last_progress {
                Some(t) if t.elapsed() < PROGRESS_EVERY => {
                    progress_due.get_or_insert(t + PROGRESS_EVERY);
                }
                _ => {
                    last_progress = Some(Instant::now());
                    progress_due = None;
                    progress(last_lines(&recent, PROGRESS_LINES));
                }
            }
        }
    }
    if !exited {
        outcome.status = child.wait().await.ok();
    }
    // Leftovers in the group (a `cmd &` the shell did not wait for) die with the call.
    drop(group);
    outcome
}

/// The last `n` non-empty lines of `bytes`, lossily decoded.
pub fn last_lines(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_lines_keeps_the_tail() {
        assert_eq!(last_lines(b"a\nb\n\nc\nd\ne\nf\n", 3), "d\ne\nf");
        assert_eq!(last_lines(b"", 3), "");
    }

    #[test]
    fn capture_is_bounded() {
        let mut buf = vec![0u8; MAX_CAPTURE - 2];
        let mut dropped = 0;
        append_capped(&mut buf, b"abcd", &mut dropped);
        assert_eq!(buf.len(), MAX_CAPTURE);
        assert_eq!(dropped, 2);
    }
}
