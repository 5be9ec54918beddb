//! The session's checkpoints of its working directories: one [`CheckpointStore`] in the
//! session's data dir (`<data dir>/rewind`), opened on first use, recorded off the async
//! runtime (`spawn_blocking`), one operation at a time.
//!
//! The core records one before each prompt (in the background: the request does not wait) and
//! one at the end of each turn; the executor records one before each tool that may write and
//! waits for it. Every operation first waits for the background one still running, so a
//! writing tool never runs before the checkpoint of its prompt is complete, and the order of
//! the checkpoints is the order they were asked for. A store that cannot be opened or written
//! is reported once and the session goes on without checkpoints: they must never stop it.
//!
//! The session holds its store's lock (`store_lock.rs`) from opening it to its end. After
//! each checkpoint it keeps the project's stores (all its sessions') within the budget:
//! ended sessions' stores are pruned first (`store_report::free_ended`), then its own oldest
//! checkpoints, never its latest.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::task::JoinHandle;

use super::store_lock::StoreLock;
pub use super::store_report::{CHECKPOINT_DIR, mb};
use super::store_report::{free_ended, others_bytes};

use crate::checkpoint::{
    CheckpointError, CheckpointId, CheckpointInfo, CheckpointOptions, CheckpointStore,
    NotCoveredFile, Recorded, RestorePlan, Restored, default_budget,
};

/// The change journal starts with the session's 6th checkpoint, or once the tree holds 2,000
/// entries: a `-p` run with a tool or two over a small tree never pays for its watches (their
/// teardown alone outweighs the full scans it would save).
const JOURNAL_FROM: u32 = 6;
const JOURNAL_MIN_ENTRIES: usize = 2_000;

/// The label of the checkpoint taken before the prompt `id` was sent.
pub fn prompt_label(id: &str) -> String {
    format!("before prompt {id}")
}

struct Inner {
    /// Where the store lives; `None`: this session keeps no checkpoints.
    dir: Option<PathBuf>,
    roots: Vec<PathBuf>,
    skip: Vec<PathBuf>,
    store: Option<CheckpointStore>,
    /// The store's lock, held while the store is open.
    live: Option<StoreLock>,
    /// Why the store cannot be used, once it failed to open.
    broken: Option<String>,
    /// The store's size budget in bytes; `None`: [`default_budget`] of the tree.
    budget: Option<u64>,
    /// Checkpoints skipped, or a store that could not be pruned, since the person was last
    /// told.
    notices: Vec<String>,
    /// Checkpoints pruned since the person was last told.
    pruned: Option<PrunedSoFar>,
    /// The project's other stores' size as last listed, and the checkpoints recorded since.
    others: Option<(u64, u32)>,
    /// The tree's entries as the project's sessions last counted them ([`TREE_HINT`]).
    tree_hint: Option<usize>,
}

/// The file in the project's data dir that holds how many entries its tree had at a
/// session's latest checkpoint: the next session sizes its first walk by it
/// ([`CheckpointOptions::expected_entries`]).
const TREE_HINT: &str = "rewind-tree-entries";

impl Inner {
    /// Reads the project's tree hint.
    fn read_tree_hint(&mut self) -> Option<usize> {
        let (_, project) = self.project()?;
        let text = std::fs::read_to_string(project.join(TREE_HINT)).ok()?;
        self.tree_hint = text.trim().parse().ok();
        self.tree_hint
    }

    /// Writes the tree hint when the latest checkpoint counted differently (after the
    /// background checkpoints: the session's first, each prompt's). A hint that cannot be
    /// written only costs the next session a parallel first walk.
    fn update_tree_hint(&mut self) {
        let entries = self.store.as_ref().and_then(CheckpointStore::tree_entries);
        let Some(entries) = entries.filter(|&n| Some(n) != self.tree_hint) else {
            return;
        };
        // Never into a working tree (a data dir kept inside the project, as in tests).
        let inside = |project: &Path| {
            self.roots
                .iter()
                .any(|r| project.starts_with(r) || r.starts_with(project))
        };
        if let Some((_, project)) = self.project().filter(|(_, p)| !inside(p)) {
            let _ = std::fs::write(project.join(TREE_HINT), format!("{entries}\n"));
        }
        self.tree_hint = Some(entries);
    }
}

/// Checkpoints pruned since the person was last told.
#[derive(Clone, Copy)]
struct PrunedSoFar {
    /// This session's.
    own: usize,
    /// Ended sessions'.
    ended: usize,
    budget: u64,
    /// The project's stores' size after.
    after: u64,
}

