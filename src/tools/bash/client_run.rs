//! A foreground command in the client's terminal (`shell::client`): the same script the local
//! run gets (the cwd trap included), started with `terminal/create`, waited for under the
//! call's timeout and interrupt (both end in a kill), read once it has ended, then released.
//! What it printed becomes a [`RunOutcome`] like a local run's, so the result the model gets
//! is shaped by the same code (the head-and-tail cut, the spill file, the exit-code header).
//!
//! The environment policy holds as far as a client allows: the variables it would remove are
//! `unset` by the command's own shell first, and the settings' `env` is passed along. A call
//! dropped mid-run (the session ending), even while the terminal is being created, kills and
//! releases its terminal on the way out.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::process::{Ending, MAX_CAPTURE, RunOutcome};
use crate::shell::client::{ClientTerminal, TerminalCommand, TerminalExit};

/// Everything the run needs besides the terminal.
pub struct ClientRun<'a> {
    pub call_id: &'a str,
    pub shell: &'a str,
    pub script: &'a str,
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub timeout: Duration,
    pub cancel: &'a CancellationToken,
}

/// Run `run` in `terminal`. The outcome and a note for the model when the client cut the
/// output; an error when the client would not start the command.
pub async fn run(
    terminal: Arc<dyn ClientTerminal>,
    run: ClientRun<'_>,
) -> Result<(RunOutcome, Option<String>), String> {
    let policy = crate::shell::env_policy::for_client(run.env);
    let mut script = String::new();
    if !policy.remove.is_empty() {
        script = format!("unset {} 2>/dev/null; ", policy.remove.join(" "));
    }
    script.push_str(run.script);
    let mut env = policy.set;
    env.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    let command = TerminalCommand {
        call_id: run.call_id.to_string(),
        program: run.shell.to_string(),
        args: vec!["-c".into(), script],
        env,
        cwd: run.cwd.to_path_buf(),
        output_byte_limit: MAX_CAPTURE as u64,
    };
    // Created on a task of its own: a call dropped while the editor is still creating the
    // terminal leaves it to that task to kill and release.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let creator = Arc::clone(&terminal);
    tokio::spawn(async move {
        let created = creator.create(command).await;
        if let Err(Ok(id)) = tx.send(created) {
            let _ = creator.kill(&id).await;
            let _ = creator.release(&id).await;
        }
    });
    let id = rx
        .await
        .map_err(|_| "The editor could not start the command: it went away".to_string())?
        .map_err(|e| format!("The editor could not start the command: {e}"))?;
    let mut guard = Release {
        terminal: Some(Arc::clone(&terminal)),
        id: id.clone(),
    };
    let (ending, exit) = tokio::select! {
        r = terminal.wait_for_exit(&id) => (Ending::Exited, r.ok()),
        _ = tokio::time::sleep(run.timeout) => (Ending::TimedOut, None),
        _ = run.cancel.cancelled() => (Ending::Interrupted, None),
    };
    if ending != Ending::Exited {
        let _ = terminal.kill(&id).await;
    }
    let output = terminal.output(&id).await.unwrap_or_default();
    let _ = terminal.release(&id).await;
    guard.terminal = None;
    let exit = exit.or(output.exit);
    let note = output.truncated.then(|| {
        format!("(The editor kept only the last {MAX_CAPTURE} bytes of the command's output.)")
    });
    let outcome = RunOutcome {
        stdout: output.output.into_bytes(),
        stderr: Vec::new(),
        dropped: 0,
        status: exit.as_ref().and_then(status),
        ending,
    };
    Ok((outcome, note))
}

/// Kills and releases the terminal when the run is dropped before it could.
struct Release {
    terminal: Option<Arc<dyn ClientTerminal>>,
    id: String,
}

impl Drop for Release {
    fn drop(&mut self) {
        let Some(terminal) = self.terminal.take() else {
            return;
        };
        let id = std::mem::take(&mut self.id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = terminal.kill(&id).await;
                let _ = terminal.release(&id).await;
            });
        }
    }
}

