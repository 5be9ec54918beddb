//! The change journal where there is no inotify (everything but Linux): it never starts, so
//! every checkpoint is a full scan. Same interface as `journal.rs`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::index::Index;
use super::prune::RootPlan;

#[derive(Debug, Default)]
pub struct WalkNotes {
    pub linked: Vec<(u16, Box<[u8]>)>,
    pub mounts: Vec<(u16, PathBuf)>,
}

pub struct Watched;

impl Watched {
    pub fn watch(&self, _root: u16, _rel: &[u8], _abs: &Path) {}
    pub fn saw_git(&self, _path: &Path) {}
}

pub struct Journal {
    watched: Arc<Watched>,
}

impl Journal {
    pub fn start(
        _dir: &Path,
        _roots: &[PathBuf],
        _max_dirs: usize,
        _full_every: u32,
    ) -> io::Result<Journal> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no change journal on this platform",
        ))
    }

    pub fn watched(&self) -> Arc<Watched> {
        Arc::clone(&self.watched)
    }

    pub fn broken(&self) -> Option<String> {
        None
    }

    pub fn plan(
        &mut self,
        _previous: &Index,
        _latest: Option<u64>,
        _to_record: bool,
    ) -> Vec<RootPlan> {
        Vec::new()
    }

    pub fn committed(
        &mut self,
        _id: u64,
        _plans: &[RootPlan],
        _index: &Index,
        _notes: &WalkNotes,
        _roots_with_problems: &[u16],
    ) {
    }
}
