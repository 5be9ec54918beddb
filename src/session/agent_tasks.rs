//! The session's background agents as the tools see them: each run's agent, description,
//! state and final report, and the token that stops it. The agent layer
//! (`agent/background.rs`) fills it as runs start and end; TaskOutput reads it and TaskStop
//! stops a run through it (`tools/bash/background.rs`). It knows nothing of cores or tools:
//! plain records under one lock, so neither side names the other.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

/// Where a background agent is, as TaskOutput reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentTaskState {
    Running,
    /// Its final report.
    Completed(String),
    /// Why it failed.
    Failed(String),
    /// Stopped before it finished (by TaskStop or the person).
    Stopped,
}

impl AgentTaskState {
    pub fn word(&self) -> &'static str {
        match self {
            AgentTaskState::Running => "running",
            AgentTaskState::Completed(_) => "completed",
            AgentTaskState::Failed(_) => "failed",
            AgentTaskState::Stopped => "killed",
        }
    }
}

/// One background agent's record.
#[derive(Debug, Clone)]
pub struct AgentTask {
    pub agent: String,
    pub description: String,
    pub state: AgentTaskState,
    /// Stopped by the model's TaskStop (its result already said so: no reminder follows).
    pub stopped_by_model: bool,
}

#[derive(Debug)]
struct Entry {
    task: AgentTask,
    stop: CancellationToken,
}

/// The background agents of one session, by id (`agent-<n>`).
#[derive(Default, Debug)]
pub struct AgentTasks {
    tasks: Mutex<BTreeMap<String, Entry>>,
}

impl AgentTasks {
    /// A poisoned lock only means a run's task panicked; the records are still whole.
    fn map(&self) -> MutexGuard<'_, BTreeMap<String, Entry>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Run `id` started; `stop` ends it.
    pub fn started(&self, id: &str, agent: &str, description: &str, stop: CancellationToken) {
        let task = AgentTask {
            agent: agent.to_string(),
            description: description.to_string(),
            state: AgentTaskState::Running,
            stopped_by_model: false,
        };
        self.map().insert(id.to_string(), Entry { task, stop });
    }

    /// Run `id` ended as `state`.
    pub fn ended(&self, id: &str, state: AgentTaskState) {
        if let Some(entry) = self.map().get_mut(id) {
            entry.task.state = state;
        }
    }

    /// The record of run `id`.
    pub fn get(&self, id: &str) -> Option<AgentTask> {
        self.map().get(id).map(|e| e.task.clone())
    }

    /// The ids of every run, oldest first.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<(u64, String)> = self
            .map()
            .keys()
            .map(|id| (number(id), id.clone()))
            .collect();
        ids.sort();
        ids.into_iter().map(|(_, id)| id).collect()
    }

    /// The model stops run `id`: Ok when it was running (it ends soon after), Err with its
    /// state when it was not; None for an unknown id.
    pub fn stop_by_model(&self, id: &str) -> Option<Result<AgentTask, AgentTaskState>> {
        let mut map = self.map();
        let entry = map.get_mut(id)?;
        if entry.task.state != AgentTaskState::Running {
            return Some(Err(entry.task.state.clone()));
        }
        entry.task.stopped_by_model = true;
        entry.stop.cancel();
        Some(Ok(entry.task.clone()))
    }
}

/// `agent-12` → 12, so ids sort as numbers.
fn number(id: &str) -> u64 {
    id.rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_stopped_once_and_ids_sort_as_numbers() {
        let tasks = AgentTasks::default();
        let token = CancellationToken::new();
        tasks.started("agent-10", "alpha", "ten", CancellationToken::new());
        tasks.started("agent-2", "alpha", "two", token.clone());
        assert_eq!(tasks.ids(), vec!["agent-2", "agent-10"]);
        assert!(matches!(tasks.stop_by_model("agent-2"), Some(Ok(_))));
        assert!(token.is_cancelled());
        tasks.ended("agent-2", AgentTaskState::Stopped);
        assert_eq!(
            tasks.stop_by_model("agent-2").map(|r| r.map(|_| ())),
            Some(Err(AgentTaskState::Stopped))
        );
        assert!(tasks.stop_by_model("agent-3").is_none());
    }
}
