//! Path handling shared by every file tool and by the permission checks.
//!
//! Two steps, kept apart on purpose:
//! - [`expand_path`] turns what the model or a rule wrote into an absolute, NFC-normalised path
//!   with no `.` or `..` left. It is purely lexical: it never touches the filesystem, so it is
//!   cheap, deterministic and safe to run on any input.
//! - [`resolve_symlink_chain`] walks the filesystem and reports every hop of the symlink chain
//!   (symlinks in parent directories included) and the final real path. Permissions check rules
//!   against every hop, so a link cannot smuggle a write to a denied target.
//!
//! Invariants: neither function panics on any input; every path they return is absolute.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

/// The limit Linux uses for symlink resolution (`ELOOP` past 40 hops).
pub const MAX_SYMLINK_HOPS: usize = 40;

/// Why a path could not be expanded or resolved. The messages are meant for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("The path contains a NUL byte; give a plain file path.")]
    NullByte,
    #[error("The path is empty; give an absolute file path.")]
    Empty,
    #[error("Cannot expand `~`: the home directory is unknown; give an absolute path instead.")]
    NoHome,
    #[error("The path {} is not absolute.", path.display())]
    NotAbsolute { path: PathBuf },
    #[error("Too many levels of symbolic links (more than {MAX_SYMLINK_HOPS}) at {}.", path.display())]
    TooManyHops { path: PathBuf },
    #[error("Symbolic link cycle at {}.", path.display())]
    Cycle { path: PathBuf },
    #[error("Cannot inspect {}: {message}", path.display())]
    Io { path: PathBuf, message: String },
}

/// Trim, expand `~` / `~/`, resolve relative against `cwd`, normalise to NFC, lexically remove `.`
/// and `..` (no filesystem access), refuse NUL bytes and empty input.
///
/// `~user` is not expanded (it is taken as a relative name), as Claude Code does. A relative
/// `cwd` is made absolute against the process's working directory.
pub fn expand_path(raw: &str, cwd: &Path) -> Result<PathBuf, PathError> {
    if raw.contains('\0') {
        return Err(PathError::NullByte);
    }
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(PathError::Empty);
    }
    let joined = if trimmed == "~" {
        home_dir()?
    } else if let Some(rest) = trimmed.strip_prefix("~/") {
        home_dir()?.join(rest)
    } else {
        let p = Path::new(trimmed);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            absolute_cwd(cwd)?.join(p)
        }
    };
    Ok(normalize_lexically(&nfc_path(&joined)))
}

/// Remove `.` and `..` components without touching the filesystem. `..` at the root stays at
/// the root. A relative input stays relative (leading `..` that cannot be removed are kept).
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out: Vec<Component<'_>> = Vec::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                _ => out.push(comp),
            },
            other => out.push(other),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().map(|c| c.as_os_str()).collect()
}

/// The symlink chain of an absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymlinkChain {
    /// The path as given (lexically normalised) followed by the whole path after each symlink
    /// was replaced by its target; each absolute and lexically normalised.
    pub hops: Vec<PathBuf>,
    /// The final real path. For a path that does not exist yet: the real path of its deepest
    /// existing ancestor with the remaining components appended.
    pub resolved: PathBuf,
}

