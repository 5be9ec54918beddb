//! Helpers shared by Read, Write, Edit and MultiEdit: turning the model's path into an
//! absolute one, showing paths relative to the session, refusing devices and binary files
//! before any I/O, and loading a file's text for an edit — from disk synchronously (so a
//! write can check and replace it inside one critical section with no await in between), or
//! from the client when it serves the file ([`client_for`]: an editor's buffer).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use super::ToolError;
use crate::files::client::{ClientFileError, ClientFiles};
use crate::files::encoding::{self, Decoded};
use crate::files::paths::expand_path;
use crate::files::state::content_hash;
use crate::session::context::SessionContext;

/// Devices that never reach end of file or block waiting for input. `/dev/null` is fine.
const BLOCKED_DEVICES: &[&str] = &[
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
    "/dev/stdin",
    "/dev/tty",
    "/dev/console",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/0",
    "/dev/fd/1",
    "/dev/fd/2",
    "/proc/self/fd/0",
    "/proc/self/fd/1",
    "/proc/self/fd/2",
];

/// Extensions of formats that are never text.
const BINARY_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tiff", "tif", "psd", "heic", "avif", "pdf",
    "zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "tar", "jar", "war", "ear", "exe", "dll",
    "so", "dylib", "o", "obj", "a", "lib", "class", "pyc", "pyo", "wasm", "rlib", "mp3", "mp4",
    "m4a", "wav", "ogg", "flac", "aac", "avi", "mov", "mkv", "webm", "ttf", "otf", "woff", "woff2",
    "eot", "iso", "dmg", "sqlite", "sqlite3", "db", "parquet", "npy", "npz", "pkl", "bin", "deb",
    "rpm", "apk", "ipa", "docx", "xlsx", "pptx", "odt",
];

/// Files larger than this are not loaded for an edit.
pub const MAX_EDIT_BYTES: u64 = 256 * 1024 * 1024;

/// The model's `file_path`, absolute and normalised against the session cwd.
pub fn input_path(raw: &str, session: &SessionContext) -> Result<PathBuf, ToolError> {
    expand_path(raw, &session.cwd()).map_err(|e| ToolError::new(e.to_string()))
}

/// `path` relative to the session cwd when inside it, else absolute.
pub fn shown_path(path: &Path, session: &SessionContext) -> String {
    let cwd = session.cwd();
    match path.strip_prefix(&cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// The path for a title: expanded when possible, as given otherwise.
pub fn title_path(raw: &str, session: &SessionContext) -> String {
    match expand_path(raw, &session.cwd()) {
        Ok(p) => shown_path(&p, session),
        Err(_) => raw.to_string(),
    }
}

pub fn is_blocked_device(path: &Path) -> bool {
    BLOCKED_DEVICES.iter().any(|d| path == Path::new(d))
}

pub fn has_binary_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| BINARY_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// Cheap checks that need no I/O; shared by every file tool.
pub fn check_path_no_io(path: &Path) -> Result<(), ToolError> {
    if is_blocked_device(path) {
        return Err(ToolError::new(format!(
            "Refusing {}: it is a device that never ends or waits for input.",
            path.display()
        )));
    }
    Ok(())
}

pub fn binary_error(path: &Path) -> ToolError {
    ToolError::new(format!(
        "{} appears to be a binary file; this tool only reads and edits text. Use Bash (e.g. `file`, `xxd | head`) to inspect it.",
        path.display()
    ))
}

pub fn directory_error(path: &Path) -> ToolError {
    ToolError::new(format!(
        "{} is a directory, not a file. Use Glob (or `ls` in Bash) to list its contents.",
        path.display()
    ))
}

/// Files at least this large stay on disk even when the client serves files: Read streams
/// them and edits load them from disk (an editor holds no useful buffer of them, and their
/// whole text would cross the protocol at every read).
pub const LARGE_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// The client that serves `path`'s text, when one does: the session's client files, for a
/// text file — not an image, a PDF or another binary format by its name, not a notebook, not
/// a directory or device, not [`LARGE_FILE_BYTES`] or more on disk. Read and the writing
/// tools decide with this one rule, so a file is read and written on the same side.
pub fn client_for(path: &Path, session: &SessionContext) -> Option<Arc<dyn ClientFiles>> {
    let client = session.client_files()?;
    let notebook = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ipynb"));
    if notebook || has_binary_extension(path) || is_blocked_device(path) {
        return None;
    }
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() || m.len() >= LARGE_FILE_BYTES => None,
        _ => Some(client),
    }
}

/// A text file as loaded for an edit.
#[derive(Debug, Clone)]
pub struct LoadedText {
    pub decoded: Decoded,
    /// mtime and size on disk when read from disk; `None` when the text came from the client,
    /// where only the content (`hash`) can tell a change.
    pub stamp: Option<(SystemTime, u64)>,
    /// [`content_hash`] of the bytes read (the client's text as UTF-8).
    pub hash: u64,
}

/// Load `path` for an edit from where its text lives: the client when it serves the file
/// ([`client_for`]), else the disk ([`load_for_edit`]). `Ok(None)`: no such file yet.
pub async fn load_text(
    path: &Path,
    session: &SessionContext,
    allow_lossy: bool,
) -> Result<Option<LoadedText>, ToolError> {
    match client_for(path, session) {
        Some(client) => load_from_client(client.as_ref(), path).await,
        None => load_for_edit(path, allow_lossy),
    }
}

/// Load `path`'s text from the client. A file the client cannot give that is not on disk
/// either is a new file (`Ok(None)`); one that is on disk is an error, said to the model.
pub async fn load_from_client(
    client: &dyn ClientFiles,
    path: &Path,
) -> Result<Option<LoadedText>, ToolError> {
    match client.read_text(path).await {
        Ok(text) => client_text(path, text).map(Some),
        Err(_) if matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound) => {
            Ok(None)
        }
        Err(e) => Err(client_error("read", path, &e)),
    }
}

