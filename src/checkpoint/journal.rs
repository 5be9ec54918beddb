//! The change journal: which entries under the roots may have changed since the latest
//! checkpoint, so recording the next one states only those instead of every file (git's
//! fsmonitor and watchman work the same way). Linux only (inotify); elsewhere, or with
//! `CheckpointOptions::journal` off, every checkpoint is a full scan.
//!
//! How: one inotify instance per store, with a watch on every directory a scan covers (never
//! on ignored or skipped ones, never through a symlink). An event names an entry of a watched
//! directory: that entry is dirty. A create, delete or rename of a name also means whatever
//! directory was there is not the one watched before, so its watches (and those below it) are
//! dropped and the next scan walks it whole, watching it afresh. A checkpoint then walks from
//! the root only down to the dirty entries ([`super::prune`]) and takes everything else from
//! the previous index.
//!
//! Why this is sound. (1) Every watch is added before its directory is read: by the walk's
//! entry filter, which the `ignore` walker calls on a child before it reads the child's
//! entries or ignore files (the root is watched before the walk starts). So a change to a
//! directory's entries is either seen by the read or, after it, queued as an event.
//! (2) inotify queues an event inside the system call that makes the change, and one
//! instance's events come in order. Before trusting the journal a checkpoint makes a
//! uniquely named "cookie" directory in the store's own `journal/` directory (watched by the
//! same instance; never the person's tree) and reads the queue until the cookie's event: every
//! change made before that point has been read. No cookie (or an overflow, or any error):
//! a full scan. (3) Changes are forgotten only when a checkpoint built from them has been
//! committed; events read later belong to the next one. After an overflow the full scan adds
//! every watch again (the kernel gives back the same watch for the same directory, a new one
//! for another), so a watch left on a replaced directory by the lost events is put right
//! before the journal is trusted again. (4) What decides ignore verdicts is
//! outside the events' reach or too wide for them, so: an event on any `.gitignore`,
//! `.ignore` or `.git` entry forces a full scan of its root, and the files outside the tree
//! that the walker reads (ignore files and `.git`s in the roots' parent directories, git's
//! exclude files, the global git config and excludes) are stat'ed before every checkpoint
//! and compared with what they were before the last full scan read them.
//!
//! Full scans: the first checkpoint after opening; when the watcher cannot be set up or
//! fails (the inotify watch limit, more than `journal_max_dirs` directories); on overflow;
//! after an ignore-rule change; for a root on or holding a network or FUSE filesystem (NFS,
//! SMB, 9p, FUSE... report no events for changes made elsewhere); for a root whose previous
//! scan had problems (so they are reported again); and every `journal_full_every`
//! checkpoints (default 20), as insurance against what inotify never reports: writes through
//! a shared `mmap`, and writes to a file through a hard link outside the watched directories
//! (files seen with more than one link are stated at every checkpoint, but a link made later
//! is only noticed by the next full scan).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

use super::index::{Content, Index};
use super::journal_inputs::{Stamp, ignore_inputs, reports_changes};
use super::prune::{FullScanReason, Prune, RootPlan};

/// Dirty entries remembered at most; past this a full scan is cheaper anyway.
const MAX_CHANGES: usize = 100_000;

/// What the walk notices for the journal besides the entries.
#[derive(Debug, Default)]
pub struct WalkNotes {
    /// Regular files with more than one link: stated at every checkpoint.
    pub linked: Vec<(u16, Box<[u8]>)>,
    /// Directories on another device than their root (mount points), to check for events.
    pub mounts: Vec<(u16, PathBuf)>,
}

fn dir_mask() -> WatchMask {
    WatchMask::ATTRIB
        | WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::CLOSE_WRITE
        | WatchMask::MODIFY
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::DONT_FOLLOW
        | WatchMask::EXCL_UNLINK
}

/// The watched directories, shared with the walker's threads (which add watches).
pub struct Watched(Mutex<Table>);

