//! The read-file state: per absolute path, what the model last saw of a file.
//!
//! Read records an entry (content when the whole file was loaded, mtime, size, a hash of the
//! bytes, the text format and the line ranges shown); Write/Edit/MultiEdit replace it after
//! their own write. The guards consult it: an existing file must have an entry before it is
//! written, an edit must fall inside seen lines, and an entry whose file changed on disk sends
//! the edit through the merge path. The watcher marks entries stale or drops them. For a file
//! read through the client (`files::client`) the hash is of the client's text, and that hash
//! (not the mtime) is what tells a later edit whether the buffer changed since.
//!
//! Invariants: one `Mutex` guards everything and is never held across I/O or an await (the
//! only calls made under it are non-blocking sends to the watcher thread); content is bounded
//! by least-recently-used eviction past [`DEFAULT_CONTENT_LIMIT`] bytes — an evicted entry
//! keeps its metadata, only the merge base is lost. The directory of every tracked file is
//! watched exactly while at least one of its files is tracked (reference counts).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use super::encoding::TextFormat;

/// Content kept in memory across all entries before the least recently used is dropped.
pub const DEFAULT_CONTENT_LIMIT: usize = 100 * 1024 * 1024;

/// Where an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntrySource {
    Read,
    OwnWrite,
}

/// A copy of one entry, as the tools see it (content is shared, not copied).
#[derive(Debug, Clone, PartialEq)]
pub struct FileSnapshot {
    /// Logical text (see `files::encoding`) when the whole file was loaded; the merge base.
    pub content: Option<Arc<str>>,
    pub mtime: SystemTime,
    pub size: u64,
    /// [`content_hash`] of the bytes on disk, when they were all read.
    pub hash: Option<u64>,
    pub format: TextFormat,
    /// 1-based inclusive line ranges the model has seen, sorted and merged.
    pub ranges: Vec<(usize, usize)>,
    pub source: EntrySource,
    /// Changed on disk since the model saw it (set by the watcher).
    pub stale: bool,
    /// `(offset, limit)` of the last Read, for answering an identical Read briefly.
    pub last_read: Option<(usize, usize)>,
}

impl FileSnapshot {
    /// Whether the model has seen every line of `start..=end` (1-based).
    pub fn has_seen(&self, start: usize, end: usize) -> bool {
        self.ranges.iter().any(|&(s, e)| s <= start && end <= e)
    }
}

/// Watches directories for the state. Implemented by `files::watcher`; calls must not block.
pub trait DirWatch: Send + Sync + std::fmt::Debug {
    fn watch(&self, dir: &Path);
    fn unwatch(&self, dir: &Path);
}

#[derive(Debug)]
struct Entry {
    snap: FileSnapshot,
    last_used: u64,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<PathBuf, Entry>,
    content_bytes: usize,
    tick: u64,
    dir_refs: HashMap<PathBuf, usize>,
    watcher: Option<Arc<dyn DirWatch>>,
}

/// Shared by every file tool; see the module docs.
#[derive(Debug)]
pub struct ReadFileState {
    inner: Mutex<Inner>,
    /// Held from the last disk check to the rename of every write (the critical section).
    write_lock: Mutex<()>,
    /// Held across a write through the client (`files::client`), which awaits the client:
    /// one such write at a time per session, sub-agents' included.
    client_write_lock: tokio::sync::Mutex<()>,
    content_limit: usize,
    /// Told of every write recorded, after the record (the language servers' after-edit
    /// check); set once.
    write_hook: std::sync::OnceLock<WriteHook>,
}

/// What [`ReadFileState::set_write_hook`] takes: called with the path of each write and the
/// tool call that made it, with no lock held; it must not block (spawn what takes time).
#[derive(Clone)]
pub struct WriteHook(pub Arc<WriteHookFn>);

/// The write hook's function: the path written and the tool call that wrote it.
pub type WriteHookFn = dyn Fn(&Path, Option<&str>) + Send + Sync;

impl std::fmt::Debug for WriteHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WriteHook")
    }
}

impl Default for ReadFileState {
    fn default() -> Self {
        ReadFileState::with_content_limit(DEFAULT_CONTENT_LIMIT)
    }
}

/// A fast non-cryptographic hash of file bytes, for "is this still the same file". Four
/// independent lanes over 32-byte blocks keep the multiplier pipeline busy.
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut h = ContentHasher::new(bytes.len() as u64);
    h.update(bytes);
    h.finish()
}

/// [`content_hash`] fed in pieces (a large file read block by block gives the same value).
#[derive(Debug, Clone)]
pub struct ContentHasher {
    lanes: [u64; 4],
    carry: [u8; 32],
    carried: usize,
    expected_len: u64,
    seen_len: u64,
}

const HASH_K: u64 = 0x517c_c1b7_2722_0a95;

impl ContentHasher {
    /// `len` is the total length that will be fed; it seeds the hash.
    pub fn new(len: u64) -> Self {
        ContentHasher {
            lanes: [
                len,
                0x9e37_79b9_7f4a_7c15,
                0x243f_6a88_85a3_08d3,
                0x1319_8a2e_0370_7344,
            ],
            carry: [0; 32],
            carried: 0,
            expected_len: len,
            seen_len: 0,
        }
    }

