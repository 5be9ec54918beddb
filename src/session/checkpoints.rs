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

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::task::JoinHandle;

use crate::checkpoint::{
    CheckpointError, CheckpointId, CheckpointInfo, CheckpointOptions, CheckpointStore,
    NotCoveredFile, Recorded, RestorePlan, Restored, default_budget,
};

/// The store's directory inside a session's data dir.
pub const CHECKPOINT_DIR: &str = "rewind";

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
    /// Why the store cannot be used, once it failed to open.
    broken: Option<String>,
    /// The store's size budget in bytes; `None`: [`default_budget`] of the tree.
    budget: Option<u64>,
    /// Checkpoints skipped, or a store that could not be pruned, since the person was last
    /// told.
    notices: Vec<String>,
    /// Checkpoints pruned since the person was last told: how many, the budget, the size
    /// after.
    pruned: Option<(usize, u64, u64)>,
}

impl Inner {
    /// Counts what [`keep_to_budget`] did, for [`SessionCheckpoints::take_notices`].
    fn note(&mut self, kept: Kept) {
        match kept {
            Kept::Within => {}
            Kept::Pruned {
                removed,
                budget,
                after,
            } => {
                let before = self.pruned.map_or(0, |p| p.0);
                self.pruned = Some((before + removed, budget, after));
            }
            Kept::Problem(message) => self.notices.push(message),
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
            let options = CheckpointOptions {
                skip: self.skip.clone(),
                ..CheckpointOptions::default()
            };
            match CheckpointStore::open(&dir, &self.roots, options) {
                Ok(s) => self.store = Some(s),
                Err(e) => {
                    let why = format!("checkpoints are off for this session: {e}");
                    tracing::warn!("{why}");
                    self.broken = Some(why.clone());
                    return Err(why);
                }
            }
        }
        self.store
            .as_mut()
            .ok_or_else(|| "no checkpoint store".to_string())
    }
}

/// A handle on the session's checkpoints. Cheap to clone.
#[derive(Clone)]
pub struct SessionCheckpoints {
    inner: Arc<Mutex<Inner>>,
    /// The background recording still running, if any.
    pending: Arc<Mutex<Option<JoinHandle<()>>>>,
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
                broken: None,
                budget: None,
                notices: Vec::new(),
                pruned: None,
            })),
            pending: Arc::new(Mutex::new(None)),
        }
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
        if let Some((removed, budget, after)) = inner.pruned.take() {
            out.push(format!(
                "The /rewind store was over its budget ({}): its {removed} oldest checkpoint(s) \
                 were pruned (it takes {} now); prompts before them can rewind the \
                 conversation only.",
                mb(budget),
                mb(after)
            ));
        }
        out
    }

    /// The store's size and its budget, in bytes.
    pub async fn usage(&self) -> Result<(u64, u64), String> {
        let budget = lock(&self.inner).budget;
        self.run(move |store| {
            let budget = budget.unwrap_or_else(|| default_budget(store.tree_bytes()));
            Ok((store.disk_usage(), budget))
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
        inner.broken = None;
    }

    /// Wait for the background recording, if one runs.
    pub async fn settle(&self) {
        let pending = lock(&self.pending).take();
        if let Some(task) = pending {
            let _ = task.await;
        }
    }

    /// Record a checkpoint in the background; the next operation waits for it.
    pub fn record_in_background(&self, label: String) {
        if !self.is_enabled() {
            return;
        }
        let inner = Arc::clone(&self.inner);
        let previous = lock(&self.pending).take();
        let task = tokio::spawn(async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            let _ = tokio::task::spawn_blocking(move || record(&inner, &label)).await;
        });
        *lock(&self.pending) = Some(task);
    }

    /// Record a checkpoint now (after the background one) and wait for it.
    pub async fn record(&self, label: String) -> Result<Recorded, String> {
        let budget = lock(&self.inner).budget;
        let (recorded, notice) = self
            .run(move |store| {
                let recorded = store.record(&label)?;
                Ok((recorded, keep_to_budget(store, budget)))
            })
            .await?;
        lock(&self.inner).note(notice);
        Ok(recorded)
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

fn record(inner: &Mutex<Inner>, label: &str) {
    let mut inner = lock(inner);
    let budget = inner.budget;
    let Ok(store) = inner.store() else { return };
    let kept = match store.record(label) {
        Ok(_) => keep_to_budget(store, budget),
        Err(e) => {
            tracing::warn!("checkpoint \"{label}\" not recorded: {e}");
            Kept::Problem(format!(
                "The checkpoint \"{label}\" was skipped: {e}. /rewind cannot put the files \
                 back to that point."
            ))
        }
    };
    inner.note(kept);
}

/// What keeping a store to its budget did.
enum Kept {
    Within,
    Pruned {
        removed: usize,
        budget: u64,
        after: u64,
    },
    Problem(String),
}

/// Prunes the oldest checkpoints while the store is over `budget` (by default ten times the
/// working tree, 50 MB to 1 GB). A store left over its budget with only its latest checkpoint
/// is only logged.
fn keep_to_budget(store: &mut CheckpointStore, budget: Option<u64>) -> Kept {
    let budget = budget.unwrap_or_else(|| default_budget(store.tree_bytes()));
    if store.disk_usage() <= budget {
        return Kept::Within;
    }
    match store.prune(budget) {
        Ok(p) => {
            tracing::warn!(
                "checkpoint store over its budget of {budget} bytes: {} checkpoint(s) pruned, \
                 {} to {} bytes",
                p.removed.len(),
                p.before,
                p.after
            );
            if p.removed.is_empty() {
                return Kept::Within;
            }
            Kept::Pruned {
                removed: p.removed.len(),
                budget,
                after: p.after,
            }
        }
        Err(e) => Kept::Problem(format!(
            "The /rewind store is over its budget and could not be pruned: {e}"
        )),
    }
}

/// Bytes in megabytes, one decimal.
pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
}
