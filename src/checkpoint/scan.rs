//! Scanning the roots into an [`Index`]: a parallel walk with the `ignore` crate (honouring
//! `.gitignore`, `.ignore` and git's excludes even outside a git repository, never entering a
//! `.git` or the store's own directory, never following a symlink), one `lstat` per entry, and
//! file contents read and hashed only where the stat tuple differs from the previous index.
//!
//! With the change journal, a root's walk is pruned to the entries it names (`prune.rs`) and
//! every directory the walk enters for the first time is watched before it is read.
//!
//! Files over the size cap, unreadable files and special files are listed as not covered.
//! A file is read once: its hash comes from the bytes read, its stat from `fstat` on the same
//! handle after the read, so a file changing under the scan is seen as changed next time.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};

use super::codec::path_bytes;
use super::durable::map_parallel;
use super::index::{Content, Entry, Hash, Index, NotCovered, Stat, Uncovered};
use super::journal::{WalkNotes, Watched};
use super::objects::{ObjectStore, hash_bytes};
use super::prune::{Prune, RootPlan, merge};
use super::{FileProblem, join_rel};

/// What a scan found before any content was read.
#[derive(Default)]
struct Found {
    entries: Vec<Entry>,
    not_covered: Vec<NotCovered>,
    problems: Vec<FileProblem>,
    notes: WalkNotes,
}

/// A placeholder hash for files not read yet; replaced before the index leaves this module.
const UNREAD: Hash = [0; 32];

/// The roots as they are now.
pub struct Scanned {
    pub index: Index,
    pub problems: Vec<FileProblem>,
    /// Contents written to the store now (not durable yet).
    pub stored: Vec<Hash>,
    pub notes: WalkNotes,
}

pub struct ScanSetup<'a> {
    pub roots: &'a [PathBuf],
    /// Directories never walked into (the store itself, when it lies under a root).
    pub skip: &'a [PathBuf],
    pub max_file_size: u64,
    pub threads: usize,
    /// Per root, what to look at; `None`: everything.
    pub plans: Option<&'a [RootPlan]>,
    /// Where directories are watched as the walk meets them (the journal's).
    pub watched: Option<&'a Arc<Watched>>,
    /// When the scan that produced the previous index started (`None`: unknown, every file
    /// is racy). A file whose mtime is not [`RACY_WINDOW`] older than that may have been
    /// written again after it was read with the same size and mtime (timestamps are coarse):
    /// it is read again rather than trusted, as git does with racily clean entries.
    pub racy_since: Option<SystemTime>,
}

/// How much older than the previous scan a file's mtime must be for its stat to be trusted:
/// filesystem timestamps are only as fine as the kernel tick, or 2 s on FAT.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Whether `stat` could hide a rewrite made after a scan that started at `since`.
fn racy(stat: &Stat, since: Option<SystemTime>) -> bool {
    let Some(bound) = since.and_then(|s| s.checked_sub(RACY_WINDOW)) else {
        return true;
    };
    let Ok(bound) = bound.duration_since(UNIX_EPOCH) else {
        return true;
    };
    let secs = i64::try_from(bound.as_secs()).unwrap_or(i64::MAX);
    (stat.mtime_sec, stat.mtime_nsec) >= (secs, bound.subsec_nanos())
}

/// Below this many entries in the previous index a walk takes one thread: the parallel walker's
/// idle threads poll in 1 ms sleeps, a floor larger than the whole walk of a small tree.
const SMALL_TREE: usize = 1_000;

impl ScanSetup<'_> {
    /// One walking thread for a tree whose previous index held `entries` (`None`: no previous
    /// index) below [`SMALL_TREE`].
    pub fn sized(mut self, entries: Option<usize>) -> Self {
        if entries.is_some_and(|n| n < SMALL_TREE) {
            self.threads = 1;
        }
        self
    }
}