struct Table {
    watches: Watches,
    by_wd: HashMap<i32, (u16, Box<[u8]>)>,
    by_path: BTreeMap<(u16, Box<[u8]>), WatchDescriptor>,
    max: usize,
    failed: Option<String>,
    /// Roots with a directory that could not be watched (no permission): scanned in full.
    unwatched: HashSet<u16>,
    /// `.git` entries the walks met.
    git_seen: Vec<PathBuf>,
    /// Events were lost (an overflow): the watches may be stale, each is added again.
    recheck: bool,
}

impl Watched {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Watches directory `abs` (`rel` under root `root`). After events were lost, asked again
    /// for a path already watched (the full scan that follows does), it puts right a watch
    /// that went stale unnoticed (on a directory since replaced): the kernel returns the
    /// existing watch for the same directory and a new one for another.
    pub fn watch(&self, root: u16, rel: &[u8], abs: &Path) {
        let mut t = self.lock();
        if t.failed.is_some() {
            return;
        }
        let key: (u16, Box<[u8]>) = (root, rel.into());
        if !t.recheck && t.by_path.contains_key(&key) {
            return;
        }
        if !t.by_path.contains_key(&key) && t.by_path.len() >= t.max {
            t.failed = Some(format!("more than {} directories to watch", t.max));
            return;
        }
        match t.watches.add(abs, dir_mask()) {
            Ok(wd) => {
                let id = wd.get_watch_descriptor_id();
                if let Some(old) = t.by_path.insert(key.clone(), wd)
                    && old.get_watch_descriptor_id() != id
                {
                    // The path held another directory before: stop hearing of that one.
                    t.by_wd.remove(&old.get_watch_descriptor_id());
                    let _ = t.watches.remove(old);
                }
                // The same directory known under another name: that name is stale.
                if let Some(other) = t.by_wd.insert(id, key.clone())
                    && other != key
                {
                    t.by_path.remove(&other);
                }
            }
            // Gone or replaced since the walk saw it: its parent's watch reported that.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {}
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
                t.unwatched.insert(root);
            }
            Err(e) => t.failed = Some(format!("cannot watch {}: {e}", abs.display())),
        }
    }

    /// Notes a `.git` entry the walk passed over.
    pub fn saw_git(&self, path: &Path) {
        self.lock().git_seen.push(path.to_path_buf());
    }
}

impl Table {
    /// Drops the watches of `rel` and of every directory under it (all of the root's when
    /// `rel` is empty).
    fn forget_under(&mut self, root: u16, rel: &[u8]) {
        let mut prefix = rel.to_vec();
        if !rel.is_empty() {
            prefix.push(b'/');
        }
        let gone: Vec<(u16, Box<[u8]>)> = self
            .by_path
            .range((root, Box::from(rel))..)
            .take_while(|((r, p), _)| *r == root && (&**p == rel || p.starts_with(&prefix)))
            .map(|(k, _)| k.clone())
            .collect();
        for key in gone {
            if let Some(wd) = self.by_path.remove(&key) {
                self.by_wd.remove(&wd.get_watch_descriptor_id());
                let _ = self.watches.remove(wd);
            }
        }
    }
}

/// What changed under one root since the baseline.
#[derive(Default)]
struct Changes {
    full: Option<FullScanReason>,
    dirty: HashSet<Box<[u8]>>,
    /// Names created, deleted or renamed: a directory there now is not the one watched.
    replaced: HashSet<Box<[u8]>>,
}

impl Changes {
    fn set_full(&mut self, why: FullScanReason) {
        self.full.get_or_insert(why);
        self.dirty = HashSet::new();
        self.replaced = HashSet::new();
    }

    fn add(&mut self, rel: Box<[u8]>, replaced: bool) {
        if self.full.is_some() {
            return;
        }
        if replaced {
            self.replaced.insert(rel.clone());
        }
        self.dirty.insert(rel);
        if self.dirty.len() > MAX_CHANGES {
            self.set_full(FullScanReason::ManyChanges);
        }
    }
}

/// One event, off the read buffer: watch, mask, name.
type RawEvent = (i32, EventMask, Option<Box<[u8]>>);