/// The symlink chain of an absolute path: `hops` = the path as given followed by every intermediate
/// target (each absolute, lexically normalised), `resolved` = the final real path. Max 40 hops, cycle
/// detection. For a path that does not exist yet, resolve its deepest existing ancestor and append
/// the remaining components. Symlinks in parent directories count too.
pub fn resolve_symlink_chain(path: &Path) -> Result<SymlinkChain, PathError> {
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(PathError::NullByte);
    }
    if !path.is_absolute() {
        return Err(PathError::NotAbsolute {
            path: path.to_path_buf(),
        });
    }
    let start = normalize_lexically(path);
    let mut hops = vec![start.clone()];
    // `resolved` is always a real path (no symlinks in it); `pending` holds the components
    // still to walk, in reverse order so the next one is popped from the end.
    let mut resolved = root_of(&start);
    let mut pending: Vec<OsString> = rev_components(&start);
    // A state (real prefix + what is left) seen twice means the walk would loop forever.
    let mut seen: HashSet<(PathBuf, Vec<OsString>)> = HashSet::new();

    while let Some(name) = pending.pop() {
        if name == ".." {
            resolved.pop();
            continue;
        }
        if name == "." {
            continue;
        }
        let candidate = resolved.join(&name);
        let meta = match std::fs::symlink_metadata(&candidate) {
            Ok(m) => m,
            Err(e) if is_missing(&e) => {
                // The rest does not exist yet: append it lexically.
                let mut rest = candidate;
                while let Some(n) = pending.pop() {
                    rest.push(n);
                }
                return Ok(SymlinkChain {
                    hops,
                    resolved: normalize_lexically(&rest),
                });
            }
            Err(e) => {
                return Err(PathError::Io {
                    path: candidate,
                    message: e.to_string(),
                });
            }
        };
        if !meta.file_type().is_symlink() {
            resolved = candidate;
            continue;
        }
        if hops.len() > MAX_SYMLINK_HOPS {
            return Err(PathError::TooManyHops { path: candidate });
        }
        let target = std::fs::read_link(&candidate).map_err(|e| PathError::Io {
            path: candidate.clone(),
            message: e.to_string(),
        })?;
        if !seen.insert((candidate.clone(), pending.clone())) {
            return Err(PathError::Cycle { path: candidate });
        }
        if target.is_absolute() {
            resolved = root_of(&target);
        }
        // Push the target's components so they are walked next, before the rest.
        pending.extend(rev_components(&target));
        let mut hop = resolved.clone();
        for n in pending.iter().rev() {
            hop.push(n);
        }
        hops.push(normalize_lexically(&hop));
    }
    Ok(SymlinkChain { hops, resolved })
}

/// "Does not exist" for our purposes: missing, or a parent that is a file (ENOTDIR).
fn is_missing(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR)
}

fn root_of(path: &Path) -> PathBuf {
    path.components()
        .take_while(|c| matches!(c, Component::Prefix(_) | Component::RootDir))
        .map(|c| c.as_os_str())
        .collect()
}

/// The non-root components of `path`, last first.
fn rev_components(path: &Path) -> Vec<OsString> {
    let mut v: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    v.reverse();
    v
}

fn nfc_path(path: &Path) -> PathBuf {
    path.components()
        .map(|c| match c {
            Component::Normal(n) => match n.to_str() {
                Some(s) => OsString::from(s.nfc().collect::<String>()),
                // Not UTF-8 (only possible via `cwd`): keep the bytes as they are.
                None => n.to_os_string(),
            },
            other => other.as_os_str().to_os_string(),
        })
        .collect()
}

fn home_dir() -> Result<PathBuf, PathError> {
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() && Path::new(&h).is_absolute() => Ok(PathBuf::from(h)),
        _ => directories::BaseDirs::new()
            .map(|d| d.home_dir().to_path_buf())
            .filter(|h| h.is_absolute())
            .ok_or(PathError::NoHome),
    }
}

fn absolute_cwd(cwd: &Path) -> Result<PathBuf, PathError> {
    if cwd.is_absolute() {
        return Ok(cwd.to_path_buf());
    }
    std::env::current_dir()
        .map(|d| d.join(cwd))
        .map_err(|e| PathError::Io {
            path: cwd.to_path_buf(),
            message: e.to_string(),
        })
}

/// `path` with the home directory shown as `~`.
pub fn tilde_path(path: &Path) -> String {
    let home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
    tilde_path_in(path, home.as_deref())
}

pub(crate) fn tilde_path_in(path: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
#[path = "paths_tests.rs"]
mod tests;
