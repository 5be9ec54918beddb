//! Language servers for a session: which server covers a file (`spec`), starting one per
//! (server, workspace root) on first use and keeping it (`server`), what it tells cairn unasked
//! (`state`, `handlers`), the `LSP` tool that asks it questions (`tool`, results worded by
//! `format`), and the diagnostics check after the session's own edits (`after_edit`).
//!
//! The [`LspManager`] belongs to the session's outside parts, built by the host and kept with
//! the session (dropping it stops the servers); the core sees only the tool. Nothing starts at
//! session start: a server starts on the first call that needs it, and a crashed one is
//! started again on a later call, waiting longer after each crash. A project's own
//! `lspServers` is a command it wants to run: untrusted folders lose it (`config::untrusted`).

pub mod after_edit;
pub mod format;
pub mod handlers;
pub mod rename;
mod rename_tool;
pub mod server;
pub mod spec;
pub mod state;
mod status;
pub mod tool;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use server::{LspError, Server};
use spec::ServerSpec;

/// The longest wait before a crashed server is started again.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// How long a question waits for a server that reports work in progress (indexing).
pub const INDEXING_WAIT: Duration = Duration::from_secs(10);

/// One (server, root) slot.
enum Slot {
    Empty,
    Running(Arc<Server>),
    /// Crashed or failed to start: not tried again before `retry_at`.
    Failed {
        error: String,
        failures: u32,
        retry_at: Instant,
    },
}

type Key = (String, PathBuf);

/// The language servers of one session.
pub struct LspManager {
    specs: Vec<Arc<ServerSpec>>,
    log_dir: PathBuf,
    slots: Mutex<HashMap<Key, Arc<tokio::sync::Mutex<Slot>>>>,
    /// After-edit checks still collecting diagnostics.
    pub(crate) checks: after_edit::Checks,
    /// Told when a server starts, fails, stops, or starts or stops indexing (`status.rs`).
    status: Arc<tokio::sync::Notify>,
}

impl LspManager {
    /// A manager for `specs` (in order of preference) writing servers' stderr under `log_dir`.
    pub fn new(specs: Vec<ServerSpec>, log_dir: PathBuf) -> LspManager {
        LspManager {
            specs: specs.into_iter().map(Arc::new).collect(),
            log_dir,
            slots: Mutex::new(HashMap::new()),
            checks: after_edit::Checks::default(),
            status: Arc::default(),
        }
    }

    /// The manager a session's settings call for: its `lspServers` and the built-in servers
    /// found on the `PATH` cairn runs with (the settings' `env` included). The second value
    /// lists declared servers that cannot run, for the start-up notices.
    pub fn from_settings(
        settings: &crate::config::LoadedSettings,
        log_dir: PathBuf,
    ) -> (LspManager, Vec<String>) {
        let path_var = settings
            .env
            .get("PATH")
            .cloned()
            .or_else(|| std::env::var("PATH").ok());
        let (specs, problems) = spec::resolve(
            &settings.lsp_servers.0,
            path_var.as_deref(),
            &settings.project_dir,
            &settings.env,
        );
        (LspManager::new(specs, log_dir), problems)
    }

    /// The server for `path` and the file's language id, if one is configured.
    pub fn spec_for(&self, path: &Path) -> Option<(Arc<ServerSpec>, String)> {
        self.specs.iter().find_map(|s| {
            s.language_of(path)
                .map(|lang| (Arc::clone(s), lang.to_string()))
        })
    }

