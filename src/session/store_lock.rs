//! The lock on a session's `/rewind` store: the file `LIVE` in the store's directory, holding
//! the pid of the process that uses the store, with an exclusive `flock` held as long as it
//! does. A session takes it before it opens its store and holds it for its life, so a store is
//! live while its lock is held; a `LIVE` file left by a crash, whose lock nobody holds, means
//! the session has ended. Whoever prunes another session's store (a session keeping the
//! project to its budget, `cairn checkpoints gc`) takes the same lock first, without waiting:
//! a live store is never pruned from outside, and a session does not start using its store
//! while another process prunes it.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::Duration;

/// The lock file's name inside the store's directory.
pub const LIVE_FILE: &str = "LIVE";

/// A store's lock, held until dropped.
#[derive(Debug)]
pub struct StoreLock {
    file: File,
}

impl StoreLock {
    /// Takes the lock of the store in `dir` without waiting: `Ok(None)` when another holder
    /// has it (another process, or another handle in this one).
    pub fn try_take(dir: &Path) -> std::io::Result<Option<StoreLock>> {
        std::fs::create_dir_all(dir)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(LIVE_FILE))?;
        // SAFETY: `flock` on a descriptor owned by `file`, which outlives the call.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(Some(StoreLock { file }));
        }
        let e = std::io::Error::last_os_error();
        match e.kind() {
            ErrorKind::WouldBlock => Ok(None),
            _ => Err(e),
        }
    }

    /// Takes the lock for a session that will use the store, writing its pid in the file.
    /// Waits up to a second for a process pruning the store to finish; `Ok(None)`: another
    /// process still holds it.
    pub fn take_for_session(dir: &Path) -> std::io::Result<Option<StoreLock>> {
        for _ in 0..20 {
            if let Some(mut lock) = StoreLock::try_take(dir)? {
                lock.file.set_len(0)?;
                writeln!(lock.file, "{}", std::process::id())?;
                return Ok(Some(lock));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(None)
    }
}

/// Whether a session holds the lock of the store in `dir` (a store with no `LIVE` file is not
/// live).
pub fn is_live(dir: &Path) -> bool {
    if !dir.join(LIVE_FILE).exists() {
        return false;
    }
    matches!(StoreLock::try_take(dir), Ok(None))
}
