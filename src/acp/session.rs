//! One ACP session: the ops channel into cairn's session, the prompts waiting for their turn
//! to end, a `/clear` or `/compact` cairn answers itself, the mode, and which calls run in
//! the client's terminals. Its pump reads the session's events for as long as it lives:
//! updates go to the client as they come (a call's terminal sent with or right after its
//! announcement), a permission question becomes a `session/request_permission` whose answer
//! goes back as a decision, and a turn's end answers the prompt that started it.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, PromptResponse, RequestPermissionRequest, SessionId,
    SessionNotification, SessionUpdate, StopReason, TextContent, ToolCallStatus,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use tokio::sync::mpsc;

use crate::protocol::{Event, Op, PermissionMode, PermissionRequest, TurnEnd};

use super::client_terminal::{CallTerminals, terminal_content};
use super::permission;
use super::prompt::LocalCommand;
use super::updates;

/// What the server and the session's pump share.
pub struct Session {
    pub id: String,
    pub ops: mpsc::UnboundedSender<Op>,
    pub cwd: PathBuf,
    pub bypass_allowed: bool,
    terminals: Arc<CallTerminals>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The prompts sent to the core, oldest first; each turn's end answers the oldest.
    waiting: VecDeque<Responder<PromptResponse>>,
    mode: PermissionMode,
    /// The last error the core reported in this turn: a failed turn answers with it.
    error: Option<String>,
    /// A `/clear` or `/compact` running, answered when the core is done with it.
    local: Option<(LocalCommand, Responder<PromptResponse>)>,
    /// The client cancelled while `local` ran.
    cancelled: bool,
}

