//! The checkpoint tests' workspace: a project root, a data dir and a directory outside the
//! root, in one temp dir; and the whole tree as text, to compare states exactly.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use cairn::checkpoint::{CheckpointOptions, CheckpointStore, RestoreAction, RestorePlan};

pub struct Ws {
    pub _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub data: PathBuf,
    pub outside: PathBuf,
}

pub fn ws() -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("project");
    let data = base.join("data");
    let outside = base.join("outside");
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&outside).unwrap();
    Ws {
        _tmp: tmp,
        root,
        data,
        outside,
    }
}

impl Ws {
    pub fn open(&self) -> CheckpointStore {
        self.open_with(CheckpointOptions::default())
    }
    pub fn open_with(&self, options: CheckpointOptions) -> CheckpointStore {
        CheckpointStore::open(&self.data, std::slice::from_ref(&self.root), options).unwrap()
    }
    pub fn p(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
    pub fn write(&self, rel: &str, text: &str) {
        let p = self.p(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.p(rel)).unwrap()
    }
    pub fn tree(&self) -> BTreeMap<String, String> {
        tree(&self.root)
    }
    /// Every path with its kind, mode and the SHA-256 of its bytes (for binary files).
    pub fn tree_bytes(&self) -> BTreeMap<String, String> {
        use sha2::{Digest, Sha256};
        let mut out = BTreeMap::new();
        for entry in fs::read_dir(&self.root).unwrap().flatten() {
            let meta = entry.metadata().unwrap();
            let bytes = fs::read(entry.path()).unwrap_or_default();
            out.insert(
                entry.file_name().to_string_lossy().into_owned(),
                format!("{:o} {:x}", meta.mode() & 0o7777, Sha256::digest(bytes)),
            );
        }
        out
    }
}

/// Every path under `root` (but `.git`) with what it is: kind, mode and content or target.
pub fn tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if rel == ".git" {
                continue;
            }
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = meta.mode() & 0o7777;
            let what = if meta.file_type().is_symlink() {
                format!("link -> {}", fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                format!("dir {mode:o}")
            } else {
                let bytes = fs::read(&path).unwrap();
                format!("file {mode:o} {}", String::from_utf8_lossy(&bytes))
            };
            out.insert(rel, what);
        }
    }
    out
}

pub fn actions(plan: &RestorePlan) -> Vec<(String, RestoreAction)> {
    plan.files
        .iter()
        .map(|f| {
            (
                f.path.file_name().unwrap().to_string_lossy().into(),
                f.action,
            )
        })
        .collect()
}

/// One step of a random history of the tree.
#[derive(Debug, Clone)]
pub enum Op {
    Write(usize, u8),
    Remove(usize),
    RemoveDir(usize),
    Link(usize, usize),
    Chmod(usize, bool),
    Record,
}

pub const PATHS: &[&str] = &["a", "b.txt", "d/c", "d/e/f.rs", "d/e/g", "h/i"];
pub const DIRS: &[&str] = &["d", "d/e", "h"];

pub fn apply_op(w: &Ws, op: &Op) {
    // A step that does not fit the tree as it is (a file where a directory is) is skipped.
    let _ = match op {
        Op::Write(p, v) => {
            let path = w.p(PATHS[*p]);
            fs::create_dir_all(path.parent().unwrap())
                .and_then(|()| fs::write(&path, format!("v{v}\n").repeat(usize::from(*v) + 1)))
        }
        Op::Remove(p) => fs::remove_file(w.p(PATHS[*p])),
        Op::RemoveDir(d) => fs::remove_dir_all(w.p(DIRS[*d])),
        Op::Link(p, q) => {
            let path = w.p(PATHS[*p]);
            let _ = fs::remove_file(&path);
            fs::create_dir_all(path.parent().unwrap()).and_then(|()| symlink(PATHS[*q], &path))
        }
        Op::Chmod(p, exec) => {
            let mode = if *exec { 0o755 } else { 0o600 };
            let path = w.p(PATHS[*p]);
            match fs::symlink_metadata(&path) {
                Ok(m) if m.is_file() => {
                    fs::set_permissions(&path, fs::Permissions::from_mode(mode))
                }
                _ => Ok(()),
            }
        }
        Op::Record => Ok(()),
    };
}

/// A random step of a history, as the property tests draw them.
pub fn op_strategy() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (0..PATHS.len(), 0u8..4).prop_map(|(p, v)| Op::Write(p, v)),
        2 => (0..PATHS.len()).prop_map(Op::Remove),
        1 => (0..DIRS.len()).prop_map(Op::RemoveDir),
        1 => (0..PATHS.len(), 0..PATHS.len()).prop_map(|(p, q)| Op::Link(p, q)),
        1 => (0..PATHS.len(), any::<bool>()).prop_map(|(p, x)| Op::Chmod(p, x)),
        3 => Just(Op::Record),
    ]
}

/// Bytes zstd cannot shrink, different for each `seed`.
pub fn noise(seed: u32, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}