impl Inner {
    /// Counts what [`keep_to_budget`] did, for [`SessionCheckpoints::take_notices`].
    fn note(&mut self, kept: Kept) {
        match kept {
            Kept::Within => {}
            Kept::Pruned(now) => {
                let (own, ended) = self.pruned.map_or((0, 0), |p| (p.own, p.ended));
                self.pruned = Some(PrunedSoFar {
                    own: own + now.own,
                    ended: ended + now.ended,
                    ..now
                });
            }
            Kept::Problem(message) => self.notices.push(message),
            Kept::Problems(now, messages) => {
                self.notices.extend(messages);
                self.note(*now);
            }
        }
    }
}

impl Inner {
    fn store(&mut self) -> Result<&mut CheckpointStore, String> {
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        let Some(dir) = self.dir.clone() else {
            return Err("this session keeps no checkpoints".into());
        };
        if self.store.is_none() {
            if self.live.is_none() {
                match StoreLock::take_for_session(&dir) {
                    Ok(Some(lock)) => self.live = Some(lock),
                    Ok(None) => {
                        return Err(self.fail("another cairn process is using its store".into()));
                    }
                    Err(e) => return Err(self.fail(format!("its store cannot be locked: {e}"))),
                }
            }
            let options = CheckpointOptions {
                skip: self.skip.clone(),
                journal_from: JOURNAL_FROM,
                journal_min_entries: JOURNAL_MIN_ENTRIES,
                expected_entries: self.read_tree_hint(),
                ..CheckpointOptions::default()
            };
            match CheckpointStore::open(&dir, &self.roots, options) {
                Ok(s) => self.store = Some(s),
                Err(e) => return Err(self.fail(e.to_string())),
            }
        }
        self.store
            .as_mut()
            .ok_or_else(|| "no checkpoint store".to_string())
    }

    /// Turns checkpoints off for this session because of `e`: the message.
    fn fail(&mut self, e: String) -> String {
        let why = format!("checkpoints are off for this session: {e}");
        tracing::warn!("{why}");
        self.broken = Some(why.clone());
        why
    }

    /// The store's directory and the project's data dir (`<project data>/<session>/rewind`).
    fn project(&self) -> Option<(PathBuf, PathBuf)> {
        let dir = self.dir.clone()?;
        let project = dir.parent()?.parent()?.to_path_buf();
        Some((dir, project))
    }
}

/// A handle on the session's checkpoints. Cheap to clone.
#[derive(Clone)]
pub struct SessionCheckpoints {
    inner: Arc<Mutex<Inner>>,
    /// The background recording still running, if any.
    pending: Arc<Mutex<Option<JoinHandle<()>>>>,
    /// Labels asked for in the background whose recording has not started: the next one to
    /// start takes them all, scans once, and names that state with each.
    queued: Arc<Mutex<Vec<String>>>,
}

