//! The ops the host answers itself, before they reach the core: what needs the session's
//! outside parts (its MCP servers, the project's transcripts, memory files, the status-line
//! command, the host's other sessions) rather than the conversation. They arrive as
//! [`Op::Host`] and are answered with [`Event::Host`]; everything else goes on to the core
//! unchanged.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;

use crate::protocol::{Event, HostEvent, HostOp, Op, OpenSessionInfo, SavedSession};

use super::{Registry, SessionFacts};

mod lsp;
mod mcp;
mod memory;
mod status_line;
#[cfg(test)]
mod tests;

/// What the host's side of a session holds for answering ops.
pub(crate) struct HostSide {
    pub facts: SessionFacts,
    pub mcp: Option<Arc<crate::mcp::McpManager>>,
    /// The host's open sessions, for [`HostOp::ListOpenSessions`].
    pub registry: Registry,
    /// A task already tells the client whenever the MCP servers change.
    pub mcp_watched: AtomicBool,
    /// The session's language servers, for `/lsp`, `/diagnostics` and the status row.
    pub lsp: Option<Arc<crate::lsp::LspManager>>,
    /// A task already tells the client whenever the language servers change.
    pub lsp_watched: AtomicBool,
    /// Cancelled when the session's core has ended: the host's own tasks (the MCP watcher)
    /// stop, so the client's events channel closes even while someone still holds the servers.
    pub ended: tokio_util::sync::CancellationToken,
}

impl HostSide {
    pub fn new(
        facts: SessionFacts,
        mcp: Option<Arc<crate::mcp::McpManager>>,
        registry: Registry,
    ) -> HostSide {
        HostSide {
            facts,
            mcp,
            registry,
            mcp_watched: AtomicBool::new(false),
            lsp: None,
            lsp_watched: AtomicBool::new(false),
            ended: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// The same, answering for the session's language servers too.
    pub fn with_lsp(mut self, lsp: Option<Arc<crate::lsp::LspManager>>) -> HostSide {
        self.lsp = lsp;
        self
    }
}

/// Answer `op` if it is the host's (its events go to `events`), else give it back for the
/// core. Returns at once: slow work (connecting a server, running a command, reading the
/// disk) runs on its own task, so an interrupt behind it is never held up.
pub(crate) fn handle(op: Op, side: &HostSide, events: &mpsc::UnboundedSender<Event>) -> Option<Op> {
    let Op::Host(op) = op else { return Some(op) };
    let answer = Answer(events.clone());
    match op {
        HostOp::McpServers => {
            answer.send(mcp::servers(side.mcp.as_deref()));
            let first = !side.mcp_watched.swap(true, Ordering::SeqCst);
            if first && let Some(manager) = &side.mcp {
                mcp::watch(manager, answer, side.ended.clone());
            }
        }
        HostOp::McpApprove { name, choice } => {
            let (manager, root) = (side.mcp.clone(), side.facts.project_root.clone());
            tokio::task::spawn_blocking(move || {
                answer.send(mcp::approve(manager.as_deref(), &root, &name, choice));
            });
        }
        HostOp::McpReconnect { name } => {
            answer.send(mcp::reconnect(side.mcp.as_deref(), &name));
        }
        HostOp::McpEnable { name, enabled } => {
            let (manager, root) = (side.mcp.clone(), side.facts.project_root.clone());
            tokio::task::spawn_blocking(move || {
                answer.send(mcp::enable(manager.as_deref(), &root, &name, enabled));
            });
        }
        HostOp::ListSavedSessions => {
            let dir = side.facts.sessions_dir.clone();
            tokio::task::spawn_blocking(move || {
                let sessions = saved_sessions_in(&dir);
                answer.send(HostEvent::SavedSessions { sessions });
            });
        }
        HostOp::ListOpenSessions => {
            let sessions = super::lock(&side.registry)
                .values()
                .map(|e| OpenSessionInfo {
                    session_id: e.session.session_id.clone(),
                    project_dir: e.session.project_dir.clone(),
                    project_root: e.session.project_root.clone(),
                })
                .collect();
            answer.send(HostEvent::OpenSessions { sessions });
        }
        HostOp::ReadMemoryFile { path } => {
            tokio::task::spawn_blocking(move || {
                let content = memory::read(&path);
                answer.send(HostEvent::MemoryFile { path, content });
            });
        }
        HostOp::WriteMemoryFile { path, content } => {
            tokio::task::spawn_blocking(move || {
                let result = memory::write(&path, &content);
                answer.send(HostEvent::MemoryWritten {
                    path,
                    note: false,
                    result,
                });
            });
        }
        HostOp::AddMemoryNote { path, note } => {
            tokio::task::spawn_blocking(move || {
                let result = memory::append_note(&path, &note);
                answer.send(HostEvent::MemoryWritten {
                    path,
                    note: true,
                    result,
                });
            });
        }
        HostOp::LspServers => {
            let first = !side.lsp_watched.swap(true, Ordering::SeqCst);
            match &side.lsp {
                // The watcher sends the first list itself.
                Some(manager) if first => lsp::watch(manager, answer, side.ended.clone()),
                manager => {
                    answer.send(lsp::servers(manager.as_deref()));
                }
            }
        }
        HostOp::LspRestart { name } => {
            let manager = side.lsp.clone();
            tokio::spawn(async move {
                answer.send(lsp::restart(manager, &name).await);
            });
        }
        HostOp::Diagnostics => {
            answer.send(lsp::diagnostics(side.lsp.as_deref()));
        }
        HostOp::StatusLine { input } => match status_line::Job::new(&side.facts, &input) {
            Some(job) => {
                tokio::spawn(async move {
                    answer.send(HostEvent::StatusLine {
                        text: job.run().await,
                    });
                });
            }
            None => {
                answer.send(HostEvent::StatusLine {
                    text: Err("no statusLine command is configured".into()),
                });
            }
        },
        HostOp::Plugins => {
            answer.send(HostEvent::Plugins {
                plugins: side.facts.plugins.clone(),
                problems: side.facts.plugin_problems.clone(),
            });
        }
    }
    None
}

/// Where the host's answers go: the client's events channel.
#[derive(Clone)]
struct Answer(mpsc::UnboundedSender<Event>);

impl Answer {
    /// Send an answer; false once the client has gone.
    fn send(&self, event: HostEvent) -> bool {
        self.0.send(Event::Host(event)).is_ok()
    }
}

/// The sessions whose transcripts are in `dir` (a project's data folder), newest first.
pub(crate) fn saved_sessions_in(dir: &std::path::Path) -> Vec<SavedSession> {
    crate::session::resume::list(dir)
        .into_iter()
        .map(|s| SavedSession {
            id: s.id,
            path: s.path,
            first_prompt: s.first_prompt,
            modified: s.modified,
            prompts: s.prompts,
            branch: s.branch,
        })
        .collect()
}
