//! [`CheckpointStore`]: the checkpoints of one session on disk — opening them after a restart,
//! recording a new one, reading any one back as a full index — and the public entry points
//! for planning and running a restore (the work itself is in `restore.rs`).
//!
//! Invariants: ids only grow (a damaged file's id is never reused, so it is never overwritten);
//! a checkpoint file is committed only after every object it names is durable; a delta's
//! parent is an earlier, valid checkpoint, or the delta is reported damaged too.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use super::aliases::Aliases;
use super::codec::{self, Body, BodyRef, Header};
use super::index::not_covered_files;
use super::index::{Delta, Index};
use super::journal::{Journal, WalkNotes, Watched};
use super::objects::ObjectStore;
use super::prune::{FullScanReason, RootPlan, ScanKind};
use super::restore::{self, RestorePlan, Restored};
use super::scan::{ScanSetup, Scanned, scan};
use super::verify::{self, canonical_roots};
use super::{
    CheckpointError, CheckpointId, CheckpointInfo, CheckpointOptions, FileProblem, NotCoveredFile,
};

pub(super) const CHECKPOINTS: &str = "checkpoints";
pub(super) const PACKS: &str = "packs";
const SUFFIX: &str = ".cp";

/// A checkpoint file that was ignored, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DamagedCheckpoint {
    pub path: PathBuf,
    pub why: String,
}

/// What recording a checkpoint did.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub id: CheckpointId,
    /// Entries new, changed or gone since the previous checkpoint.
    pub changed: usize,
    /// Contents stored now (not already in the store).
    pub files_stored: usize,
    pub not_covered: Vec<NotCoveredFile>,
    /// Files or directories that could not be scanned; the checkpoint holds the rest.
    pub problems: Vec<FileProblem>,
    /// Whether every file was stated, or only what the change journal named.
    pub scan: ScanKind,
    /// Nothing had changed: no checkpoint was written, and the label names the latest one.
    pub reused: bool,
}

pub(super) struct Known {
    pub(super) header: Header,
    /// Checkpoints replayed to read this one (0 for a full index).
    pub(super) depth: u32,
}

pub struct CheckpointStore {
    pub(super) dir: PathBuf,
    roots: Vec<PathBuf>,
    /// The store's own directory and the options' `skip`, canonical where they exist.
    skip: Vec<PathBuf>,
    options: CheckpointOptions,
    pub(super) objects: ObjectStore,
    pub(super) known: BTreeMap<u64, Known>,
    damaged: Vec<DamagedCheckpoint>,
    pub(super) next_id: u64,
    /// The full index of the latest checkpoint, once read or recorded.
    pub(super) latest: Option<(u64, Index)>,
    /// Whether `latest` was recorded by this store rather than read back from disk, where
    /// anyone may have rewritten it (its hashes are then not trusted for an undo).
    latest_ours: bool,
    /// The change journal, once started (`journal.rs`).
    journal: Option<Journal>,
    /// The journal could not start or stopped working: every checkpoint is a full scan.
    journal_failed: bool,
    /// Labels recorded when nothing had changed, naming earlier checkpoints.
    pub(super) aliases: Aliases,
    /// Checkpoints this store recorded (aliases included), for `journal_from`.
    pub(super) recorded: u32,
    /// Recordings that looked at the tree (all but [`Self::name_latest`]'s).
    pub(super) looked: u32,
    /// When the scan of the latest checkpoint (its id) that this store recorded started.
    scan_started: Option<(u64, SystemTime)>,
    /// A checkpoint file written without fsync (a chain's first, see [`Self::commit`]),
    /// synced before the next one is written.
    pub(super) unsynced: Option<PathBuf>,
}

