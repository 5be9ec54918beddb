//! `/tasks` in the TUI: a view of the background agents and shells (running ones first, then
//! the ended ones, each with its type, description, elapsed time and status) that leaves the
//! conversation alone; Enter on one opens its live view ([`TaskView`]: what it did so far, as
//! it goes on; `k` sends [`Op::StopTask`], and the core stops it — an agent's model is told
//! the person did; the notice comes with its end event).

use super::*;
use crate::tui::picker::PickerItem;
use crate::tui::task_view::TaskView;

/// The view's one row when no task ever ran.
const NONE: &str = "No background tasks in this session";
const NONE_DETAIL: &str = "the model starts them with run_in_background (Agent or Bash)";

impl App {
    /// `/tasks`: the view of every background task of the session.
    pub(super) fn tasks_command(&mut self) {
        let mut rows = self.session.tasks.rows(Instant::now());
        if rows.is_empty() {
            rows.push((NONE.to_string(), NONE_DETAIL.to_string()));
        }
        self.input
            .open_picker(Picker::choices(PickerKind::Tasks, rows));
    }

    /// A row of `/tasks` was picked: its live view (the "none" row has nothing to show).
    pub(super) fn task_picked(&mut self, item: &PickerItem) {
        if let Some(task) = self.session.tasks.get(&item.label) {
            self.layers.open_task_view(TaskView::new(task.clone()));
            self.poll_task_view(Instant::now());
        }
    }

    /// Ask the core for the open task view's output when it is due.
    pub(super) fn poll_task_view(&mut self, now: Instant) {
        let Some(view) = self.layers.task_view() else {
            return;
        };
        if view.should_ask(now) {
            let id = view.task.id.clone();
            self.send(Op::ReadTask { id });
        }
    }
}