    fn block(&mut self, b: &[u8]) {
        for (i, lane) in self.lanes.iter_mut().enumerate() {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[i * 8..i * 8 + 8]);
            *lane = (lane.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(HASH_K);
        }
    }

    pub fn update(&mut self, mut bytes: &[u8]) {
        self.seen_len += bytes.len() as u64;
        if self.carried > 0 {
            let take = (32 - self.carried).min(bytes.len());
            self.carry[self.carried..self.carried + take].copy_from_slice(&bytes[..take]);
            self.carried += take;
            bytes = &bytes[take..];
            if self.carried < 32 {
                return;
            }
            let carry = self.carry;
            self.block(&carry);
            self.carried = 0;
        }
        let mut blocks = bytes.chunks_exact(32);
        for b in &mut blocks {
            self.block(b);
        }
        let rest = blocks.remainder();
        self.carry[..rest.len()].copy_from_slice(rest);
        self.carried = rest.len();
    }

    pub fn finish(&self) -> u64 {
        let mut h = self.lanes.iter().fold(0u64, |acc, &l| {
            (acc.rotate_left(5) ^ l).wrapping_mul(HASH_K)
        });
        for &b in &self.carry[..self.carried] {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(HASH_K);
        }
        h
    }

    /// The hash, or None when the bytes fed differ in length from the length announced (the
    /// file changed while it was read).
    pub fn finish_checked(&self) -> Option<u64> {
        (self.seen_len == self.expected_len).then(|| self.finish())
    }
}

/// What a Read saw.
#[derive(Debug, Clone)]
pub struct ReadRecord {
    pub content: Option<Arc<str>>,
    pub mtime: SystemTime,
    pub size: u64,
    pub hash: Option<u64>,
    pub format: TextFormat,
    /// 1-based inclusive lines shown (None for an empty file or an offset past the end).
    pub shown: Option<(usize, usize)>,
    pub offset: usize,
    pub limit: usize,
}

/// What our own write left on disk.
#[derive(Debug, Clone)]
pub struct WriteRecord {
    /// The text written, kept for merging a later outside change (None: too large to keep).
    pub content: Option<Arc<str>>,
    pub mtime: SystemTime,
    pub size: u64,
    pub hash: u64,
    pub format: TextFormat,
    /// Lines the model knows after the write.
    pub ranges: Vec<(usize, usize)>,
    /// The tool call that wrote (told to the write hook).
    pub call_id: Option<String>,
}

