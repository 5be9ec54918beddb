//! Diagnostics after the session's own edits: every write the file tools record (Write,
//! Edit, MultiEdit, NotebookEdit) on a file a running server covers is synced to that server,
//! its `publishDiagnostics` for the file awaited (at most [`WAIT`]), and the errors and warnings
//! that are new since before the write queued as a reminder for the model's next request (and
//! told to the client as [`Event::ToolDiagnostics`] of the call that wrote). A
//! file the server had not opened has no "before": all its current errors and warnings are
//! given, said as such. No server is started for this: only running ones are asked.

use std::path::Path;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_lsp::lsp_types::Url;
use tokio::task::JoinHandle;

use crate::files::state::WriteHook;
use crate::protocol::Event;
use crate::session::context::SessionContext;

use super::format::{diagnostic_line, diagnostics_reminder, new_problems};
use super::server::Server;
use super::{LspManager, root_for};

/// How long a check waits for the server's diagnostics after a write.
pub const WAIT: Duration = Duration::from_millis(1500);

/// The checks still running.
#[derive(Default)]
pub struct Checks(Mutex<Vec<JoinHandle<()>>>);

impl Checks {
    fn push(&self, task: JoinHandle<()>) {
        let mut tasks = self.0.lock().unwrap_or_else(|e| e.into_inner());
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }

    /// Wait for the checks under way (each bounded by [`WAIT`] after its sync), so their
    /// reminders are queued.
    pub async fn settle(&self) {
        let tasks = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        for t in tasks {
            let _ = t.await;
        }
    }
}

/// Check `session`'s writes from now on (once per session; later calls do nothing).
pub fn attach(manager: &Arc<LspManager>, session: &Arc<SessionContext>) {
    let m: Weak<LspManager> = Arc::downgrade(manager);
    let s: Weak<SessionContext> = Arc::downgrade(session);
    let hook = move |path: &Path, call_id: Option<&str>| {
        let (Some(manager), Some(session)) = (m.upgrade(), s.upgrade()) else {
            return;
        };
        let root = root_for(path, &session.working_dirs());
        let Some((server, language)) = manager.running_for(path, &root) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let path = path.to_path_buf();
        let call_id = call_id.map(str::to_string);
        let task = runtime.spawn(async move {
            if let Some(found) = check(&server, &path, &language, &session).await {
                session.remind(found.reminder);
                if let Some(call_id) = call_id {
                    session.tell_diagnostics(Event::ToolDiagnostics {
                        call_id,
                        path,
                        problems: found.lines,
                        new: found.baseline,
                    });
                }
            }
        });
        manager.checks.push(task);
    };
    session.read_files.set_write_hook(WriteHook(Arc::new(hook)));
}

/// The problems a write brought.
struct Found {
    /// For the model.
    reminder: String,
    /// One line each, for the client.
    lines: Vec<String>,
    /// Whether the file had been checked before (else every problem is given).
    baseline: bool,
}

/// Sync `path` to `server` and word the problems its write brought, if any.
async fn check(
    server: &Server,
    path: &Path,
    language: &str,
    session: &SessionContext,
) -> Option<Found> {
    let uri = Url::from_file_path(path).ok()?;
    let baseline = server.has_open(path).await;
    let before = if baseline {
        server
            .state
            .diagnostics(&uri)
            .map(|p| p.diagnostics)
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let since = server.state.generation();
    let (_, version) = server.sync(path, language).await.ok()?;
    let came = server
        .state
        .wait_for(WAIT, |v| v.published_since(&uri, since, version))
        .await;
    if !came {
        return None;
    }
    let after = server.state.diagnostics(&uri)?.diagnostics;
    let new = new_problems(&before, &after);
    if new.is_empty() {
        return None;
    }
    let cwd = session.cwd();
    let shown = path
        .strip_prefix(&cwd)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string());
    Some(Found {
        reminder: diagnostics_reminder(&shown, &server.spec.name, &new, baseline),
        lines: new.iter().map(diagnostic_line).collect(),
        baseline,
    })
}
