//! The core's side of sessions that last: taking over a resumed session (its messages, mode,
//! todo list, loaded deferred tools and usage), telling the client what the conversation was, and writing the state
//! records a later resume reads back (`session::transcript::Record`).

use std::path::Path;

use super::core::{Core, State};
use crate::llm::{ContentBlock, Message, Role, pricing};
use crate::protocol::{Event, HistoryItem, PermissionMode, Usage};
use crate::session::checkpoints::CHECKPOINT_DIR;
use crate::session::resume::{Resumed, load, prompt_text};
use crate::session::transcript::{Record, Transcript};

impl Core {
    /// Take over `resumed`: its conversation, todo list, usage and (unless `keep_mode`) mode.
    /// The client is told what the conversation was and what had to be repaired.
    pub(crate) fn restore(&mut self, resumed: Resumed, keep_mode: bool) {
        self.messages = resumed.messages;
        self.deferral.tools.restore(resumed.loaded_tools);
        self.deferral.forget_announcements();
        self.session.set_todos(resumed.todos.clone());
        self.events().send(Event::TodosUpdated {
            todos: resumed.todos,
        });
        if let Some(mode) = resumed.mode.filter(|_| !keep_mode)
            && (mode != PermissionMode::BypassPermissions || self.gate.bypass_allowed())
        {
            self.gate.set_mode(mode);
            self.events().send(Event::ModeChanged { mode });
        }
        self.total_usage = Usage::default();
        self.total_cost = 0.0;
        for (model, usage) in &resumed.usage {
            self.total_usage.add(usage);
            self.total_cost += pricing::cost_usd(model, usage);
        }
        self.last_state = Some(self.state_now());
        if self.total_usage != Usage::default() {
            self.events().send(Event::Usage {
                last: Usage::default(),
                total: self.total_usage,
                total_cost_usd: self.total_cost,
                context_window: pricing::context_window(&self.request_model()),
                model: String::new(),
            });
        }
        self.events().send(Event::HistoryRestored {
            items: self.history_items(),
        });
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
                self.transcript = Transcript::at(path.to_path_buf(), &resumed.session_id);
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

    /// Write every message again, into a fresh transcript (`--fork-session`).
    pub(crate) fn write_history(&mut self) {
        for m in &self.messages {
            self.transcript.append(m);
        }
        self.record_state();
    }

    /// The conversation as the client shows it.
    pub(crate) fn history_items(&self) -> Vec<HistoryItem> {
        let failed: Vec<(&str, bool)> = self
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|b| match b {
                ContentBlock::ToolResult {
                    tool_use_id,
                    is_error,
                    ..
                } => Some((tool_use_id.as_str(), *is_error)),
                _ => None,
            })
            .collect();
        let mut items = Vec::new();
        for m in &self.messages {
            match m.role {
                Role::User => items.extend(prompt_text(m).map(|text| HistoryItem::Prompt { text })),
                Role::Assistant => items.extend(self.answer_items(m, &failed)),
            }
        }
        items
    }

    fn answer_items(&self, m: &Message, failed: &[(&str, bool)]) -> Vec<HistoryItem> {
        let mut items = Vec::new();
        for block in &m.content {
            match block {
                ContentBlock::Text { text } if !text.trim().is_empty() => {
                    items.push(HistoryItem::Answer { text: text.clone() })
                }
                ContentBlock::ToolUse { id, name, input } => {
                    let title = self
                        .registry
                        .get(name)
                        .and_then(|t| Some(t.title(&t.parse(input).ok()?, &self.session)))
                        .unwrap_or_else(|| name.clone());
                    let is_error = failed.iter().any(|(i, e)| i == id && *e);
                    items.push(HistoryItem::Tool {
                        call_id: id.clone(),
                        title,
                        is_error,
                    });
                }
                _ => {}
            }
        }
        items
    }

    fn state_now(&self) -> State {
        (
            self.gate.mode(),
            self.session.todos(),
            self.deferral.tools.loaded(),
        )
    }

    /// Write a state record when the mode, the todo list or the loaded deferred tools changed
    /// since the last one.
    pub(crate) fn record_state(&mut self) {
        let now = self.state_now();
        if self.last_state.as_ref() == Some(&now) {
            return;
        }
        self.transcript.record(&Record::State {
            mode: now.0,
            todos: now.1.clone(),
            loaded_tools: now.2.clone(),
        });
        self.last_state = Some(now);
    }
}
