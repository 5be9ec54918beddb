//! Restoring a checkpoint: the plan (what differs between now and the checkpoint, and whether
//! each file is still what the latest checkpoint recorded) and its application.
//!
//! Safety, failing closed: a stored path is used only if it is relative and made of plain
//! components (no `..`, `.`, root or NUL); every directory between the root and the file is
//! checked with `lstat` and must be a real directory, so a symlink planted in the tree never
//! leads a write or a removal outside the roots; the file itself is replaced by rename or
//! unlinked, never written through. Removing happens children-first, creating parents-first,
//! and directory modes are set last (a read-only directory still gets its files). Files are
//! written atomically in one batch (`durable.rs`): staged, fsynced together, then renamed. A file the
//! checkpoint does not hold (over the size cap, unreadable) is never removed or overwritten.
//! Every failure is collected per file; the rest of the restore goes on.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::durable::{in_parallel, stage};
use super::index::{Content, Entry, Index, merge_walk, plain_path};
use super::objects::ObjectStore;
use super::{CheckpointId, FileProblem, NotCoveredFile, join_rel};
use crate::files::temp_files::{TempFile, temp_name};

/// What a restore does to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreAction {
    /// It exists now and in the checkpoint, differently (content, mode or kind): written back.
    Rewrite,
    /// Created since the checkpoint: removed.
    Remove,
    /// Deleted since the checkpoint: created again (with its directories).
    Recreate,
}

/// What kind of entry a path is (in the checkpoint; for a removal, now).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Symlink,
    Dir,
}

fn kind_of(e: &Entry) -> EntryKind {
    match e.content {
        Content::File(_) => EntryKind::File,
        Content::Symlink(_) => EntryKind::Symlink,
        Content::Dir => EntryKind::Dir,
    }
}

/// One path a restore changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    pub path: PathBuf,
    pub action: RestoreAction,
    pub kind: EntryKind,
    /// Whether the path is now what the latest checkpoint recorded (same content, mode and
    /// kind, or absent in both). `false` means it changed since the latest checkpoint — by a
    /// shell command, an editor, the person — and the UI should ask before undoing that.
    pub matches_latest: bool,
    pub(super) root: u16,
    pub(super) rel: Box<[u8]>,
    current: Option<EntryKind>,
}

/// What restoring a checkpoint would do now.
#[derive(Debug, Clone)]
pub struct RestorePlan {
    pub target: CheckpointId,
    /// In path order: parents before their children.
    pub files: Vec<PlannedFile>,
    /// Files a restore leaves as they are because a checkpoint does not hold them: those the
    /// target lists as not covered, and those not covered now that did not exist then.
    pub left_alone: Vec<NotCoveredFile>,
    /// Paths that could not be scanned now.
    pub problems: Vec<FileProblem>,
}

impl RestorePlan {
    /// The planned paths changed since the latest checkpoint (the ones to confirm).
    pub fn changed_outside(&self) -> impl Iterator<Item = &PlannedFile> {
        self.files.iter().filter(|f| !f.matches_latest)
    }
}

/// What a restore did.
#[derive(Debug, Clone)]
pub struct Restored {
    /// The checkpoint recorded just before the restore: restoring it undoes this restore.
    pub undo: CheckpointId,
    /// The paths restored.
    pub done: Vec<PlannedFile>,
    pub left_alone: Vec<NotCoveredFile>,
    /// Paths not restored (or not scanned), and why.
    pub problems: Vec<FileProblem>,
}