impl std::fmt::Debug for SessionCheckpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionCheckpoints")
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl SessionCheckpoints {
    /// A session that keeps no checkpoints (tests, sub-sessions without a data dir).
    pub fn disabled() -> SessionCheckpoints {
        SessionCheckpoints::new(None, Vec::new(), Vec::new())
    }

    /// Checkpoints of `roots` in the store at `dir`, never walking into `skip`.
    pub fn new(dir: Option<PathBuf>, roots: Vec<PathBuf>, skip: Vec<PathBuf>) -> Self {
        SessionCheckpoints {
            inner: Arc::new(Mutex::new(Inner {
                dir,
                roots,
                skip,
                store: None,
                live: None,
                broken: None,
                budget: None,
                notices: Vec::new(),
                pruned: None,
                others: None,
                tree_hint: None,
            })),
            pending: Arc::new(Mutex::new(None)),
            queued: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// The store's directory, when checkpoints are kept (what a full disk could get back).
    pub fn store_dir(&self) -> Option<PathBuf> {
        lock(&self.inner).dir.clone()
    }

    /// Keep the store within `budget` bytes (`None`: the default for the tree).
    pub fn with_budget(self, budget: Option<u64>) -> Self {
        lock(&self.inner).budget = budget;
        self
    }

    /// What pruning the store did since the last call, a line each, for the person.
    pub fn take_notices(&self) -> Vec<String> {
        let mut inner = lock(&self.inner);
        let mut out = std::mem::take(&mut inner.notices);
        if let Some(p) = inner.pruned.take() {
            let mut what = Vec::new();
            if p.ended > 0 {
                what.push(format!("{} checkpoint(s) of ended sessions", p.ended));
            }
            if p.own > 0 {
                what.push(format!("its {} oldest checkpoint(s)", p.own));
            }
            let tail = if p.own > 0 {
                "; prompts before them can rewind the conversation only."
            } else {
                "."
            };
            out.push(format!(
                "The /rewind store was over its budget ({}): {} were pruned (the project's \
                 checkpoints take {} now){tail}",
                mb(p.budget),
                what.join(" and "),
                mb(p.after)
            ));
        }
        out
    }

    /// The size of the project's stores (all its sessions') and their budget, in bytes.
    pub async fn usage(&self) -> Result<(u64, u64), String> {
        let (budget, project) = {
            let inner = lock(&self.inner);
            (inner.budget, inner.project())
        };
        self.run(move |store| {
            let budget = budget.unwrap_or_else(|| default_budget(store.tree_bytes()));
            let others = project.map_or(0, |(own, project)| others_bytes(&project, &own));
            Ok((store.disk_usage() + others, budget))
        })
        .await
    }

    pub fn is_enabled(&self) -> bool {
        lock(&self.inner).dir.is_some()
    }

    /// Use the store at `dir` from now on (`/resume` of another session: its own store).
    pub async fn switch_to(&self, dir: &Path) {
        self.settle().await;
        let mut inner = lock(&self.inner);
        inner.dir = Some(dir.to_path_buf());
        inner.store = None;
        inner.live = None;
        inner.broken = None;
        // The store left is one of the others now: list them afresh.
        inner.others = None;
    }

    /// Wait for the background recording, if one runs.
    pub async fn settle(&self) {
        let pending = lock(&self.pending).take();
        if let Some(task) = pending {
            let _ = task.await;
        }
    }

    /// Record a checkpoint in the background; the next operation waits for it. A label asked
    /// for while the previous background recording has not started yet is recorded with it:
    /// one scan, after both were asked for, holds the state for both (the session's first
    /// checkpoint and the first prompt's, in a `-p` run).
    pub fn record_in_background(&self, label: String) {
        if !self.is_enabled() {
            return;
        }
        lock(&self.queued).push(label);
        let inner = Arc::clone(&self.inner);
        let queued = Arc::clone(&self.queued);
        let previous = lock(&self.pending).take();
        let task = tokio::spawn(async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            let labels = std::mem::take(&mut *lock(&queued));
            if labels.is_empty() {
                return; // an earlier recording took them
            }
            let _ = tokio::task::spawn_blocking(move || record(&inner, &labels)).await;
        });
        *lock(&self.pending) = Some(task);
    }

    /// Record a checkpoint now (after the background one) and wait for it.
    pub async fn record(&self, label: String) -> Result<Recorded, String> {
        // The background recording first: it may list the other stores for this one.
        self.settle().await;
        let (within, mut others) = {
            let mut inner = lock(&self.inner);
            (inner.within(), inner.others.take())
        };
        let (recorded, notice, others) = self
            .run(move |store| {
                let recorded = store.record(&label)?;
                let kept = keep_to_budget(store, &within, &mut others);
                Ok((recorded, kept, others))
            })
            .await?;
        let mut inner = lock(&self.inner);
        inner.others = others;
        inner.note(notice);
        Ok(recorded)
    }

    /// How many recordings looked at the tree ([`CheckpointStore::recordings_that_looked`]).
    #[doc(hidden)]
    pub async fn recordings_that_looked(&self) -> Result<u32, String> {
        self.run(|store| Ok(store.recordings_that_looked())).await
    }

    /// The readable checkpoints, oldest first.
    pub async fn list(&self) -> Result<Vec<CheckpointInfo>, String> {
        self.run(|store| Ok(store.list())).await
    }

    /// The files checkpoint `id` does not hold (over the size cap, unreadable, special).
    pub async fn not_covered(&self, id: CheckpointId) -> Result<Vec<NotCoveredFile>, String> {
        self.run(move |store| store.not_covered(id)).await
    }

    /// What restoring checkpoint `id` would do now.
    pub async fn plan(&self, id: CheckpointId) -> Result<RestorePlan, String> {
        self.run(move |store| store.plan_restore(id)).await
    }

    /// Restore checkpoint `id` (recording the current state first), then record the state it
    /// left, so the latest checkpoint is what the rewind made and a later rewind asks only
    /// about what changed after it.
    pub async fn restore(&self, id: CheckpointId, label: String) -> Result<Restored, String> {
        self.run(move |store| {
            let restored = store.restore(id, &label)?;
            store.record(&format!("after {label}"))?;
            Ok(restored)
        })
        .await
    }

    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut CheckpointStore) -> Result<T, CheckpointError> + Send + 'static,
    ) -> Result<T, String> {
        if !self.is_enabled() {
            return Err("this session keeps no checkpoints".into());
        }
        self.settle().await;
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || {
            let mut inner = lock(&inner);
            let store = inner.store()?;
            work(store).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| format!("the checkpoint task failed: {e}"))?
    }
}

