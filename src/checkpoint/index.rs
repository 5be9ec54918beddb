//! The index of one checkpoint: every covered entry under the roots (regular files, symlinks,
//! directories) with the stat tuple it had and what it held, plus the files it could not cover.
//!
//! Entries are kept in one vector sorted by `(root, relative path bytes)`, so looking one up is
//! a binary search, comparing two indexes is a merge walk, and an index costs about a hundred
//! bytes per file plus its path (no map nodes, no absolute paths). In that order a directory
//! comes before everything under it, so creating in order and removing in reverse order is
//! always parents-first and children-first respectively. This module does no I/O.

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::{NotCoveredFile, join_rel};

/// A SHA-256 digest of a file's content.
pub type Hash = [u8; 32];

/// What `lstat` said of an entry. Two stats are equal when nothing a write, a rename over the
/// file (`sed -i`), an append or a `chmod` changes has changed. Directories keep only `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    pub size: u64,
    pub mtime_sec: i64,
    pub mtime_nsec: u32,
    pub ino: u64,
    pub mode: u32,
}

impl Stat {
    /// The permission bits a restore puts back (`rwx` for all, setuid/setgid/sticky).
    pub fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }
}

/// What an entry holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A regular file: the hash of its bytes (the bytes are in the object store).
    File(Hash),
    /// A symbolic link, recorded as its target, never followed.
    Symlink(Box<[u8]>),
    Dir,
}

/// One covered entry of a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Index into the checkpoint's roots.
    pub root: u16,
    /// The path relative to the root, as bytes (Unix paths need not be UTF-8).
    pub path: Box<[u8]>,
    pub stat: Stat,
    pub content: Content,
}

impl Entry {
    pub fn key(&self) -> (u16, &[u8]) {
        (self.root, &self.path)
    }

    /// Whether a restore would leave `self` as `other` is: same kind, content and mode bits.
    pub fn same_as(&self, other: &Entry) -> bool {
        self.content == other.content && self.stat.permissions() == other.stat.permissions()
    }
}

/// Why a file is not covered by a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uncovered {
    /// Larger than the size cap (its size at the scan).
    TooLarge,
    /// It could not be read (permissions, a race with its removal...).
    Unreadable,
    /// A FIFO, socket or device: never copied.
    Special,
}

/// A file under a root that a checkpoint does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotCovered {
    pub root: u16,
    pub path: Box<[u8]>,
    pub size: u64,
    pub why: Uncovered,
}

/// Every entry of one checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Index {
    entries: Vec<Entry>,
    not_covered: Vec<NotCovered>,
}

/// What changed from one index to the next: entries new or different, keys gone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    pub upserts: Vec<Entry>,
    pub removals: Vec<(u16, Box<[u8]>)>,
}

impl Index {
    /// An index of these entries, in any order; of two entries with one key the last wins.
    pub fn new(mut entries: Vec<Entry>, mut not_covered: Vec<NotCovered>) -> Index {
        entries.sort_by(|a, b| a.key().cmp(&b.key()));
        // Stable sort: keep the last of equal keys.
        entries.reverse();
        entries.dedup_by(|a, b| a.key() == b.key());
        entries.reverse();
        not_covered.sort_by(|a, b| (a.root, &a.path).cmp(&(b.root, &b.path)));
        not_covered.dedup_by(|a, b| (a.root, &a.path) == (b.root, &b.path));
        Index {
            entries,
            not_covered,
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn not_covered(&self) -> &[NotCovered] {
        &self.not_covered
    }

    pub fn get(&self, root: u16, path: &[u8]) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| e.key().cmp(&(root, path)))
            .ok()
            .map(|i| &self.entries[i])
    }

    pub fn get_not_covered(&self, root: u16, path: &[u8]) -> Option<&NotCovered> {
        self.not_covered
            .binary_search_by(|n| (n.root, &*n.path).cmp(&(root, path)))
            .ok()
            .map(|i| &self.not_covered[i])
    }

    /// Bytes this index holds on the heap, near enough (for the benchmark and for budgets).
    pub fn heap_bytes(&self) -> usize {
        let entries: usize = self
            .entries
            .iter()
            .map(|e| {
                e.path.len()
                    + match &e.content {
                        Content::Symlink(t) => t.len(),
                        _ => 0,
                    }
            })
            .sum();
        let uncovered: usize = self.not_covered.iter().map(|n| n.path.len()).sum();
        entries
            + uncovered
            + self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.not_covered.capacity() * std::mem::size_of::<NotCovered>()
    }

    /// What turns `self` into `next` (entries only; `not_covered` is stored whole).
    pub fn delta_to(&self, next: &Index) -> Delta {
        let mut delta = Delta::default();
        merge_walk(&self.entries, &next.entries, |old, new| match (old, new) {
            (Some(o), None) => delta.removals.push((o.root, o.path.clone())),
            (None, Some(n)) => delta.upserts.push(n.clone()),
            (Some(o), Some(n)) if o != n => delta.upserts.push(n.clone()),
            _ => {}
        });
        delta
    }

    /// `self` with `delta` applied, and these files not covered.
    pub fn apply(&self, delta: &Delta, not_covered: Vec<NotCovered>) -> Index {
        let mut entries = Vec::with_capacity(self.entries.len() + delta.upserts.len());
        let mut removals = delta.removals.iter().peekable();
        let mut upserts = delta.upserts.iter().peekable();
        for e in &self.entries {
            while let Some(u) = upserts.next_if(|u| u.key() < e.key()) {
                entries.push(u.clone());
            }
            while removals.next_if(|r| (r.0, &*r.1) < e.key()).is_some() {}
            if let Some(u) = upserts.next_if(|u| u.key() == e.key()) {
                entries.push(u.clone());
            } else if removals.next_if(|r| (r.0, &*r.1) == e.key()).is_none() {
                entries.push(e.clone());
            }
        }
        entries.extend(upserts.cloned());
        // Upserts come sorted from `delta_to`, but a stored delta is data: sort to be sure.
        Index::new(entries, not_covered)
    }
}

/// Calls `f` for each key of either sorted slice, in key order, with the entry on each side.
pub fn merge_walk<'a>(
    old: &'a [Entry],
    new: &'a [Entry],
    mut f: impl FnMut(Option<&'a Entry>, Option<&'a Entry>),
) {
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        let order = match (old.get(i), new.get(j)) {
            (Some(o), Some(n)) => o.key().cmp(&n.key()),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                f(old.get(i), None);
                i += 1;
            }
            Ordering::Greater => {
                f(None, new.get(j));
                j += 1;
            }
            Ordering::Equal => {
                f(old.get(i), new.get(j));
                i += 1;
                j += 1;
            }
        }
    }
}

/// Whether `rel` is a path a checkpoint may store: relative, non-empty, without NUL, made of
/// plain names only (no `..`, `.` or root).
pub fn plain_path(rel: &[u8]) -> bool {
    !rel.is_empty()
        && !rel.contains(&0)
        && Path::new(OsStr::from_bytes(rel))
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// The files `index` lists as not covered, with their roots joined.
pub(super) fn not_covered_files(roots: &[PathBuf], index: &Index) -> Vec<NotCoveredFile> {
    index
        .not_covered()
        .iter()
        .filter_map(|n| {
            let root = roots.get(usize::from(n.root))?;
            Some(NotCoveredFile {
                path: join_rel(root, &n.path),
                size: n.size,
                why: n.why,
            })
        })
        .collect()
}
