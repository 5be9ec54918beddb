//! Writing files atomically in batches: a file is staged (written to a temp file beside its
//! target), many staged files are fsynced at once on several threads (they wait on the disk
//! together rather than one after another), and only then renamed into place. So each file is
//! atomic — a crash leaves the old one or the new one. (A whole-filesystem `syncfs` is no
//! cheaper on a busy machine: it also waits for every other process's dirty data — 1.4 s
//! measured with builds running, against 1.3 ms per fsync.) A checkpoint file itself is
//! written the same way, one at a time ([`CheckpointStore::commit`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::CheckpointError;
use super::codec::{self, BodyRef, Header};
use super::store::{CHECKPOINTS, CheckpointStore, file_name};
use crate::files::temp_files::{TempFile, temp_name};

impl CheckpointStore {
    /// Writes a checkpoint file after the objects it names, atomically (renamed into place),
    /// and durably — except the first checkpoint this store writes when it names no new
    /// objects (a session's first snapshot of files already on disk): it is synced with the
    /// next checkpoint, before that one is written, so a checkpoint is never durable while
    /// the one it is based on is not. Until then a crash may lose it (it is then reported
    /// damaged, never misread), and with it only a state the files on disk still hold unless
    /// a later checkpoint, which syncs it, recorded a change.
    pub(super) fn commit(
        &mut self,
        header: &Header,
        body: BodyRef<'_>,
    ) -> Result<(), CheckpointError> {
        let cp_dir = self.dir.join(CHECKPOINTS);
        let path = cp_dir.join(file_name(header.id));
        let err = |source| CheckpointError::Store {
            path: path.clone(),
            source,
        };
        let bytes = codec::encode(header, body).map_err(err)?;
        let objects = self.objects.flush().map_err(err)?;
        if let Some(earlier) = self.unsynced.take() {
            // It may be gone (pruned): nothing to sync then.
            if let Ok(f) = fs::File::open(&earlier) {
                f.sync_all().map_err(err)?;
            }
        }
        let defer = objects == 0 && self.next_id == 1 && self.known.is_empty();
        let staged = stage(&cp_dir, &path, &bytes, None).map_err(err)?;
        if !defer {
            staged.sync().map_err(err)?;
        }
        staged.commit().map_err(err)?;
        if defer {
            self.unsynced = Some(path);
        } else if let Ok(d) = fs::File::open(&cp_dir) {
            // Durability of the rename (and of an earlier deferred one); the checkpoint is
            // complete either way.
            let _ = d.sync_all();
        }
        Ok(())
    }
}

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
