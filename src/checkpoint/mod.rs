//! Checkpoints of the working directories, and rewinding to one: the storage and restore engine
//! behind `/rewind`. It covers every change to the files, whoever made it (an edit tool, a
//! shell command, the person), and needs no git.
//!
//! A [`CheckpointStore`] lives in a directory the caller gives (the session's data dir). It
//! records the state of a set of roots (gitignored files, `.git` and files over a size cap
//! left out, symlinks kept as links) as an index of `(path, size, mtime, inode, mode)` and a
//! content hash per file; the bytes of new or changed files go into a content-addressed,
//! zstd-compressed object store, so a checkpoint costs only what changed. Each checkpoint is
//! one file (`checkpoints/NNNNNNNNNN.cp`): a full index, or the changes from its parent, with a
//! digest over the whole file, written to a temp file and renamed, so a checkpoint torn by a
//! crash is recognised and ignored (reported by [`CheckpointStore::damaged`]), never misread.
//! On Linux a change journal (`journal.rs`: inotify watches on the covered directories) tells
//! each checkpoint which entries had events since the previous one, so only those are stated;
//! it falls back to a full scan whenever it cannot be trusted ([`FullScanReason`]).
//!
//! [`CheckpointStore::plan_restore`] says what rewinding to a checkpoint would do, file by
//! file, and whether each file is still what the latest checkpoint recorded (if not, someone
//! changed it since and the UI should ask). [`CheckpointStore::restore`] first checks the
//! checkpoint (its roots must be the session's, its paths plain, its contents readable:
//! `verify.rs`) and records the current state (so a rewind can itself be rewound), and then
//! puts every file back, one atomic write at a time, never touching anything outside the
//! session's roots; a checkpoint that fails a check is refused whole. It knows nothing of the agent:
//! the caller decides when to record and what to call each checkpoint.

mod aliases;
mod budget;
mod codec;
mod describe;
mod durable;
mod index;
#[cfg(target_os = "linux")]
mod journal;
#[cfg(not(target_os = "linux"))]
#[path = "journal_none.rs"]
mod journal;
#[cfg(target_os = "linux")]
mod journal_inputs;
mod objects;
mod prune;
mod restore;
mod scan;
mod store;
#[cfg(test)]
mod tests;
mod verify;

use std::io;
use std::path::{Path, PathBuf};

pub use budget::{Pruned, default_budget, dir_bytes, is_store, store_bytes};
pub use index::Uncovered;
pub use prune::{FullScanReason, ScanKind};
pub use restore::{EntryKind, PlannedFile, RestoreAction, RestorePlan, Restored};
pub use store::{CheckpointStore, DamagedCheckpoint, Recorded};

/// The id of a checkpoint: increasing within a store, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CheckpointId(pub u64);

impl std::fmt::Display for CheckpointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// How a store records.
#[derive(Debug, Clone)]
pub struct CheckpointOptions {
    /// Files larger than this are not covered (listed in the checkpoint instead).
    pub max_file_size: u64,
    /// Every this many checkpoints one holds the full index rather than a delta, so reading
    /// any checkpoint replays at most this many files.
    pub full_every: u32,
    /// Threads for walking and hashing.
    pub threads: usize,
    /// Directories never walked into besides the store's own (the session's data, when it
    /// lies under a root: a rewind must never put back an old transcript).
    pub skip: Vec<PathBuf>,
    /// Keep a change journal (`journal.rs`, Linux only), so a checkpoint states only what
    /// changed since the previous one instead of every file. Off: every checkpoint is a full
    /// scan (tests compare the two).
    pub journal: bool,
    /// With the journal, every this many checkpoints one is still a full scan: insurance
    /// against changes inotify never reports (see `journal.rs`). 0: never.
    pub journal_full_every: u32,
    /// The most directories the journal watches (inotify watches are a per-user resource);
    /// past it, every checkpoint is a full scan.
    pub journal_max_dirs: usize,
    /// The journal starts with the `journal_from`-th checkpoint this store records (1: with
    /// the first), or earlier once the latest checkpoint holds `journal_min_entries` entries;
    /// before that every checkpoint is a full scan ([`FullScanReason::Deferred`]). Closing an
    /// inotify instance that had watches waits for the kernel to free them (~15 ms measured),
    /// more than a few full scans of a small tree cost: a short run over a small tree (`-p`)
    /// never starts it.
    pub journal_from: u32,
    pub journal_min_entries: usize,
    /// How many entries the tree is expected to hold (an earlier session's count), to size
    /// the first walk, which has no previous index to go by: a small tree is walked on one
    /// thread (`scan.rs`). `None`: unknown, walked in parallel.
    pub expected_entries: Option<usize>,
}

impl Default for CheckpointOptions {
    fn default() -> Self {
        CheckpointOptions {
            max_file_size: 5 * 1024 * 1024,
            full_every: 32,
            threads: std::thread::available_parallelism()
                .map(|n| n.get().min(4))
                .unwrap_or(2),
            skip: Vec::new(),
            journal: true,
            journal_full_every: 20,
            journal_max_dirs: 32_768,
            journal_from: 1,
            journal_min_entries: 0,
            expected_entries: None,
        }
    }
}

/// What the list of checkpoints shows of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    pub id: CheckpointId,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// What the caller called it ("before prompt 3", "before rewind to 2").
    pub label: String,
    pub roots: Vec<PathBuf>,
}

/// A file a checkpoint does not hold, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotCoveredFile {
    pub path: PathBuf,
    pub size: u64,
    pub why: Uncovered,
}

/// Something that went wrong with one file; the rest of the work went on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    pub path: PathBuf,
    pub message: String,
}

impl FileProblem {
    pub fn new(path: PathBuf, err: &io::Error) -> FileProblem {
        FileProblem {
            path,
            message: err.to_string(),
        }
    }
}

impl std::fmt::Display for FileProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("checkpoint store {path}: {source}")]
    Store { path: PathBuf, source: io::Error },
    #[error("working directory {path} cannot be checkpointed: {source}")]
    Root { path: PathBuf, source: io::Error },
    #[error("no checkpoint {0} in this session")]
    NoSuchCheckpoint(CheckpointId),
    #[error("checkpoint {id} cannot be read: {why}")]
    Damaged { id: CheckpointId, why: String },
    /// A check failed before anything was touched: the checkpoint is refused whole.
    #[error("checkpoint {id} is refused and nothing was restored: {why}")]
    Refused { id: CheckpointId, why: String },
}

/// `root` joined with a relative path the scan produced (never absolute, never `..`).
fn join_rel(root: &Path, rel: &[u8]) -> PathBuf {
    root.join(codec::bytes_path(rel))
}
