//! The core's side of sessions that last: taking over a resumed session (its messages, mode,
//! todo list, loaded deferred tools and usage) and telling the client what the conversation
//! was. The state records a later resume reads back are written by `conversation.rs`.

use std::collections::HashMap;
use std::path::Path;

use super::core::Core;
use crate::llm::{ContentBlock, Message, Role};
use crate::protocol::{Display, Event, HistoryItem, PermissionMode, Usage};
use crate::session::checkpoints::CHECKPOINT_DIR;
use crate::session::resume::{Resumed, load, prompt_text};
use crate::session::transcript::Transcript;

impl Core {
    /// Take over `resumed`: its conversation, todo list, usage and (unless `keep_mode`) mode.
    /// The client is told what the conversation was and what had to be repaired.
    pub(crate) fn restore(&mut self, resumed: Resumed, keep_mode: bool) {
        self.conversation.messages = resumed.messages;
        self.conversation.shown = resumed.shown;
        self.conversation.diagnostics = resumed.diagnostics;
        self.tools.deferral.tools.restore(resumed.loaded_tools);
        self.tools.deferral.forget_announcements();
        self.session.set_todos(resumed.todos.clone());
        self.events().send(Event::TodosUpdated {
            todos: resumed.todos,
        });
        if let Some(mode) = resumed.mode.filter(|_| !keep_mode)
            && (mode != PermissionMode::BypassPermissions || self.gate().bypass_allowed())
        {
            self.gate().set_mode(mode);
            self.events().send(Event::ModeChanged { mode });
        }
        self.usage.restore(&resumed.usage);
        let state = self.state_now();
        self.conversation.state_written(state);
        if self.usage.total != Usage::default() {
            let event = self
                .usage
                .event(Usage::default(), String::new(), &self.request_model());
            self.events().send(event);
        }
        self.send_history();
        if !resumed.repairs.is_empty() {
            self.events().send(Event::Notice {
                message: format!(
                    "Resumed session {} with repairs: {}",
                    resumed.session_id,
                    resumed.repairs.join("; ")
                ),
            });
        }
    }

    /// `/resume`: continue the session at `path` in place of this one (and its checkpoints:
    /// the data dir beside its transcript).
    pub(crate) async fn resume_from(&mut self, path: &Path) {
        match load(path) {
            Ok(resumed) => {
                self.conversation.transcript =
                    Transcript::at(path.to_path_buf(), &resumed.session_id);
                self.rewind_undo = None;
                if self.session.checkpoints.is_enabled() {
                    let store = path.with_extension("").join(CHECKPOINT_DIR);
                    self.session.checkpoints.switch_to(&store).await;
                }
                let id = resumed.session_id.clone();
                self.restore(resumed, false);
                self.events().send(Event::Notice {
                    message: format!("Resumed session {id}."),
                });
            }
            Err(e) => self.events().send(Event::Error {
                message: format!("Cannot resume: {e}"),
            }),
        }
    }

    /// Tell the client what the conversation was: its items, then the problems found after
    /// its edits (shown under their calls).
    pub(crate) fn send_history(&self) {
        self.events().send(Event::HistoryRestored {
            items: self.history_items(),
        });
        for told in &self.conversation.diagnostics {
            self.events().send(told.clone());
        }
    }

    /// The conversation as the client shows it: each tool call with what it showed live (from
    /// the transcript's `tool_shown` records; else its result's text), a compaction's summary
    /// as a compaction rather than as a prompt.
    pub(crate) fn history_items(&self) -> Vec<HistoryItem> {
        let results: HashMap<&str, (bool, String)> = self
            .conversation
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|b| match b {
                ContentBlock::ToolResult {
                    tool_use_id,
                    is_error,
                    content,
                } => Some((
                    tool_use_id.as_str(),
                    (*is_error, content.text().into_owned()),
                )),
                _ => None,
            })
            .collect();
        let mut items = Vec::new();
        for m in &self.conversation.messages {
            match m.role {
                Role::User => {
                    items.extend(prompt_text(m).map(
                        |text| match crate::agent::compact::summary_of(&text) {
                            Some(summary) => HistoryItem::Compacted {
                                summary: summary.to_string(),
                            },
                            None => HistoryItem::Prompt { text },
                        },
                    ))
                }
                Role::Assistant => items.extend(self.answer_items(m, &results)),
            }
        }
        items
    }

    fn answer_items(
        &self,
        m: &Message,
        results: &HashMap<&str, (bool, String)>,
    ) -> Vec<HistoryItem> {
        let mut items = Vec::new();
        for block in &m.content {
            match block {
                ContentBlock::Text { text } if !text.trim().is_empty() => {
                    items.push(HistoryItem::Answer { text: text.clone() })
                }
                ContentBlock::ToolUse { id, name, input } => {
                    let title = self
                        .tools
                        .registry
                        .get(name)
                        .and_then(|t| Some(t.title(&t.parse(input).ok()?, &self.session)))
                        .unwrap_or_else(|| name.clone());
                    let result = results.get(id.as_str());
                    let is_error = result.is_some_and(|(e, _)| *e);
                    let (display, outcome) = match self.conversation.shown.get(id) {
                        Some((display, outcome)) => (Some(display.clone()), *outcome),
                        None => (
                            result
                                .filter(|(_, text)| !text.trim().is_empty())
                                .map(|(_, text)| Display::Text { text: text.clone() }),
                            None,
                        ),
                    };
                    items.push(HistoryItem::Tool {
                        call_id: id.clone(),
                        title,
                        is_error,
                        display,
                        outcome,
                    });
                }
                _ => {}
            }
        }
        items
    }
}