impl CheckpointStore {
    /// Opens (creating if needed) the store in `dir` for these roots, reading the checkpoints
    /// already there. Roots are canonicalised; a root inside another is dropped (the outer one
    /// covers it). Damaged checkpoint files are listed by [`Self::damaged`], not an error.
    pub fn open(
        dir: &Path,
        roots: &[PathBuf],
        options: CheckpointOptions,
    ) -> Result<CheckpointStore, CheckpointError> {
        let store_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CheckpointError::Store { path, source }
        };
        let cp_dir = dir.join(CHECKPOINTS);
        fs::create_dir_all(&cp_dir).map_err(store_err(&cp_dir))?;
        let dir = fs::canonicalize(dir).map_err(store_err(dir))?;
        let roots = canonical_roots(roots)?;
        let packs = dir.join(PACKS);
        let objects = ObjectStore::open(packs.clone()).map_err(store_err(&packs))?;
        let mut skip = vec![dir.clone()];
        skip.extend(
            options
                .skip
                .iter()
                .map(|s| fs::canonicalize(s).unwrap_or_else(|_| s.clone())),
        );
        let mut store = CheckpointStore {
            objects,
            skip,
            dir,
            roots,
            options,
            known: BTreeMap::new(),
            damaged: Vec::new(),
            next_id: 1,
            latest: None,
            latest_ours: false,
            journal: None,
            journal_failed: false,
            aliases: Aliases::default(),
            recorded: 0,
            looked: 0,
            scan_started: None,
            unsynced: None,
        };
        store.load()?;
        store.aliases = Aliases::load(&store.dir);
        let packs = store
            .objects
            .damaged()
            .iter()
            .map(|(path, why)| DamagedCheckpoint {
                path: path.clone(),
                why: format!("content pack ignored: {why}"),
            });
        store.damaged.extend(packs.collect::<Vec<_>>());
        Ok(store)
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Changes the roots the next checkpoints cover (e.g. after `/add-dir`). The next
    /// checkpoint then holds a full index.
    pub fn set_roots(&mut self, roots: &[PathBuf]) -> Result<(), CheckpointError> {
        self.roots = canonical_roots(roots)?;
        // Its watches and changes are counted per root: start afresh.
        self.journal = None;
        Ok(())
    }

    /// The readable checkpoints, oldest first, each label once: a label recorded when nothing
    /// had changed names the checkpoint it is an alias of.
    pub fn list(&self) -> Vec<CheckpointInfo> {
        let mut out: Vec<CheckpointInfo> = self
            .known
            .values()
            .map(|k| CheckpointInfo {
                id: CheckpointId(k.header.id),
                created_ms: k.header.created_ms,
                label: k.header.label.clone(),
                roots: k.header.roots.clone(),
            })
            .collect();
        let roots = |id: u64| self.known.get(&id).map(|k| k.header.roots.clone());
        out.extend(self.aliases.infos(roots));
        out.sort_by_key(|c| (c.created_ms, c.id));
        out
    }

    /// How many checkpoint files the store holds (aliases are not counted).
    pub fn count(&self) -> usize {
        self.known.len()
    }

    pub fn latest_id(&self) -> Option<CheckpointId> {
        self.known.keys().next_back().map(|&id| CheckpointId(id))
    }

    /// Heap bytes of the latest checkpoint's index held in memory (0 before it is needed).
    pub fn index_heap_bytes(&self) -> usize {
        self.latest
            .as_ref()
            .map_or(0, |(_, index)| index.heap_bytes())
    }

    /// Checkpoint files found damaged (cut short by a crash, or whose base is damaged), and
    /// content packs whose index does not check out.
    pub fn damaged(&self) -> &[DamagedCheckpoint] {
        &self.damaged
    }

    /// The files checkpoint `id` lists as not covered (too large, unreadable, special).
    pub fn not_covered(
        &mut self,
        id: CheckpointId,
    ) -> Result<Vec<NotCoveredFile>, CheckpointError> {
        let (roots, index) = self.read(id)?;
        Ok(not_covered_files(&roots, &index))
    }