/// The current state of the roots. Files whose stat matches `previous` keep its hash; the
/// others are read and hashed, and stored in `objects` when given. With `setup.plans`, only
/// what they name is looked at, the rest of `previous` is taken as it is.
pub fn scan(setup: &ScanSetup<'_>, previous: &Index, objects: Option<&ObjectStore>) -> Scanned {
    let mut found = walk(setup);
    found.entries.sort_by(|a, b| a.key().cmp(&b.key()));
    // Which files need reading: a merge walk against the previous index.
    let mut to_read = Vec::new();
    {
        let (mut i, prev) = (0, previous.entries());
        for (n, e) in found.entries.iter_mut().enumerate() {
            if !matches!(e.content, Content::File(_)) {
                continue;
            }
            while i < prev.len() && prev[i].key() < e.key() {
                i += 1;
            }
            match prev.get(i) {
                Some(p)
                    if p.key() == e.key()
                        && p.stat == e.stat
                        && !racy(&p.stat, setup.racy_since) =>
                {
                    if let Content::File(h) = p.content {
                        e.content = Content::File(h);
                        continue;
                    }
                    to_read.push(n);
                }
                _ => to_read.push(n),
            }
        }
    }
    let results = read_all(setup, &found.entries, &to_read, objects);
    let mut dropped = vec![false; found.entries.len()];
    let mut stored = Vec::new();
    for (n, result) in to_read.into_iter().zip(results) {
        let e = &mut found.entries[n];
        match result {
            Ok((hash, stat, written)) => {
                if written {
                    stored.push(hash);
                }
                e.content = Content::File(hash);
                e.stat = stat;
            }
            // Gone since the walk: it is simply not there any more.
            Err(err) if err.kind() == io::ErrorKind::NotFound => dropped[n] = true,
            Err(err) => {
                dropped[n] = true;
                let path = join_rel(&setup.roots[usize::from(e.root)], &e.path);
                found.problems.push(FileProblem::new(path, &err));
                found.not_covered.push(NotCovered {
                    root: e.root,
                    path: e.path.clone(),
                    size: e.stat.size,
                    why: Uncovered::Unreadable,
                });
            }
        }
    }
    let mut n = 0;
    found.entries.retain(|_| {
        n += 1;
        !dropped[n - 1]
    });
    let index = match setup.plans {
        Some(plans) if !RootPlan::all_full(plans) => {
            found
                .not_covered
                .sort_by(|a, b| (a.root, &a.path).cmp(&(b.root, &b.path)));
            merge(previous, plans, found.entries, found.not_covered)
        }
        _ => Index::new(found.entries, found.not_covered),
    };
    Scanned {
        index,
        problems: found.problems,
        stored,
        notes: found.notes,
    }
}

/// Reads, hashes (and stores) the files at `which`, on up to `threads` threads.
fn read_all(
    setup: &ScanSetup<'_>,
    entries: &[Entry],
    which: &[usize],
    objects: Option<&ObjectStore>,
) -> Vec<io::Result<(Hash, Stat, bool)>> {
    let one = |n: &usize| {
        let e = &entries[*n];
        read_one(
            &join_rel(&setup.roots[usize::from(e.root)], &e.path),
            setup.max_file_size,
            objects,
        )
    };
    map_parallel(which, setup.threads.clamp(1, 8), 64, one)
}

fn read_one(
    path: &Path,
    max_file_size: u64,
    objects: Option<&ObjectStore>,
) -> io::Result<(Hash, Stat, bool)> {
    // O_NOFOLLOW: a file replaced by a symlink since the walk is not read through.
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let mut bytes = Vec::new();
    // One byte past the cap tells a file that grew past it.
    (&mut file)
        .take(max_file_size + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_file_size {
        return Err(io::Error::other("grew past the size cap while being read"));
    }
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file any more"));
    }
    let hash = hash_bytes(&bytes);
    let written = match objects {
        Some(objects) => objects.put(&hash, &bytes)?,
        None => false,
    };
    let mut stat = stat_of(&meta);
    stat.size = bytes.len() as u64;
    Ok((hash, stat, written))
}

