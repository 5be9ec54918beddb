//! The settings' `statusLine` command (Claude Code's custom status line), run for the client:
//! under `sh -c` in the project directory with Claude Code's `Status` JSON on stdin (what the
//! client knows, [`StatusLineInput`], plus the session's transcript, project directory and
//! output style), by the hook runner (its own process group, killed at the timeout). The first
//! line of stdout goes back as it was printed, padded; the client decides when to run it and
//! how to show escape sequences.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::config::hooks::HookCommand;
use crate::host::SessionFacts;
use crate::protocol::StatusLineInput;

/// How long a run may take before it is killed.
pub(super) const TIMEOUT: Duration = Duration::from_secs(5);

/// One run of the command, owning everything it needs (it runs on a tokio task).
#[derive(Debug, Clone)]
pub(super) struct Job {
    pub hook: HookCommand,
    pub project_dir: PathBuf,
    pub env: Vec<(String, String)>,
    pub stdin: String,
    pub padding: u16,
}

impl Job {
    /// The run for `input`; `None` when the settings have no `statusLine`.
    pub fn new(facts: &SessionFacts, input: &StatusLineInput) -> Option<Job> {
        let setting = facts.status_line.as_ref()?;
        Some(Job {
            hook: HookCommand {
                command: setting.command.clone(),
                timeout: TIMEOUT,
            },
            project_dir: facts.project_dir.clone(),
            env: facts.tool_env.clone(),
            stdin: input_json(facts, input).to_string(),
            padding: setting.padding,
        })
    }

    /// Run it: the first line of stdout, padded, or why there is none.
    pub async fn run(self) -> Result<String, String> {
        let run =
            crate::hooks::runner::run_one(&self.hook, &self.project_dir, &self.env, self.stdin)
                .await;
        if run.timed_out {
            return Err(format!(
                "timed out after {} ms and was killed",
                self.hook.timeout.as_millis()
            ));
        }
        if run.overflowed {
            return Err("printed too much and was killed".into());
        }
        if run.exit_code != Some(0) {
            let code = run
                .exit_code
                .map_or("no exit code".to_string(), |c| format!("exit {c}"));
            let stderr = run.stderr.lines().next().unwrap_or_default().to_string();
            return Err(format!("failed ({code}) {stderr}").trim_end().to_string());
        }
        let first = run.stdout.lines().next().unwrap_or_default();
        if first.is_empty() {
            return Ok(String::new());
        }
        Ok(format!("{}{first}", " ".repeat(usize::from(self.padding))))
    }
}

/// Claude Code's `Status` input, with what cairn knows.
pub(super) fn input_json(facts: &SessionFacts, input: &StatusLineInput) -> Value {
    let StatusLineInput {
        session_id,
        model,
        cwd,
        cost_usd,
        duration_ms,
        lines_added,
        lines_removed,
    } = input;
    json!({
        "hook_event_name": "Status",
        "session_id": session_id,
        "transcript_path": facts.transcript_path,
        "cwd": cwd,
        "model": {"id": model, "display_name": display_name(model)},
        "workspace": {"current_dir": cwd, "project_dir": facts.project_dir},
        "version": env!("CARGO_PKG_VERSION"),
        "output_style": {"name": facts.output_style},
        "cost": {
            "total_cost_usd": cost_usd,
            "total_duration_ms": duration_ms,
            "total_lines_added": lines_added,
            "total_lines_removed": lines_removed,
        },
    })
}

/// A short name for a model: `claude-sonnet-4-5-20250929` is `Sonnet 4.5`, `claude-3-5-haiku`
/// is `Haiku 3.5`; other ids are shown as they are.
pub(super) fn display_name(model: &str) -> String {
    let Some(rest) = model.strip_prefix("claude-") else {
        return model.to_string();
    };
    let parts: Vec<&str> = rest.split('-').collect();
    let family = parts
        .iter()
        .find(|p| matches!(**p, "opus" | "sonnet" | "haiku"));
    let version: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    match family {
        Some(f) if !version.is_empty() => {
            let mut name = f.to_string();
            name[..1].make_ascii_uppercase();
            format!("{name} {}", version.join("."))
        }
        _ => model.to_string(),
    }
}
