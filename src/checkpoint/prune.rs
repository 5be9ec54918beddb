//! What a journal-driven checkpoint looks at again, and how its findings replace the previous
//! index: the pure part of the change journal (no I/O, so it is tested on its own).
//!
//! A [`Prune`] names, for one root, the entries that may have changed (`dirty`). Of those that
//! were directories, the `kept` ones were watched since the previous index was taken and were
//! not replaced since (no create, delete or rename of that name): if they are still
//! directories, what lies under them is unchanged except where it is named itself. Every other
//! dirty directory is new to the journal (created, renamed in, swapped) and is walked whole.
//! The walk goes from the root down only through the directories on the way to a dirty entry
//! (`ancestors`), so every entry it yields gets exactly the ignore verdict a full walk gives:
//! the same walker reads the same ignore files on the same way down.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use super::index::{Content, Entry, Index, NotCovered};

/// Why a checkpoint stated every file rather than only what the change journal named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FullScanReason {
    /// The journal is off (`CheckpointOptions::journal`), or this platform has none (it needs
    /// Linux's inotify).
    Off,
    /// The journal is not started yet: few checkpoints so far, of a small tree
    /// (`CheckpointOptions::journal_from`).
    Deferred,
    /// No checkpoint recorded with the journal running yet: the first one since the store was
    /// opened or its roots changed, or the previous one failed.
    NoBaseline,
    /// The watcher could not be set up, or stopped working (the inotify watch limit, the
    /// `journal_max_dirs` option, an unexpected error): every checkpoint from now on.
    WatcherFailed,
    /// The kernel's event queue overflowed, so events were lost.
    Overflow,
    /// An ignore file (`.gitignore`, `.ignore`, a git exclude file, the global excludes), a
    /// git config naming one, or a `.git` changed: what is ignored may have changed anywhere.
    IgnoreRules,
    /// The root is on, or holds, a filesystem that reports no events for changes made
    /// elsewhere (NFS, SMB, FUSE...), or the root itself was moved, removed or unmounted.
    Unwatchable,
    /// The previous scan of this root had problems (unreadable files or directories): they are
    /// looked at, and reported, again.
    Problems,
    /// Every `journal_full_every` checkpoints, as insurance.
    Periodic,
    /// So many changes that a full scan is as cheap.
    ManyChanges,
}

/// How a checkpoint (or a restore's look at the files now) scanned the roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanKind {
    /// Every file was stated, for this reason (the first root's that applied).
    Full(FullScanReason),
    /// Only the entries the change journal named (and what lies under new directories).
    Journal { paths: usize },
}

/// What a scan does with one root.
#[derive(Debug, Clone)]
pub enum RootPlan {
    Full(FullScanReason),
    Changes(Arc<Prune>),
}

impl RootPlan {
    /// The scan of these plans, for a report.
    pub fn kind(plans: &[RootPlan]) -> ScanKind {
        let mut paths = 0;
        for plan in plans {
            match plan {
                RootPlan::Full(why) => return ScanKind::Full(*why),
                RootPlan::Changes(p) => paths += p.dirty.len(),
            }
        }
        ScanKind::Journal { paths }
    }

    /// Whether the journal saw no change under any root.
    pub fn nothing_changed(plans: &[RootPlan]) -> bool {
        plans
            .iter()
            .all(|p| matches!(p, RootPlan::Changes(c) if c.is_empty()))
    }

    pub fn all_full(plans: &[RootPlan]) -> bool {
        plans.iter().all(|p| matches!(p, RootPlan::Full(_)))
    }
}

/// The entries of one root to look at again (paths relative to the root, never empty).
#[derive(Debug, Default)]
pub struct Prune {
    dirty: HashSet<Box<[u8]>>,
    kept: HashSet<Box<[u8]>>,
    ancestors: HashSet<Box<[u8]>>,
}

