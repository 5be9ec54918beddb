//! The store's size budget: how much disk a store uses, the default budget for a working
//! tree, and pruning a store down to a budget — its oldest checkpoints first, never the
//! latest — with the content packs no remaining checkpoint needs removed.
//!
//! Pruning keeps every remaining checkpoint readable: the first one kept, when it is a delta
//! on a checkpoint being removed, is written again as a full index (atomically, as a new
//! checkpoint is) before anything is removed. A pack is removed only when none of its
//! contents is named by a remaining checkpoint (a pack with some live contents stays whole:
//! packs are never rewritten).

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use super::codec::{BodyRef, Header};
use super::index::{Content, Hash};
use super::store::{CHECKPOINTS, CheckpointStore, PACKS, file_name};
use super::{CheckpointError, CheckpointId};

const MB: u64 = 1_000_000;

/// The default budget for a working tree of `tree_bytes`: ten times its size, at least 50 MB
/// and at most 1 GB.
pub fn default_budget(tree_bytes: u64) -> u64 {
    tree_bytes.saturating_mul(10).clamp(50 * MB, 1_000 * MB)
}

/// Bytes the files under `dir` take (not following symlinks).
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// What pruning did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// The checkpoints removed, oldest first.
    pub removed: Vec<CheckpointId>,
    pub packs_removed: usize,
    /// The store's size before and after, in bytes.
    pub before: u64,
    pub after: u64,
}

/// Bytes the store in `dir` takes on disk (checkpoint files and content packs), without
/// opening it.
pub fn store_bytes(dir: &Path) -> u64 {
    dir_bytes(&dir.join(CHECKPOINTS)) + dir_bytes(&dir.join(PACKS))
}

/// Whether `dir` holds a checkpoint store (its folder of checkpoints).
pub fn is_store(dir: &Path) -> bool {
    dir.join(CHECKPOINTS).is_dir()
}

impl CheckpointStore {
    /// Bytes the store takes on disk (checkpoint files and content packs).
    pub fn disk_usage(&self) -> u64 {
        store_bytes(&self.dir)
    }

    /// Entries of the latest checkpoint, when its index is in memory (recorded or read).
    pub fn tree_entries(&self) -> Option<usize> {
        self.latest.as_ref().map(|(_, index)| index.entries().len())
    }

    /// The bytes of the files the latest checkpoint covers (the working tree's size).
    pub fn tree_bytes(&mut self) -> u64 {
        let Some(id) = self.latest_id() else { return 0 };
        self.read(id)
            .map(|(_, index)| index.entries().iter().map(|e| e.stat.size).sum())
            .unwrap_or(0)
    }

    /// Removes the oldest checkpoints (never the latest) until the store fits in `budget`
    /// bytes, and the packs no remaining checkpoint needs.
    pub fn prune(&mut self, budget: u64) -> Result<Pruned, CheckpointError> {
        self.prune_to(budget, true)
    }

    /// [`Self::prune`], which may also remove the latest checkpoint unless `keep_latest`
    /// (the store of a session that has ended may go entirely).
    pub fn prune_to(&mut self, budget: u64, keep_latest: bool) -> Result<Pruned, CheckpointError> {
        let keep = usize::from(keep_latest);
        let before = self.disk_usage();
        let mut pruned = Pruned {
            before,
            after: before,
            ..Pruned::default()
        };
        while pruned.after > budget && self.known.len() > keep {
            let Some(&oldest) = self.known.keys().next() else {
                break;
            };
            self.remove_oldest(oldest)?;
            pruned.removed.push(CheckpointId(oldest));
            pruned.packs_removed += self.remove_dead_packs()?;
            pruned.after = self.disk_usage();
        }
        Ok(pruned)
    }

    /// Removes checkpoint `oldest`, first making the checkpoint based on it a full index.
    fn remove_oldest(&mut self, oldest: u64) -> Result<(), CheckpointError> {
        let children: Vec<u64> = self
            .known
            .iter()
            .filter(|(_, k)| k.header.parent == Some(oldest))
            .map(|(&id, _)| id)
            .collect();
        for child in children {
            let (_, index) = self.read(CheckpointId(child))?;
            let Some(known) = self.known.get(&child) else {
                continue;
            };
            let header = Header {
                parent: None,
                ..known.header.clone()
            };
            self.commit(&header, BodyRef::Full(&index))?;
            if let Some(k) = self.known.get_mut(&child) {
                k.header.parent = None;
            }
        }
        let path = self.dir.join(CHECKPOINTS).join(file_name(oldest));
        fs::remove_file(&path).map_err(|source| CheckpointError::Store { path, source })?;
        self.known.remove(&oldest);
        // Depths follow the chains as they are now.
        let ids: Vec<u64> = self.known.keys().copied().collect();
        for id in ids {
            let depth = self
                .known
                .get(&id)
                .and_then(|k| k.header.parent)
                .and_then(|p| self.known.get(&p))
                .map_or(0, |p| p.depth + 1);
            if let Some(k) = self.known.get_mut(&id) {
                k.depth = depth;
            }
        }
        Ok(())
    }

    /// Removes the packs none of whose contents a remaining checkpoint names.
    fn remove_dead_packs(&mut self) -> Result<usize, CheckpointError> {
        let mut live: HashSet<Hash> = HashSet::new();
        let ids: Vec<u64> = self.known.keys().copied().collect();
        for id in ids {
            let (_, index) = self.read(CheckpointId(id))?;
            live.extend(index.entries().iter().filter_map(|e| match e.content {
                Content::File(h) => Some(h),
                _ => None,
            }));
        }
        let mut removed = 0;
        for (pack, hashes) in self.objects.packs() {
            if hashes.iter().all(|h| !live.contains(h)) {
                let path = self.dir.join(PACKS);
                self.objects
                    .remove_pack(pack)
                    .map_err(|source| CheckpointError::Store { path, source })?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}
