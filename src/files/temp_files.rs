//! The temporary files of atomic writes: their names, a guard that removes one unless it was
//! renamed into place, and the sweep of those a dead cairn process left behind.
//!
//! A temp file is named `.NAME.cairn-PID-RAND.tmp` (RAND: 8 lowercase hex digits) in the
//! directory of the file it will replace. A clean exit, an error or a panic never leaves one
//! ([`TempFile`] removes it on drop). Only `kill -9` or a power cut can; so the first write in
//! a directory in each process sweeps it: an entry is removed only when its name has exactly
//! that shape, it is a regular file (a symlink or directory is never touched, and nothing is
//! followed), and its PID names no living process (`kill(pid, 0)` answers ESRCH). Our own
//! PID's files are kept: they may belong to a write running on another thread.
//!
//! Caveat: a process in another PID namespace writing into the same directory looks dead from
//! here; removing its temp file makes its rename fail with an error, never loses data.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The part of the name between the original name and the PID.
const MARKER: &str = ".cairn-";
const SUFFIX: &str = ".tmp";
/// File names are at most 255 bytes on the filesystems we meet; keep room for the decoration.
const MAX_NAME_BYTES: usize = 200;

/// The temp file name for a write of `target_name` by process `pid`.
pub fn temp_name(target_name: &str, pid: u32, rand: u32) -> String {
    let mut cut = target_name.len().min(MAX_NAME_BYTES);
    while !target_name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(".{}{MARKER}{pid}-{rand:08x}{SUFFIX}", &target_name[..cut])
}

/// The PID in a name of exactly our temp-file shape, else `None`.
pub fn temp_owner(file_name: &str) -> Option<u32> {
    let inner = file_name.strip_prefix('.')?.strip_suffix(SUFFIX)?;
    let (rest, rand) = inner.rsplit_once('-')?;
    let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    if rand.len() != 8 || !rand.chars().all(hex) {
        return None;
    }
    let (name, pid) = rest.rsplit_once(MARKER)?;
    if name.is_empty() || pid.is_empty() || !pid.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // Zero and anything past i32 would make kill(2) address process groups: not ours.
    pid.parse::<u32>()
        .ok()
        .filter(|&p| p > 0 && i32::try_from(p).is_ok())
}

/// Whether no process with this PID exists. Unsure answers (EPERM: it exists but is not ours)
/// count as alive.
pub fn process_is_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; kill(2) only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Remove the temp files dead cairn processes left in `dir` (see the module docs). Returns
/// the paths removed. Errors (an unreadable directory, a file gone meanwhile) are skipped.
pub fn sweep_stale(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temp_owner) else {
            continue;
        };
        if pid == me || !process_is_gone(pid) {
            continue;
        }
        // `file_type` does not follow symlinks: a link is never a regular file here.
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        // unlink(2) removes a name, never what a symlink points to, even if swapped in now.
        if fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Sweep `dir` once per process: the first write there pays for it, later ones do not.
pub fn sweep_once(dir: &Path) {
    static SWEPT: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let swept = SWEPT.get_or_init(Default::default);
    let first = match swept.lock() {
        Ok(mut s) => s.insert(dir.to_path_buf()),
        Err(p) => p.into_inner().insert(dir.to_path_buf()),
    };
    if first {
        let removed = sweep_stale(dir);
        if !removed.is_empty() {
            tracing::info!(
                "removed {} temp file(s) of dead cairn processes in {}",
                removed.len(),
                dir.display()
            );
        }
    }
}

/// A temp file that is removed when dropped, unless [`TempFile::persisted`] says it was
/// renamed into place. Covers every early return and a panic alike.
pub struct TempFile {
    path: PathBuf,
    persisted: bool,
}

impl TempFile {
    pub fn new(path: PathBuf) -> TempFile {
        TempFile {
            path,
            persisted: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file now lives under its final name; nothing to remove.
    pub fn persisted(mut self) {
        self.persisted = true;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_near_misses_are_not_ours() {
        let n = temp_name("main.rs", 4242, 0xdead_beef);
        assert_eq!(n, ".main.rs.cairn-4242-deadbeef.tmp");
        assert_eq!(temp_owner(&n), Some(4242));
        assert_eq!(
            temp_owner(&temp_name("a-b.cairn-1-00000000.tmp", 7, 1)),
            Some(7)
        );
        for hostile in [
            "main.rs.cairn-4242-deadbeef.tmp",   // no leading dot
            "..cairn-4242-deadbeef.tmp",         // no name
            ".main.rs.cairn-4242-deadbee.tmp",   // 7 hex digits
            ".main.rs.cairn-4242-DEADBEEF.tmp",  // upper case
            ".main.rs.cairn-4242-deadbeefx.tmp", // 9 characters
            ".main.rs.cairn--deadbeef.tmp",      // no pid
            ".main.rs.cairn-0-deadbeef.tmp",     // pid 0: a process group
            ".main.rs.cairn-4294967295-deadbeef.tmp",
            ".main.rs.cairn-42a-deadbeef.tmp",
            ".main.rs.cairn-4242-deadbeef.tmp.bak",
            ".main.rs.cairn-4242-deadbeef.tm",
            ".main.rs.kairn-4242-deadbeef.tmp",
        ] {
            assert_eq!(temp_owner(hostile), None, "{hostile}");
        }
    }

    #[test]
    fn long_names_are_cut_on_a_char_boundary() {
        let long = "é".repeat(200);
        let n = temp_name(&long, 1, 2);
        assert!(n.len() <= 255, "{}", n.len());
        assert_eq!(temp_owner(&n), Some(1));
    }

    #[test]
    fn our_own_process_is_alive() {
        assert!(!process_is_gone(std::process::id()));
        assert!(!process_is_gone(0));
    }
}
