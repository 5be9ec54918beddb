//! The content-addressed object store: file contents compressed with zstd, one file per
//! distinct content, named by the SHA-256 of the uncompressed bytes (`objects/ab/cdef…`).
//!
//! An object is written once (to a temp file, then renamed), never changed, and shared by
//! every checkpoint that holds that content. Objects are not fsynced one by one: the caller
//! makes them durable in one step ([`sync_dir`]) before it commits the checkpoint that refers
//! to them. Reading verifies the digest, so an object damaged by a crash is reported, never
//! restored.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::index::Hash;
use crate::files::temp_files::{TempFile, temp_name};

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
        let compressed = zstd::bulk::compress(bytes, LEVEL)?;
        write_new(&dir, &path, &compressed, None, false)?;
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

/// Writes `bytes` to a fresh temp file in `dir` (mode `mode` if given), optionally fsyncs it,
/// and renames it over `target`. `target` itself is replaced, never followed: if it is a
/// symlink, the link is replaced. The temp file never outlives an error.
pub fn write_new(
    dir: &Path,
    target: &Path,
    bytes: &[u8],
    mode: Option<u32>,
    fsync: bool,
) -> io::Result<()> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let mut attempt = 0;
    let (tmp, mut file) = loop {
        let tmp = dir.join(temp_name(&name, std::process::id(), fastrand::u32(..)));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (TempFile::new(tmp), f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    file.write_all(bytes)?;
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    if fsync {
        file.sync_all()?;
    }
    drop(file);
    fs::rename(tmp.path(), target)?;
    tmp.persisted();
    Ok(())
}

/// Makes every write so far to the filesystem holding `dir` durable: `syncfs` on Linux (one
/// call however many objects were written), else a sync of the directory itself.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    let handle = File::open(dir)?;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: `handle` is an open descriptor for the whole call.
        if unsafe { libc::syncfs(handle.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        handle.sync_all()
    }
}
