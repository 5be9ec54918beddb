//! The `/rewind` stores of one project's sessions (`<project data>/<session>/rewind`) taken
//! together: their sizes against the project's budget, and pruning them to it — the stores
//! of ended sessions only (a live store, whose session holds its lock, is never pruned from
//! another process: `store_lock.rs`), the sessions used least recently first, their oldest
//! checkpoints first. `cairn checkpoints du|gc` for people who want to look (`gc` keeps each
//! store's latest checkpoint), and [`free_ended`] for a running session keeping the project
//! within its budget (an ended session's store may go entirely).

use std::path::{Path, PathBuf};

use super::store_lock::StoreLock;
use crate::checkpoint::{
    CheckpointOptions, CheckpointStore, Pruned, default_budget, is_store, store_bytes,
};

/// The store's directory inside a session's data dir.
pub const CHECKPOINT_DIR: &str = "rewind";

/// Bytes in megabytes, one decimal.
pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
}

/// One session's store: opened and locked when its session has ended, `None` when live.
struct SessionStore {
    session: String,
    ended: Option<(CheckpointStore, StoreLock)>,
    /// When its latest checkpoint was made (ms since the epoch); 0 when live.
    last_ms: u64,
    /// Its size on disk, as last measured.
    bytes: u64,
}

/// The store directories of the project's sessions in `project_data`, but `own`.
fn store_dirs(project_data: &Path, own: Option<&Path>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(project_data) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join(CHECKPOINT_DIR))
        .filter(|d| is_store(d) && Some(d.as_path()) != own)
        .collect();
    dirs.sort();
    dirs
}

/// Bytes the stores of the project's other sessions (than the one in `own`) take.
pub fn others_bytes(project_data: &Path, own: &Path) -> u64 {
    store_dirs(project_data, Some(own))
        .iter()
        .map(|d| store_bytes(d))
        .sum()
}

/// Every session store of the project (but `own`), the ended ones opened and locked, least
/// recently used first. A store that cannot be opened is reported in the second list.
fn open_all(
    project_data: &Path,
    roots: &[PathBuf],
    own: Option<&Path>,
) -> (Vec<SessionStore>, Vec<String>) {
    let mut stores = Vec::new();
    let mut problems = Vec::new();
    for dir in store_dirs(project_data, own) {
        let session = dir
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let lock = match StoreLock::try_take(&dir) {
            Ok(lock) => lock,
            Err(e) => {
                problems.push(format!("{session}: its lock: {e}"));
                continue;
            }
        };
        let Some(lock) = lock else {
            let bytes = store_bytes(&dir);
            stores.push(SessionStore {
                session,
                ended: None,
                last_ms: 0,
                bytes,
            });
            continue;
        };
        let options = CheckpointOptions {
            journal: false,
            ..CheckpointOptions::default()
        };
        match CheckpointStore::open(&dir, roots, options) {
            Ok(store) => stores.push(SessionStore {
                session,
                last_ms: store.list().last().map_or(0, |c| c.created_ms),
                bytes: store.disk_usage(),
                ended: Some((store, lock)),
            }),
            Err(e) => problems.push(format!("{session}: {e}")),
        }
    }
    stores.sort_by_key(|s| (s.ended.is_none(), s.last_ms));
    (stores, problems)
}

/// Prunes the ended stores, in order, until `excess` bytes are freed: the pruned stores and
/// what pruning each did.
fn prune_ended(
    stores: &mut [SessionStore],
    mut excess: u64,
    keep_latest: bool,
) -> Vec<(String, Result<Pruned, String>)> {
    let mut done = Vec::new();
    for s in stores.iter_mut() {
        let Some((store, _lock)) = s.ended.as_mut() else {
            continue;
        };
        if excess == 0 {
            break;
        }
        let target = s.bytes.saturating_sub(excess);
        let result = store
            .prune_to(target, keep_latest)
            .map_err(|e| e.to_string());
        if let Ok(p) = &result {
            excess = excess.saturating_sub(p.before.saturating_sub(p.after));
            s.bytes = p.after;
        }
        done.push((s.session.clone(), result));
    }
    done
}

