//! The full-screen terminal UI: a client of [`crate::protocol`] only.
//!
//! Placeholder; built by the TUI work.

pub mod review;

use crate::agent::AgentHandle;

/// Options the TUI needs beyond the agent handle.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    /// Submitted as the first prompt.
    pub initial_prompt: Option<String>,
    /// Shown in the conversation before anything else (e.g. "running the demo").
    pub notices: Vec<String>,
}

/// Run the TUI until the person quits. Returns the one-line summary printed after exit.
pub async fn run(_handle: AgentHandle, _opts: TuiOptions) -> anyhow::Result<String> {
    anyhow::bail!("the TUI is not built yet; use -p")
}