pub fn stat_of(meta: &Metadata) -> Stat {
    Stat {
        size: meta.len(),
        mtime_sec: meta.mtime(),
        mtime_nsec: u32::try_from(meta.mtime_nsec()).unwrap_or(0),
        ino: meta.ino(),
        mode: meta.mode(),
    }
}

fn walk(setup: &ScanSetup<'_>) -> Found {
    let collected = Mutex::new(Vec::new());
    for (root_index, root) in setup.roots.iter().enumerate() {
        let Ok(root_index) = u16::try_from(root_index) else {
            break;
        };
        let prune = match setup.plans.and_then(|p| p.get(usize::from(root_index))) {
            Some(RootPlan::Changes(p)) if p.is_empty() => continue,
            Some(RootPlan::Changes(p)) => Some(Arc::clone(p)),
            _ => None,
        };
        let watched = setup.watched.cloned();
        if let Some(w) = &watched
            && prune.is_none()
        {
            // Before the walk reads it (see journal.rs on why that order matters).
            w.watch(root_index, b"", root);
        }
        let root_dev = std::fs::symlink_metadata(root).map_or(0, |m| m.dev());
        let filter = entry_filter(root, root_index, setup.skip, prune.clone(), watched);
        let mut walker = WalkBuilder::new(root);
        walker
            .hidden(false)
            .require_git(false)
            .follow_links(false)
            .threads(setup.threads.clamp(1, 8))
            .filter_entry(filter);
        let sequential = setup.threads <= 1 && prune.is_none();
        let mut builder = Collectors {
            root,
            root_index,
            root_dev,
            max_file_size: setup.max_file_size,
            prune,
            out: &collected,
        };
        if sequential {
            // One thread and nothing to skip (`WalkState::Skip` comes only with a prune):
            // walked here, with no worker thread to start.
            let mut visitor = builder.build();
            for entry in walker.build() {
                visitor.visit(entry);
            }
        } else {
            walker.build_parallel().visit(&mut builder);
        }
    }
    let mut found = Found::default();
    for part in collected.into_inner().unwrap_or_else(|e| e.into_inner()) {
        found.entries.extend(part.entries);
        found.not_covered.extend(part.not_covered);
        found.problems.extend(part.problems);
        found.notes.linked.extend(part.notes.linked);
        found.notes.mounts.extend(part.notes.mounts);
    }
    found
}

/// Which entries the walker yields (and enters): never a `.git` or a skipped directory; with
/// a prune, only what it names and the directories on the way. A directory the walk will
/// enter for the first time is watched here, before the walker reads it.
fn entry_filter(
    root: &Path,
    root_index: u16,
    skip: &[PathBuf],
    prune: Option<Arc<Prune>>,
    watched: Option<Arc<Watched>>,
) -> impl Fn(&DirEntry) -> bool + Send + Sync + 'static {
    let root = root.to_path_buf();
    let skip = skip.to_vec();
    move |e: &DirEntry| {
        if e.file_name() == ".git" {
            if let Some(w) = &watched {
                w.saw_git(e.path());
            }
            return false;
        }
        if skip.iter().any(|s| e.path() == s) {
            return false;
        }
        if prune.is_none() && watched.is_none() {
            return true;
        }
        let Ok(rel) = e.path().strip_prefix(&root) else {
            return true;
        };
        let rel = path_bytes(rel);
        if let Some(p) = &prune
            && !p.accepts(rel)
        {
            return false;
        }
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        if is_dir
            && let Some(w) = &watched
            && prune.as_ref().is_none_or(|p| p.needs_watch(rel))
        {
            w.watch(root_index, rel, e.path());
        }
        true
    }
}

