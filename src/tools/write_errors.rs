//! What a file tool says when its write fails: on a full disk, how many bytes the write needed
//! and what cairn itself keeps that could be freed (spilled results, checkpoints), instead of
//! the bare OS error; and, for a write through a symbolic link, which file really changes.

use std::io;
use std::path::Path;

use super::ToolError;
use crate::session::context::SessionContext;

/// The error of a failed write of `needed` bytes to `path`.
pub fn write_failed(
    path: &Path,
    needed: usize,
    e: &io::Error,
    session: &SessionContext,
) -> ToolError {
    if !is_disk_full(e) {
        return ToolError::new(format!("Cannot write {}: {e}", path.display()));
    }
    let spill = dir_size(&session.data_dir.join("spill"));
    let checkpoints = session
        .checkpoints
        .store_dir()
        .map(|d| dir_size(&d))
        .unwrap_or(0);
    let mut text = format!(
        "Cannot write {}: the disk is full (the write needed {needed} bytes).",
        path.display()
    );
    if spill + checkpoints == 0 {
        text.push_str(" cairn keeps nothing on this disk it could free; make room and retry.");
    } else {
        text.push_str(&format!(
            " cairn could free {} bytes of its own: {spill} bytes of spilled tool results in {} \
             and {checkpoints} bytes of old checkpoints (`cairn checkpoints gc`). Ask the user \
             to make room, then retry.",
            spill + checkpoints,
            session.data_dir.join("spill").display()
        ));
    }
    ToolError::new(text)
}

/// No space left on the device, or the quota is used up.
pub fn is_disk_full(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::StorageFull
        || matches!(e.raw_os_error(), Some(code) if code == libc::ENOSPC || code == libc::EDQUOT)
}

/// The bytes of the regular files under `dir` (symlinks not followed; 0 when absent).
fn dir_size(dir: &Path) -> u64 {
    walkdir_size(dir, 0)
}

fn walkdir_size(dir: &Path, depth: usize) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut total = 0;
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_file() {
            total += meta.len();
        } else if meta.is_dir() && depth < 16 {
            total += walkdir_size(&entry.path(), depth + 1);
        }
    }
    total
}

/// When `path` is a symbolic link, the note naming the file a write through it changes.
pub fn symlink_note(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_symlink() {
        return None;
    }
    let target = std::fs::canonicalize(path).ok()?;
    Some(format!(
        "Note: {} is a symbolic link; the file written is its target {}.",
        path.display(),
        target.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_names_the_bytes_needed_and_what_cairn_could_free() {
        let dir = tempfile::tempdir().unwrap();
        let session = SessionContext::for_dir(dir.path());
        let spill = session.data_dir.join("spill");
        std::fs::create_dir_all(&spill).unwrap();
        std::fs::write(spill.join("a.txt"), vec![b'x'; 1234]).unwrap();
        let e = io::Error::from_raw_os_error(libc::ENOSPC);
        let text = write_failed(Path::new("/p/a.rs"), 99, &e, &session).message;
        assert!(
            text.starts_with(
                "Cannot write /p/a.rs: the disk is full (the write needed 99 bytes). cairn could \
                 free 1234 bytes of its own: 1234 bytes of spilled tool results"
            ),
            "{text}"
        );
        let other = io::Error::from_raw_os_error(libc::EACCES);
        let text = write_failed(Path::new("/p/a.rs"), 99, &other, &session).message;
        assert!(
            text.starts_with("Cannot write /p/a.rs: Permission denied"),
            "{text}"
        );
    }

    #[test]
    fn a_symlink_names_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        std::fs::write(&real, "x").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let note = symlink_note(&link).unwrap();
        assert!(note.ends_with(&format!(
            "its target {}.",
            real.canonicalize().unwrap().display()
        )));
        assert_eq!(symlink_note(&real), None);
    }
}
