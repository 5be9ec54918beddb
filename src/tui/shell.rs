//! `!command`: run a shell command the person typed (not the model's Bash tool: no permission
//! step, the person asked for it) with `sh -c` in the project directory, in a task, and report
//! its combined output as an [`AppEvent::ShellFinished`]. Long output keeps its tail.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::tui::app::AppEvent;

/// Lines of output kept (the tail).
const MAX_LINES: usize = 200;
/// A command still running after this long is killed.
const TIMEOUT: Duration = Duration::from_secs(600);

/// Run `command` and describe the result. Never fails: errors become the output text.
pub async fn run_shell(command: String, cwd: &Path) -> AppEvent {
    let child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            return AppEvent::ShellFinished {
                command,
                output: format!("cannot start sh: {e}"),
                exit_code: Some(127),
            };
        }
    };
    match tokio::time::timeout(TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(out)) => {
            let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
            let err = String::from_utf8_lossy(&out.stderr);
            if !err.trim().is_empty() {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&err);
            }
            AppEvent::ShellFinished {
                command,
                output: tail(&text, MAX_LINES),
                exit_code: out.status.code(),
            }
        }
        Ok(Err(e)) => AppEvent::ShellFinished {
            command,
            output: format!("failed: {e}"),
            exit_code: None,
        },
        Err(_) => AppEvent::ShellFinished {
            command,
            output: format!("killed after {} s", TIMEOUT.as_secs()),
            exit_code: None,
        },
    }
}

/// The last `max` lines of `text`, with a note of how many were left out.
fn tail(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max {
        return text.to_string();
    }
    let skipped = lines.len() - max;
    format!("… {skipped} lines above\n{}", lines[skipped..].join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_in_the_directory_and_reports_output_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("marker.txt"), "").unwrap();
        let ev = run_shell("ls; echo oops >&2; exit 3".into(), dir.path()).await;
        assert_eq!(
            ev,
            AppEvent::ShellFinished {
                command: "ls; echo oops >&2; exit 3".into(),
                output: "marker.txt\noops\n".into(),
                exit_code: Some(3),
            }
        );
    }

    #[test]
    fn keeps_the_tail_of_long_output() {
        let text: String = (1..=5).map(|i| format!("{i}\n")).collect();
        assert_eq!(tail(&text, 2), "… 3 lines above\n4\n5");
        assert_eq!(tail("a\nb\n", 2), "a\nb\n");
    }
}
