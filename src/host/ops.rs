//! The ops the host answers itself, before they reach the core: what needs the session's
//! outside parts (its MCP servers, the project's transcripts, memory files, the status-line
//! command) rather than the conversation. Everything else goes on to the core unchanged.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::protocol::{Event, Op};

use super::SessionFacts;

/// What the host's side of a session holds for answering ops.
#[allow(dead_code)] // read by the host's answers as they move here from the TUI
pub(crate) struct HostSide {
    pub facts: SessionFacts,
    pub mcp: Option<Arc<crate::mcp::McpManager>>,
}

/// Answer `op` if it is the host's (its events go to `events`), else give it back for the
/// core. Returns at once: slow work (connecting a server, running a command) runs on its own
/// task, so an interrupt behind it is never held up.
pub(crate) fn handle(op: Op, side: &HostSide, events: &mpsc::UnboundedSender<Event>) -> Option<Op> {
    let _ = (side, events);
    Some(op)
}
