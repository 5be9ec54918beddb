//! Atomic file writes: a crash mid-write leaves the old file or the new one, never a mix.
//!
//! The bytes go to a temporary file in the same directory (so the rename cannot cross
//! filesystems), which is fsynced and then renamed over the target; the directory is fsynced
//! afterwards on a best-effort basis. Writing through a symlink writes its final target, so the
//! link stays a link. The target's permission bits are kept; a new file gets the default mode.
//! Parent directories are created as needed. The temp file never outlives a failed write;
//! leftovers of a killed process are swept by the next write in that directory
//! ([`super::temp_files`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::paths::resolve_symlink_chain;
use super::temp_files::{TempFile, sweep_once, temp_name};

/// What the file looks like right after our write, so the watcher can recognise it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteStamp {
    pub mtime: SystemTime,
    pub size: u64,
}

/// The path a write to `path` really lands on: the end of its symlink chain.
pub fn write_target(path: &Path) -> io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => resolve_symlink_chain(path)
            .map(|c| c.resolved)
            .map_err(|e| io::Error::other(e.to_string())),
        _ => Ok(path.to_path_buf()),
    }
}

/// Write `bytes` to `path` atomically (see the module docs). Returns the stamp of the result.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<WriteStamp> {
    let target = write_target(path)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let existing = fs::metadata(&target).ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory", target.display()),
        ));
    }
    let existing_mode = existing.map(|m| m.permissions());
    // Leftovers of a cairn killed mid-write in this directory (once per process).
    sweep_once(&dir);
    replace_via_temp(&dir, &target, |file| {
        file.write_all(bytes)?;
        if let Some(perms) = &existing_mode {
            file.set_permissions(perms.clone())?;
        }
        Ok(())
    })?;
    // Make the rename itself durable; failure here does not undo a completed write.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    let meta = fs::metadata(&target)?;
    Ok(WriteStamp {
        mtime: meta.modified()?,
        size: meta.len(),
    })
}

/// Create a temp file in `dir`, let `fill` write it, fsync it and rename it over `target`.
/// On any error (or a panic) the temp file is removed: only a killed process leaves one.
fn replace_via_temp(
    dir: &Path,
    target: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let (tmp, mut file) = create_temp(dir, target)?;
    fill(&mut file)?;
    file.sync_all()?;
    drop(file);
    fs::rename(tmp.path(), target)?;
    tmp.persisted();
    Ok(())
}

fn create_temp(dir: &Path, target: &Path) -> io::Result<(TempFile, File)> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let mut last_err = None;
    for _ in 0..16 {
        let tmp = dir.join(temp_name(&name, std::process::id(), fastrand::u32(..)));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((TempFile::new(tmp), f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::other("could not create a temporary file")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn creates_parents_and_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("a/b/c.txt");
        let stamp = write_atomic(&p, b"hello").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"hello");
        assert_eq!(stamp.size, 5);
        // No temp files left behind.
        let names: Vec<_> = fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("c.txt")]);
    }

    #[test]
    fn keeps_mode_bits() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("run.sh");
        fs::write(&p, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o751)).unwrap();
        write_atomic(&p, b"#!/bin/sh\necho hi\n").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o751
        );
    }

    #[test]
    fn writes_through_symlink_and_keeps_link() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real.txt");
        let link = tmp.path().join("link.txt");
        fs::write(&real, "old").unwrap();
        symlink("real.txt", &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_error_or_a_panic_mid_write_leaves_no_temp_file() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("t.txt");
        fs::write(&target, "old").unwrap();
        let err = replace_via_temp(tmp.path(), &target, |f| {
            f.write_all(b"half of it")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(names_in(tmp.path()), vec!["t.txt"]);
        assert_eq!(fs::read_to_string(&target).unwrap(), "old");

        let panicked = std::panic::catch_unwind(|| {
            let _ = replace_via_temp(tmp.path(), &target, |f| {
                f.write_all(b"half")?;
                panic!("a bug mid-write");
            });
        });
        assert!(panicked.is_err());
        assert_eq!(names_in(tmp.path()), vec!["t.txt"]);
        assert_eq!(fs::read_to_string(&target).unwrap(), "old");
    }

    /// The PID of a process killed with SIGKILL (as by `kill -9`) and reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        child.kill().unwrap();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn the_next_write_sweeps_temp_files_of_dead_processes_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let dead = dead_pid();
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let stale = format!(".big.bin.cairn-{dead}-0badc0de.tmp");
        let live_other = format!(".big.bin.cairn-{}-0badc0de.tmp", sleeper.id());
        let ours = format!(".big.bin.cairn-{}-12345678.tmp", std::process::id());
        let hostile = [
            format!("big.bin.cairn-{dead}-0badc0de.tmp"),
            format!(".big.bin.cairn-{dead}-0badc0d.tmp"),
            format!(".big.bin.cairn-{dead}-0badc0de.tmp.keep"),
            format!(".big.bin.kairn-{dead}-0badc0de.tmp"),
        ];
        for name in [&stale, &live_other, &ours]
            .into_iter()
            .chain(hostile.iter())
        {
            fs::write(dir.join(name), vec![b'x'; 1024]).unwrap();
        }
        // Right shape, dead PID, but a symlink (to a file worth keeping) and a directory.
        fs::write(dir.join("precious"), "keep me").unwrap();
        let link = format!(".l.cairn-{dead}-00000001.tmp");
        symlink(dir.join("precious"), dir.join(&link)).unwrap();
        let subdir = format!(".d.cairn-{dead}-00000002.tmp");
        fs::create_dir(dir.join(&subdir)).unwrap();

        write_atomic(&dir.join("new.txt"), b"hello").unwrap();
        let _ = sleeper.kill();
        let _ = sleeper.wait();

        let left = names_in(dir);
        assert!(
            !left.contains(&stale),
            "the dead process's temp file is gone"
        );
        for kept in [&live_other, &ours, &link, &subdir]
            .into_iter()
            .chain(hostile.iter())
        {
            assert!(left.contains(kept), "{kept} was kept");
        }
        assert_eq!(fs::read_to_string(dir.join("precious")).unwrap(), "keep me");
        assert_eq!(fs::read_to_string(dir.join("new.txt")).unwrap(), "hello");
    }

    #[test]
    fn refuses_directory_target() {
        let tmp = tempfile::tempdir().unwrap();
        let err = write_atomic(tmp.path(), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
    }
}