impl ReadFileState {
    pub fn with_content_limit(content_limit: usize) -> Self {
        ReadFileState {
            inner: Mutex::new(Inner::default()),
            write_lock: Mutex::new(()),
            client_write_lock: tokio::sync::Mutex::new(()),
            content_limit,
            write_hook: std::sync::OnceLock::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The critical section of a write: hold this from the last check of the disk to the rename.
    pub fn lock_writes(&self) -> MutexGuard<'_, ()> {
        match self.write_lock.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The critical section of a write through the client: from reading the client's text to
    /// recording the write. It spans awaits, so it is not [`Self::lock_writes`].
    pub async fn lock_client_writes(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.client_write_lock.lock().await
    }

    /// Connect the directory watcher; directories already tracked are watched at once.
    pub fn set_watcher(&self, watcher: Arc<dyn DirWatch>) {
        let mut inner = self.lock();
        for dir in inner.dir_refs.keys() {
            watcher.watch(dir);
        }
        inner.watcher = Some(watcher);
    }

    /// Be told of every write recorded from now on. Only the first hook set is kept; returns
    /// whether this one was.
    pub fn set_write_hook(&self, hook: WriteHook) -> bool {
        self.write_hook.set(hook).is_ok()
    }

    pub fn get(&self, path: &Path) -> Option<FileSnapshot> {
        let mut inner = self.lock();
        inner.tick += 1;
        let tick = inner.tick;
        inner.entries.get_mut(path).map(|e| {
            e.last_used = tick;
            e.snap.clone()
        })
    }

    pub fn contains(&self, path: &Path) -> bool {
        self.lock().entries.contains_key(path)
    }

    pub fn paths(&self) -> Vec<PathBuf> {
        self.lock().entries.keys().cloned().collect()
    }

    /// Record a Read. Ranges accumulate while the file is unchanged (same mtime and size, and
    /// the same hash when both reads hashed the text: a client's buffer changes under an
    /// unchanged file on disk); a changed file starts over.
    pub fn record_read(&self, path: &Path, r: ReadRecord) {
        let mut inner = self.lock();
        let unchanged = inner.entries.get(path).filter(|e| {
            !e.snap.stale
                && e.snap.mtime == r.mtime
                && e.snap.size == r.size
                && (e.snap.hash.is_none() || r.hash.is_none() || e.snap.hash == r.hash)
        });
        let mut ranges = unchanged.map(|e| e.snap.ranges.clone()).unwrap_or_default();
        let old_content = unchanged.and_then(|e| e.snap.content.clone());
        let old_hash = unchanged.and_then(|e| e.snap.hash);
        if let Some(shown) = r.shown {
            add_range(&mut ranges, shown);
        }
        let snap = FileSnapshot {
            content: r.content.or(old_content),
            mtime: r.mtime,
            size: r.size,
            hash: r.hash.or(old_hash),
            format: r.format,
            ranges,
            source: EntrySource::Read,
            stale: false,
            last_read: Some((r.offset, r.limit)),
        };
        self.insert(&mut inner, path, snap);
    }

    /// Record our own write (the watcher will recognise it by mtime, size and hash).
    pub fn record_write(&self, path: &Path, w: WriteRecord) {
        let mut inner = self.lock();
        let mut ranges = Vec::new();
        for r in w.ranges {
            add_range(&mut ranges, r);
        }
        let snap = FileSnapshot {
            content: w.content,
            mtime: w.mtime,
            size: w.size,
            hash: Some(w.hash),
            format: w.format,
            ranges,
            source: EntrySource::OwnWrite,
            stale: false,
            last_read: None,
        };
        self.insert(&mut inner, path, snap);
        drop(inner);
        if let Some(hook) = self.write_hook.get() {
            (hook.0)(path, w.call_id.as_deref());
        }
    }

    fn insert(&self, inner: &mut Inner, path: &Path, snap: FileSnapshot) {
        inner.tick += 1;
        let tick = inner.tick;
        let added = snap.content.as_ref().map_or(0, |c| c.len());
        let entry = Entry {
            snap,
            last_used: tick,
        };
        match inner.entries.insert(path.to_path_buf(), entry) {
            Some(old) => {
                inner.content_bytes -= old.snap.content.as_ref().map_or(0, |c| c.len());
            }
            None => {
                if let Some(dir) = path.parent() {
                    let n = inner.dir_refs.entry(dir.to_path_buf()).or_insert(0);
                    *n += 1;
                    if *n == 1
                        && let Some(w) = &inner.watcher
                    {
                        w.watch(dir);
                    }
                }
            }
        }
        inner.content_bytes += added;
        self.evict(inner, path);
    }

    /// Drop content of the least recently used entries until under the limit; `keep` is the
    /// entry just touched and keeps its content even when it alone is over the limit.
    fn evict(&self, inner: &mut Inner, keep: &Path) {
        while inner.content_bytes > self.content_limit {
            let victim = inner
                .entries
                .iter()
                .filter(|(p, e)| e.snap.content.is_some() && p.as_path() != keep)
                .min_by_key(|(_, e)| e.last_used)
                .map(|(p, _)| p.clone());
            let Some(victim) = victim else { break };
            if let Some(e) = inner.entries.get_mut(&victim)
                && let Some(c) = e.snap.content.take()
            {
                inner.content_bytes -= c.len();
            }
        }
    }

    /// Mark an entry stale (changed on disk). Returns whether it was tracked.
    pub fn mark_stale(&self, path: &Path) -> bool {
        let mut inner = self.lock();
        match inner.entries.get_mut(path) {
            Some(e) => {
                e.snap.stale = true;
                e.snap.last_read = None;
                true
            }
            None => false,
        }
    }

    /// The model no longer has the earlier Read results (the conversation was compacted): a
    /// repeated Read must return the content again, not refer to a result that is gone.
    pub fn forget_read_results(&self) {
        for e in self.lock().entries.values_mut() {
            e.snap.last_read = None;
        }
    }

    /// Update mtime/size after a change that left the bytes as they were.
    pub fn touch(&self, path: &Path, mtime: SystemTime, size: u64) {
        if let Some(e) = self.lock().entries.get_mut(path) {
            e.snap.mtime = mtime;
            e.snap.size = size;
        }
    }

    /// Forget a file (deleted or renamed away). Returns whether it was tracked.
    pub fn remove(&self, path: &Path) -> bool {
        let mut inner = self.lock();
        let Some(old) = inner.entries.remove(path) else {
            return false;
        };
        inner.content_bytes -= old.snap.content.as_ref().map_or(0, |c| c.len());
        if let Some(dir) = path.parent()
            && let Some(n) = inner.dir_refs.get_mut(dir)
        {
            *n -= 1;
            if *n == 0 {
                inner.dir_refs.remove(dir);
                if let Some(w) = &inner.watcher {
                    w.unwatch(dir);
                }
            }
        }
        true
    }

    /// Bytes of content held (for tests and diagnostics).
    pub fn content_bytes(&self) -> usize {
        self.lock().content_bytes
    }

    /// Directories watched right now, with how many tracked files each holds.
    pub fn watched_dirs(&self) -> Vec<(PathBuf, usize)> {
        let mut v: Vec<_> = self
            .lock()
            .dir_refs
            .iter()
            .map(|(d, n)| (d.clone(), *n))
            .collect();
        v.sort();
        v
    }
}

/// Insert a 1-based inclusive range, merging overlapping and touching ranges.
pub fn add_range(ranges: &mut Vec<(usize, usize)>, r: (usize, usize)) {
    ranges.push(r);
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for &(s, e) in ranges.iter() {
        match merged.last_mut() {
            Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    *ranges = merged;
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
