//! The agent side of ACP: `initialize` (what cairn can do), `session/new` and `session/load`
//! (a session opened through the [`Host`], a loaded one's history replayed before the answer),
//! `session/prompt` (submitted; answered when its turn ends), `session/cancel` (an interrupt),
//! `session/set_mode`. Handlers return at once: opening a session and everything after runs on
//! tasks of its own, so the connection keeps reading (a cancel is never stuck behind a prompt).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ClientCapabilities, Implementation, InitializeRequest,
    InitializeResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    SessionId, SessionUpdate, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};

use crate::host::{Host, Resume, SessionSpec};
use crate::protocol::{Event, Op};

use super::open::{self, Request};
use super::session::{Session, text_chunk};
use super::{client_fs, modes, prompt, updates};

/// The server's state: the host, the flags sessions start from, the client's capabilities,
/// the open sessions by id.
pub struct Server {
    host: Host,
    template: SessionSpec,
    trust_all: bool,
    client: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// The tasks that open sessions and pump their events, waited for at the end.
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// How long a session may take to open before its first events (a resumed one's history).
const OPEN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

impl Server {
    pub fn new(host: Host, template: SessionSpec, trust_all: bool) -> Server {
        Server {
            host,
            template,
            trust_all,
            client: Mutex::new(ClientCapabilities::default()),
            sessions: Mutex::new(HashMap::new()),
            tasks: Mutex::new(Vec::new()),
        }
    }

