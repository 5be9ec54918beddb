//! The editor's terminals over ACP: [`ClientTerminal`] answered by the client's
//! `terminal/create`, `terminal/output`, `terminal/wait_for_exit`, `terminal/kill` and
//! `terminal/release`, offered to the session only when the client says `terminal: true` in
//! `initialize`. Bash keeps its guards (permission, hooks, timeout, output limits); this file
//! carries the requests, and puts each terminal into the tool call it runs for, so the editor
//! shows the command's output live.
//!
//! A terminal's call must be announced (`tool_call`) before an update names it; the command
//! may start before the session's pump has sent that announcement, so [`CallTerminals`],
//! shared by the pump and the terminals, sends the terminal's update under one lock with the
//! announcement, whichever comes second. Requests other than `wait_for_exit` (which lasts as
//! long as the command) fail after [`ANSWER_TIMEOUT`].

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CreateTerminalRequest, EnvVariable, KillTerminalRequest,
    ReleaseTerminalRequest, SessionId, SessionNotification, SessionUpdate, Terminal,
    TerminalExitStatus, TerminalOutputRequest, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, WaitForTerminalExitRequest,
};
use agent_client_protocol::{Client, JsonRpcRequest};
use async_trait::async_trait;

use crate::host::SessionSpec;
use crate::shell::client::{
    ClientTerminal, ClientTerminalError, TerminalCommand, TerminalExit, TerminalOutput,
};

use super::client_fs::ANSWER_TIMEOUT;

/// Which calls the client has been told of, and the terminals that run for calls: shared by
/// one session's pump and its terminals.
#[derive(Debug, Default)]
pub struct CallTerminals {
    inner: Mutex<Calls>,
}

#[derive(Debug, Default)]
struct Calls {
    announced: HashSet<String>,
    /// call id → terminal id.
    terminals: HashMap<String, String>,
}

impl CallTerminals {
    fn lock(&self) -> MutexGuard<'_, Calls> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The pump announces `call_id` with `send`; the terminal that already runs for it, if
    /// any, is returned to be sent right after (still under the lock, through `then`).
    pub fn announce(&self, call_id: &str, send: impl FnOnce(Option<SessionUpdate>)) {
        let mut calls = self.lock();
        calls.announced.insert(call_id.to_string());
        let running = calls.terminals.get(call_id).map(|t| running(call_id, t));
        send(running);
    }

    /// A terminal runs for `call_id`: `send` gets its update at once when the call was
    /// announced; otherwise the announcement will carry it.
    fn started(&self, call_id: &str, terminal: &str, send: impl FnOnce(SessionUpdate)) {
        let mut calls = self.lock();
        calls
            .terminals
            .insert(call_id.to_string(), terminal.to_string());
        if calls.announced.contains(call_id) {
            send(running(call_id, terminal));
        }
    }

    /// The call ended: the terminal it ran in, if any (its content stays the terminal).
    pub fn finished(&self, call_id: &str) -> Option<String> {
        let mut calls = self.lock();
        calls.announced.remove(call_id);
        calls.terminals.remove(call_id)
    }
}

/// The update that puts `terminal` into `call_id`, running.
fn running(call_id: &str, terminal: &str) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        call_id.to_string(),
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::InProgress)
            .content(vec![terminal_content(terminal)]),
    ))
}

/// A terminal as tool-call content.
pub fn terminal_content(terminal: &str) -> ToolCallContent {
    ToolCallContent::Terminal(Terminal::new(terminal.to_string()))
}

/// One session's terminals, run by the client at the other end of `cx`.
#[derive(Debug)]
pub struct AcpTerminal {
    cx: ConnectionTo<Client>,
    session_id: OnceLock<String>,
    calls: Arc<CallTerminals>,
}

impl AcpTerminal {
    /// The session the requests are about, once the host has given it its id.
    pub fn bind(&self, session_id: &str) {
        let _ = self.session_id.set(session_id.to_string());
    }

    fn session(&self) -> Result<SessionId, ClientTerminalError> {
        self.session_id
            .get()
            .map(|id| SessionId::new(id.as_str()))
            .ok_or_else(|| ClientTerminalError("the session is not open yet".into()))
    }

    async fn ask<R: JsonRpcRequest>(
        &self,
        request: R,
        timeout: bool,
    ) -> Result<R::Response, ClientTerminalError> {
        let answer = self.cx.send_request(request).block_task();
        let answer = if timeout {
            tokio::time::timeout(ANSWER_TIMEOUT, answer)
                .await
                .map_err(|_| {
                    ClientTerminalError(format!(
                        "the editor did not answer within {} s",
                        ANSWER_TIMEOUT.as_secs()
                    ))
                })?
        } else {
            answer.await
        };
        answer.map_err(|e| ClientTerminalError(e.message))
    }
}

