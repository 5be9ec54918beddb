//! The content-addressed object store: file contents compressed with zstd, each distinct
//! content stored once, found by the SHA-256 of its uncompressed bytes, and kept in pack files
//! (`packs/NNNNNNNNNN.pack`), one per checkpoint that stored anything.
//!
//! A pack is written while a checkpoint is recorded: contents are appended to a temp file as
//! the scan finds them, then [`ObjectStore::flush`] appends the pack's index, fsyncs it once and
//! renames it into place — before the checkpoint that refers to it is committed. One fsync per
//! checkpoint, whatever the number of files, and no file per object (creating 30,000 small
//! files is what made a first checkpoint slow). Layout: the zstd frames, then the index
//! (`count` × hash, offset, compressed length, size), `count`, the SHA-256 of index and count,
//! and the magic `CAIRNPK1`. A pack whose trailer does not check out is ignored (reported by
//! [`ObjectStore::damaged`]); reading an object verifies its digest, so a damaged content is
//! reported for that file, never restored.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::index::Hash;
use crate::files::temp_files::{TempFile, temp_name};

/// zstd level: 1 compresses source text about 3-4x at several hundred MB/s.
const LEVEL: i32 = 1;
const MAGIC: &[u8; 8] = b"CAIRNPK1";
const SUFFIX: &str = ".pack";
const INDEX_ENTRY: usize = 32 + 8 + 4 + 8;
const TRAILER: usize = 4 + 32 + 8;