/// Compares `current` (the roots now) with `target`; `latest` is the latest checkpoint.
pub fn plan(
    target_id: CheckpointId,
    roots: &[PathBuf],
    target: &Index,
    current: &Index,
    latest: Option<(&[PathBuf], &Index)>,
    problems: Vec<FileProblem>,
) -> RestorePlan {
    let mut files = Vec::new();
    let mut left_alone = Vec::new();
    let matches_latest = |root: u16, rel: &[u8], now: Option<&Entry>| -> bool {
        let Some((latest_roots, latest)) = latest else {
            return false;
        };
        let Some(root_path) = roots.get(usize::from(root)) else {
            return false;
        };
        let Some(j) = latest_roots.iter().position(|r| r == root_path) else {
            return false;
        };
        let Ok(j) = u16::try_from(j) else {
            return false;
        };
        match (now, latest.get(j, rel)) {
            (None, None) => latest.get_not_covered(j, rel).is_none(),
            (Some(n), Some(l)) => n.same_as(l),
            _ => false,
        }
    };
    let path_of = |root: u16, rel: &[u8]| match roots.get(usize::from(root)) {
        Some(r) => join_rel(r, rel),
        None => PathBuf::from(OsStr::from_bytes(rel)),
    };
    merge_walk(current.entries(), target.entries(), |now, then| {
        let (action, key_entry) = match (now, then) {
            (Some(n), None) => {
                if target.get_not_covered(n.root, &n.path).is_some() {
                    // Reported through the target's not-covered list below.
                    return;
                }
                (RestoreAction::Remove, n)
            }
            (None, Some(t)) => {
                if let Some(nc) = current.get_not_covered(t.root, &t.path) {
                    // It exists now but is not covered (grew past the cap, unreadable):
                    // overwriting it could not be undone.
                    left_alone.push(NotCoveredFile {
                        path: path_of(nc.root, &nc.path),
                        size: nc.size,
                        why: nc.why,
                    });
                    return;
                }
                (RestoreAction::Recreate, t)
            }
            (Some(n), Some(t)) if !n.same_as(t) => (RestoreAction::Rewrite, t),
            _ => return,
        };
        let kind = kind_of(key_entry);
        files.push(PlannedFile {
            path: path_of(key_entry.root, &key_entry.path),
            action,
            kind,
            matches_latest: matches_latest(key_entry.root, &key_entry.path, now),
            root: key_entry.root,
            rel: key_entry.path.clone(),
            current: now.map(kind_of),
        });
    });
    for nc in target.not_covered() {
        left_alone.push(NotCoveredFile {
            path: path_of(nc.root, &nc.path),
            size: nc.size,
            why: nc.why,
        });
    }
    for nc in current.not_covered() {
        let known_then = target.get(nc.root, &nc.path).is_some()
            || target.get_not_covered(nc.root, &nc.path).is_some();
        if !known_then {
            left_alone.push(NotCoveredFile {
                path: path_of(nc.root, &nc.path),
                size: nc.size,
                why: nc.why,
            });
        }
    }
    RestorePlan {
        target: target_id,
        files,
        left_alone,
        problems,
    }
}