pub struct Journal {
    inotify: Inotify,
    watched: Arc<Watched>,
    cookie_dir: PathBuf,
    cookie_wd: i32,
    seq: u64,
    roots: Vec<PathBuf>,
    changes: Vec<Changes>,
    /// The checkpoint the changes count from.
    baseline: Option<u64>,
    /// The ignore inputs outside the tree as they were before the baseline's last full scan.
    stamps: Vec<(PathBuf, Stamp)>,
    /// The same, taken before the scan now under way.
    pending_stamps: Vec<(PathBuf, Stamp)>,
    since_full: u32,
    full_every: u32,
    /// Per root: why it is always scanned in full, if it is.
    always_full: Vec<Option<FullScanReason>>,
    /// Per root: why the last scan says the next must be full (its problems).
    next_full: Vec<Option<FullScanReason>>,
    git_dirs: Vec<PathBuf>,
    linked: Vec<HashSet<Box<[u8]>>>,
    broken: Option<String>,
    buffer: Vec<u8>,
}

impl Journal {
    /// A journal for `roots` (canonical), its cookie directory in the store's `dir`.
    pub fn start(
        dir: &Path,
        roots: &[PathBuf],
        max_dirs: usize,
        full_every: u32,
    ) -> io::Result<Journal> {
        let inotify = Inotify::init()?;
        let cookie_dir = dir.join("journal");
        fs::create_dir_all(&cookie_dir)?;
        // Cookies a crash left behind would collide with new names.
        for e in fs::read_dir(&cookie_dir)?.flatten() {
            let _ = fs::remove_dir(e.path());
        }
        let mut watches = inotify.watches();
        let mask = WatchMask::CREATE
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::ONLYDIR
            | WatchMask::DONT_FOLLOW;
        let cookie_wd = watches.add(&cookie_dir, mask)?.get_watch_descriptor_id();
        let always_full = roots
            .iter()
            .map(|r| (!reports_changes(r)).then_some(FullScanReason::Unwatchable))
            .collect();
        Ok(Journal {
            inotify,
            watched: Arc::new(Watched(Mutex::new(Table {
                watches,
                by_wd: HashMap::new(),
                by_path: BTreeMap::new(),
                max: max_dirs,
                failed: None,
                unwatched: HashSet::new(),
                git_seen: Vec::new(),
                recheck: false,
            }))),
            cookie_dir,
            cookie_wd,
            seq: 0,
            roots: roots.to_vec(),
            changes: roots.iter().map(|_| Changes::default()).collect(),
            baseline: None,
            stamps: Vec::new(),
            pending_stamps: Vec::new(),
            since_full: 0,
            full_every,
            always_full,
            next_full: vec![None; roots.len()],
            git_dirs: Vec::new(),
            linked: roots.iter().map(|_| HashSet::new()).collect(),
            broken: None,
            buffer: vec![0; 64 * 1024],
        })
    }

    pub fn watched(&self) -> Arc<Watched> {
        Arc::clone(&self.watched)
    }

    /// Why the journal stopped working, once it did: the store then drops it.
    pub fn broken(&self) -> Option<String> {
        self.broken
            .clone()
            .or_else(|| self.watched.lock().failed.clone())
    }

    /// How to scan each root now, against `previous`, the index of checkpoint `latest`;
    /// `to_record`: for a checkpoint (the periodic full scan is for those only).
    pub fn plan(
        &mut self,
        previous: &Index,
        latest: Option<u64>,
        to_record: bool,
    ) -> Vec<RootPlan> {
        self.pending_stamps = ignore_inputs(&self.roots, &self.git_dirs);
        let mut global = match self.sync() {
            Err(why) => Some(why),
            Ok(()) if self.baseline.is_none() || self.baseline != latest => {
                Some(FullScanReason::NoBaseline)
            }
            Ok(())
                if to_record && self.full_every > 0 && self.since_full + 1 >= self.full_every =>
            {
                Some(FullScanReason::Periodic)
            }
            Ok(()) if self.pending_stamps != self.stamps => Some(FullScanReason::IgnoreRules),
            Ok(()) => None,
        };
        let table = self.watched.lock();
        if table.failed.is_some() {
            global = Some(FullScanReason::WatcherFailed);
        }
        let mut plans = Vec::with_capacity(self.roots.len());
        for (r, changes) in self.changes.iter().enumerate() {
            let Ok(root) = u16::try_from(r) else { break };
            let why = global
                .or(changes.full)
                .or(self.always_full[r])
                .or(self.next_full[r])
                .or_else(|| {
                    table
                        .unwatched
                        .contains(&root)
                        .then_some(FullScanReason::Problems)
                });
            if let Some(why) = why {
                plans.push(RootPlan::Full(why));
                continue;
            }
            let mut dirty = changes.dirty.clone();
            dirty.extend(self.linked[r].iter().cloned());
            dirty.remove(&[][..]);
            if dirty.len() > previous.entries().len() / 2 + 64 {
                plans.push(RootPlan::Full(FullScanReason::ManyChanges));
                continue;
            }
            let prune = Prune::new(dirty, |rel| {
                previous
                    .get(root, rel)
                    .is_some_and(|e| e.content == Content::Dir)
                    && table.by_path.contains_key(&(root, Box::from(rel)))
                    && !changes.replaced.contains(rel)
            });
            plans.push(RootPlan::Changes(Arc::new(prune)));
        }
        plans
    }

