//! The agent side of ACP: `initialize` (what cairn can do), `authenticate` (refused: no
//! methods), `session/new`, `session/load` and `session/resume` (one opening: a session through
//! the [`Host`], a loaded one's history replayed before the answer, a resumed one's not),
//! `session/list` and `session/close`, `session/prompt` (submitted, or `/clear` and `/compact`
//! run; answered when done), `session/cancel` (an interrupt), `session/set_mode`. Handlers
//! return at once: opening a session and everything after runs on tasks of its own, so the
//! connection keeps reading (a cancel is never stuck behind a prompt).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, CancelNotification,
    ClientCapabilities, CloseSessionRequest, CloseSessionResponse, Implementation,
    InitializeRequest, InitializeResponse, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, LoadSessionResponse, McpCapabilities, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionId,
    SessionListCapabilities, SessionResumeCapabilities, SessionUpdate, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode, JsonRpcRequest};

use crate::host::{Host, NoCredentials, Resume, SessionSpec};
use crate::protocol::{Event, Op};

use super::client_terminal::{self, CallTerminals};
use super::open::{self, Request};
use super::session::{Session, text_chunk};
use super::{client_fs, list, modes, prompt, updates};

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
            .ok_or_else(|| not_found(id))
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
            .mcp_capabilities(McpCapabilities::new().http(true).sse(true))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .resume(SessionResumeCapabilities::new())
                    .close(SessionCloseCapabilities::new()),
            );
        // No `authMethods`: credentials come from the environment and the settings.
        responder.respond(
            InitializeResponse::new(ProtocolVersion::V1)
                .agent_capabilities(capabilities)
                .agent_info(
                    Implementation::new("cairn", env!("CARGO_PKG_VERSION"))
                        .title("cairn".to_string()),
                ),
        )
    }

    /// `session/new`, `session/load` and `session/resume`: the session opened as
    /// [`Opens`] says of `request`.
    pub fn open_session<R: Opens>(
        self: &Arc<Self>,
        request: R,
        responder: Responder<R::Response>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        self.start(request.request(), R::opening(responder), cx);
        Ok(())
    }

    /// Open a session for `from` on a task of its own: the client's files and terminals
    /// attached when it offers them, the answer sent as `opening` says (a loaded session's
    /// history before it), then the session's events pumped to the client.
    fn start(self: &Arc<Self>, from: Request<'_>, opening: Opening, cx: ConnectionTo<Client>) {
        let mut spec = open::spec(&self.template, self.trust_all, from);
        let caps = self.client_capabilities();
        let terminals = Arc::new(CallTerminals::default());
        let files = client_fs::attach(&mut spec, &caps, &cx);
        let terminal = client_terminal::attach(&mut spec, &caps, &cx, &terminals);
        let server = Arc::clone(self);
        self.spawn(async move {
            let history = match opening {
                Opening::New(_) => History::None,
                Opening::Load(_) => History::Replay,
                Opening::Resume(_) => History::Skip,
            };
            let (session, updates, events) = match server.open(spec, history, terminals).await {
                Ok(opened) => opened,
                Err(e) => return opening.fail(e),
            };
            if let Some(files) = &files {
                files.bind(&session.id);
            }
            if let Some(terminal) = &terminal {
                terminal.bind(&session.id);
            }
            let modes = modes::state(session.mode(), session.bypass_allowed);
            // A new session's id comes first; a loaded one's history before its answer.
            if let Opening::New(responder) = opening {
                let id = session.id.clone();
                let _ = responder.respond(NewSessionResponse::new(id).modes(modes));
                for update in updates {
                    let _ = session.notify(&cx, update);
                }
            } else {
                for update in updates {
                    let _ = session.notify(&cx, update);
                }
                match opening {
                    Opening::Load(r) => {
                        let _ = r.respond(LoadSessionResponse::new().modes(modes));
                    }
                    Opening::Resume(r) => {
                        let _ = r.respond(ResumeSessionResponse::new().modes(modes));
                    }
                    Opening::New(_) => {}
                }
            }
            session.pump(cx, events).await;
        });
    }

    /// Open a session and read its first events: up to its `SessionConfigured` (a new one) or
    /// its restored history (a resumed one, replayed or not). Returns the session, the updates
    /// those events make, and the rest of its events.
    async fn open(
        &self,
        spec: Result<SessionSpec, String>,
        history: History,
        terminals: Arc<CallTerminals>,
    ) -> Result<
        (
            Arc<Session>,
            Vec<SessionUpdate>,
            tokio::sync::mpsc::UnboundedReceiver<Event>,
        ),
        Error,
    > {
        let spec = spec.map_err(|e| Error::invalid_params().data(serde_json::json!(e)))?;
        let handle = self.host.open(spec).await.map_err(open_error)?;
        let mut conn = handle.conn;
        let session = Arc::new(Session::new(
            conn.session_id.clone(),
            conn.ops.clone(),
            handle.facts.project_dir.clone(),
            handle.facts.bypass_allowed,
            terminals,
        ));
        let mut updates: Vec<SessionUpdate> = handle
            .notices
            .iter()
            .map(|n| SessionUpdate::AgentThoughtChunk(text_chunk(n)))
            .collect();
        let first = async {
            while let Some(event) = conn.events.recv().await {
                let done = match &event {
                    Event::SessionConfigured(_) => history == History::None,
                    Event::HistoryRestored { .. } => true,
                    _ => false,
                };
                session.note(&event);
                let skip =
                    history == History::Skip && matches!(event, Event::HistoryRestored { .. });
                if !skip {
                    updates.extend(updates::translate(&event, &session.cwd));
                }
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

    /// `session/list`: the saved sessions of the folder the client names (cairn's transcripts,
    /// newest first, also ones started in the terminal); without a folder, those of the
    /// folders of this connection's open sessions.
    pub fn list_sessions(
        &self,
        request: ListSessionsRequest,
        responder: Responder<ListSessionsResponse>,
    ) -> Result<(), Error> {
        let folders: Vec<std::path::PathBuf> = match request.cwd {
            Some(cwd) if !cwd.is_absolute() => {
                let message = format!("cwd must be an absolute path: {}", cwd.display());
                return responder
                    .respond_with_error(Error::invalid_params().data(serde_json::json!(message)));
            }
            Some(cwd) => vec![cwd],
            None => {
                let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
                let mut folders: Vec<_> = sessions.values().map(|s| s.cwd.clone()).collect();
                folders.sort();
                folders.dedup();
                folders
            }
        };
        let cursor = request.cursor;
        tokio::task::spawn_blocking(move || {
            let page = list::page(&folders, cursor.as_deref());
            let _ = match page {
                Ok(page) => responder.respond(page),
                Err(e) => {
                    responder.respond_with_error(Error::invalid_params().data(serde_json::json!(e)))
                }
            };
        });
        Ok(())
    }

    /// `session/close`: the session's turn is cancelled, its core shut down (SessionEnd hooks
    /// run, its transcript complete); prompts still waiting are answered `cancelled`.
    pub fn close_session(
        &self,
        request: CloseSessionRequest,
        responder: Responder<CloseSessionResponse>,
    ) -> Result<(), Error> {
        let removed = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&*request.session_id.0);
        let Some(session) = removed else {
            return responder.respond_with_error(not_found(&request.session_id));
        };
        session.close();
        self.host.close(&session.id);
        responder.respond(CloseSessionResponse::new())
    }

    /// `authenticate`: cairn offers no method (it reads credentials from the environment and
    /// the settings), so any method id is refused, saying where the credentials go.
    pub fn authenticate(
        &self,
        request: AuthenticateRequest,
        responder: Responder<AuthenticateResponse>,
    ) -> Result<(), Error> {
        responder.respond_with_error(
            Error::invalid_params().data(serde_json::json!(auth_refusal(&request.method_id.0))),
        )
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
        let op = prompt::submit(request.prompt);
        match &op {
            Op::Submit { text } => match prompt::local_command(text) {
                Some(command) => session.local(command, responder),
                None => session.prompt(op, responder),
            },
            _ => session.prompt(op, responder),
        }
    }

    pub fn cancel(&self, notification: CancelNotification) -> Result<(), Error> {
        if let Ok(session) = self.session(&notification.session_id) {
            session.cancel();
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

/// A request that opens a session: what it names, and the answer it waits for.
pub trait Opens: JsonRpcRequest {
    fn request(&self) -> Request<'_>;
    fn opening(responder: Responder<Self::Response>) -> Opening;
}

/// [`Opens`] for a request type: the fields the three requests share, the resume source.
macro_rules! opens {
    ($request:ty, $opening:ident, |$r:ident| $resume:expr) => {
        impl Opens for $request {
            fn request(&self) -> Request<'_> {
                let $r = self;
                Request {
                    cwd: &$r.cwd,
                    additional_dirs: &$r.additional_directories,
                    mcp_servers: &$r.mcp_servers,
                    meta: $r.meta.as_ref(),
                    resume: $resume,
                }
            }

            fn opening(responder: Responder<Self::Response>) -> Opening {
                Opening::$opening(responder)
            }
        }
    };
}

opens!(NewSessionRequest, New, |_r| Resume::New);
opens!(LoadSessionRequest, Load, |r| Resume::Id(
    r.session_id.0.to_string()
));
opens!(ResumeSessionRequest, Resume, |r| Resume::Id(
    r.session_id.0.to_string()
));

/// How a session is being opened, and the answer it waits for.
pub enum Opening {
    New(Responder<NewSessionResponse>),
    Load(Responder<LoadSessionResponse>),
    Resume(Responder<ResumeSessionResponse>),
}

impl Opening {
    fn fail(self, e: Error) {
        let _ = match self {
            Opening::New(r) => r.respond_with_error(e),
            Opening::Load(r) => r.respond_with_error(e),
            Opening::Resume(r) => r.respond_with_error(e),
        };
    }
}

/// What becomes of a resumed session's history: none (a new session), replayed as updates
/// (`session/load`), or left out (`session/resume`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum History {
    None,
    Replay,
    Skip,
}

/// Why the host could not open a session, as an ACP error: no credentials is `auth_required`
/// (an editor can offer its own sign-in, or show where credentials go); anything else internal.
fn open_error(e: anyhow::Error) -> Error {
    if e.downcast_ref::<NoCredentials>().is_some() {
        Error::auth_required().data(serde_json::json!(e.to_string()))
    } else {
        Error::new(ErrorCode::INTERNAL_ERROR, format!("{e:#}"))
    }
}

/// What `authenticate` answers: cairn advertises no method, and says where credentials go.
fn auth_refusal(method: &str) -> String {
    format!(
        "cairn has no authentication method {method:?}: it reads the model's credentials from \
         its environment and settings (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, OPENAI_API_KEY, \
         the settings' env or apiKeyHelper). Set them in the editor's env for the agent."
    )
}

fn not_found(id: &SessionId) -> Error {
    Error::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!("no session {}", id.0),
    )
}