/// Carries out `plan`, taking contents from `objects`.
pub fn apply(
    plan: RestorePlan,
    roots: &[PathBuf],
    target: &Index,
    objects: &ObjectStore,
    undo: u64,
) -> Restored {
    let mut problems = plan.problems;
    let mut failed = vec![false; plan.files.len()];
    // 1. Children first: remove what was created since, and what changes kind.
    for (n, f) in plan.files.iter().enumerate().rev() {
        let replace = f.action == RestoreAction::Rewrite && f.current != Some(f.kind);
        if f.action != RestoreAction::Remove && !replace {
            continue;
        }
        let result = locate(roots, f.root, &f.rel, false).and_then(|path| {
            let gone = match f.current {
                Some(EntryKind::Dir) => fs::remove_dir(&path),
                _ => fs::remove_file(&path),
            };
            match gone {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty => Err(io::Error::new(
                    e.kind(),
                    "directory left in place: it holds files no checkpoint covers",
                )),
                other => other,
            }
        });
        if let Err(e) = result {
            failed[n] = true;
            problems.push(FileProblem::new(f.path.clone(), &e));
        }
    }
    // 2. Parents first: directories and links as the checkpoint had them, and files staged
    //    beside their targets.
    let mut dir_modes = Vec::new();
    let mut staged = Vec::new();
    for (n, f) in plan.files.iter().enumerate() {
        if f.action == RestoreAction::Remove || failed[n] {
            continue;
        }
        let Some(entry) = target.get(f.root, &f.rel) else {
            failed[n] = true;
            continue;
        };
        let result = locate(roots, f.root, &f.rel, true).and_then(|path| {
            match &entry.content {
                Content::File(hash) => {
                    let bytes = objects.get(hash, entry.stat.size)?;
                    let dir = path.parent().unwrap_or(&path);
                    staged.push((
                        n,
                        stage(dir, &path, &bytes, Some(entry.stat.permissions()))?,
                    ));
                }
                Content::Dir => {
                    make_dir(&path)?;
                    dir_modes.push((path, entry.stat.permissions()));
                }
                Content::Symlink(link) => make_symlink(&path, link)?,
            }
            Ok(())
        });
        if let Err(e) = result {
            failed[n] = true;
            problems.push(FileProblem::new(f.path.clone(), &e));
        }
    }
    // The staged files' contents reach the disk together, then each is renamed into place.
    let synced = in_parallel(&staged, |(_, s)| s.sync());
    // The directories are not fsynced after the renames: each file is whole either way, and
    // a crash that loses a rename leaves that file as it was before (the undo checkpoint has
    // it), for the price of a hundred disk flushes fewer.
    for ((n, s), synced) in staged.into_iter().zip(synced) {
        if let Err(e) = synced.and_then(|()| s.commit()) {
            failed[n] = true;
            problems.push(FileProblem::new(plan.files[n].path.clone(), &e));
        }
    }
    // 3. Directory modes last, deepest first, so a read-only directory still got its files.
    for (path, mode) in dir_modes.into_iter().rev() {
        if let Err(e) = fs::set_permissions(&path, fs::Permissions::from_mode(mode)) {
            problems.push(FileProblem::new(path, &e));
        }
    }
    let done = plan
        .files
        .into_iter()
        .zip(failed)
        .filter_map(|(f, failed)| (!failed).then_some(f))
        .collect();
    Restored {
        undo: CheckpointId(undo),
        done,
        left_alone: plan.left_alone,
        problems,
    }
}

/// A directory at `path` (whose parents are real directories), unless one is there.
fn make_dir(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "something else is in the directory's place",
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => fs::create_dir(path),
        Err(e) => Err(e),
    }
}

/// A symlink to `link` at `path`, created under a temp name and renamed into place.
fn make_symlink(path: &Path, link: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = TempFile::new(dir.join(temp_name(&name, std::process::id(), fastrand::u32(..))));
    std::os::unix::fs::symlink(OsStr::from_bytes(link), tmp.path())?;
    fs::rename(tmp.path(), path)?;
    tmp.persisted();
    Ok(())
}

/// The absolute path of `rel` under root `root`, after checking that `rel` is a plain
/// relative path and that every directory on the way is a real directory (created when
/// `create` and missing). Refuses anything else: nothing outside the root is ever reached.
fn locate(roots: &[PathBuf], root: u16, rel: &[u8], create: bool) -> io::Result<PathBuf> {
    let refuse = |why: String| io::Error::new(io::ErrorKind::PermissionDenied, why);
    let Some(root) = roots.get(usize::from(root)) else {
        return Err(refuse("the checkpoint names no such root".into()));
    };
    if !root.is_absolute() || !fs::symlink_metadata(root).is_ok_and(|m| m.is_dir()) {
        return Err(refuse(format!(
            "root {} is not a directory (or is a symlink now); nothing touched",
            root.display()
        )));
    }
    let rel_path = Path::new(OsStr::from_bytes(rel));
    if !plain_path(rel) {
        return Err(refuse(format!(
            "stored path {:?} is not a plain relative path; refused",
            String::from_utf8_lossy(rel)
        )));
    }
    let mut dir = root.clone();
    let mut parts = rel_path.components().peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            return Ok(dir.join(part));
        }
        dir.push(part);
        match fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(refuse(format!(
                    "{} is not a directory (a symlink or a file); not followed",
                    dir.display()
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => match fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                        return Err(refuse(format!("{} appeared meanwhile", dir.display())));
                    }
                }
                Err(e) => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
    Err(refuse("empty stored path".into()))
}