    /// The scan planned by `plans` became checkpoint `id` with `index`: changes count from it.
    pub fn committed(
        &mut self,
        id: u64,
        plans: &[RootPlan],
        index: &Index,
        notes: &WalkNotes,
        roots_with_problems: &[u16],
    ) {
        self.baseline = Some(id);
        self.stamps = std::mem::take(&mut self.pending_stamps);
        self.since_full = if RootPlan::all_full(plans) {
            0
        } else {
            self.since_full + 1
        };
        for c in &mut self.changes {
            *c = Changes::default();
        }
        for (r, next) in self.next_full.iter_mut().enumerate() {
            *next = u16::try_from(r)
                .is_ok_and(|r| roots_with_problems.contains(&r))
                .then_some(FullScanReason::Problems);
        }
        for l in &mut self.linked {
            l.clear();
        }
        for (r, rel) in &notes.linked {
            if let Some(l) = self.linked.get_mut(usize::from(*r)) {
                l.insert(rel.clone());
            }
        }
        for (r, mount) in &notes.mounts {
            if !reports_changes(mount)
                && let Some(a) = self.always_full.get_mut(usize::from(*r))
            {
                *a = Some(FullScanReason::Unwatchable);
            }
        }
        let mut table = self.watched.lock();
        if RootPlan::all_full(plans) {
            // That scan added every watch again.
            table.recheck = false;
        }
        // A `.git` met for the first time: its exclude file was read before it was stamped.
        let seen = std::mem::take(&mut table.git_seen);
        for g in seen {
            if !self.git_dirs.contains(&g) && !self.roots.iter().any(|r| g == r.join(".git")) {
                if let Some(r) = self.roots.iter().position(|r| g.starts_with(r)) {
                    self.changes[r].set_full(FullScanReason::IgnoreRules);
                }
                self.git_dirs.push(g);
            }
        }
        // Directories no longer covered (removed, now ignored) need no watch.
        for (r, plan) in plans.iter().enumerate() {
            let Ok(root) = u16::try_from(r) else { break };
            if !matches!(plan, RootPlan::Full(_)) {
                continue;
            }
            let stale: Vec<Box<[u8]>> = table
                .by_path
                .range((root, Box::default())..)
                .take_while(|((r, _), _)| *r == root)
                .filter(|((_, p), _)| {
                    !p.is_empty() && index.get(root, p).is_none_or(|e| e.content != Content::Dir)
                })
                .map(|((_, p), _)| p.clone())
                .collect();
            for p in stale {
                table.forget_under(root, &p);
            }
        }
    }