    /// What restoring checkpoint `id` would do now, without changing anything.
    pub fn plan_restore(&mut self, id: CheckpointId) -> Result<RestorePlan, CheckpointError> {
        let (target_roots, target) = self.read(id)?;
        verify::roots(&target_roots, &self.roots)
            .map_err(|why| CheckpointError::Refused { id, why })?;
        self.load_latest()?;
        let same_roots = target_roots == self.roots
            && self
                .latest_view()
                .is_some_and(|(roots, _)| roots == self.roots.as_slice());
        let since = self.scanned_at();
        let now = match self.latest.take() {
            Some((latest_id, previous)) if same_roots => {
                // The journal says what changed since the latest checkpoint; its changes
                // stay counted until the next checkpoint is recorded.
                let plans = self.scan_plans(&previous, Some(latest_id), false);
                let watched = self.journal.as_ref().map(Journal::watched);
                let now = if RootPlan::nothing_changed(&plans) {
                    None
                } else {
                    let setup = self
                        .setup(&target_roots, Some(&plans), watched.as_ref(), since)
                        .sized(Some(previous.entries().len()));
                    Some(scan(&setup, &previous, None))
                };
                self.latest = Some((latest_id, previous));
                now
            }
            taken => {
                self.latest = taken;
                let empty = Index::default();
                let previous = match self.latest_view() {
                    Some((roots, index)) if roots == target_roots.as_slice() => index,
                    _ => &empty,
                };
                let size = (!std::ptr::eq(previous, &empty)).then(|| previous.entries().len());
                let setup = self.setup(&target_roots, None, None, since).sized(size);
                Some(scan(&setup, previous, None))
            }
        };
        let latest = self.latest_view();
        let (now_index, problems) = match now {
            Some(s) => (Some(s.index), s.problems),
            None => (None, Vec::new()),
        };
        // No scan: nothing changed since the latest checkpoint.
        let empty = Index::default();
        let current = now_index
            .as_ref()
            .or(latest.map(|(_, index)| index))
            .unwrap_or(&empty);
        Ok(restore::plan(
            id,
            &target_roots,
            &target,
            current,
            latest,
            problems,
        ))
    }

    /// Restores checkpoint `id`: records the current state first (its id is
    /// [`Restored::undo`]: restoring that one undoes this restore), then writes back every
    /// file that differs, removes files created since and recreates files deleted since.
    ///
    /// Only inside the session's roots: a checkpoint covering another directory, storing a
    /// path that is not plain, or whose contents do not read back is refused whole
    /// ([`CheckpointError::Refused`]) before anything is touched. The undo checkpoint is a
    /// full index, recorded before anything is touched with every file read again unless the
    /// latest checkpoint was recorded by this store, and every file the restore rewrites or
    /// removes is checked to read back from it; if it cannot be made, nothing is restored.
    /// Problems with single files while restoring are collected in the result; the other
    /// files are restored.
    pub fn restore(&mut self, id: CheckpointId, label: &str) -> Result<Restored, CheckpointError> {
        let (target_roots, target) = self.read(id)?;
        let refused = |why| CheckpointError::Refused { id, why };
        verify::roots(&target_roots, &self.roots).map_err(refused)?;
        if self.load_latest().is_err() {
            // The undo checkpoint below starts a new chain.
            self.latest = None;
        }
        // What the latest checkpoint said before this restore records a new one.
        let latest_before = self
            .latest_view()
            .map(|(roots, index)| (roots.to_vec(), index.clone()));
        let undo = self.record_as(label, true)?;
        let problems = undo.problems.clone();
        let current = match self.latest.as_ref() {
            Some((_, index)) => verify::remap(index, &self.roots, &target_roots),
            None => Index::default(),
        };
        let latest = latest_before.as_ref().map(|(r, i)| (r.as_slice(), i));
        let plan = restore::plan(id, &target_roots, &target, &current, latest, problems);
        verify::contents(&plan, &target, &current, &mut self.objects).map_err(refused)?;
        Ok(restore::apply(
            plan,
            &target_roots,
            &target,
            &self.objects,
            undo.id.0,
        ))
    }