/// Give `spec` the client's terminals when the client offers them; the result is to be bound
/// to the session's id once it is open. `calls` is the session's [`CallTerminals`].
pub fn attach(
    spec: &mut Result<SessionSpec, String>,
    caps: &ClientCapabilities,
    cx: &ConnectionTo<Client>,
    calls: &Arc<CallTerminals>,
) -> Option<Arc<AcpTerminal>> {
    let spec = spec.as_mut().ok()?;
    if !caps.terminal {
        return None;
    }
    let terminal = Arc::new(AcpTerminal {
        cx: cx.clone(),
        session_id: OnceLock::new(),
        calls: Arc::clone(calls),
    });
    let served: Arc<dyn ClientTerminal> = terminal.clone();
    spec.client_terminal = Some(served);
    Some(terminal)
}

fn exit(status: TerminalExitStatus) -> TerminalExit {
    TerminalExit {
        exit_code: status.exit_code,
        signal: status.signal,
    }
}

#[async_trait]
impl ClientTerminal for AcpTerminal {
    async fn create(&self, command: TerminalCommand) -> Result<String, ClientTerminalError> {
        let session = self.session()?;
        let env = command
            .env
            .iter()
            .map(|(k, v)| EnvVariable::new(k.clone(), v.clone()))
            .collect();
        let request = CreateTerminalRequest::new(session.clone(), command.program)
            .args(command.args)
            .env(env)
            .cwd(command.cwd)
            .output_byte_limit(command.output_byte_limit);
        let id = self.ask(request, true).await?.terminal_id.0.to_string();
        self.calls.started(&command.call_id, &id, |update| {
            let _ = self
                .cx
                .send_notification(SessionNotification::new(session, update));
        });
        Ok(id)
    }

    async fn output(&self, terminal: &str) -> Result<TerminalOutput, ClientTerminalError> {
        let request = TerminalOutputRequest::new(self.session()?, terminal.to_string());
        let answer = self.ask(request, true).await?;
        Ok(TerminalOutput {
            output: answer.output,
            truncated: answer.truncated,
            exit: answer.exit_status.map(exit),
        })
    }

    async fn wait_for_exit(&self, terminal: &str) -> Result<TerminalExit, ClientTerminalError> {
        let request = WaitForTerminalExitRequest::new(self.session()?, terminal.to_string());
        Ok(exit(self.ask(request, false).await?.exit_status))
    }

    async fn kill(&self, terminal: &str) -> Result<(), ClientTerminalError> {
        let request = KillTerminalRequest::new(self.session()?, terminal.to_string());
        self.ask(request, true).await.map(|_| ())
    }

    async fn release(&self, terminal: &str) -> Result<(), ClientTerminalError> {
        let request = ReleaseTerminalRequest::new(self.session()?, terminal.to_string());
        self.ask(request, true).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terminal_of(update: &SessionUpdate) -> Option<String> {
        let SessionUpdate::ToolCallUpdate(u) = update else {
            return None;
        };
        match u.fields.content.as_deref() {
            Some([ToolCallContent::Terminal(t)]) => Some(t.terminal_id.0.to_string()),
            _ => None,
        }
    }

    #[test]
    fn a_terminal_follows_its_calls_announcement_whichever_comes_first() {
        let calls = CallTerminals::default();
        // The command started before the pump announced the call: nothing is sent yet, and
        // the announcement takes the terminal along.
        let mut sent = Vec::new();
        calls.started("early", "t1", |u| sent.push(u));
        assert!(sent.is_empty());
        let mut along = None;
        calls.announce("early", |running| along = running);
        assert_eq!(along.as_ref().and_then(terminal_of), Some("t1".into()));
        // Announced first: the terminal's update goes out when it starts.
        calls.announce("late", |running| assert!(running.is_none()));
        calls.started("late", "t2", |u| sent.push(u));
        assert_eq!(
            sent.iter().filter_map(terminal_of).collect::<Vec<_>>(),
            ["t2"]
        );
        // A finished call gives its terminal back once.
        assert_eq!(calls.finished("late").as_deref(), Some("t2"));
        assert_eq!(calls.finished("late"), None);
        assert_eq!(calls.finished("never"), None);
    }
}
