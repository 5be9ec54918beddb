//! The permission round trip of a call: the table of requests waiting for the person's
//! answer ([`PendingDecisions`], shared with the client side that resolves them by id), and
//! putting one request to the person — re-planned under a new id while a file it would write
//! changes on disk, so what is approved is always what was last shown.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::oneshot;

use super::{CallEnv, Checked};
use crate::protocol::{Decision, Display, Event, PermissionRequest};
use crate::tools::{Access, ToolContext, ToolHandle};

/// Permission requests waiting for the person's answer, by request id.
#[derive(Clone, Default)]
pub struct PendingDecisions {
    inner: Arc<Mutex<Pending>>,
}

#[derive(Default)]
struct Pending {
    next_id: u64,
    waiting: HashMap<u64, oneshot::Sender<Decision>>,
}

impl PendingDecisions {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    fn register(&self) -> (u64, oneshot::Receiver<Decision>) {
        let mut p = self.lock();
        p.next_id += 1;
        let id = p.next_id;
        let (tx, rx) = oneshot::channel();
        p.waiting.insert(id, tx);
        (id, rx)
    }

    /// Forget a request that was replaced: an answer to it is ignored.
    fn withdraw(&self, id: u64) {
        self.lock().waiting.remove(&id);
    }

    /// Deliver the person's answer. False if no such request is waiting (answered already, or
    /// its call was interrupted).
    pub fn resolve(&self, id: u64, decision: Decision) -> bool {
        match self.lock().waiting.remove(&id) {
            Some(tx) => tx.send(decision).is_ok(),
            None => false,
        }
    }
}

/// Put `request` to the person and wait for the answer; `None` when the turn is interrupted.
/// While a file the call would write changes on disk, the call is planned again with the
/// tool's own preview and the person gets the new proposal under a new request id (an answer
/// to the old one is ignored), so what is approved is always what was last shown.
pub(super) async fn ask(
    env: &CallEnv,
    tool: &ToolHandle,
    call: &mut Checked,
    mut request: PermissionRequest,
    ctx: &ToolContext,
) -> Option<(PermissionRequest, Decision)> {
    let events = &env.session.events;
    let (id, mut answer) = env.decisions.register();
    request.id = id;
    events.send(Event::PermissionRequest(request.clone()));
    // Notification hooks run beside the wait, never in its way.
    let hooks = Arc::clone(&env.hooks);
    let session = Arc::clone(&env.session);
    let mode = env.gate.mode_for(&env.session.conversation);
    let message = format!("cairn needs your permission to use {}", request.tool);
    tokio::spawn(async move { hooks.notification(&session, mode, &message).await });

    // The files the call would write: their changes on disk re-plan the proposal.
    let writes = call
        .preview
        .as_ref()
        .is_some_and(|p| p.content().is_some() || matches!(p.display, Display::Diffs { .. }));
    let written: Vec<PathBuf> = if writes {
        call.accesses
            .iter()
            .filter_map(|a| match a {
                Access::Write(p) => Some(p.clone()),
                _ => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut changes = env.session.subscribe_changes();
    loop {
        let changed = tokio::select! {
            biased;
            _ = env.cancel.cancelled() => return None,
            d = &mut answer => return Some((request, d.unwrap_or(Decision::DenyOnce))),
            c = changes.recv(), if !written.is_empty() => c,
        };
        let path = match changed {
            Ok(path) if written.contains(&path) => path,
            Ok(_) => continue,
            Err(RecvError::Lagged(_)) => written[0].clone(),
            Err(RecvError::Closed) => {
                // No more news can come; wait for the answer alone.
                return tokio::select! {
                    biased;
                    _ = env.cancel.cancelled() => None,
                    d = answer => Some((request, d.unwrap_or(Decision::DenyOnce))),
                };
            }
        };
        let shown = path
            .strip_prefix(&env.session.project_dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        let before = call.preview.as_ref().map(|p| p.display.clone());
        let planned = match tool.validate(&call.input, ctx).await {
            Ok(()) => tool.preview(&call.input, ctx).await,
            Err(e) => Err(e),
        };
        let note = match planned {
            Ok(Some(p)) => {
                if Some(&p.display) == before.as_ref() {
                    continue;
                }
                call.preview = Some(p);
                format!(
                    "{shown} changed on disk: the change was planned again against the new content"
                )
            }
            Ok(None) => continue,
            Err(e) => format!(
                "{shown} changed on disk, and this change no longer applies as shown: {}",
                e.message
            ),
        };
        env.decisions.withdraw(request.id);
        let (id, next) = env.decisions.register();
        answer = next;
        request.id = id;
        request.preview = call.preview.as_ref().map(|p| p.display.clone());
        events.send(Event::PermissionRequestUpdated {
            request: request.clone(),
            note,
        });
    }
}
