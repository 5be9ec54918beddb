//! Path expansion and symlink-chain resolution (placeholder on the `perms` branch).
//!
//! The file-tools work owns the real module with these exact signatures; this version exists so
//! the permission gate compiles and is tested against real symlinks. Invariants: never panics,
//! refuses NUL bytes, follows at most 40 symlinks and reports cycles.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path contains a null byte")]
    NullByte,
    #[error("empty path")]
    Empty,
    #[error("too many symlinks: {path}")]
    TooManyHops { path: PathBuf },
    #[error("symlink cycle at {path}")]
    Cycle { path: PathBuf },
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
}

/// As POSIX SYMLOOP_MAX.
const MAX_HOPS: usize = 40;

/// Trim, `~` expansion, relative -> absolute against `cwd`, NFC, lexical `.` and `..` removal,
/// NUL refused.
pub fn expand_path(raw: &str, cwd: &Path) -> Result<PathBuf, PathError> {
    if raw.contains('\0') || cwd.to_string_lossy().contains('\0') {
        return Err(PathError::NullByte);
    }
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(PathError::Empty);
    }
    let nfc: String = trimmed.nfc().collect();
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    let joined = if nfc == "~" {
        home().unwrap_or_else(|| PathBuf::from("/"))
    } else if let Some(rest) = nfc.strip_prefix("~/") {
        home().unwrap_or_else(|| PathBuf::from("/")).join(rest)
    } else {
        let p = PathBuf::from(&nfc);
        if p.is_absolute() { p } else { cwd.join(p) }
    };
    Ok(normalize_lexically(&joined))
}

/// Remove `.` and resolve `..` without touching the disk (`/..` stays `/`).
fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// `hops` = the path as given then every intermediate symlink target; `resolved` = final real
/// path; for a missing path: deepest existing ancestor resolved + remaining components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymlinkChain {
    pub hops: Vec<PathBuf>,
    pub resolved: PathBuf,
}

pub fn resolve_symlink_chain(path: &Path) -> Result<SymlinkChain, PathError> {
    if path.to_string_lossy().contains('\0') {
        return Err(PathError::NullByte);
    }
    let mut hops = vec![path.to_path_buf()];
    let mut visited = HashSet::new();
    let mut current = path.to_path_buf();
    for _ in 0..MAX_HOPS {
        if !visited.insert(current.clone()) {
            return Err(PathError::Cycle { path: current });
        }
        let meta = match std::fs::symlink_metadata(&current) {
            Ok(m) => m,
            Err(_) => {
                return Ok(SymlinkChain {
                    hops,
                    resolved: resolve_missing(&current)?,
                });
            }
        };
        if !meta.file_type().is_symlink() {
            let resolved = std::fs::canonicalize(&current).map_err(|e| PathError::Io {
                path: current.clone(),
                message: e.to_string(),
            })?;
            return Ok(SymlinkChain { hops, resolved });
        }
        let target = std::fs::read_link(&current).map_err(|e| PathError::Io {
            path: current.clone(),
            message: e.to_string(),
        })?;
        let parent = current.parent().unwrap_or(Path::new("/"));
        let next = normalize_lexically(&parent.join(target));
        if !hops.contains(&next) {
            hops.push(next.clone());
        }
        current = next;
    }
    Err(PathError::TooManyHops { path: current })
}

/// The deepest existing ancestor resolved (following its symlinks), plus the missing rest.
fn resolve_missing(path: &Path) -> Result<PathBuf, PathError> {
    let mut rest = Vec::new();
    let mut ancestor = path.to_path_buf();
    loop {
        if std::fs::symlink_metadata(&ancestor).is_ok() {
            match std::fs::canonicalize(&ancestor) {
                Ok(real) => {
                    let mut out = real;
                    for part in rest.iter().rev() {
                        out.push(part);
                    }
                    return Ok(out);
                }
                // A dangling or looping link as an ancestor: nothing sound to resolve to.
                Err(e) => {
                    return Err(PathError::Io {
                        path: ancestor,
                        message: e.to_string(),
                    });
                }
            }
        }
        match (ancestor.file_name(), ancestor.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                ancestor = parent.to_path_buf();
            }
            _ => return Ok(path.to_path_buf()),
        }
    }
}