    /// Reads every event queued up to now (see the module doc: the cookie).
    fn sync(&mut self) -> Result<(), FullScanReason> {
        if self.broken.is_some() {
            return Err(FullScanReason::WatcherFailed);
        }
        self.seq += 1;
        let name = format!("c{}", self.seq);
        let cookie = self.cookie_dir.join(&name);
        if let Err(e) = fs::create_dir(&cookie) {
            self.broken = Some(format!("journal cookie {}: {e}", cookie.display()));
            return Err(FullScanReason::WatcherFailed);
        }
        let _ = fs::remove_dir(&cookie);
        let mut seen = false;
        let mut overflow = false;
        loop {
            let batch: Vec<RawEvent> = match self.inotify.read_events(&mut self.buffer) {
                Ok(events) => events
                    .map(|e| {
                        let name = e.name.map(|n| Box::from(n.as_bytes()));
                        (e.wd.get_watch_descriptor_id(), e.mask, name)
                    })
                    .collect(),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Vec::new(),
                Err(e) => {
                    self.broken = Some(format!("reading file events: {e}"));
                    return Err(FullScanReason::WatcherFailed);
                }
            };
            if batch.is_empty() {
                break;
            }
            for (wd, mask, ev_name) in batch {
                if mask.contains(EventMask::Q_OVERFLOW) {
                    overflow = true;
                }
                if wd == self.cookie_wd {
                    if mask.contains(EventMask::CREATE)
                        && ev_name.as_deref() == Some(name.as_bytes())
                    {
                        seen = true;
                    } else if !mask.contains(EventMask::CREATE) {
                        self.broken = Some("the journal's cookie directory went away".into());
                    }
                    continue;
                }
                self.handle(wd, mask, ev_name);
            }
            if seen {
                break;
            }
        }
        if overflow {
            self.watched.lock().recheck = true;
            for c in &mut self.changes {
                c.set_full(FullScanReason::Overflow);
            }
        }
        if self.broken.is_some() {
            return Err(FullScanReason::WatcherFailed);
        }
        match (seen, overflow) {
            (true, _) => Ok(()),
            // The cookie's event was lost with the others; the changes say "full".
            (false, true) => Err(FullScanReason::Overflow),
            (false, false) => {
                self.broken = Some("the journal's cookie event never came".into());
                Err(FullScanReason::WatcherFailed)
            }
        }
    }

    /// Records what one event says changed.
    fn handle(&mut self, wd: i32, mask: EventMask, name: Option<Box<[u8]>>) {
        if mask.contains(EventMask::Q_OVERFLOW) {
            return; // handled by the caller, once per batch
        }
        let mut table = self.watched.lock();
        if mask.contains(EventMask::IGNORED) {
            // The kernel dropped the watch (the directory is gone); ours are forgotten first.
            if let Some((r, rel)) = table.by_wd.remove(&wd) {
                table.by_path.remove(&(r, rel.clone()));
                if let Some(c) = self.changes.get_mut(usize::from(r)) {
                    if rel.is_empty() {
                        table.forget_under(r, &[]);
                        c.set_full(FullScanReason::Unwatchable);
                    } else {
                        c.add(rel, true);
                    }
                }
            }
            return;
        }
        let Some((r, dir)) = table.by_wd.get(&wd).cloned() else {
            return; // a watch forgotten since: its directory is walked whole anyway
        };
        let Some(changes) = self.changes.get_mut(usize::from(r)) else {
            return;
        };
        if mask.contains(EventMask::UNMOUNT) {
            changes.set_full(FullScanReason::Unwatchable);
            return;
        }
        let structural = mask.intersects(
            EventMask::CREATE | EventMask::DELETE | EventMask::MOVED_FROM | EventMask::MOVED_TO,
        );
        match name {
            Some(n) => {
                if matches!(&*n, b".gitignore" | b".ignore" | b".git") {
                    changes.set_full(FullScanReason::IgnoreRules);
                    return;
                }
                let rel: Box<[u8]> = if dir.is_empty() {
                    n
                } else {
                    [&dir[..], b"/", &n[..]].concat().into()
                };
                if structural {
                    table.forget_under(r, &rel);
                }
                changes.add(rel, structural);
            }
            None if dir.is_empty() => {
                if mask.intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF) {
                    // Whatever is at the root's path now is watched afresh by the full scan.
                    table.forget_under(r, &[]);
                    table.recheck = true;
                    changes.set_full(FullScanReason::Unwatchable);
                }
            }
            None => {
                // The directory itself: moved or deleted (its parent says so too), or chmod.
                let gone = mask.intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF);
                if gone {
                    table.forget_under(r, &dir);
                }
                changes.add(dir, gone);
            }
        }
    }
}
