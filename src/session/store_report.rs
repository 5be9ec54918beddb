//! `cairn checkpoints du|gc`: the `/rewind` stores of one project's sessions
//! (`<project data>/<session>/rewind`), their sizes against the project's budget, and
//! pruning them to it — the sessions used least recently first, their oldest checkpoints
//! first, the most recent session last. Run it with no session of the project open: a
//! running session keeps its own view of its store (a restore that needs a pruned content is
//! then refused, never applied in part).

use std::path::{Path, PathBuf};

use super::checkpoints::{CHECKPOINT_DIR, mb};
use crate::checkpoint::{CheckpointOptions, CheckpointStore, default_budget};

/// One session's store, opened.
struct SessionStore {
    session: String,
    store: CheckpointStore,
    /// When its latest checkpoint was made (ms since the epoch).
    last_ms: u64,
}

/// Every session store of the project whose data is in `project_data`, least recently used
/// first. A store that cannot be opened is reported in the second list.
fn open_all(project_data: &Path, project_dir: &Path) -> (Vec<SessionStore>, Vec<String>) {
    let mut stores = Vec::new();
    let mut problems = Vec::new();
    let Ok(entries) = std::fs::read_dir(project_data) else {
        return (stores, problems);
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join(CHECKPOINT_DIR))
        .filter(|d| d.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let session = dir
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let options = CheckpointOptions {
            journal: false,
            ..CheckpointOptions::default()
        };
        match CheckpointStore::open(&dir, &[project_dir.to_path_buf()], options) {
            Ok(store) => {
                let last_ms = store.list().last().map_or(0, |c| c.created_ms);
                stores.push(SessionStore {
                    session,
                    store,
                    last_ms,
                });
            }
            Err(e) => problems.push(format!("{session}: {e}")),
        }
    }
    stores.sort_by_key(|s| s.last_ms);
    (stores, problems)
}

/// The project's budget: `budget` (bytes) or the default for the largest tree a store saw.
fn budget_of(stores: &mut [SessionStore], budget: Option<u64>) -> u64 {
    budget.unwrap_or_else(|| {
        let tree = stores
            .iter_mut()
            .map(|s| s.store.tree_bytes())
            .max()
            .unwrap_or(0);
        default_budget(tree)
    })
}

fn table(stores: &[SessionStore], budget: u64, problems: &[String]) -> String {
    let total: u64 = stores.iter().map(|s| s.store.disk_usage()).sum();
    let mut out = format!(
        "/rewind checkpoints: {} of a {} budget, {} session(s)\n",
        mb(total),
        mb(budget),
        stores.len()
    );
    for s in stores {
        out.push_str(&format!(
            "  {}  {} checkpoint(s)  {}\n",
            s.session,
            s.store.list().len(),
            mb(s.store.disk_usage())
        ));
    }
    for p in problems {
        out.push_str(&format!("  cannot be read: {p}\n"));
    }
    out
}

/// `cairn checkpoints du`.
pub fn du(project_data: &Path, project_dir: &Path, budget: Option<u64>) -> String {
    let (mut stores, problems) = open_all(project_data, project_dir);
    let budget = budget_of(&mut stores, budget);
    table(&stores, budget, &problems)
}

/// `cairn checkpoints gc`: prunes the stores until together they fit the budget.
pub fn gc(project_data: &Path, project_dir: &Path, budget: Option<u64>) -> String {
    let (mut stores, problems) = open_all(project_data, project_dir);
    let budget = budget_of(&mut stores, budget);
    let mut total: u64 = stores.iter().map(|s| s.store.disk_usage()).sum();
    let mut pruned = Vec::new();
    for s in &mut stores {
        if total <= budget {
            break;
        }
        let size = s.store.disk_usage();
        let target = size.saturating_sub(total - budget);
        match s.store.prune(target) {
            Ok(p) => {
                total = total - p.before + p.after;
                if !p.removed.is_empty() {
                    pruned.push(format!(
                        "{}: pruned {} checkpoint(s), {} → {}",
                        s.session,
                        p.removed.len(),
                        mb(p.before),
                        mb(p.after)
                    ));
                }
            }
            Err(e) => pruned.push(format!("{}: not pruned: {e}", s.session)),
        }
    }
    let mut out = table(&stores, budget, &problems);
    if pruned.is_empty() {
        out.push_str("Nothing to prune.\n");
    }
    for line in pruned {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
