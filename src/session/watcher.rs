//! The external-edit watcher: notices when a file the model has read changes on disk.
//!
//! One background thread owns a debounced notify watcher. The read-file state asks it (through
//! a channel, never blocking a tool) to watch the directory of every tracked file while at
//! least one file there is tracked. When a tracked file changes and the change is not our own
//! write (same mtime and size as recorded, or same bytes by hash), its entry is marked stale,
//! `Event::FileChangedOnDisk` goes to the client and a reminder is queued for the model's next
//! request. A deleted or renamed-away file is dropped from the state and reported the same way.
//!
//! If the watcher cannot start (no inotify instances left, say), a warning is logged and the
//! tools carry on: the mtime checks at write time still guard every edit. The thread holds
//! only a weak reference to the session and stops when the session or the state goes away.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, new_debouncer};

use crate::files::state::{DirWatch, content_hash};
use crate::protocol::{Event, FileChange};
use crate::session::context::SessionContext;

/// How long changes settle before they are reported.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

enum Msg {
    Watch(PathBuf),
    Unwatch(PathBuf),
    Events(DebounceEventResult),
    Shutdown,
}

/// The state's handle on the watcher thread.
#[derive(Debug)]
struct WatchHandle {
    tx: std::sync::Mutex<Sender<Msg>>,
}

impl WatchHandle {
    fn send(&self, msg: Msg) {
        let tx = match self.tx.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let _ = tx.send(msg);
    }
}

impl DirWatch for WatchHandle {
    fn watch(&self, dir: &Path) {
        self.send(Msg::Watch(dir.to_path_buf()));
    }
    fn unwatch(&self, dir: &Path) {
        self.send(Msg::Unwatch(dir.to_path_buf()));
    }
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.send(Msg::Shutdown);
    }
}

/// The reminder queued for the model when `path` changed outside cairn.
pub fn modified_reminder(path: &Path) -> String {
    format!(
        "{} was modified outside cairn after you read it; Read it again before editing",
        path.display()
    )
}

/// The reminder queued for the model when `path` was deleted or renamed away.
pub fn deleted_reminder(path: &Path) -> String {
    format!(
        "{} was deleted or moved outside cairn after you read it",
        path.display()
    )
}

/// Start watching the files `session` reads. Returns false (after logging why) when the
/// watcher could not start; the session works on without it. Call once per session.
pub fn attach_watcher(session: &Arc<SessionContext>) -> bool {
    let (tx, rx) = channel::<Msg>();
    let handler_tx = tx.clone();
    let debouncer = new_debouncer(DEBOUNCE, None, move |res: DebounceEventResult| {
        let _ = handler_tx.send(Msg::Events(res));
    });
    let debouncer = match debouncer {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(
                "file watcher unavailable, external edits are caught at write time only: {e}"
            );
            return false;
        }
    };
    let weak = Arc::downgrade(session);
    let spawned = std::thread::Builder::new()
        .name("cairn-file-watcher".into())
        .spawn(move || run(debouncer, rx, weak));
    if let Err(e) = spawned {
        tracing::warn!("file watcher thread failed to start: {e}");
        return false;
    }
    session.read_files.set_watcher(Arc::new(WatchHandle {
        tx: std::sync::Mutex::new(tx),
    }));
    true
}

type FileDebouncer = notify_debouncer_full::Debouncer<
    notify::RecommendedWatcher,
    notify_debouncer_full::RecommendedCache,
>;

fn run(mut debouncer: FileDebouncer, rx: Receiver<Msg>, session: Weak<SessionContext>) {
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Shutdown => break,
            Msg::Watch(dir) => {
                if let Err(e) = debouncer.watch(&dir, RecursiveMode::NonRecursive) {
                    tracing::warn!("cannot watch {}: {e}", dir.display());
                    continue;
                }
                // The watch starts after the read that asked for it: a change made in between
                // raised no event, so compare the directory's tracked files once now.
                let Some(session) = session.upgrade() else {
                    break;
                };
                for path in session.read_files.paths() {
                    if path.parent() == Some(dir.as_path()) {
                        check_path(&session, &path);
                    }
                }
            }
            Msg::Unwatch(dir) => {
                let _ = debouncer.unwatch(&dir);
            }
            Msg::Events(Err(errors)) => {
                for e in errors {
                    tracing::warn!("file watcher error: {e}");
                }
            }
            Msg::Events(Ok(events)) => {
                let Some(session) = session.upgrade() else {
                    break;
                };
                let mut seen: Vec<PathBuf> = Vec::new();
                for ev in events {
                    for p in &ev.event.paths {
                        if !seen.contains(p) {
                            seen.push(p.clone());
                        }
                    }
                }
                for p in seen {
                    check_path(&session, &p);
                }
            }
        }
    }
}

/// Compare a tracked file with what the state recorded and report a real outside change.
pub fn check_path(session: &SessionContext, path: &Path) {
    let state = &session.read_files;
    // Wait for any write in progress: between its rename and its record the file would look
    // changed by someone else.
    let _no_write_in_progress = state.lock_writes();
    let Some(snap) = state.get(path) else {
        return;
    };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if state.remove(path) {
                session.file_changed(path);
                // Reminder first: whoever sees the event may look for it at once.
                session.remind(deleted_reminder(path));
                session.events.send(Event::FileChangedOnDisk {
                    path: path.to_path_buf(),
                    change: FileChange::Deleted,
                });
            }
        }
        Err(_) => {}
        Ok(meta) => {
            let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let size = meta.len();
            if mtime == snap.mtime && size == snap.size {
                return; // our own write, or a touch that changed nothing we can see
            }
            if size == snap.size
                && let Some(hash) = snap.hash
                && std::fs::read(path).is_ok_and(|b| content_hash(&b) == hash)
            {
                state.touch(path, mtime, size);
                return;
            }
            // Whoever waits on a proposal for this file hears of every change; the model and
            // the person of the first one only, until the model reads it again.
            session.file_changed(path);
            if snap.stale {
                return;
            }
            if state.mark_stale(path) {
                session.remind(modified_reminder(path));
                session.events.send(Event::FileChangedOnDisk {
                    path: path.to_path_buf(),
                    change: FileChange::Modified,
                });
            }
        }
    }
}