struct Collectors<'a> {
    root: &'a Path,
    root_index: u16,
    root_dev: u64,
    max_file_size: u64,
    prune: Option<Arc<Prune>>,
    out: &'a Mutex<Vec<Found>>,
}

impl<'s> ParallelVisitorBuilder<'s> for Collectors<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Collector {
            root: self.root,
            root_index: self.root_index,
            root_dev: self.root_dev,
            max_file_size: self.max_file_size,
            prune: self.prune.clone(),
            devs_seen: Vec::new(),
            found: Found::default(),
            out: self.out,
        })
    }
}

/// One walker thread's findings, handed over when the thread is done with it.
struct Collector<'a> {
    root: &'a Path,
    root_index: u16,
    root_dev: u64,
    max_file_size: u64,
    prune: Option<Arc<Prune>>,
    /// Devices of mount points already noted.
    devs_seen: Vec<u64>,
    found: Found,
    out: &'a Mutex<Vec<Found>>,
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        let found = std::mem::take(&mut self.found);
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.push(found);
    }
}

impl ParallelVisitor for Collector<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                let path = error_path(&err).unwrap_or_else(|| self.root.to_path_buf());
                self.found.problems.push(FileProblem {
                    path,
                    message: err.to_string(),
                });
                return WalkState::Continue;
            }
        };
        if entry.depth() == 0 {
            return WalkState::Continue;
        }
        let Ok(rel) = entry.path().strip_prefix(self.root) else {
            return WalkState::Continue;
        };
        let rel: Box<[u8]> = path_bytes(rel).into();
        // With a prune, what the walker yields besides the entries it names are the
        // directories on the way to them: not entries of this scan.
        let (records, descends) = match &self.prune {
            Some(p) => (p.records(&rel), p.descends(&rel)),
            None => (true, true),
        };
        if !records {
            return if descends {
                WalkState::Continue
            } else {
                WalkState::Skip
            };
        }
        let meta = match entry.metadata() {
            Ok(m) => m,
            Err(err) => {
                self.found.problems.push(FileProblem {
                    path: entry.path().to_path_buf(),
                    message: err.to_string(),
                });
                return WalkState::Continue;
            }
        };
        let ft = meta.file_type();
        if ft.is_dir() && meta.dev() != self.root_dev && !self.devs_seen.contains(&meta.dev()) {
            self.devs_seen.push(meta.dev());
            self.found
                .notes
                .mounts
                .push((self.root_index, entry.path().to_path_buf()));
        }
        if ft.is_file() && meta.nlink() > 1 {
            self.found.notes.linked.push((self.root_index, rel.clone()));
        }
        let (stat, content) = if ft.is_dir() {
            let stat = Stat {
                mode: meta.mode(),
                ..Stat::default()
            };
            (stat, Content::Dir)
        } else if ft.is_symlink() {
            match std::fs::read_link(entry.path()) {
                Ok(target) => (stat_of(&meta), Content::Symlink(path_bytes(&target).into())),
                Err(err) => {
                    self.found
                        .problems
                        .push(FileProblem::new(entry.path().to_path_buf(), &err));
                    return WalkState::Continue;
                }
            }
        } else if ft.is_file() && meta.len() <= self.max_file_size {
            (stat_of(&meta), Content::File(UNREAD))
        } else {
            let why = if ft.is_file() {
                Uncovered::TooLarge
            } else {
                Uncovered::Special
            };
            self.found.not_covered.push(NotCovered {
                root: self.root_index,
                path: rel,
                size: meta.len(),
                why,
            });
            return WalkState::Continue;
        };
        let is_dir = content == Content::Dir;
        self.found.entries.push(Entry {
            root: self.root_index,
            path: rel,
            stat,
            content,
        });
        if is_dir && !descends {
            // A watched directory whose own entry changed (a chmod): nothing under it did.
            return WalkState::Skip;
        }
        WalkState::Continue
    }
}

fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}
