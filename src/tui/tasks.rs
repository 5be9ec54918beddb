//! The session's background agents as the TUI knows them from [`Event::BackgroundTask`]s:
//! agents and shells, what `/tasks` lists (id, type, description, elapsed time, status), the
//! running agents the status row counts, and the notice shown when one ends. Pure state: the app feeds it
//! events and the clock.
//!
//! [`Event::BackgroundTask`]: crate::protocol::Event::BackgroundTask

use std::time::{Duration, Instant};

use crate::protocol::{BackgroundTask, TaskKind, TaskStatus};
use crate::tui::status::format_elapsed;

struct Known {
    task: BackgroundTask,
    /// When the TUI heard it start (for the elapsed time of a running one).
    since: Instant,
}

#[derive(Default)]
pub(crate) struct BackgroundTasks {
    tasks: Vec<Known>,
}

impl BackgroundTasks {
    /// Take in an update; the notice to show when the task ended. `idle`: the model is not
    /// working, so the core sends it the report by itself (a turn of its own).
    pub fn update(&mut self, task: &BackgroundTask, now: Instant, idle: bool) -> Option<String> {
        match self.tasks.iter_mut().find(|k| k.task.id == task.id) {
            Some(k) => k.task = task.clone(),
            None => self.tasks.push(Known {
                task: task.clone(),
                since: now - Duration::from_millis(task.elapsed_ms),
            }),
        }
        let (what, next) = match task.kind {
            TaskKind::Agent => (
                format!(
                    "Background agent {} ({} · {})",
                    task.id, task.agent, task.description
                ),
                if idle {
                    "the model is sent its report now"
                } else {
                    "the model gets its report at its next step"
                },
            ),
            TaskKind::Shell => (
                format!("Background shell {} ({})", task.id, task.description),
                if idle {
                    "the model is told now"
                } else {
                    "the model is told at its next step"
                },
            ),
        };
        match task.status {
            TaskStatus::Running => None,
            TaskStatus::Completed => Some(format!("{what} finished: {next}.")),
            TaskStatus::Failed => Some(format!("{what} failed: {next}.")),
            TaskStatus::Stopped => Some(format!("{what} was stopped.")),
        }
    }

    /// The `/tasks` view's rows: running ones first, then the ended ones, oldest first; each
    /// the id, and type · description · elapsed time · status. Empty when none ever ran.
    pub fn rows(&self, now: Instant) -> Vec<(String, String)> {
        let running = self
            .tasks
            .iter()
            .filter(|k| k.task.status == TaskStatus::Running);
        let ended = self
            .tasks
            .iter()
            .filter(|k| k.task.status != TaskStatus::Running);
        running
            .chain(ended)
            .map(|k| {
                let t = &k.task;
                let elapsed = if t.status == TaskStatus::Running {
                    now.saturating_duration_since(k.since)
                } else {
                    Duration::from_millis(t.elapsed_ms)
                };
                let detail = format!(
                    "{} · {} · {} · {}",
                    t.agent,
                    t.description,
                    format_elapsed(elapsed),
                    t.status.as_str()
                );
                (t.id.clone(), detail)
            })
            .collect()
    }

    /// Task `id` as last told.
    pub fn get(&self, id: &str) -> Option<&BackgroundTask> {
        self.tasks.iter().map(|k| &k.task).find(|t| t.id == id)
    }

    /// How many background agents run (the status row's count).
    pub fn running_agents(&self) -> usize {
        self.tasks
            .iter()
            .filter(|k| k.task.status == TaskStatus::Running && k.task.kind == TaskKind::Agent)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, status: TaskStatus, elapsed_ms: u64) -> BackgroundTask {
        BackgroundTask {
            id: id.into(),
            agent: "Explore".into(),
            description: "find the parser".into(),
            status,
            elapsed_ms,
            kind: crate::protocol::TaskKind::Agent,
            call_id: None,
            report: None,
        }
    }

    #[test]
    fn lists_running_first_with_elapsed_time_and_says_when_one_ends() {
        let t0 = Instant::now();
        let mut tasks = BackgroundTasks::default();
        assert!(tasks.rows(t0).is_empty());
        assert_eq!(
            tasks.update(&task("agent-1", TaskStatus::Running, 0), t0, true),
            None
        );
        assert_eq!(
            tasks.update(&task("agent-2", TaskStatus::Running, 0), t0, true),
            None
        );
        let notice = tasks.update(&task("agent-1", TaskStatus::Completed, 4000), t0, true);
        assert_eq!(
            notice.as_deref(),
            Some(
                "Background agent agent-1 (Explore · find the parser) finished: the model is \
                 sent its report now."
            )
        );
        assert_eq!(tasks.running_agents(), 1);
        let row = |id: &str, detail: &str| (id.to_string(), detail.to_string());
        assert_eq!(
            tasks.rows(t0 + Duration::from_secs(75)),
            [
                row("agent-2", "Explore · find the parser · 1m 15s · running"),
                row("agent-1", "Explore · find the parser · 4s · completed")
            ]
        );
    }
}
