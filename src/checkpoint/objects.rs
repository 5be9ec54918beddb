//! The content-addressed object store: file contents compressed with zstd, one file per
//! distinct content, named by the SHA-256 of the uncompressed bytes (`objects/ab/cdef…`).
//!
//! An object is written once (to a temp file, then renamed), never changed, and shared by
//! every checkpoint that holds that content. Objects are not fsynced as they are written: the
//! caller makes them durable together ([`super::durable::sync_paths`]) before it commits the
//! checkpoint that refers to them. Reading verifies the digest, so an object damaged by a crash is reported, never
//! restored.

use std::cell::RefCell;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::durable::stage;
use super::index::Hash;

/// zstd level: 1 compresses source text about 3-4x at several hundred MB/s.
const LEVEL: i32 = 1;

#[derive(Debug, Clone)]
pub struct ObjectStore {
    dir: PathBuf,
}

pub fn hash_bytes(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

pub fn hex(hash: &Hash) -> String {
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

impl ObjectStore {
    pub fn new(dir: PathBuf) -> ObjectStore {
        ObjectStore { dir }
    }

    pub fn path(&self, hash: &Hash) -> PathBuf {
        let name = hex(hash);
        self.dir.join(&name[..2]).join(&name[2..])
    }

    /// Stores `bytes` under `hash` (their digest) unless that object exists. Returns whether it
    /// wrote one.
    pub fn put(&self, hash: &Hash, bytes: &[u8]) -> io::Result<bool> {
        let path = self.path(hash);
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return Ok(false);
        }
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.dir.clone());
        fs::create_dir_all(&dir)?;
        let compressed = compress(bytes)?;
        stage(&dir, &path, &compressed, None)?.commit()?;
        Ok(true)
    }

    /// The bytes of an object of `size` bytes, checked against its name.
    pub fn get(&self, hash: &Hash, size: u64) -> io::Result<Vec<u8>> {
        let path = self.path(hash);
        let compressed = fs::read(&path)?;
        let size = usize::try_from(size).map_err(|_| io::Error::other("object too large"))?;
        let bytes = zstd::bulk::decompress(&compressed, size).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("stored copy {} is damaged: {e}", path.display()),
            )
        })?;
        if bytes.len() != size || hash_bytes(&bytes) != *hash {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "stored copy {} is damaged (digest mismatch)",
                    path.display()
                ),
            ));
        }
        Ok(bytes)
    }
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