impl Prune {
    /// `dirty` entries, of which `is_kept` says which were watched directories not replaced.
    pub fn new(dirty: HashSet<Box<[u8]>>, is_kept: impl Fn(&[u8]) -> bool) -> Prune {
        let kept = dirty.iter().filter(|d| is_kept(d)).cloned().collect();
        let mut ancestors: HashSet<Box<[u8]>> = HashSet::new();
        for d in &dirty {
            let mut end = d.len();
            while let Some(i) = memchr::memrchr(b'/', &d[..end]) {
                if !ancestors.insert(d[..i].into()) {
                    break;
                }
                end = i;
            }
        }
        if !dirty.is_empty() {
            ancestors.insert(Box::default());
        }
        Prune {
            dirty,
            kept,
            ancestors,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.dirty.is_empty()
    }

    /// A dirty entry that is walked whole if it is a directory.
    fn is_new(&self, rel: &[u8]) -> bool {
        self.dirty.contains(rel) && !self.kept.contains(rel)
    }

    /// Whether `rel` lies under a dirty entry walked whole.
    fn under_new(&self, rel: &[u8]) -> bool {
        let mut end = rel.len();
        while let Some(i) = memchr::memrchr(b'/', &rel[..end]) {
            if self.is_new(&rel[..i]) {
                return true;
            }
            end = i;
        }
        false
    }

    /// Whether the scan records `rel` as an entry (replacing what the previous index said).
    pub fn records(&self, rel: &[u8]) -> bool {
        self.dirty.contains(rel) || self.under_new(rel)
    }

    /// Whether the walk yields `rel` at all: an entry it records, or a directory on the way.
    pub fn accepts(&self, rel: &[u8]) -> bool {
        self.ancestors.contains(rel) || self.records(rel)
    }

    /// Whether the walk goes into directory `rel`.
    pub fn descends(&self, rel: &[u8]) -> bool {
        self.ancestors.contains(rel) || self.is_new(rel) || self.under_new(rel)
    }

    /// Whether directory `rel`, if the walk meets one there, needs a watch of its own.
    pub fn needs_watch(&self, rel: &[u8]) -> bool {
        self.is_new(rel) || self.under_new(rel)
    }
}

/// The index of the roots now: `previous`, with what the walk found (`entries`,
/// `not_covered`, sorted) in place of everything it looked at again. Roots planned `Full`
/// come wholly from the walk.
pub fn merge(
    previous: &Index,
    plans: &[RootPlan],
    entries: Vec<Entry>,
    not_covered: Vec<NotCovered>,
) -> Index {
    let prev = previous.entries();
    let prev_nc = previous.not_covered();
    let mut drop = vec![false; prev.len()];
    let mut drop_nc = vec![false; prev_nc.len()];
    for (r, plan) in plans.iter().enumerate() {
        let Ok(r) = u16::try_from(r) else { break };
        match plan {
            RootPlan::Full(_) => {
                mark(&mut drop, root_range(prev, r));
                mark(&mut drop_nc, root_range(prev_nc, r));
            }
            RootPlan::Changes(p) => {
                for d in &p.dirty {
                    if let Ok(i) = prev.binary_search_by(|e| e.key().cmp(&(r, d))) {
                        drop[i] = true;
                    }
                    if let Ok(i) = prev_nc.binary_search_by(|n| n.key().cmp(&(r, d))) {
                        drop_nc[i] = true;
                    }
                    let still_dir = p.kept.contains(d)
                        && entries
                            .binary_search_by(|e| e.key().cmp(&(r, d)))
                            .is_ok_and(|i| entries[i].content == Content::Dir);
                    if !still_dir {
                        let mut prefix = d.to_vec();
                        prefix.push(b'/');
                        mark(&mut drop, prefix_range(prev, r, &prefix));
                        mark(&mut drop_nc, prefix_range(prev_nc, r, &prefix));
                    }
                }
            }
        }
    }
    let mut all: Vec<Entry> = prev
        .iter()
        .zip(&drop)
        .filter(|(_, d)| !**d)
        .map(|(e, _)| e.clone())
        .collect();
    all.extend(entries);
    let mut all_nc: Vec<NotCovered> = prev_nc
        .iter()
        .zip(&drop_nc)
        .filter(|(_, d)| !**d)
        .map(|(n, _)| n.clone())
        .collect();
    all_nc.extend(not_covered);
    Index::new(all, all_nc)
}

fn mark(drop: &mut [bool], range: Range<usize>) {
    for d in &mut drop[range] {
        *d = true;
    }
}

/// Entries and files not covered alike: sorted by `(root, path)`.
trait Keyed {
    fn key(&self) -> (u16, &[u8]);
}

impl Keyed for Entry {
    fn key(&self) -> (u16, &[u8]) {
        (self.root, &self.path)
    }
}

impl Keyed for NotCovered {
    fn key(&self) -> (u16, &[u8]) {
        (self.root, &self.path)
    }
}

/// The items of root `r` in a sorted slice.
fn root_range<T: Keyed>(items: &[T], r: u16) -> Range<usize> {
    let start = items.partition_point(|i| i.key().0 < r);
    let end = items.partition_point(|i| i.key().0 <= r);
    start..end
}

/// The items of root `r` whose path starts with `prefix`: contiguous in byte order.
fn prefix_range<T: Keyed>(items: &[T], r: u16, prefix: &[u8]) -> Range<usize> {
    let start = items.partition_point(|i| i.key() < (r, prefix));
    let len = items[start..]
        .iter()
        .take_while(|i| {
            let (root, path) = i.key();
            root == r && path.starts_with(prefix)
        })
        .count();
    start..start + len
}
