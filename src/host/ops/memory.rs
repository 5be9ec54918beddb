//! Memory files for the client: reading one to edit it (`/memory`), writing it back, and adding
//! a `#` note to one. Only absolute paths of Markdown files are touched: the client picks the
//! file (the project's `CLAUDE.md`, the user's, one the session loaded), the host writes it.

use std::io::Write as _;
use std::path::Path;

/// The file's text; a file that does not exist yet reads as empty.
pub(super) fn read(path: &Path) -> Result<String, String> {
    check(path)?;
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e.to_string()),
    }
}

/// Replace the file's text, creating it and its folder when missing.
pub(super) fn write(path: &Path, content: &str) -> Result<(), String> {
    check(path)?;
    path.parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, content))
        .map_err(|e| e.to_string())
}

/// Add `- note` as a line at the end of the file (created, with its folder, when missing).
pub(super) fn append_note(path: &Path, note: &str) -> Result<(), String> {
    check(path)?;
    append(path, note).map_err(|e| e.to_string())
}

fn append(path: &Path, note: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let existing = std::fs::read(path).unwrap_or_default();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    if !existing.is_empty() && !existing.ends_with(b"\n") {
        file.write_all(b"\n")?;
    }
    writeln!(file, "- {}", note.trim())
}

/// Refuse what is not a memory file: a relative path, or a file that is not Markdown.
fn check(path: &Path) -> Result<(), String> {
    let markdown = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md"));
    if path.is_absolute() && markdown {
        Ok(())
    } else {
        Err(format!("{} is not a memory file", path.display()))
    }
}