    fn slot(&self, key: Key) -> Arc<tokio::sync::Mutex<Slot>> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(
            slots
                .entry(key)
                .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(Slot::Empty))),
        )
    }

    /// The running server for `path` in workspace `root`, started now if need be (a crashed
    /// one again once its back-off has passed).
    pub async fn server_for(
        &self,
        path: &Path,
        root: &Path,
    ) -> Result<(Arc<Server>, String), LspError> {
        let (spec, language) = self
            .spec_for(path)
            .ok_or_else(|| LspError(spec::no_server_message(path)))?;
        let slot = self.slot((spec.name.clone(), root.to_path_buf()));
        let mut slot = slot.lock().await;
        let mut failures = 0;
        match &*slot {
            Slot::Running(server) if !server.is_dead() => {
                return Ok((Arc::clone(server), language));
            }
            Slot::Running(server) => {
                failures = 1;
                tracing::warn!(server = %spec.name, "language server exited; starting it again");
                server.shutdown().await;
            }
            Slot::Failed {
                error,
                failures: n,
                retry_at,
            } => {
                let now = Instant::now();
                if now < *retry_at {
                    return Err(LspError(format!(
                        "{error} (trying again in {} s)",
                        (*retry_at - now).as_secs().max(1)
                    )));
                }
                failures = *n;
            }
            Slot::Empty => {}
        }
        let log = self.log_dir.join(format!("{}.log", spec.name));
        // Watchers see it starting (its slot is locked until it is up or has failed).
        self.status.notify_waiters();
        let started = Server::start(Arc::clone(&spec), root, log).await;
        let result = match started {
            Ok(server) => {
                server.state.report_status_to(Arc::clone(&self.status));
                *slot = Slot::Running(Arc::clone(&server));
                Ok((server, language))
            }
            Err(e) => {
                let failures = failures + 1;
                *slot = Slot::Failed {
                    error: e.0.clone(),
                    failures,
                    retry_at: Instant::now() + backoff(failures),
                };
                Err(e)
            }
        };
        // Told once the slot is free again, whichever way it went.
        drop(slot);
        self.status.notify_waiters();
        result
    }

    /// The server already running for `path` in `root`, if any (none is started).
    pub fn running_for(&self, path: &Path, root: &Path) -> Option<(Arc<Server>, String)> {
        let (spec, language) = self.spec_for(path)?;
        let slot = self.slot((spec.name.clone(), root.to_path_buf()));
        let slot = slot.try_lock().ok()?;
        match &*slot {
            Slot::Running(server) if !server.is_dead() => Some((Arc::clone(server), language)),
            _ => None,
        }
    }

    /// Wait for the after-edit checks under way, so their reminders are queued (each is
    /// bounded by [`after_edit::WAIT`] after its sync).
    pub async fn settle_checks(&self) {
        self.checks.settle().await;
    }

    /// Every running server, politely shut down (`shutdown`, `exit`), then their processes
    /// killed.
    pub async fn shutdown(&self) {
        let slots: Vec<_> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, s)| s)
            .collect();
        for slot in slots {
            let slot = std::mem::replace(&mut *slot.lock().await, Slot::Empty);
            if let Slot::Running(server) = slot {
                server.shutdown().await;
            }
        }
    }
}

impl Drop for LspManager {
    /// The servers still running are shut down politely in the background when a runtime is
    /// there to do it; otherwise (or if that task never runs) dropping them kills them.
    fn drop(&mut self) {
        let slots: Vec<_> = self
            .slots
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, s)| s)
            .collect();
        if slots.is_empty() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                for slot in slots {
                    let slot = std::mem::replace(&mut *slot.lock().await, Slot::Empty);
                    if let Slot::Running(server) = slot {
                        server.shutdown().await;
                    }
                }
            });
        }
    }
}

/// The wait after the `failures`-th failure in a row: 1 s, 2 s, 4 s … at most a minute.
fn backoff(failures: u32) -> Duration {
    Duration::from_secs(1u64 << failures.saturating_sub(1).min(6)).min(MAX_BACKOFF)
}

/// The workspace root for `path`: the first of `working_dirs` that holds it, else its folder.
pub fn root_for(path: &Path, working_dirs: &[PathBuf]) -> PathBuf {
    working_dirs
        .iter()
        .find(|d| path.starts_with(d))
        .cloned()
        .or_else(|| path.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_a_minute() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(2), Duration::from_secs(2));
        assert_eq!(backoff(4), Duration::from_secs(8));
        assert_eq!(backoff(30), MAX_BACKOFF);
    }

    #[test]
    fn the_root_is_the_working_directory_holding_the_file() {
        let dirs = vec![PathBuf::from("/p"), PathBuf::from("/extra")];
        assert_eq!(
            root_for(Path::new("/extra/a/b.py"), &dirs),
            Path::new("/extra")
        );
        assert_eq!(
            root_for(Path::new("/elsewhere/b.py"), &dirs),
            Path::new("/elsewhere")
        );
    }
}
