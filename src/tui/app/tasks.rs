//! `/tasks` in the TUI: a view of the background agents (running ones first, then the ended
//! ones, each with its type, description, elapsed time and status) that leaves the
//! conversation alone; Enter on a running one asks to confirm, and yes sends [`Op::StopTask`]
//! (the core stops it and tells the model the person did; the notice comes with its end
//! event).

use super::*;
use crate::tui::picker::PickerItem;

/// The confirmation's yes, followed by the id.
const STOP: &str = "1. Stop ";
const KEEP: &str = "2. Keep it running";
/// The view's one row when no agent ever ran.
const NONE: &str = "No background agents in this session";
const NONE_DETAIL: &str = "the model starts them with the Agent tool's run_in_background";

impl App {
    /// `/tasks`: the view of every background agent of the session.
    pub(super) fn tasks_command(&mut self) {
        let mut rows = self.session.tasks.rows(Instant::now());
        if rows.is_empty() {
            rows.push((NONE.to_string(), NONE_DETAIL.to_string()));
        }
        self.input
            .open_picker(Picker::choices(PickerKind::Tasks, rows));
    }

    /// A row of one of the `/tasks` pickers was picked.
    pub(super) fn task_picked(&mut self, kind: PickerKind, item: &PickerItem) {
        match kind {
            // An ended one (or the "none" row) has nothing to do.
            PickerKind::Tasks if !self.session.tasks.is_running(&item.label) => {}
            PickerKind::Tasks => {
                let items = vec![
                    (
                        format!("{STOP}{}", item.label),
                        format!(
                            "{}: it ends now, and the model is told you stopped it",
                            item.detail
                        ),
                    ),
                    (KEEP.to_string(), String::new()),
                ];
                self.input
                    .open_picker(Picker::choices(PickerKind::TaskStop, items));
            }
            PickerKind::TaskStop => {
                if let Some(id) = item.label.strip_prefix(STOP) {
                    self.send(Op::StopTask { id: id.to_string() });
                }
            }
            _ => {}
        }
    }
}
