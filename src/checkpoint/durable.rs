//! Writing files atomically in batches: a file is staged (written to a temp file beside its
//! target), many staged files are fsynced at once on several threads (the disk groups their
//! journal commits), and only then renamed into place. So each file is atomic — a crash
//! leaves the old one or the new one — at a fraction of the cost of one fsync after another.
//!
//! A whole-filesystem `syncfs` is no cheaper on a busy machine: it also waits for every other
//! process's dirty data (measured: 1.4 s with builds running, against 1.3 ms per fsync), so it
//! is used only for batches of thousands of files (a first checkpoint).

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::files::temp_files::{TempFile, temp_name};

/// Threads waiting on fsync at once: they sleep on the disk, not on a core.
const SYNC_THREADS: usize = 8;
/// Above this many files one `syncfs` is cheaper than fsyncing each.
const SYNCFS_ABOVE: usize = 4096;

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
    if items.len() < 4 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(SYNC_THREADS);
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
                Err(_) => out.extend(
                    part.iter()
                        .map(|_| Err(io::Error::other("sync thread failed"))),
                ),
            }
        }
        out
    })
}

/// Makes these files, and their directories' entries, durable. `fs_root` is any directory on
/// the same filesystem, for the `syncfs` of large batches.
pub fn sync_paths(paths: &[PathBuf], fs_root: &Path) -> io::Result<()> {
    if paths.len() > SYNCFS_ABOVE {
        return syncfs(fs_root);
    }
    let dirs: Vec<PathBuf> = paths
        .iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    in_parallel(paths, |p| File::open(p)?.sync_all())
        .into_iter()
        .chain(sync_dirs(&dirs))
        .collect()
}

/// fsync of directories, so renames into them last; failures are the caller's to judge.
pub fn sync_dirs(dirs: &[PathBuf]) -> Vec<io::Result<()>> {
    in_parallel(dirs, |d| File::open(d)?.sync_all())
}

/// `syncfs` on Linux: every dirty page of the filesystem holding `dir`; elsewhere `sync`.
fn syncfs(dir: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let handle = File::open(dir)?;
        // SAFETY: `handle` is an open descriptor for the whole call.
        if unsafe { libc::syncfs(handle.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        // SAFETY: sync(2) takes no arguments and cannot fail.
        unsafe { libc::sync() };
        Ok(())
    }
}
