//! Writing files atomically in batches: a file is staged (written to a temp file beside its
//! target), many staged files are fsynced at once on several threads (they wait on the disk
//! together rather than one after another), and only then renamed into place. So each file is
//! atomic — a crash leaves the old one or the new one. (A whole-filesystem `syncfs` is no
//! cheaper on a busy machine: it also waits for every other process's dirty data — 1.4 s
//! measured with builds running, against 1.3 ms per fsync.)

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::files::temp_files::{TempFile, temp_name};

/// Threads waiting on fsync at once: they sleep on the disk, not on a core.
const SYNC_THREADS: usize = 8;

/// A file written under a temp name, not yet renamed over its target.
pub struct Staged {
    tmp: TempFile,
    file: File,
    target: PathBuf,
}

/// Writes `bytes` to a fresh temp file in `dir` (the target's directory), with `mode` if given.
/// The temp file never outlives an error or a dropped [`Staged`].
pub fn stage(dir: &Path, target: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<Staged> {
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
    Ok(Staged {
        tmp,
        file,
        target: target.to_path_buf(),
    })
}

impl Staged {
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_all()
    }

    /// Renames the temp file over the target: the target itself is replaced, never followed
    /// (a symlink there is replaced by the file).
    pub fn commit(self) -> io::Result<()> {
        let Staged { tmp, file, target } = self;
        drop(file);
        fs::rename(tmp.path(), &target)?;
        tmp.persisted();
        Ok(())
    }
}

/// `f` on every item, on up to [`SYNC_THREADS`] threads; the results in item order.
pub fn in_parallel<T: Sync>(
    items: &[T],
    f: impl Fn(&T) -> io::Result<()> + Sync,
) -> Vec<io::Result<()>> {
    map_parallel(items, SYNC_THREADS, 4, f)
}

/// `f` on every item, on up to `threads` threads when there are at least `min_items`; the
/// results in item order. A thread that panicked (a bug) fails its items, nothing is lost.
pub fn map_parallel<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    min_items: usize,
    f: impl Fn(&T) -> io::Result<R> + Sync,
) -> Vec<io::Result<R>> {
    if threads <= 1 || items.len() < min_items.max(2) {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<_>>()))
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for (h, part) in handles.into_iter().zip(items.chunks(chunk)) {
            match h.join() {
                Ok(results) => out.extend(results),
                Err(_) => out.extend(part.iter().map(|_| Err(io::Error::other("internal error")))),
            }
        }
        out
    })
}
