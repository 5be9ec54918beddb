//! What a running server has told cairn without being asked: the diagnostics it published for
//! each document, and the work it reports in progress (indexing, loading a project). The
//! transport's handlers write here; the tool and the after-edit check read it and wait on its
//! [`Notify`] for news. A generation number tells "published since" apart from "published".

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_lsp::lsp_types::{Diagnostic, Url};
use tokio::sync::Notify;

/// The diagnostics of one document as last published.
#[derive(Debug, Clone)]
pub struct Published {
    /// When they came (for measuring how soon the model hears of them).
    pub received: Instant,
    /// The state's generation when they came.
    pub generation: u64,
    /// The document version they are for, when the server says.
    pub version: Option<i32>,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Default)]
struct Inner {
    generation: u64,
    diagnostics: HashMap<Url, Published>,
    /// Progress tokens begun and not ended.
    busy: HashSet<String>,
    /// The transport stopped (the process exited or broke the protocol).
    closed: bool,
}

/// Shared between the transport's handlers and the server's users.
#[derive(Debug, Default)]
pub struct ServerState {
    inner: Mutex<Inner>,
    changed: Notify,
    /// Told when the server starts or stops being busy, or closes (the manager's watchers).
    status: std::sync::OnceLock<std::sync::Arc<Notify>>,
}

impl ServerState {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self, f: impl FnOnce(&mut Inner)) {
        let mut inner = self.lock();
        inner.generation += 1;
        f(&mut inner);
        drop(inner);
        self.changed.notify_waiters();
    }

    pub fn publish(&self, uri: Url, version: Option<i32>, diagnostics: Vec<Diagnostic>) {
        self.bump(|i| {
            let generation = i.generation;
            i.diagnostics.insert(
                uri,
                Published {
                    received: Instant::now(),
                    generation,
                    version,
                    diagnostics,
                },
            );
        });
    }

    /// Tell `notify` from now on whenever the server starts or stops being busy, or closes.
    pub fn report_status_to(&self, notify: std::sync::Arc<Notify>) {
        let _ = self.status.set(notify);
    }

    fn status_changed(&self) {
        if let Some(n) = self.status.get() {
            n.notify_waiters();
        }
    }

    pub fn begin(&self, token: String) {
        self.bump(|i| {
            i.busy.insert(token);
        });
        self.status_changed();
    }

    pub fn end(&self, token: &str) {
        self.bump(|i| {
            i.busy.remove(token);
        });
        self.status_changed();
    }

    pub fn close(&self) {
        self.bump(|i| i.closed = true);
        self.status_changed();
    }

    /// Whether the server reports work in progress.
    pub fn is_busy(&self) -> bool {
        !self.lock().busy.is_empty()
    }

    /// Every document's latest diagnostics that are not empty.
    pub fn all_diagnostics(&self) -> Vec<(Url, Vec<Diagnostic>)> {
        self.lock()
            .diagnostics
            .iter()
            .filter(|(_, p)| !p.diagnostics.is_empty())
            .map(|(u, p)| (u.clone(), p.diagnostics.clone()))
            .collect()
    }

    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    pub fn diagnostics(&self, uri: &Url) -> Option<Published> {
        self.lock().diagnostics.get(uri).cloned()
    }

    /// Wait until `done` holds of the state (checked now and after every change), at most
    /// `limit`. Returns whether it held.
    pub async fn wait_for(
        &self,
        limit: Duration,
        done: impl Fn(&ServerStateView<'_>) -> bool,
    ) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let inner = self.lock();
                if done(&ServerStateView(&inner)) {
                    return true;
                }
                if inner.closed {
                    return false;
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, notified).await.is_err() {
                return false;
            }
        }
    }
}

/// A look at the state inside [`ServerState::wait_for`].
pub struct ServerStateView<'a>(&'a Inner);

impl ServerStateView<'_> {
    pub fn busy(&self) -> bool {
        !self.0.busy.is_empty()
    }

    /// Whether `uri` has diagnostics for `version` or later (or unversioned ones): the server
    /// has analysed what it was sent.
    pub fn has_published(&self, uri: &Url, version: i32) -> bool {
        self.0
            .diagnostics
            .get(uri)
            .is_some_and(|p| p.version.is_none_or(|v| v >= version))
    }

    /// Whether `uri` got diagnostics after generation `since`, for `version` or later when
    /// the server says which version they are for.
    pub fn published_since(&self, uri: &Url, since: u64, version: i32) -> bool {
        self.0
            .diagnostics
            .get(uri)
            .is_some_and(|p| p.generation > since && p.version.is_none_or(|v| v >= version))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_wait_ends_when_diagnostics_come_and_times_out_otherwise() {
        let state = Arc::new(ServerState::default());
        let uri = Url::parse("file:///a.py").unwrap();
        let since = state.generation();
        assert!(
            !state
                .wait_for(Duration::from_millis(30), |v| v
                    .published_since(&uri, since, 1))
                .await
        );
        let s = Arc::clone(&state);
        let u = uri.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            s.publish(u, Some(1), Vec::new());
        });
        assert!(
            state
                .wait_for(Duration::from_secs(5), |v| v
                    .published_since(&uri, since, 1))
                .await
        );
        state.begin("index".into());
        assert!(
            !state
                .wait_for(Duration::from_millis(20), |v| !v.busy())
                .await
        );
        state.end("index");
        assert!(
            state
                .wait_for(Duration::from_millis(20), |v| !v.busy())
                .await
        );
    }
}
