//! `cairn acp`: cairn as an Agent Client Protocol agent, for editors (Zed, JetBrains IDEs,
//! Neovim) that drive coding agents over stdio. Built on the official crate
//! (`agent-client-protocol`, protocol v1): no JSON-RPC of our own. A client of the host like
//! the TUI and `-p`: sessions are opened with [`Host::open`] from the editor's requests and
//! driven through the protocol's `Op`s and `Event`s only.
//!
//! - `server.rs`: the requests (`initialize`, `authenticate`,
//!   `session/new|load|resume|list|close|prompt|cancel|set_mode`); `list.rs`: `session/list`;
//! - `session.rs`: one session's state and the pump from its events to the client;
//! - `updates.rs`: events as `session/update`s; `permission.rs`: permission questions;
//! - `client_fs.rs`: the editor's files (`fs/*`) as the session's `ClientFiles`;
//!   `client_terminal.rs`: its terminals (`terminal/*`) as the session's `ClientTerminal`;
//! - `prompt.rs`: an ACP prompt as cairn's submit; `modes.rs`: permission modes as session
//!   modes; `open.rs`: an editor's request as a [`SessionSpec`] (folder, servers, trust).

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, CloseSessionRequest, InitializeRequest,
    ListSessionsRequest, LoadSessionRequest, NewSessionRequest, PromptRequest,
    ResumeSessionRequest, SetSessionModeRequest,
};
use agent_client_protocol::{Agent, ByteStreams, Client, ConnectTo};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::host::{Host, SessionSpec};

mod client_fs;
mod client_terminal;
mod list;
mod modes;
mod open;
mod permission;
mod prompt;
mod server;
mod session;
mod updates;

#[cfg(test)]
mod updates_tests;

/// Serve ACP on stdin/stdout until the client closes stdin. Sessions start from `template`
/// (the flags `cairn acp` was given: model, settings, permission rules), in the folder each
/// `session/new` names; `trust_all` (`--trust-folder`) trusts every such folder.
pub async fn serve_stdio(template: SessionSpec, trust_all: bool) -> anyhow::Result<()> {
    let transport = ByteStreams::new(
        tokio::io::stdout().compat_write(),
        tokio::io::stdin().compat(),
    );
    let server = Arc::new(server::Server::new(Host::new(), template, trust_all));
    let served = connect(Arc::clone(&server)).connect_to(transport).await;
    // The editor closed the connection (or it broke): the sessions end cleanly either way.
    server.close_all().await;
    served.map_err(|e| anyhow::anyhow!("ACP connection: {e:?}"))
}

/// The agent as a connectable component: [`serve_stdio`] connects it to stdio, a test to an
/// in-process client.
pub fn agent(host: Host, template: SessionSpec, trust_all: bool) -> impl ConnectTo<Client> {
    connect(Arc::new(server::Server::new(host, template, trust_all)))
}

fn connect(server: Arc<server::Server>) -> impl ConnectTo<Client> {
    let s = || Arc::clone(&server);
    let (s1, s2, s3, s4, s5, s6) = (s(), s(), s(), s(), s(), s());
    let (s7, s8, s9, s10) = (s(), s(), s(), s());
    Agent
        .v1()
        .name("cairn")
        .on_receive_request(
            async move |r: InitializeRequest, responder, _cx| s1.initialize(r, responder),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: AuthenticateRequest, responder, _cx| s2.authenticate(r, responder),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: NewSessionRequest, responder, cx| s3.open_session(r, responder, cx),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: LoadSessionRequest, responder, cx| s4.open_session(r, responder, cx),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: ResumeSessionRequest, responder, cx| s5.open_session(r, responder, cx),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: ListSessionsRequest, responder, _cx| s6.list_sessions(r, responder),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: CloseSessionRequest, responder, _cx| s7.close_session(r, responder),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: PromptRequest, responder, _cx| s8.prompt(r, responder),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: SetSessionModeRequest, responder, _cx| s9.set_mode(r, responder),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| s10.cancel(n),
            agent_client_protocol::on_receive_notification!(),
        )
}
