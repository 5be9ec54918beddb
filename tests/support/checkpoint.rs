//! The checkpoint tests' workspace: a project root, a data dir and a directory outside the
//! root, in one temp dir; and the whole tree as text, to compare states exactly.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
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
