//! Background sub-agents (`run_in_background`): the Agent call returns an id at once and the
//! run goes on in its own task. When it ends, its report (or why it failed) is queued as a
//! reminder of the conversation that started it, so it reaches the model with that
//! conversation's next request (or, when the session is idle, in a request of its own: the
//! core is woken through [`SessionContext::background_finished`]); its record in the
//! session's `AgentTasks` is what TaskOutput reads and TaskStop stops; and an [`Event::BackgroundTask`] tells the client (`/tasks`,
//! and a notice when the person is not waiting on the model). Runs are stopped when the
//! session ends (the session's [`Subagents`](super::subagent::Subagents) is dropped) or when
//! the person stops one from `/tasks` ([`Op::StopTask`](crate::protocol::Op::StopTask); the
//! model is then told so, as it would have been told the report), never by an interrupt of the
//! turn that started them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::core::Core;
use super::running_tasks::RunningTasks;
use crate::protocol::{BackgroundTask, Display, Event, TaskStatus};
use crate::session::agent_tasks::AgentTaskState;
use crate::session::context::SessionContext;

/// The background runs of a session.
#[derive(Default)]
pub(crate) struct Background {
    /// Runs started so far (ids are `agent-<n>`).
    started: AtomicU64,
    /// Cancelled when the session ends.
    stop: CancellationToken,
    /// The runs still going (the core stops one when the person asks).
    pub running: Arc<RunningTasks>,
}

impl Background {
    /// Stop every run (the session ends).
    pub fn stop_all(&self) {
        self.stop.cancel();
    }

    /// The id of the next run (`agent-<n>`), taken before its core is built so its
    /// permission requests can carry it.
    pub fn next_id(&self) -> String {
        let n = self.started.fetch_add(1, Ordering::Relaxed) + 1;
        format!("agent-{n}")
    }

    /// Run `core` on `prompt` in its own task, as `task` (running, with its id, type and
    /// the call that started it). `parent` is the conversation its report goes back to.
    pub fn start(
        &self,
        mut task: BackgroundTask,
        mut core: Core,
        prompt: &str,
        parent: &Arc<SessionContext>,
    ) {
        let agent = task.agent.clone();
        let description = task.description.clone();
        parent.events.send(Event::BackgroundTask(task.clone()));
        let cancel = self.stop.child_token();
        self.running.insert(&task.id, cancel.clone());
        parent
            .agent_tasks
            .started(&task.id, &agent, &description, cancel.clone());
        let running = Arc::clone(&self.running);
        let session_over = self.stop.clone();
        let parent = Arc::clone(parent);
        let prompt = prompt.to_string();
        tokio::spawn(async move {
            let started = Instant::now();
            let result = core.run_subagent(&prompt, &cancel).await;
            running.remove(&task.id);
            let head = format!(
                "Background agent {} ({}: {})",
                task.id, task.agent, task.description
            );
            let by_model = parent
                .agent_tasks
                .get(&task.id)
                .is_some_and(|t| t.stopped_by_model);
            let mut wake = None;
            let state = match result {
                // No one is left to tell.
                _ if session_over.is_cancelled() => AgentTaskState::Stopped,
                // The model's TaskStop result already told it.
                Err(_) if cancel.is_cancelled() && by_model => AgentTaskState::Stopped,
                // A report that came in as the person stopped it is still a report.
                Err(_) if cancel.is_cancelled() => {
                    parent.remind(format!(
                        "{head} was stopped by the user before it finished; it has no report."
                    ));
                    AgentTaskState::Stopped
                }
                // The model is woken to read it when it waits for nothing else (below).
                Ok(report) => {
                    wake = Some(format!("{head} finished. Its report:\n\n{report}"));
                    AgentTaskState::Completed(report)
                }
                Err(why) => {
                    wake = Some(format!("{head} failed: {why}"));
                    AgentTaskState::Failed(why)
                }
            };
            (task.status, task.report) = match &state {
                AgentTaskState::Running | AgentTaskState::Stopped => (TaskStatus::Stopped, None),
                AgentTaskState::Completed(report) => (TaskStatus::Completed, Some(report.clone())),
                AgentTaskState::Failed(why) => (TaskStatus::Failed, Some(why.clone())),
            };
            parent.agent_tasks.ended(&task.id, state);
            task.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            if let Some(call_id) = &task.call_id {
                parent.show_later(call_id, ended_display(&task));
            }
            // After the cell's end is kept, so the request that carries the notice writes it.
            if let Some(notice) = wake {
                parent.background_finished(notice);
            }
            // The reminder is queued before the client hears of the end, so a prompt sent in
            // answer to the event carries it.
            parent.events.send(Event::BackgroundTask(task));
        });
    }
}

/// What the Agent call that started `task` shows once it ended (a resumed session's cell).
fn ended_display(task: &BackgroundTask) -> Display {
    let secs = task.elapsed_ms / 1000;
    let id = &task.id;
    let report = task.report.as_deref().unwrap_or_default();
    match task.status {
        TaskStatus::Completed => Display::Markdown {
            text: format!("Done in the background as {id} ({secs}s).\n\n{report}"),
        },
        TaskStatus::Failed => Display::Text {
            text: format!("Failed in the background as {id} ({secs}s): {report}"),
        },
        TaskStatus::Running | TaskStatus::Stopped => Display::Text {
            text: format!("Stopped in the background as {id} ({secs}s)."),
        },
    }
}