/// For a running session whose store is in `own`: prunes the project's ended sessions'
/// stores (least recently used first, oldest checkpoints first, whole stores if need be)
/// until `excess` bytes are freed. Returns the bytes freed, the checkpoints removed, and a
/// line for each store that could not be pruned.
pub fn free_ended(
    project_data: &Path,
    roots: &[PathBuf],
    own: &Path,
    excess: u64,
) -> (u64, usize, Vec<String>) {
    let (mut stores, _unreadable) = open_all(project_data, roots, Some(own));
    let mut freed = 0;
    let mut removed = 0;
    let mut problems = Vec::new();
    for (session, result) in prune_ended(&mut stores, excess, false) {
        match result {
            Ok(p) => {
                freed += p.before.saturating_sub(p.after);
                removed += p.removed.len();
            }
            Err(e) => problems.push(format!(
                "The /rewind store of the ended session {session} could not be pruned: {e}"
            )),
        }
    }
    (freed, removed, problems)
}

/// The project's budget: `budget` (bytes) or the default for the largest tree a store saw.
fn budget_of(stores: &mut [SessionStore], budget: Option<u64>) -> u64 {
    budget.unwrap_or_else(|| {
        let tree = stores
            .iter_mut()
            .filter_map(|s| s.ended.as_mut())
            .map(|(store, _)| store.tree_bytes())
            .max()
            .unwrap_or(0);
        default_budget(tree)
    })
}

fn table(stores: &[SessionStore], budget: u64, problems: &[String]) -> String {
    let total: u64 = stores.iter().map(|s| s.bytes).sum();
    let mut out = format!(
        "/rewind checkpoints: {} of a {} budget, {} session(s)\n",
        mb(total),
        mb(budget),
        stores.len()
    );
    for s in stores {
        let count = match &s.ended {
            Some((store, _)) => format!("{} checkpoint(s)", store.count()),
            None => "live (its session is running)".to_string(),
        };
        out.push_str(&format!("  {}  {count}  {}\n", s.session, mb(s.bytes)));
    }
    for p in problems {
        out.push_str(&format!("  cannot be read: {p}\n"));
    }
    out
}

/// `cairn checkpoints du`.
pub fn du(project_data: &Path, project_dir: &Path, budget: Option<u64>) -> String {
    let (mut stores, problems) = open_all(project_data, &[project_dir.to_path_buf()], None);
    let budget = budget_of(&mut stores, budget);
    table(&stores, budget, &problems)
}

/// `cairn checkpoints gc`: prunes the stores of ended sessions until together the stores fit
/// the budget (never a store's latest checkpoint; live stores are left alone).
pub fn gc(project_data: &Path, project_dir: &Path, budget: Option<u64>) -> String {
    let (mut stores, problems) = open_all(project_data, &[project_dir.to_path_buf()], None);
    let budget = budget_of(&mut stores, budget);
    let total: u64 = stores.iter().map(|s| s.bytes).sum();
    let mut pruned = Vec::new();
    for (session, result) in prune_ended(&mut stores, total.saturating_sub(budget), true) {
        match result {
            Ok(p) if p.removed.is_empty() => {}
            Ok(p) => pruned.push(format!(
                "{session}: pruned {} checkpoint(s), {} → {}",
                p.removed.len(),
                mb(p.before),
                mb(p.after)
            )),
            Err(e) => pruned.push(format!("{session}: not pruned: {e}")),
        }
    }
    let mut out = table(&stores, budget, &problems);
    if pruned.is_empty() {
        out.push_str("Nothing to prune.\n");
    }
    let live = stores.iter().filter(|s| s.ended.is_none()).count();
    if live > 0 {
        out.push_str(&format!(
            "{live} live session(s) left alone: their sessions keep them to the budget.\n"
        ));
    }
    for line in pruned {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
