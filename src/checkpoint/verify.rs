//! What a checkpoint must pass before a restore uses it, all checked before anything is
//! touched, so a checkpoint that fails one is refused whole and never applied in part.
//!
//! A checkpoint file's digest is a plain SHA-256 that anyone can recompute, so it proves only
//! that the file is whole, not who wrote it: whatever a checkpoint says is data to check. Its
//! roots must be among the session's working directories (a restore never reaches outside
//! them), every path it stores must be plain and relative to one of those roots, and every
//! content a restore would write must be in the object store and match its digest. Before the
//! restore, the checkpoint that undoes it must be able to bring back every file the restore
//! rewrites or removes: a stored copy that does not read back is stored again from the file
//! itself. This module reads but never changes the working tree.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::CheckpointError;
use super::index::{Content, Entry, Index, NotCovered, plain_path};
use super::objects::{ObjectStore, hash_bytes};
use super::restore::{RestoreAction, RestorePlan};

/// Every root of a checkpoint is a working directory of the session (`session`, canonical).
pub fn roots(checkpoint: &[PathBuf], session: &[PathBuf]) -> Result<(), String> {
    match checkpoint.iter().find(|r| !session.contains(r)) {
        Some(r) => Err(format!(
            "it covers {}, which is not a working directory of this session",
            r.display()
        )),
        None => Ok(()),
    }
}

/// Every entry of `index` names one of its `roots` and a plain relative path.
pub fn index(index: &Index, roots: usize) -> Result<(), String> {
    let entries = index.entries().iter().map(|e| (e.root, &*e.path));
    let uncovered = index.not_covered().iter().map(|n| (n.root, &*n.path));
    for (root, path) in entries.chain(uncovered) {
        if usize::from(root) >= roots {
            return Err(format!(
                "it names root {root}, and has only {roots} root(s)"
            ));
        }
        if !plain_path(path) {
            return Err(format!(
                "it stores the path {:?}, which is not a plain path inside a working directory",
                String::from_utf8_lossy(path)
            ));
        }
    }
    Ok(())
}

/// `index` (over `from` roots) with its roots renumbered as in `to`; entries under a root
/// `to` does not have are left out.
pub fn remap(index: &Index, from: &[PathBuf], to: &[PathBuf]) -> Index {
    let map = |root: u16| {
        let path = from.get(usize::from(root))?;
        u16::try_from(to.iter().position(|t| t == path)?).ok()
    };
    let entries = index
        .entries()
        .iter()
        .filter_map(|e| {
            Some(Entry {
                root: map(e.root)?,
                ..e.clone()
            })
        })
        .collect();
    let uncovered = index
        .not_covered()
        .iter()
        .filter_map(|n| {
            Some(NotCovered {
                root: map(n.root)?,
                ..n.clone()
            })
        })
        .collect();
    Index::new(entries, uncovered)
}

/// Before anything is touched: every content `plan` writes reads back from `objects`, and
/// every file it rewrites or removes can be brought back by the undo checkpoint, whose index
/// is `current` (a copy that does not read back is stored again from the file, whose hash
/// must still be the one `current` recorded).
pub fn contents(
    plan: &RestorePlan,
    target: &Index,
    current: &Index,
    objects: &mut ObjectStore,
) -> Result<(), String> {
    let mut stored_again = false;
    for f in &plan.files {
        if f.action != RestoreAction::Remove
            && let Some(Entry {
                content: Content::File(hash),
                stat,
                ..
            }) = target.get(f.root, &f.rel)
            && let Err(e) = objects.get(hash, stat.size)
        {
            return Err(format!(
                "its copy of {} cannot be used: {e}",
                f.path.display()
            ));
        }
        let Some(Entry {
            content: Content::File(hash),
            stat,
            ..
        }) = current.get(f.root, &f.rel)
        else {
            continue;
        };
        if objects.get(hash, stat.size).is_ok() {
            continue;
        }
        let bytes = read_no_follow(&f.path).map_err(|e| {
            format!(
                "{} cannot be saved for the undo first: {e}",
                f.path.display()
            )
        })?;
        if hash_bytes(&bytes) != *hash {
            return Err(format!(
                "{} changed while the rewind was being prepared",
                f.path.display()
            ));
        }
        objects.put_again(hash, &bytes).map_err(|e| {
            format!(
                "{} cannot be saved for the undo first: {e}",
                f.path.display()
            )
        })?;
        stored_again = true;
    }
    if stored_again {
        objects
            .flush()
            .map_err(|e| format!("the copies for the undo cannot be saved: {e}"))?;
    }
    Ok(())
}

fn read_no_follow(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The roots canonicalised, each a directory; duplicates and roots inside another dropped.
pub(super) fn canonical_roots(roots: &[PathBuf]) -> Result<Vec<PathBuf>, CheckpointError> {
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        let canonical = fs::canonicalize(root).map_err(|source| CheckpointError::Root {
            path: root.clone(),
            source,
        })?;
        if !canonical.is_dir() {
            return Err(CheckpointError::Root {
                path: root.clone(),
                source: io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
            });
        }
        out.push(canonical);
    }
    // Keep the first of duplicates, and outer roots over the roots inside them.
    let all = out.clone();
    let mut kept: Vec<PathBuf> = Vec::new();
    for root in out {
        let inside_other = all.iter().any(|o| *o != root && root.starts_with(o));
        if !inside_other && !kept.contains(&root) {
            kept.push(root);
        }
    }
    Ok(kept)
}
