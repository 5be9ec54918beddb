//! The agent core: the query loop (build the request, stream, run tools, loop until the model
//! ends its turn), the streaming tool executor, system-prompt assembly and the session state.
//!
//! A client starts the core with [`start`] and then talks to it only through the returned
//! [`AgentHandle`]: [`Op`]s in, [`Event`]s out.

pub mod session;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::llm::ModelClient;
use crate::llm::retry::RetryPolicy;
use crate::protocol::{Event, Op, PermissionMode};

/// The client's end of a running core.
pub struct AgentHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
}

/// Everything needed to start a session.
pub struct AgentSetup {
    pub client: Arc<dyn ModelClient>,
    pub model: String,
    pub project_dir: PathBuf,
    pub additional_dirs: Vec<PathBuf>,
    pub data_dir: PathBuf,
    pub mode: PermissionMode,
    /// Whether a person can answer permission requests (false for headless).
    pub interactive: bool,
    pub max_turns: Option<u32>,
    pub retry: RetryPolicy,
    pub max_tokens: u32,
    /// Running against the built-in scripted model.
    pub demo: bool,
}

/// Start the core on the current tokio runtime.
pub fn start(_setup: AgentSetup) -> AgentHandle {
    let (ops, _ops_rx) = mpsc::unbounded_channel();
    let (_events_tx, events) = mpsc::unbounded_channel();
    AgentHandle { ops, events }
}