    fn setup<'a>(
        &'a self,
        roots: &'a [PathBuf],
        plans: Option<&'a [RootPlan]>,
        watched: Option<&'a Arc<Watched>>,
        racy_since: Option<SystemTime>,
    ) -> ScanSetup<'a> {
        ScanSetup {
            roots,
            skip: &self.skip,
            max_file_size: self.options.max_file_size,
            threads: self.options.threads,
            plans,
            watched,
            racy_since,
        }
    }

    /// Checkpoint `id` holds what a scan started at `start` found (`None`: no scan, the
    /// previous index carried as it is, with its scan's time).
    fn note_scan(&mut self, id: u64, start: Option<SystemTime>) {
        match (start, self.scan_started) {
            (Some(at), _) => self.scan_started = Some((id, at)),
            (None, Some((_, at))) => self.scan_started = Some((id, at)),
            (None, None) => {}
        }
    }

    /// When the scan behind the latest index started: known for this store's own scans; for
    /// an index read from disk, its checkpoint's time less a margin for the scan's length.
    fn scanned_at(&self) -> Option<SystemTime> {
        let (id, _) = self.latest.as_ref()?;
        if let Some((scanned, at)) = self.scan_started
            && scanned == *id
        {
            return Some(at);
        }
        let created = self.known.get(id)?.header.created_ms;
        let margin = std::time::Duration::from_secs(60);
        UNIX_EPOCH
            .checked_add(std::time::Duration::from_millis(created))?
            .checked_sub(margin)
    }

    /// How to scan the roots now, against `previous`, the index of checkpoint `latest` (if
    /// it covered these roots): what the journal says changed, or everything. `to_record`:
    /// for a checkpoint rather than a restore's plan.
    fn scan_plans(
        &mut self,
        previous: &Index,
        latest: Option<u64>,
        to_record: bool,
    ) -> Vec<RootPlan> {
        let full = |why| vec![RootPlan::Full(why); self.roots.len()];
        if !self.options.journal {
            return full(FullScanReason::Off);
        }
        if self.journal.as_ref().is_some_and(|j| j.broken().is_some()) {
            self.journal = None;
            self.journal_failed = true;
        }
        if self.journal_failed {
            return full(FullScanReason::WatcherFailed);
        }
        // `recorded` counts the checkpoint being recorded now.
        let due = self.recorded >= self.options.journal_from
            || previous.entries().len() >= self.options.journal_min_entries;
        if self.journal.is_none() && !due {
            return full(FullScanReason::Deferred);
        }
        if self.journal.is_none() {
            let started = Journal::start(
                &self.dir,
                &self.roots,
                self.options.journal_max_dirs,
                self.options.journal_full_every,
            );
            match started {
                Ok(j) => self.journal = Some(j),
                Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                    self.journal_failed = true;
                    return full(FullScanReason::Off);
                }
                Err(_) => {
                    self.journal_failed = true;
                    return full(FullScanReason::WatcherFailed);
                }
            }
        }
        match self.journal.as_mut() {
            Some(j) => j.plan(previous, latest, to_record),
            None => full(FullScanReason::WatcherFailed),
        }
    }

    /// Makes sure `self.latest` holds the latest checkpoint's index, if there is one.
    fn load_latest(&mut self) -> Result<(), CheckpointError> {
        if let Some(id) = self.latest_id()
            && self.latest.as_ref().is_none_or(|(l, _)| *l != id.0)
        {
            let (_, index) = self.read(id)?;
            self.latest = Some((id.0, index));
        }
        Ok(())
    }

    /// The latest checkpoint's roots and index, once [`Self::load_latest`] has run.
    fn latest_view(&self) -> Option<(&[PathBuf], &Index)> {
        let (id, index) = self.latest.as_ref()?;
        let known = self.known.get(id)?;
        Some((known.header.roots.as_slice(), index))
    }

    /// Records the current state of the roots as a new checkpoint.
    /// If the latest checkpoint cannot be read back, this one holds a full index.
    pub fn record(&mut self, label: &str) -> Result<Recorded, CheckpointError> {
        self.record_as(label, false)
    }

    /// `for_undo`: the checkpoint a restore takes first. It holds a full index (read back
    /// without replaying files someone may have altered), and unless the latest checkpoint
    /// is this store's own, every file is read and hashed again rather than trusting the
    /// hashes of an index read from disk.
    fn record_as(&mut self, label: &str, for_undo: bool) -> Result<Recorded, CheckpointError> {
        self.recorded = self.recorded.saturating_add(1);
        self.looked = self.looked.saturating_add(1);
        if self.load_latest().is_err() {
            // Its file went bad after `open`: start a new chain rather than refuse to record.
            self.latest = None;
        }
        let latest_id = self.latest_id();
        let same_roots = self
            .latest_view()
            .is_some_and(|(roots, _)| roots == self.roots.as_slice());
        let trusted = same_roots && (!for_undo || self.latest_ours);
        let since = self.scanned_at();
        let previous = match self.latest.take() {
            Some((_, index)) if trusted => index,
            _ => Index::default(),
        };
        let roots = self.roots.clone();
        let latest = latest_id.filter(|_| trusted).map(|i| i.0);
        let plans = self.scan_plans(&previous, latest, true);
        let watched = self.journal.as_ref().map(Journal::watched);
        // `None`: no scan (the journal saw nothing), the latest scan's time still holds.
        let mut scan_start = None;
        let (index, problems, stored, notes, delta) = if RootPlan::nothing_changed(&plans) {
            // The journal saw nothing: the previous index is the state now, as it is.
            let none = (Vec::new(), Vec::new(), WalkNotes::default());
            (previous, none.0, none.1, none.2, Delta::default())
        } else {
            scan_start = Some(SystemTime::now());
            let setup = self
                .setup(&roots, Some(&plans), watched.as_ref(), since)
                .sized(
                    latest
                        .map(|_| previous.entries().len())
                        .or(self.options.expected_entries),
                );
            let Scanned {
                index,
                problems,
                stored,
                notes,
            } = scan(&setup, &previous, Some(&self.objects));
            let delta = previous.delta_to(&index);
            (index, problems, stored, notes, delta)
        };
        let changed = delta.upserts.len() + delta.removals.len();
        let created_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        if let Some(latest) = latest_id.filter(|_| {
            !for_undo && trusted && changed == 0 && problems.is_empty() && stored.is_empty()
        }) && self.aliases.add(latest.0, created_ms, label).is_ok()
        {
            // The state is the latest checkpoint's: name it, write nothing.
            if let Some(journal) = self.journal.as_mut() {
                journal.committed(latest.0, &plans, &index, &notes, &[]);
            }
            let recorded = Recorded {
                id: latest,
                changed: 0,
                files_stored: 0,
                not_covered: not_covered_files(&roots, &index),
                problems,
                scan: RootPlan::kind(&plans),
                reused: true,
            };
            self.note_scan(latest.0, scan_start);
            self.latest = Some((latest.0, index));
            return Ok(recorded);
        }
        let depth = latest_id
            .and_then(|id| self.known.get(&id.0))
            .map_or(0, |k| k.depth);
        let delta_parent = latest_id
            .filter(|_| !for_undo && same_roots && depth + 1 < self.options.full_every.max(1));
        let not_covered = index.not_covered().to_vec();
        let body = match delta_parent {
            Some(_) => BodyRef::Delta(&delta, &not_covered),
            None => BodyRef::Full(&index),
        };
        let id = self.next_id;
        let header = Header {
            id,
            parent: delta_parent.map(|p| p.0),
            created_ms,
            label: label.to_string(),
            roots: roots.clone(),
        };
        // On failure `self.latest` stays empty: it is re-read from disk when next needed.
        if let Err(e) = self.commit(&header, body) {
            self.objects.discard();
            return Err(e);
        }
        self.next_id = id + 1;
        let depth = if delta_parent.is_some() { depth + 1 } else { 0 };
        self.known.insert(id, Known { header, depth });
        if let Some(journal) = self.journal.as_mut() {
            let with_problems: Vec<u16> = (0..roots.len())
                .filter(|&r| problems.iter().any(|p| p.path.starts_with(&roots[r])))
                .filter_map(|r| u16::try_from(r).ok())
                .collect();
            journal.committed(id, &plans, &index, &notes, &with_problems);
        }
        let recorded = Recorded {
            id: CheckpointId(id),
            changed,
            files_stored: stored.len(),
            not_covered: not_covered_files(&roots, &index),
            problems,
            scan: RootPlan::kind(&plans),
            reused: false,
        };
        self.note_scan(id, scan_start);
        self.latest = Some((id, index));
        self.latest_ours = true;
        Ok(recorded)
    }

    /// Names the latest checkpoint `label` too, without a scan: for a label asked for before
    /// the recording of the latest one started, which holds the state for both. `None`: no
    /// checkpoint yet, nothing named.
    pub fn name_latest(&mut self, label: &str) -> Result<Option<CheckpointId>, CheckpointError> {
        let Some(id) = self.latest_id() else {
            return Ok(None);
        };
        let created_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.aliases
            .add(id.0, created_ms, label)
            .map_err(|source| CheckpointError::Store {
                path: self.aliases.path.clone(),
                source,
            })?;
        self.recorded = self.recorded.saturating_add(1);
        Ok(Some(id))
    }

    /// Reads the headers of every checkpoint file and checks their chains.
    fn load(&mut self) -> Result<(), CheckpointError> {
        let cp_dir = self.dir.join(CHECKPOINTS);
        let entries = fs::read_dir(&cp_dir).map_err(|source| CheckpointError::Store {
            path: cp_dir.clone(),
            source,
        })?;
        let mut files = BTreeMap::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(SUFFIX))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            files.insert(id, entry.path());
        }
        for (id, path) in files {
            self.next_id = self.next_id.max(id.saturating_add(1));
            let header = fs::read(&path)
                .map_err(|e| e.to_string())
                .and_then(|bytes| codec::decode_header(&bytes).map_err(|e| e.to_string()));
            let checked = header.and_then(|h| {
                if h.id != id {
                    return Err(format!("it says it is checkpoint {}", h.id));
                }
                match h.parent {
                    None => Ok((h, 0)),
                    Some(p) => match self.known.get(&p) {
                        Some(k) if p < id => Ok((h, k.depth + 1)),
                        _ => Err(format!("its base checkpoint {p} is missing or damaged")),
                    },
                }
            });
            match checked {
                Ok((header, depth)) => {
                    self.known.insert(id, Known { header, depth });
                }
                Err(why) => self.damaged.push(DamagedCheckpoint { path, why }),
            }
        }
        Ok(())
    }

    /// The roots and full index of checkpoint `id`, replaying deltas from the last full one.
    pub(super) fn read(
        &mut self,
        id: CheckpointId,
    ) -> Result<(Vec<PathBuf>, Index), CheckpointError> {
        let Some(known) = self.known.get(&id.0) else {
            return Err(CheckpointError::NoSuchCheckpoint(id));
        };
        let roots = known.header.roots.clone();
        if let Some((latest, index)) = &self.latest
            && *latest == id.0
        {
            return Ok((roots, index.clone()));
        }
        let mut chain = vec![id.0];
        while let Some(parent) = chain
            .last()
            .and_then(|c| self.known.get(c))
            .and_then(|k| k.header.parent)
        {
            chain.push(parent);
        }
        let damaged = |why: String| CheckpointError::Damaged { id, why };
        let mut index = Index::default();
        for cp in chain.into_iter().rev() {
            let path = self.dir.join(CHECKPOINTS).join(file_name(cp));
            let bytes = fs::read(&path).map_err(|e| damaged(format!("{}: {e}", path.display())))?;
            let (_, body) =
                codec::decode(&bytes).map_err(|e| damaged(format!("{}: {e}", path.display())))?;
            index = match body {
                Body::Full(full) => full,
                Body::Delta(delta, not_covered) => index.apply(&delta, not_covered),
            };
        }
        verify::index(&index, roots.len()).map_err(|why| CheckpointError::Refused { id, why })?;
        if self.latest_id() == Some(id) {
            self.latest = Some((id.0, index.clone()));
            self.latest_ours = false;
        }
        Ok((roots, index))
    }
}

pub(super) fn file_name(id: u64) -> String {
    format!("{id:010}{SUFFIX}")
}
