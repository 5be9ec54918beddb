//! Background tasks as clients see them: agents and shells started with `run_in_background`,
//! what `/tasks` lists and the Agent or Bash call's cell follows.

use serde::{Deserialize, Serialize};

/// A background agent or shell, as `/tasks` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackgroundTask {
    /// What the model was given to refer to it (`agent-1`, `bash_1`).
    pub id: String,
    /// An agent or a shell.
    #[serde(default)]
    pub kind: TaskKind,
    /// The agent type (`shell` for a shell).
    pub agent: String,
    /// The call's description (a shell's command).
    pub description: String,
    pub status: TaskStatus,
    /// Time from start to now (0 when it starts).
    pub elapsed_ms: u64,
    /// The tool call that started it, whose cell shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Once it ended: an agent's report (or why it failed), a shell's exit (`exit code 1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    #[default]
    Agent,
    Shell,
}

impl TaskKind {
    /// `agent` or `shell`, for sentences.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Agent => "agent",
            TaskKind::Shell => "shell",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Running,
    Completed,
    Failed,
    /// Stopped before it finished (the session ended, or the person stopped it).
    Stopped,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Running => "running",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Stopped => "stopped",
        }
    }
}
