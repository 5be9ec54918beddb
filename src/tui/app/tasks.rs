//! `/tasks` in the TUI: the background agents listed in a notice and, while some are running,
//! a picker of those; Enter on one asks to confirm, and yes sends [`Op::StopTask`] (the core
//! stops it and tells the model the person did; the notice comes with its end event).

use super::*;
use crate::tui::picker::PickerItem;

/// The confirmation's yes, followed by the id.
const STOP: &str = "1. Stop ";
const KEEP: &str = "2. Keep it running";

impl App {
    /// `/tasks`: the listing, and the picker of the running ones.
    pub(super) fn tasks_command(&mut self) {
        let now = Instant::now();
        let text = self.session.tasks.listing(now);
        self.conversation.push_notice(NoticeKind::Info, &text);
        let running = self.session.tasks.running(now);
        if !running.is_empty() {
            self.input
                .open_picker(Picker::choices(PickerKind::Tasks, running));
        }
    }

    /// A row of one of the `/tasks` pickers was picked.
    pub(super) fn task_picked(&mut self, kind: PickerKind, item: &PickerItem) {
        match kind {
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