/// The client's exit status as a process's: an exit code, or the signal that ended it.
fn status(exit: &TerminalExit) -> Option<ExitStatus> {
    if let Some(code) = exit.exit_code {
        return Some(ExitStatus::from_raw(((code & 0xff) << 8) as i32));
    }
    let signal = exit.signal.as_deref()?;
    let name = signal.trim_start_matches("SIG");
    let number = match name {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "ABRT" => libc::SIGABRT,
        "KILL" => libc::SIGKILL,
        "SEGV" => libc::SIGSEGV,
        "PIPE" => libc::SIGPIPE,
        "ALRM" => libc::SIGALRM,
        "TERM" => libc::SIGTERM,
        other => other.parse().ok().filter(|n| (1..128).contains(n))?,
    };
    Some(ExitStatus::from_raw(number))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;

    use super::*;
    use crate::shell::client::{ClientTerminalError, TerminalOutput};

    /// An editor that takes its time creating a terminal and records what it was asked.
    #[derive(Debug, Default)]
    struct SlowEditor {
        asked: Mutex<Vec<String>>,
    }

    impl SlowEditor {
        fn note(&self, what: &str) {
            self.asked.lock().unwrap().push(what.to_string());
        }
    }

    #[async_trait]
    impl ClientTerminal for SlowEditor {
        async fn create(&self, _: TerminalCommand) -> Result<String, ClientTerminalError> {
            tokio::time::sleep(Duration::from_millis(100)).await;
            self.note("create");
            Ok("t1".into())
        }
        async fn output(&self, _: &str) -> Result<TerminalOutput, ClientTerminalError> {
            self.note("output");
            Ok(TerminalOutput::default())
        }
        async fn wait_for_exit(&self, _: &str) -> Result<TerminalExit, ClientTerminalError> {
            std::future::pending().await
        }
        async fn kill(&self, id: &str) -> Result<(), ClientTerminalError> {
            self.note(&format!("kill {id}"));
            Ok(())
        }
        async fn release(&self, id: &str) -> Result<(), ClientTerminalError> {
            self.note(&format!("release {id}"));
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_call_dropped_while_its_terminal_is_created_still_releases_it() {
        let editor = Arc::new(SlowEditor::default());
        let cancel = CancellationToken::new();
        let terminal: Arc<dyn ClientTerminal> = editor.clone();
        let started = run(
            terminal,
            ClientRun {
                call_id: "c1",
                shell: "bash",
                script: "sleep 100",
                cwd: Path::new("/"),
                env: &[],
                timeout: Duration::from_secs(60),
                cancel: &cancel,
            },
        );
        // The call is dropped before the editor has answered terminal/create.
        let dropped = tokio::time::timeout(Duration::from_millis(20), started).await;
        assert!(dropped.is_err());
        tokio::time::sleep(Duration::from_millis(300)).await;
        let asked = editor.asked.lock().unwrap().clone();
        assert_eq!(asked, ["create", "kill t1", "release t1"]);
    }

    #[test]
    fn exit_codes_and_signals_read_as_a_process_status() {
        let code = |c| {
            status(&TerminalExit {
                exit_code: Some(c),
                signal: None,
            })
        };
        assert_eq!(code(0).and_then(|s| s.code()), Some(0));
        assert_eq!(code(3).and_then(|s| s.code()), Some(3));
        let signal = |s: &str| {
            status(&TerminalExit {
                exit_code: None,
                signal: Some(s.into()),
            })
        };
        assert_eq!(signal("SIGKILL").and_then(|s| s.signal()), Some(9));
        assert_eq!(signal("15").and_then(|s| s.signal()), Some(15));
        assert_eq!(signal("SIGWHAT"), None);
        assert_eq!(status(&TerminalExit::default()), None);
    }
}
