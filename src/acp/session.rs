//! One ACP session: the ops channel into cairn's session, the prompts waiting for their turn
//! to end, the mode, and the client's capabilities (kept for the tools that may go through
//! the client's file system and terminal). Its pump reads the session's events for as long as
//! it lives: updates go to the client as they come, a permission question becomes a
//! `session/request_permission` whose answer goes back as a decision, and a turn's end
//! answers the prompt that started it.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, PromptResponse, RequestPermissionRequest, SessionId,
    SessionNotification, SessionUpdate, StopReason, TextContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use tokio::sync::mpsc;

use crate::protocol::{Event, Op, PermissionMode, PermissionRequest, TurnEnd};

use super::permission::{self, Question};
use super::updates;

/// What the server and the session's pump share.
pub struct Session {
    pub id: String,
    pub ops: mpsc::UnboundedSender<Op>,
    pub cwd: PathBuf,
    pub bypass_allowed: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The prompts sent to the core, oldest first; each turn's end answers the oldest.
    waiting: VecDeque<Responder<PromptResponse>>,
    mode: PermissionMode,
    /// The last error the core reported in this turn: a failed turn answers with it.
    error: Option<String>,
}

impl Session {
    pub fn new(
        id: String,
        ops: mpsc::UnboundedSender<Op>,
        cwd: PathBuf,
        bypass_allowed: bool,
        mode: PermissionMode,
    ) -> Session {
        Session {
            id,
            ops,
            cwd,
            bypass_allowed,
            state: Mutex::new(State {
                mode,
                ..State::default()
            }),
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
        let waiting: Vec<_> = self.state().waiting.drain(..).collect();
        for responder in waiting {
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
        match &event {
            Event::PermissionRequest(request) | Event::PermissionRequestUpdated { request, .. } => {
                self.ask(cx, request.clone());
                return Ok(());
            }
            Event::TurnFinished { end, .. } => return self.turn_finished(*end),
            Event::Notice { message } | Event::Error { message } => {
                return self.notify(cx, SessionUpdate::AgentThoughtChunk(text_chunk(message)));
            }
            _ => {}
        }
        for update in updates::translate(&event, &self.cwd) {
            self.notify(cx, update)?;
        }
        Ok(())
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
            if Question::allows(&decision) {
                let running = ToolCallUpdate::new(
                    request.call_id.clone(),
                    ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
                );
                let _ = session.notify(&cx, SessionUpdate::ToolCallUpdate(running));
            }
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