/// Records one checkpoint named with every label of `labels` (see
/// [`SessionCheckpoints::record_in_background`]).
fn record(inner: &Mutex<Inner>, labels: &[String]) {
    let mut inner = lock(inner);
    let within = inner.within();
    let mut others = inner.others.take();
    let Ok(store) = inner.store() else { return };
    let Some((label, more)) = labels.split_first() else {
        return;
    };
    let recorded = store
        .record(label)
        .and_then(|_| more.iter().try_for_each(|l| store.name_latest(l).map(drop)));
    let kept = match recorded {
        Ok(()) => keep_to_budget(store, &within, &mut others),
        Err(e) => {
            tracing::warn!("checkpoint \"{label}\" not recorded: {e}");
            Kept::Problem(format!(
                "The checkpoint \"{label}\" was skipped: {e}. /rewind cannot put the files \
                 back to that point."
            ))
        }
    };
    inner.others = others;
    inner.note(kept);
    inner.update_tree_hint();
}

/// Checkpoints recorded between two listings of the project's other stores: in between their
/// size is the one last listed (they grow only with their own sessions' checkpoints, and the
/// budget is ten times the tree). A total over the budget is always listed again.
const LIST_OTHERS_EVERY: u32 = 16;

/// What keeping the project's stores to their budget did.
enum Kept {
    Within,
    Pruned(PrunedSoFar),
    Problem(String),
    /// Pruned or within, and stores that could not be pruned.
    Problems(Box<Kept>, Vec<String>),
}

/// What [`keep_to_budget`] needs to know besides the store.
struct Within {
    budget: Option<u64>,
    roots: Vec<PathBuf>,
    /// The store's directory and the project's data dir.
    project: Option<(PathBuf, PathBuf)>,
}

impl Inner {
    fn within(&self) -> Within {
        Within {
            budget: self.budget,
            roots: self.roots.clone(),
            project: self.project(),
        }
    }
}

/// Keeps the project's stores within the budget (by default ten times the working tree,
/// 50 MB to 1 GB): first prunes the stores of ended sessions (`store_report::free_ended`),
/// then this store's oldest checkpoints, never its latest. Stores left over the budget
/// are only logged.
fn keep_to_budget(
    store: &mut CheckpointStore,
    within: &Within,
    listed: &mut Option<(u64, u32)>,
) -> Kept {
    let budget = within
        .budget
        .unwrap_or_else(|| default_budget(store.tree_bytes()));
    let own = store.disk_usage();
    let list = || {
        within
            .project
            .as_ref()
            .map_or(0, |(dir, project)| others_bytes(project, dir))
    };
    let mut others = match *listed {
        Some((bytes, since)) if since < LIST_OTHERS_EVERY && own + bytes <= budget => {
            *listed = Some((bytes, since + 1));
            bytes
        }
        _ => {
            let bytes = list();
            *listed = Some((bytes, 1));
            bytes
        }
    };
    if own + others <= budget {
        return Kept::Within;
    }
    // Pruning changes the other stores: list them afresh next time.
    *listed = None;
    let mut ended = 0;
    let mut problems = Vec::new();
    if let Some((dir, project)) = within.project.as_ref().filter(|_| others > 0) {
        let (freed, removed, failed) =
            free_ended(project, &within.roots, dir, own + others - budget);
        others = others.saturating_sub(freed);
        ended = removed;
        problems = failed;
    }
    let kept = match store.prune(budget.saturating_sub(others)) {
        Ok(p) => {
            tracing::warn!(
                "checkpoint stores over their budget of {budget} bytes: {} checkpoint(s) of \
                 ended sessions and {} of this one pruned, {} to {} bytes",
                ended,
                p.removed.len(),
                p.before,
                p.after
            );
            if p.removed.is_empty() && ended == 0 {
                Kept::Within
            } else {
                Kept::Pruned(PrunedSoFar {
                    own: p.removed.len(),
                    ended,
                    budget,
                    after: p.after + others,
                })
            }
        }
        Err(e) => Kept::Problem(format!(
            "The /rewind store is over its budget and could not be pruned: {e}"
        )),
    };
    if problems.is_empty() {
        kept
    } else {
        Kept::Problems(Box::new(kept), problems)
    }
}
