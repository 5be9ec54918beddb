//! Atomic file writes: a crash mid-write leaves the old file or the new one, never a mix.
//!
//! The bytes go to a temporary file in the same directory (so the rename cannot cross
//! filesystems), which is fsynced and then renamed over the target; the directory is fsynced
//! afterwards on a best-effort basis. Writing through a symlink writes its final target, so the
//! link stays a link. The target's permission bits are kept; a new file gets the default mode.
//! Parent directories are created as needed.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::paths::resolve_symlink_chain;

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

    let (tmp_path, mut file) = create_temp(&dir, &target)?;
    let result = (|| -> io::Result<()> {
        file.write_all(bytes)?;
        if let Some(perms) = &existing_mode {
            file.set_permissions(perms.clone())?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp_path, &target)?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp_path);
        return Err(e);
    }
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

fn create_temp(dir: &Path, target: &Path) -> io::Result<(PathBuf, File)> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let mut last_err = None;
    for _ in 0..16 {
        let tmp = dir.join(format!(
            ".{name}.cairn-{}-{:08x}.tmp",
            std::process::id(),
            fastrand::u32(..)
        ));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
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

    #[test]
    fn refuses_directory_target() {
        let tmp = tempfile::tempdir().unwrap();
        let err = write_atomic(tmp.path(), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
    }
}
