//! The background work the person reaches from `/tasks`: the agents still running, by id,
//! each with the token that stops it (filled by `background.rs` as runs start and end), and
//! the session's background shells (the registry Bash, TaskOutput and TaskStop share). The
//! core stops one ([`Op::StopTask`]) and answers what one has put out so far
//! ([`Op::ReadTask`]) through it. Apart from `background.rs` and the core so neither refers
//! to the other.
//!
//! [`Op::StopTask`]: crate::protocol::Op::StopTask
//! [`Op::ReadTask`]: crate::protocol::Op::ReadTask

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::protocol::{Event, TaskStatus};
use crate::session::agent_tasks::{AgentTaskState, AgentTasks};
use crate::session::context::EventSender;
use crate::tools::bash::BackgroundShells;

#[derive(Default)]
pub(crate) struct RunningTasks {
    tokens: Mutex<HashMap<String, CancellationToken>>,
    /// The session's background shells.
    pub shells: Arc<BackgroundShells>,
}

impl RunningTasks {
    /// A poisoned lock only means a run's task panicked; the map is still usable.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn insert(&self, id: &str, token: CancellationToken) {
        self.lock().insert(id.to_string(), token);
    }

    pub fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    /// The person stops agent or shell `id` (a shell as TaskStop stops it); a notice on
    /// `events` when there is no such task running. Its end event follows.
    pub fn stop(&self, id: &str, events: &EventSender) {
        if let Some(token) = self.lock().get(id) {
            token.cancel();
            return;
        }
        let message = match self.shells.kill(id) {
            Some(Ok(_)) => return,
            Some(Err(status)) => format!("Background shell {id} is not running ({status:?})."),
            None => format!("No background task {id} is running."),
        };
        events.send(Event::Notice { message });
    }

    /// What task `id` has put out so far: a shell's last output, an agent's report (or why
    /// it failed) once it ended; an unknown id is an empty, stopped one.
    pub fn output(&self, id: &str, agents: &AgentTasks) -> Event {
        let (output, status) = match (self.shells.peek(id), agents.get(id)) {
            (Some(shell), _) => shell,
            (None, Some(agent)) => match agent.state {
                AgentTaskState::Running => (String::new(), TaskStatus::Running),
                AgentTaskState::Completed(report) => (report, TaskStatus::Completed),
                AgentTaskState::Failed(why) => (why, TaskStatus::Failed),
                AgentTaskState::Stopped => (String::new(), TaskStatus::Stopped),
            },
            (None, None) => (String::new(), TaskStatus::Stopped),
        };
        Event::TaskOutput {
            id: id.to_string(),
            output,
            status,
        }
    }
}