/// The client's text of `path` as loaded text: refused when it holds NUL (a binary file the
/// client rendered as text), decoded into logical text and its line endings.
pub fn client_text(path: &Path, text: String) -> Result<LoadedText, ToolError> {
    if encoding::looks_binary(text.as_bytes()) {
        return Err(binary_error(path));
    }
    let hash = content_hash(text.as_bytes());
    Ok(LoadedText {
        decoded: encoding::decode_owned(text.into_bytes()),
        stamp: None,
        hash,
    })
}

/// The model's message for a failed client read or write (`what`).
pub fn client_error(what: &str, path: &Path, e: &ClientFileError) -> ToolError {
    ToolError::new(format!(
        "Cannot {what} {} through the editor: {e}",
        path.display()
    ))
}

/// `path`'s mtime and size on disk, when it is there.
pub fn disk_stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((
        meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        meta.len(),
    ))
}

/// Load `path` for an edit: `Ok(None)` when it does not exist. Refuses directories, devices,
/// binary files, files too large to edit, and — unless `allow_lossy` (a whole-file Write, which
/// keeps none of the old text) — text that did not decode cleanly, since writing it back would
/// corrupt the bytes that were replaced.
pub fn load_for_edit(path: &Path, allow_lossy: bool) -> Result<Option<LoadedText>, ToolError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ToolError::new(format!(
                "Cannot access {}: {e}",
                path.display()
            )));
        }
    };
    if meta.is_dir() {
        return Err(directory_error(path));
    }
    if !meta.is_file() {
        return Err(ToolError::new(format!(
            "{} is not a regular file (device, FIFO or socket); it cannot be edited.",
            path.display()
        )));
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::new(format!(
            "{} is {} bytes, larger than the {} bytes this tool edits. Use Bash (e.g. sed) for files this large.",
            path.display(),
            meta.len(),
            MAX_EDIT_BYTES
        )));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| ToolError::new(format!("Cannot read {}: {e}", path.display())))?;
    if encoding::looks_binary(&bytes) {
        return Err(binary_error(path));
    }
    let hash = content_hash(&bytes);
    // Taking the bytes: plain UTF-8 becomes the text without a second copy of the file.
    let decoded = encoding::decode_owned(bytes);
    if decoded.lossy && !allow_lossy {
        return Err(ToolError::new(format!(
            "{} is not valid text in its encoding; editing it would corrupt the invalid bytes. Use Bash to change it.",
            path.display()
        )));
    }
    // Re-stat after reading: the read content belongs with the mtime it was read at.
    let meta = std::fs::metadata(path).unwrap_or(meta);
    Ok(Some(LoadedText {
        hash,
        decoded,
        stamp: Some((
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            meta.len(),
        )),
    }))
}

/// Number of lines as Read counts them (a final newline does not start a new line).
pub fn line_count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        // Byte counting vectorises; splitting into lines does not.
        let newlines = text.as_bytes().iter().filter(|&&b| b == b'\n').count();
        newlines + 1 - usize::from(text.ends_with('\n'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_lines() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\n"), 1);
        assert_eq!(line_count("a\nb"), 2);
        assert_eq!(line_count("\n"), 1);
        assert_eq!(line_count("\n\n"), 2);
    }

    #[test]
    fn devices_and_binary_extensions() {
        assert!(is_blocked_device(Path::new("/dev/zero")));
        assert!(!is_blocked_device(Path::new("/dev/null")));
        assert!(has_binary_extension(Path::new("/x/a.PNG")));
        assert!(!has_binary_extension(Path::new("/x/a.rs")));
    }

    #[test]
    fn paths_shown_relative_to_cwd() {
        let s = SessionContext::for_dir(Path::new("/work/proj"));
        assert_eq!(shown_path(Path::new("/work/proj/src/a.rs"), &s), "src/a.rs");
        assert_eq!(shown_path(Path::new("/etc/hosts"), &s), "/etc/hosts");
        assert_eq!(title_path("src/../b.rs", &s), "b.rs");
        assert_eq!(title_path("a\0b", &s), "a\0b");
    }
}
