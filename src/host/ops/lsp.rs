//! The session's language servers for the client: their states (again whenever one starts,
//! fails, stops, or starts or stops indexing), restarting one, and the diagnostics they hold.

use std::sync::Arc;

use crate::lsp::LspManager;
use crate::protocol::HostEvent;

use super::Answer;

pub(super) fn servers(manager: Option<&LspManager>) -> HostEvent {
    HostEvent::LspServers {
        servers: manager.map(LspManager::status).unwrap_or_default(),
    }
}

pub(super) fn diagnostics(manager: Option<&LspManager>) -> HostEvent {
    HostEvent::Diagnostics {
        files: manager.map(LspManager::diagnostics).unwrap_or_default(),
    }
}

/// Tell the client whenever the servers' states change, until it or the session is gone.
/// Only a change of what it would see is sent.
pub(super) fn watch(
    manager: &Arc<LspManager>,
    answer: Answer,
    ended: tokio_util::sync::CancellationToken,
) {
    let changes = manager.status_changes();
    // Weak: the servers stop with the session, not when this task notices.
    let manager = Arc::downgrade(manager);
    tokio::spawn(async move {
        let mut last = None;
        loop {
            let notified = changes.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let Some(now) = manager.upgrade().map(|m| m.status()) else {
                break;
            };
            if last.as_ref() != Some(&now) {
                if !answer.send(HostEvent::LspServers {
                    servers: now.clone(),
                }) {
                    break;
                }
                last = Some(now);
            }
            tokio::select! {
                () = notified => {}
                () = ended.cancelled() => break,
            }
        }
    });
}

pub(super) async fn restart(manager: Option<Arc<LspManager>>, name: &str) -> HostEvent {
    let result = match manager {
        Some(m) => m.restart(name).await,
        None => Err("this session has no language servers".to_string()),
    };
    HostEvent::LspAnswer { result }
}
