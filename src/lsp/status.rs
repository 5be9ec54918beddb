//! What the session's language servers are doing, for people: each configured server with
//! its state per workspace root (`/lsp`, the status line), restarting one, and the
//! diagnostics the running servers hold (`/diagnostics`). Watchers wait on
//! [`LspManager::status_changes`], told when a server starts, fails, stops, or starts or
//! stops indexing.

use std::path::PathBuf;
use std::sync::Arc;

use async_lsp::lsp_types::Url;
use tokio::sync::Notify;

use super::format::diagnostic_line;
use super::{LspManager, Slot};
use crate::protocol::{FileDiagnostics, LspServerInfo, LspState};

impl LspManager {
    /// Told whenever [`Self::status`] may have changed.
    pub fn status_changes(&self) -> Arc<Notify> {
        Arc::clone(&self.status)
    }

    /// Every configured server: one row per root it was started for, or one "not started"
    /// row. Sorted by name, then root.
    pub fn status(&self) -> Vec<LspServerInfo> {
        let slots: Vec<_> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|((name, root), slot)| (name.clone(), root.clone(), Arc::clone(slot)))
            .collect();
        let mut out = Vec::new();
        for spec in &self.specs {
            let log = self.log_dir.join(format!("{}.log", spec.name));
            let extensions: Vec<String> = spec.extension_to_language.keys().cloned().collect();
            let row = |root: Option<PathBuf>, state: LspState| LspServerInfo {
                name: spec.name.clone(),
                root,
                state,
                log: log.clone(),
                extensions: extensions.clone(),
            };
            let mut rows: Vec<LspServerInfo> = slots
                .iter()
                .filter(|(name, _, _)| *name == spec.name)
                .filter_map(|(_, root, slot)| {
                    // A slot locked is one being started (or shut down) now.
                    let state = match slot.try_lock().as_deref() {
                        Err(_) => LspState::Starting,
                        Ok(Slot::Empty) => return None,
                        Ok(Slot::Running(server)) if server.is_dead() => LspState::Failed {
                            error: "it exited; the next call starts it again".into(),
                        },
                        Ok(Slot::Running(server)) if server.state.is_busy() => LspState::Indexing,
                        Ok(Slot::Running(_)) => LspState::Ready,
                        Ok(Slot::Failed { error, .. }) => LspState::Failed {
                            error: error.clone(),
                        },
                    };
                    Some(row(Some(root.clone()), state))
                })
                .collect();
            if rows.is_empty() {
                rows.push(row(None, LspState::NotStarted));
            }
            rows.sort_by(|a, b| a.root.cmp(&b.root));
            out.extend(rows);
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Stop every instance of server `name`; the next call that needs it starts it afresh,
    /// without waiting out a back-off. What happened, in a line.
    pub async fn restart(&self, name: &str) -> Result<String, String> {
        if !self.specs.iter().any(|s| s.name == name) {
            let names: Vec<&str> = self.specs.iter().map(|s| s.name.as_str()).collect();
            return Err(format!(
                "there is no language server called `{name}` (configured: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
        }
        let slots: Vec<_> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|((n, _), _)| n == name)
            .map(|(_, slot)| Arc::clone(slot))
            .collect();
        let mut stopped = 0;
        for slot in slots {
            let old = std::mem::replace(&mut *slot.lock().await, Slot::Empty);
            if let Slot::Running(server) = old {
                server.shutdown().await;
                stopped += 1;
            }
        }
        self.status.notify_waiters();
        Ok(match stopped {
            0 => format!("{name} was not running; the next call that needs it starts it"),
            _ => format!("{name} stopped; the next call that needs it starts it afresh"),
        })
    }

    /// The diagnostics every running server holds, by file (paths as the server named them).
    pub fn diagnostics(&self) -> Vec<FileDiagnostics> {
        let slots: Vec<_> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(Arc::clone)
            .collect();
        let mut out = Vec::new();
        for slot in slots {
            let Ok(slot) = slot.try_lock() else { continue };
            let Slot::Running(server) = &*slot else {
                continue;
            };
            for (uri, problems) in server.state.all_diagnostics() {
                let Some(path) = Url::to_file_path(&uri).ok() else {
                    continue;
                };
                out.push(FileDiagnostics {
                    path,
                    server: server.spec.name.clone(),
                    lines: problems.iter().map(diagnostic_line).collect(),
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}