    /// The client has gone: every session is closed (its turn interrupted, its hooks'
    /// SessionEnd run, its transcript complete) and waited for, up to a few seconds.
    pub async fn close_all(&self) {
        let ids: Vec<String> = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(id, _)| id)
            .collect();
        for id in ids {
            self.host.close(&id);
        }
        let tasks: Vec<_> = self
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect();
        let all = futures::future::join_all(tasks);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), all).await;
    }

    fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let handle = tokio::spawn(task);
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        tasks.retain(|t| !t.is_finished());
        tasks.push(handle);
    }

    fn session(&self, id: &SessionId) -> Result<Arc<Session>, Error> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&*id.0)
            .cloned()
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("no session {}", id.0),
                )
            })
    }

    fn client_capabilities(&self) -> ClientCapabilities {
        self.client
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn initialize(
        &self,
        request: InitializeRequest,
        responder: Responder<InitializeResponse>,
    ) -> Result<(), Error> {
        *self.client.lock().unwrap_or_else(PoisonError::into_inner) =
            request.client_capabilities.clone();
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true).sse(true));
        responder.respond(
            InitializeResponse::new(ProtocolVersion::V1)
                .agent_capabilities(capabilities)
                .agent_info(
                    Implementation::new("cairn", env!("CARGO_PKG_VERSION"))
                        .title("cairn".to_string()),
                ),
        )
    }

    pub fn new_session(
        self: &Arc<Self>,
        request: NewSessionRequest,
        responder: Responder<NewSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let mut spec = open::spec(
            &self.template,
            self.trust_all,
            Request {
                cwd: &request.cwd,
                additional_dirs: &request.additional_directories,
                mcp_servers: &request.mcp_servers,
                meta: request.meta.as_ref(),
                resume: Resume::New,
            },
        );
        let files = client_fs::attach(&mut spec, &self.client_capabilities(), &cx);
        let server = Arc::clone(self);
        self.spawn(async move {
            match server.open(spec, false).await {
                Ok((session, updates, events)) => {
                    if let Some(files) = &files {
                        files.bind(&session.id);
                    }
                    let modes = modes::state(session.mode(), session.bypass_allowed);
                    let id = session.id.clone();
                    let _ = responder.respond(NewSessionResponse::new(id).modes(modes));
                    for update in updates {
                        let _ = session.notify(&cx, update);
                    }
                    session.pump(cx, events).await;
                }
                Err(e) => {
                    let _ = responder.respond_with_error(e);
                }
            }
        });
        Ok(())
    }

    pub fn load_session(
        self: &Arc<Self>,
        request: LoadSessionRequest,
        responder: Responder<LoadSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let mut spec = open::spec(
            &self.template,
            self.trust_all,
            Request {
                cwd: &request.cwd,
                additional_dirs: &request.additional_directories,
                mcp_servers: &request.mcp_servers,
                meta: request.meta.as_ref(),
                resume: Resume::Id(request.session_id.0.to_string()),
            },
        );
        let files = client_fs::attach(&mut spec, &self.client_capabilities(), &cx);
        let server = Arc::clone(self);
        self.spawn(async move {
            match server.open(spec, true).await {
                Ok((session, updates, events)) => {
                    if let Some(files) = &files {
                        files.bind(&session.id);
                    }
                    // The history first: the answer says the replay is over.
                    for update in updates {
                        let _ = session.notify(&cx, update);
                    }
                    let modes = modes::state(session.mode(), session.bypass_allowed);
                    let _ = responder.respond(LoadSessionResponse::new().modes(modes));
                    session.pump(cx, events).await;
                }
                Err(e) => {
                    let _ = responder.respond_with_error(e);
                }
            }
        });
        Ok(())
    }

    /// Open a session and read its first events: up to its `SessionConfigured` (a new one) or
    /// its restored history (`load`). Returns the session, the updates those events make, and
    /// the rest of its events.
    async fn open(
        &self,
        spec: Result<SessionSpec, String>,
        load: bool,
    ) -> Result<
        (
            Arc<Session>,
            Vec<SessionUpdate>,
            tokio::sync::mpsc::UnboundedReceiver<Event>,
        ),
        Error,
    > {
        let spec = spec.map_err(|e| Error::invalid_params().data(serde_json::json!(e)))?;
        let handle = self
            .host
            .open(spec)
            .await
            .map_err(|e| Error::new(ErrorCode::INTERNAL_ERROR, format!("{e:#}")))?;
        let mut conn = handle.conn;
        let session = Arc::new(Session::new(
            conn.session_id.clone(),
            conn.ops.clone(),
            handle.facts.project_dir.clone(),
            handle.facts.bypass_allowed,
            crate::protocol::PermissionMode::Default,
        ));
        let mut updates: Vec<SessionUpdate> = handle
            .notices
            .iter()
            .map(|n| SessionUpdate::AgentThoughtChunk(text_chunk(n)))
            .collect();
        let first = async {
            while let Some(event) = conn.events.recv().await {
                let done = match &event {
                    Event::SessionConfigured(_) => !load,
                    Event::HistoryRestored { .. } => true,
                    _ => false,
                };
                session.note(&event);
                updates.extend(updates::translate(&event, &session.cwd));
                if done {
                    return true;
                }
            }
            false
        };
        match tokio::time::timeout(OPEN_TIMEOUT, first).await {
            Ok(true) => {}
            _ => {
                return Err(Error::new(
                    ErrorCode::INTERNAL_ERROR,
                    "the session ended before it was ready (see cairn's log)",
                ));
            }
        }
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session.id.clone(), Arc::clone(&session));
        Ok((session, updates, conn.events))
    }

    pub fn prompt(
        &self,
        request: PromptRequest,
        responder: Responder<PromptResponse>,
    ) -> Result<(), Error> {
        let session = match self.session(&request.session_id) {
            Ok(s) => s,
            Err(e) => return responder.respond_with_error(e),
        };
        session.prompt(prompt::submit(request.prompt), responder)
    }

    pub fn cancel(&self, notification: CancelNotification) -> Result<(), Error> {
        if let Ok(session) = self.session(&notification.session_id) {
            let _ = session.ops.send(Op::Interrupt);
        }
        Ok(())
    }

    pub fn set_mode(
        &self,
        request: SetSessionModeRequest,
        responder: Responder<SetSessionModeResponse>,
    ) -> Result<(), Error> {
        let session = match self.session(&request.session_id) {
            Ok(s) => s,
            Err(e) => return responder.respond_with_error(e),
        };
        match modes::parse(&request.mode_id, session.bypass_allowed) {
            Ok(mode) => {
                let _ = session.ops.send(Op::SetMode { mode });
                responder.respond(SetSessionModeResponse::new())
            }
            Err(e) => {
                responder.respond_with_error(Error::invalid_params().data(serde_json::json!(e)))
            }
        }
    }
}
