//! The `$EDITOR` round trip: the person rewrites a proposed file content in their own editor
//! before approving it.
//!
//! The content goes to a fresh private temporary directory under a file with the same name as
//! the target (so the editor picks the right syntax), the editor runs through `sh -c` with the
//! path as an argument (so `EDITOR="code --wait"` works and the path is never re-parsed by the
//! shell), and the file is read back and removed. The caller suspends the TUI around the call:
//! the editor inherits the terminal. Nothing here touches the real file.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why the round trip failed; the proposal is unchanged in every case.
#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    #[error("could not prepare a temporary file for the editor: {0}")]
    TempFile(#[source] io::Error),
    #[error("could not start the editor `{editor}`: {source}")]
    Spawn {
        editor: String,
        #[source]
        source: io::Error,
    },
    #[error("the editor `{editor}` was not found; set $VISUAL or $EDITOR to an installed editor")]
    NotFound { editor: String },
    #[error("the editor `{editor}` failed with code {code}; the proposal was left unchanged")]
    Failed { editor: String, code: i32 },
    #[error("the editor `{editor}` was stopped by a signal; the proposal was left unchanged")]
    Killed { editor: String },
    #[error("could not read the edited file back: {0}")]
    ReadBack(#[source] io::Error),
}

/// Open `content` in the person's editor (`$VISUAL`, else `$EDITOR`, else `vi`) and return what
/// they saved. `path_hint` is the file the content is for: its name (and so its extension) is
/// reused for the temporary file.
pub fn edit_in_editor(path_hint: &Path, content: &str) -> Result<String, EditorError> {
    let editor = editor_command(
        std::env::var("VISUAL").ok().as_deref(),
        std::env::var("EDITOR").ok().as_deref(),
    );
    edit_with(&editor, path_hint, content)
}

/// The editor command line to run: the first non-blank of `visual` and `editor`, else `vi`.
pub fn editor_command(visual: Option<&str>, editor: Option<&str>) -> String {
    [visual, editor]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|e| !e.is_empty())
        .unwrap_or("vi")
        .to_string()
}

/// [`edit_in_editor`] with the editor command given: a shell command line, run with the
/// temporary file's path appended as one argument.
pub fn edit_with(editor: &str, path_hint: &Path, content: &str) -> Result<String, EditorError> {
    let dir = TempDir::create().map_err(EditorError::TempFile)?;
    let name = path_hint
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "cairn-edit.txt".into());
    let file = dir.path.join(name);
    fs::write(&file, content).map_err(EditorError::TempFile)?;
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&file)
        .status()
        .map_err(|source| EditorError::Spawn {
            editor: editor.to_string(),
            source,
        })?;
    match status.code() {
        Some(0) => {}
        // The shell's codes for "command not found" and "found but not executable".
        Some(127) | Some(126) => {
            return Err(EditorError::NotFound {
                editor: editor.to_string(),
            });
        }
        Some(code) => {
            return Err(EditorError::Failed {
                editor: editor.to_string(),
                code,
            });
        }
        None => {
            return Err(EditorError::Killed {
                editor: editor.to_string(),
            });
        }
    }
    fs::read_to_string(&file).map_err(EditorError::ReadBack)
}

/// A private directory removed (with its contents) when dropped.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn create() -> io::Result<TempDir> {
        let path = std::env::temp_dir().join(format!("cairn-edit-{}", uuid::Uuid::new_v4()));
        let mut builder = fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&path)?;
        Ok(TempDir { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a leftover file in the temp dir is harmless and the edit already succeeded.
        let _ = fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An "editor" script that records its argument and edits in place.
    fn script(dir: &Path, body: &str) -> String {
        let path = dir.join("ed.sh");
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        }
        path.display().to_string()
    }

    #[test]
    fn the_edited_content_comes_back_and_the_temp_file_keeps_the_name() {
        let tmp = tempfile::tempdir().unwrap();
        let seen = tmp.path().join("seen");
        let ed = script(
            tmp.path(),
            &format!("echo \"$1\" > '{}'\nsed -i s/a/b/ \"$1\"", seen.display()),
        );
        let out = edit_with(&ed, Path::new("src/main.rs"), "let a = 1;\na\n").unwrap();
        assert_eq!(out, "let b = 1;\nb\n");
        let arg = fs::read_to_string(&seen).unwrap();
        let arg = Path::new(arg.trim_end());
        assert_eq!(arg.file_name().unwrap(), "main.rs");
        // Cleaned up afterwards.
        assert!(!arg.exists());
        assert!(!arg.parent().unwrap().exists());
    }

    #[test]
    fn editor_with_arguments_and_spaces_in_the_path_hint() {
        let tmp = tempfile::tempdir().unwrap();
        let ed = script(tmp.path(), "sed -i \"s/$1/x/\" \"$2\"");
        let out = edit_with(&format!("{ed} one"), Path::new("my file.txt"), "one two\n").unwrap();
        assert_eq!(out, "x two\n");
    }

    #[test]
    fn a_failing_editor_reports_its_code() {
        let tmp = tempfile::tempdir().unwrap();
        let ed = script(tmp.path(), "exit 3");
        let err = edit_with(&ed, Path::new("a.txt"), "x").unwrap_err();
        assert!(
            matches!(err, EditorError::Failed { code: 3, .. }),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("the editor `{ed}` failed with code 3; the proposal was left unchanged")
        );
    }

    #[test]
    fn a_missing_editor_is_not_found() {
        let err = edit_with("cairn-no-such-editor-xyz", Path::new("a.txt"), "x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the editor `cairn-no-such-editor-xyz` was not found; set $VISUAL or $EDITOR to an \
             installed editor"
        );
    }

    #[test]
    fn visual_wins_then_editor_then_vi() {
        assert_eq!(editor_command(Some("nvim"), Some("nano")), "nvim");
        assert_eq!(editor_command(Some("  "), Some("nano")), "nano");
        assert_eq!(editor_command(None, None), "vi");
    }
}
