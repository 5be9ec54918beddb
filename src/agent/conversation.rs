//! The conversation of one core: its messages and the transcript they are written to, kept in
//! step. Appending keeps roles alternating (user content merges into a user message) and
//! writes a state record (mode, todo list, loaded deferred tools) whenever the state changed
//! since the last one, so a resume reads back what the session was.

use crate::llm::{ContentBlock, Message, Role};
use crate::protocol::{CallOutcome, Display, Event, PermissionMode};
use crate::session::transcript::{Record, Transcript};

/// What a state record holds: the mode, the todo list and the loaded deferred tools.
pub(crate) type State = (PermissionMode, Vec<crate::protocol::Todo>, Vec<String>);

pub(crate) struct Conversation {
    pub messages: Vec<Message>,
    pub transcript: Transcript,
    /// What each finished tool call showed the client (and its permission outcome), by call
    /// id: what a resumed or rewound conversation redraws.
    pub shown: std::collections::HashMap<String, (Display, Option<CallOutcome>)>,
    /// The problems a language server found after each call's edit, as told to the client.
    pub diagnostics: Vec<Event>,
    /// The state last written to the transcript.
    last_state: Option<State>,
}

impl Conversation {
    pub fn new(transcript: Transcript) -> Conversation {
        Conversation {
            messages: Vec::new(),
            transcript,
            shown: Default::default(),
            diagnostics: Vec::new(),
            last_state: None,
        }
    }

    /// Append user content, merging into the last message when that is a user message too
    /// (tool results followed by a new prompt), so roles keep alternating; `state` is the
    /// session's now.
    pub fn push_user(&mut self, content: Vec<ContentBlock>, state: State) {
        if let Some(last) = self.messages.last_mut()
            && last.role == Role::User
        {
            last.content.extend(content.iter().cloned());
            self.transcript.append(&Message {
                role: Role::User,
                content,
            });
            self.record_state(state);
            return;
        }
        self.push(
            Message {
                role: Role::User,
                content,
            },
            state,
        );
    }

    pub fn push(&mut self, message: Message, state: State) {
        self.transcript.append(&message);
        self.messages.push(message);
        self.record_state(state);
    }

    /// Remember (and write to the transcript) what tool call `call_id` showed the client.
    pub fn record_shown(
        &mut self,
        call_id: String,
        display: Display,
        outcome: Option<CallOutcome>,
    ) {
        self.transcript.record(&Record::ToolShown {
            tool_use_id: call_id.clone(),
            display: display.clone(),
            outcome,
        });
        self.shown.insert(call_id, (display, outcome));
    }

    /// Remember (and write to the transcript) problems told to the client after an edit.
    pub fn record_diagnostics(&mut self, event: Event) {
        if let Event::ToolDiagnostics {
            call_id,
            path,
            problems,
            new,
        } = &event
        {
            self.transcript.record(&Record::ToolDiagnostics {
                tool_use_id: call_id.clone(),
                path: path.clone(),
                problems: problems.clone(),
                new: *new,
            });
            self.diagnostics.push(event);
        }
    }

    /// Write a state record when `now` differs from the last one written.
    pub fn record_state(&mut self, now: State) {
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

    /// `now` is what the transcript already says (a resumed session's state).
    pub fn state_written(&mut self, now: State) {
        self.last_state = Some(now);
    }

    /// Write every message again, into a fresh transcript (`--fork-session`).
    pub fn write_history(&mut self, state: State) {
        for m in &self.messages {
            self.transcript.append(m);
        }
        self.record_state(state);
    }

    /// Whether the last message carries tool results (the model is mid-turn).
    pub fn after_tools(&self) -> bool {
        self.messages.last().is_some_and(|m| {
            m.content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
        })
    }

    pub fn last_assistant_text(&self) -> String {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(Message::text)
            .unwrap_or_default()
    }
}