pub fn hash_bytes(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

#[derive(Debug, Clone, Copy)]
struct Location {
    pack: u64,
    offset: u64,
    clen: u32,
    size: u64,
}

/// The pack being written: a temp file and what it holds so far.
struct Pending {
    tmp: TempFile,
    file: File,
    len: u64,
    /// A write failed: the pack's tail is unknown, so it can never be completed.
    broken: bool,
    entries: Vec<(Hash, Location)>,
    index: HashMap<Hash, usize>,
}

pub struct ObjectStore {
    dir: PathBuf,
    known: HashMap<Hash, Location>,
    next_pack: u64,
    pending: Mutex<Option<Pending>>,
    damaged: Vec<(PathBuf, String)>,
}

impl ObjectStore {
    /// The store in `dir` (created if needed), with the index of every complete pack.
    pub fn open(dir: PathBuf) -> io::Result<ObjectStore> {
        fs::create_dir_all(&dir)?;
        let mut store = ObjectStore {
            dir,
            known: HashMap::new(),
            next_pack: 1,
            pending: Mutex::new(None),
            damaged: Vec::new(),
        };
        let mut packs = Vec::new();
        for entry in fs::read_dir(&store.dir)?.flatten() {
            let name = entry.file_name();
            if let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(SUFFIX))
                .and_then(|n| n.parse::<u64>().ok())
            {
                packs.push((id, entry.path()));
            }
        }
        packs.sort();
        for (id, path) in packs {
            store.next_pack = store.next_pack.max(id.saturating_add(1));
            match read_index(&path) {
                Ok(entries) => {
                    for (hash, offset, clen, size) in entries {
                        let loc = Location {
                            pack: id,
                            offset,
                            clen,
                            size,
                        };
                        store.known.entry(hash).or_insert(loc);
                    }
                }
                Err(e) => store.damaged.push((path, e.to_string())),
            }
        }
        Ok(store)
    }

    /// Pack files ignored because their index did not check out.
    pub fn damaged(&self) -> &[(PathBuf, String)] {
        &self.damaged
    }

    /// Adds `bytes` (whose digest is `hash`) to the pack being written, unless the store
    /// already has it. Returns whether it added it. Safe to call from several threads.
    pub fn put(&self, hash: &Hash, bytes: &[u8]) -> io::Result<bool> {
        if self.known.contains_key(hash) {
            return Ok(false);
        }
        self.add(hash, bytes)
    }

    /// Adds `bytes` to the pack being written even though the store lists their hash: its
    /// stored copy did not read back (a pack damaged or altered since it was indexed). Once
    /// flushed, the new copy is the one read.
    pub fn put_again(&self, hash: &Hash, bytes: &[u8]) -> io::Result<bool> {
        self.add(hash, bytes)
    }

    fn add(&self, hash: &Hash, bytes: &[u8]) -> io::Result<bool> {
        let compressed = compress(bytes)?;
        let mut guard = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if guard.as_ref().is_some_and(|p| p.index.contains_key(hash)) {
            return Ok(false);
        }
        let pending = match guard.as_mut() {
            Some(p) => p,
            None => guard.insert(self.new_pending()?),
        };
        let clen = u32::try_from(compressed.len())
            .map_err(|_| io::Error::other("content too large for a pack"))?;
        if pending.broken {
            return Err(io::Error::other("an earlier write to the pack failed"));
        }
        if let Err(e) = pending.file.write_all(&compressed) {
            pending.broken = true;
            return Err(e);
        }
        let loc = Location {
            pack: self.next_pack,
            offset: pending.len,
            clen,
            size: bytes.len() as u64,
        };
        pending.len += u64::from(clen);
        pending.index.insert(*hash, pending.entries.len());
        pending.entries.push((*hash, loc));
        Ok(true)
    }

    fn new_pending(&self) -> io::Result<Pending> {
        let name = format!("{:010}{SUFFIX}", self.next_pack);
        let path = self
            .dir
            .join(temp_name(&name, std::process::id(), fastrand::u32(..)));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(Pending {
            tmp: TempFile::new(path),
            file,
            len: 0,
            broken: false,
            entries: Vec::new(),
            index: HashMap::new(),
        })
    }

    /// Makes the pack being written complete and durable (index, fsync, rename, directory
    /// fsync). Returns how many objects it held. On error the pack is dropped.
    pub fn flush(&mut self) -> io::Result<usize> {
        let taken = self
            .pending
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(mut pending) = taken else {
            return Ok(0);
        };
        if pending.broken {
            return Err(io::Error::other(
                "a write to the pack failed; checkpoint not recorded",
            ));
        }
        let mut trailer = Vec::with_capacity(pending.entries.len() * INDEX_ENTRY + TRAILER);
        for (hash, loc) in &pending.entries {
            trailer.extend_from_slice(hash);
            trailer.extend_from_slice(&loc.offset.to_le_bytes());
            trailer.extend_from_slice(&loc.clen.to_le_bytes());
            trailer.extend_from_slice(&loc.size.to_le_bytes());
        }
        let count = u32::try_from(pending.entries.len())
            .map_err(|_| io::Error::other("too many objects for one pack"))?;
        trailer.extend_from_slice(&count.to_le_bytes());
        let digest = Sha256::digest(&trailer);
        trailer.extend_from_slice(&digest);
        trailer.extend_from_slice(MAGIC);
        pending.file.write_all(&trailer)?;
        pending.file.sync_all()?;
        drop(pending.file);
        let path = self.dir.join(format!("{:010}{SUFFIX}", self.next_pack));
        fs::rename(pending.tmp.path(), &path)?;
        pending.tmp.persisted();
        File::open(&self.dir)?.sync_all()?;
        let n = pending.entries.len();
        self.known.extend(pending.entries);
        self.next_pack += 1;
        Ok(n)
    }

    /// The complete packs: id, and the hashes of the objects the store reads from it.
    pub fn packs(&self) -> Vec<(u64, Vec<Hash>)> {
        let mut by_pack: HashMap<u64, Vec<Hash>> = HashMap::new();
        for (hash, loc) in &self.known {
            by_pack.entry(loc.pack).or_default().push(*hash);
        }
        let mut out: Vec<_> = by_pack.into_iter().collect();
        out.sort_by_key(|(id, _)| *id);
        out
    }

    /// Removes pack `id` (none of its objects is needed any more) and forgets its objects.
    pub fn remove_pack(&mut self, id: u64) -> io::Result<()> {
        let path = self.dir.join(format!("{id:010}{SUFFIX}"));
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        self.known.retain(|_, loc| loc.pack != id);
        Ok(())
    }

    /// Drops the pack being written (its checkpoint was not committed).
    pub fn discard(&mut self) {
        self.pending
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }

    /// The bytes of an object of `size` bytes, checked against its digest.
    pub fn get(&self, hash: &Hash, size: u64) -> io::Result<Vec<u8>> {
        let Some(loc) = self.known.get(hash) else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "its content is not in the checkpoint store (a pack is missing or damaged)",
            ));
        };
        let path = self.dir.join(format!("{:010}{SUFFIX}", loc.pack));
        let damaged = |why: String| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("stored copy in {} is damaged: {why}", path.display()),
            )
        };
        if loc.size != size {
            return Err(damaged("size mismatch".into()));
        }
        let mut compressed = vec![0; loc.clen as usize];
        File::open(&path)?.read_exact_at(&mut compressed, loc.offset)?;
        let size = usize::try_from(size).map_err(|_| damaged("too large".into()))?;
        let bytes =
            zstd::bulk::decompress(&compressed, size).map_err(|e| damaged(e.to_string()))?;
        if bytes.len() != size || hash_bytes(&bytes) != *hash {
            return Err(damaged("digest mismatch".into()));
        }
        Ok(bytes)
    }
}