impl Session {
    pub fn new(
        id: String,
        ops: mpsc::UnboundedSender<Op>,
        cwd: PathBuf,
        bypass_allowed: bool,
        terminals: Arc<CallTerminals>,
    ) -> Session {
        Session {
            id,
            ops,
            cwd,
            bypass_allowed,
            terminals,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn mode(&self) -> PermissionMode {
        self.state().mode
    }

    /// Submit a prompt; `responder` is answered when its turn ends.
    pub fn prompt(&self, op: Op, responder: Responder<PromptResponse>) -> Result<(), Error> {
        let mut state = self.state();
        if self.ops.send(op).is_err() {
            drop(state);
            return responder.respond_with_error(ended());
        }
        state.waiting.push_back(responder);
        Ok(())
    }

    /// Run `/clear` or `/compact`; `responder` is answered when the core is done with it. Only
    /// between turns: the core refuses both while it works, and a compaction takes no prompt.
    pub fn local(
        &self,
        command: LocalCommand,
        responder: Responder<PromptResponse>,
    ) -> Result<(), Error> {
        let mut state = self.state();
        if !state.waiting.is_empty() || state.local.is_some() {
            drop(state);
            let message = "cairn is working on an earlier prompt: wait for it, or cancel it";
            return responder.respond_with_error(Error::invalid_request().data(message));
        }
        let ops = match &command {
            // The core answers no event of its own for a clear: a context report asked
            // after it is answered once the clear is done.
            LocalCommand::Clear => vec![Op::Clear, Op::ContextReport],
            LocalCommand::Compact { instructions } => vec![Op::Compact {
                instructions: instructions.clone(),
            }],
        };
        for op in ops {
            if self.ops.send(op).is_err() {
                drop(state);
                return responder.respond_with_error(ended());
            }
        }
        state.cancelled = false;
        state.local = Some((command, responder));
        Ok(())
    }

    /// The client cancelled: the turn (or compaction) is interrupted.
    pub fn cancel(&self) {
        self.state().cancelled = true;
        let _ = self.ops.send(Op::Interrupt);
    }

    /// The client closed the session: whatever waits is answered `cancelled` now (the core
    /// is shut down by the host).
    pub fn close(&self) {
        let (waiting, local) = {
            let mut state = self.state();
            (
                state.waiting.drain(..).collect::<Vec<_>>(),
                state.local.take(),
            )
        };
        for responder in waiting.into_iter().chain(local.map(|(_, r)| r)) {
            let _ = responder.respond(PromptResponse::new(StopReason::Cancelled));
        }
    }

    /// The end of a running `/clear` or `/compact` that `event` tells of, answered.
    fn local_finished(&self, event: &Event) -> Result<(), Error> {
        let done = {
            let state = self.state();
            match (&state.local, event) {
                // The core was working after all (a turn it started itself): it refused.
                (Some(_), Event::Notice { message }) if message.starts_with("Cannot ") => {
                    Some(Some(message.clone()))
                }
                (Some((LocalCommand::Clear, _)), Event::ContextReport { .. }) => Some(None),
                (Some((LocalCommand::Compact { .. }, _)), Event::Compacted { .. }) => Some(None),
                (Some((LocalCommand::Compact { .. }, _)), Event::Notice { message })
                    if message.starts_with("Nothing to compact") =>
                {
                    Some(None)
                }
                (Some((LocalCommand::Compact { .. }, _)), Event::Error { message }) => {
                    Some(Some(message.clone()))
                }
                _ => None,
            }
        };
        let Some(error) = done else {
            return Ok(());
        };
        let (local, cancelled) = {
            let mut state = self.state();
            (state.local.take(), std::mem::take(&mut state.cancelled))
        };
        let Some((_, responder)) = local else {
            return Ok(());
        };
        match error {
            _ if cancelled => responder.respond(PromptResponse::new(StopReason::Cancelled)),
            Some(message) => {
                responder.respond_with_error(Error::new(ErrorCode::INTERNAL_ERROR, message))
            }
            None => responder.respond(PromptResponse::new(StopReason::EndTurn)),
        }
    }

    /// Keep what the session needs to know from `event`: the mode, the turn's last error.
    pub fn note(&self, event: &Event) {
        match event {
            Event::ModeChanged { mode } => self.state().mode = *mode,
            Event::SessionConfigured(info) => self.state().mode = info.mode,
            Event::TurnStarted { .. } => self.state().error = None,
            Event::Error { message } => self.state().error = Some(message.clone()),
            _ => {}
        }
    }

    /// A turn ended: answer the oldest prompt.
    fn turn_finished(&self, end: TurnEnd) -> Result<(), Error> {
        let (responder, error) = {
            let mut state = self.state();
            (state.waiting.pop_front(), state.error.take())
        };
        let Some(responder) = responder else {
            return Ok(());
        };
        let stop = match end {
            TurnEnd::Completed => StopReason::EndTurn,
            TurnEnd::MaxTurns => StopReason::MaxTurnRequests,
            TurnEnd::Interrupted => StopReason::Cancelled,
            TurnEnd::Failed => {
                let message = error.unwrap_or_else(|| "the turn failed".into());
                return responder
                    .respond_with_error(Error::new(ErrorCode::INTERNAL_ERROR, message));
            }
        };
        responder.respond(PromptResponse::new(stop))
    }

    /// The session's core ended: every waiting prompt is answered with an error.
    fn ended(&self) {
        let (waiting, local) = {
            let mut state = self.state();
            (
                state.waiting.drain(..).collect::<Vec<_>>(),
                state.local.take(),
            )
        };
        for responder in waiting.into_iter().chain(local.map(|(_, r)| r)) {
            let _ = responder.respond_with_error(ended());
        }
    }

    pub fn notify(&self, cx: &ConnectionTo<Client>, update: SessionUpdate) -> Result<(), Error> {
        cx.send_notification(SessionNotification::new(
            SessionId::new(self.id.as_str()),
            update,
        ))
    }

    /// Handle one event of the session: updates, questions, turn ends.
    pub fn handle(self: &Arc<Self>, cx: &ConnectionTo<Client>, event: Event) -> Result<(), Error> {
        self.note(&event);
        let sent = match &event {
            Event::PermissionRequest(request) | Event::PermissionRequestUpdated { request, .. } => {
                self.ask(cx, request.clone());
                Ok(())
            }
            Event::TurnFinished { end, .. } => self.turn_finished(*end),
            Event::Notice { message } | Event::Error { message } => {
                self.notify(cx, SessionUpdate::AgentThoughtChunk(text_chunk(message)))
            }
            _ => updates::translate(&event, &self.cwd)
                .into_iter()
                .try_for_each(|update| self.send_update(cx, update)),
        };
        // What a `/clear` or `/compact` said goes out before its answer.
        self.local_finished(&event)?;
        sent
    }

    /// Send one update, with the terminals of calls in mind: a call's announcement takes the
    /// terminal already running for it along, and a call that ran in a terminal ends showing
    /// it (the editor keeps its output after release).
    fn send_update(&self, cx: &ConnectionTo<Client>, update: SessionUpdate) -> Result<(), Error> {
        match update {
            SessionUpdate::ToolCall(call) => {
                let id = call.tool_call_id.0.to_string();
                let mut result = Ok(());
                self.terminals.announce(&id, |running| {
                    result = self.notify(cx, SessionUpdate::ToolCall(call));
                    if let Some(running) = running {
                        let _ = self.notify(cx, running);
                    }
                });
                result
            }
            SessionUpdate::ToolCallUpdate(mut update)
                if matches!(
                    update.fields.status,
                    Some(ToolCallStatus::Completed | ToolCallStatus::Failed)
                ) =>
            {
                if let Some(terminal) = self.terminals.finished(&update.tool_call_id.0) {
                    update.fields.content = Some(vec![terminal_content(&terminal)]);
                }
                self.notify(cx, SessionUpdate::ToolCallUpdate(update))
            }
            other => self.notify(cx, other),
        }
    }

    /// Ask the client about `request` on a task of its own (the answer may take minutes, and
    /// other events go on meanwhile); the decision goes back to the core.
    fn ask(self: &Arc<Self>, cx: &ConnectionTo<Client>, request: PermissionRequest) {
        let session = Arc::clone(self);
        let cx = cx.clone();
        tokio::spawn(async move {
            let question = permission::question(&request, &session.cwd);
            let asked = RequestPermissionRequest::new(
                SessionId::new(session.id.as_str()),
                question.tool_call.clone(),
                question.options.clone(),
            );
            let decision = match cx.send_request(asked).block_task().await {
                Ok(answer) => question.decision(&answer.outcome),
                Err(e) => {
                    tracing::warn!("request_permission failed: {e:?}");
                    crate::protocol::Decision::DenyOnce
                }
            };
            let _ = session.ops.send(Op::PermissionDecision {
                request_id: request.id,
                decision,
            });
        });
    }

    /// Read the session's events until it ends.
    pub async fn pump(
        self: Arc<Self>,
        cx: ConnectionTo<Client>,
        mut events: mpsc::UnboundedReceiver<Event>,
    ) {
        while let Some(event) = events.recv().await {
            if let Err(e) = self.handle(&cx, event) {
                tracing::warn!("acp session {}: {e:?}", self.id);
                if cx.termination().is_some() {
                    break;
                }
            }
        }
        self.ended();
    }
}

pub fn text_chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

fn ended() -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, "the session has ended")
}
