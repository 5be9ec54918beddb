//! The relay between a client and its session's core: the client's ops pass through the host
//! (which answers its own, [`super::ops`]) to the core; the core's events and the host's
//! answers reach the client on one channel, in order. The relay also keeps the session's
//! outside parts alive and takes the session off the host's list when the core ends.

use tokio::sync::mpsc;

use crate::agent::AgentHandle;
use crate::protocol::{Connection, Event, Op};

use super::Registry;
use super::open::KeepAlive;
use super::ops::{HostSide, handle};

/// Start relaying for a session whose core is `agent`; the client gets the returned
/// connection.
pub(crate) fn start(
    agent: AgentHandle,
    keep: KeepAlive,
    side: HostSide,
    registry: Registry,
) -> Connection {
    let (client_ops_tx, client_ops) = mpsc::unbounded_channel();
    let (client_events, client_events_rx) = mpsc::unbounded_channel();
    let session_id = agent.session_id.clone();
    tokio::spawn(run(agent, client_ops, client_events, keep, side, registry));
    Connection {
        session_id,
        ops: client_ops_tx,
        events: client_events_rx,
    }
}

async fn run(
    agent: AgentHandle,
    mut client_ops: mpsc::UnboundedReceiver<Op>,
    client_events: mpsc::UnboundedSender<Event>,
    keep: KeepAlive,
    side: HostSide,
    registry: Registry,
) {
    let AgentHandle {
        session_id,
        ops,
        mut events,
    } = agent;
    // `None` once the client has gone: the core then sees its ops channel close and ends.
    let mut core_ops = Some(ops);
    loop {
        tokio::select! {
            // Core events first: what the core said before an op's answer stays before it.
            biased;
            event = events.recv() => match event {
                Some(event) => {
                    // A client that stopped reading still lets the core finish.
                    let _ = client_events.send(event);
                }
                None => break,
            },
            op = client_ops.recv(), if core_ops.is_some() => match op {
                Some(op) => {
                    if let Some(op) = handle(op, &side, &client_events)
                        && let Some(core) = &core_ops
                    {
                        let _ = core.send(op);
                    }
                }
                None => core_ops = None,
            },
        }
    }
    side.ended.cancel();
    super::lock(&registry).remove(&session_id);
    drop(keep);
}