/// The index of a complete pack: `(hash, offset, compressed length, size)` per object.
fn read_index(path: &Path) -> io::Result<Vec<(Hash, u64, u32, u64)>> {
    let bad = |why: &str| io::Error::new(io::ErrorKind::InvalidData, why.to_string());
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    if len < TRAILER as u64 {
        return Err(bad("cut short"));
    }
    let mut tail = [0u8; TRAILER];
    file.read_exact_at(&mut tail, len - TRAILER as u64)?;
    if &tail[TRAILER - 8..] != MAGIC {
        return Err(bad("not a pack, or cut short"));
    }
    let mut count = [0u8; 4];
    count.copy_from_slice(&tail[..4]);
    let count = u32::from_le_bytes(count) as u64;
    let index_len = count * INDEX_ENTRY as u64;
    let Some(index_start) = len.checked_sub(TRAILER as u64 + index_len) else {
        return Err(bad("index larger than the file"));
    };
    let mut index = vec![0u8; index_len as usize + 4];
    file.read_exact_at(&mut index, index_start)?;
    if Sha256::digest(&index).as_slice() != &tail[4..36] {
        return Err(bad("index digest mismatch"));
    }
    let mut out = Vec::with_capacity(count as usize);
    for e in index[..index_len as usize].chunks_exact(INDEX_ENTRY) {
        let mut hash: Hash = [0; 32];
        hash.copy_from_slice(&e[..32]);
        let mut offset = [0u8; 8];
        offset.copy_from_slice(&e[32..40]);
        let mut clen = [0u8; 4];
        clen.copy_from_slice(&e[40..44]);
        let mut size = [0u8; 8];
        size.copy_from_slice(&e[44..52]);
        let (offset, clen) = (u64::from_le_bytes(offset), u32::from_le_bytes(clen));
        if offset.saturating_add(u64::from(clen)) > index_start {
            return Err(bad("object outside the pack"));
        }
        out.push((hash, offset, clen, u64::from_le_bytes(size)));
    }
    Ok(out)
}

/// zstd at [`LEVEL`], with one compression context per thread: creating a context costs more
/// than compressing a small source file.
fn compress(bytes: &[u8]) -> io::Result<Vec<u8>> {
    thread_local! {
        static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { RefCell::new(None) };
    }
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let compressor = match slot.as_mut() {
            Some(c) => c,
            None => slot.insert(zstd::bulk::Compressor::new(LEVEL)?),
        };
        compressor.compress(bytes)
    })
}
