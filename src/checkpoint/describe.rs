//! Views of a store for tests and debugging: a checkpoint's index as text, and how many
//! recordings looked at the tree.

use super::index::Content;
use super::store::CheckpointStore;
use super::{CheckpointError, CheckpointId};

impl CheckpointStore {
    /// Checkpoint `id`'s index as text, a line per entry (root, path, kind, mode, size,
    /// mtime, inode, content) and per file not covered: for tests comparing two ways of
    /// recording the same tree, and for debugging.
    #[doc(hidden)]
    pub fn describe(&mut self, id: CheckpointId) -> Result<String, CheckpointError> {
        use std::fmt::Write;
        let (_, index) = self.read(id)?;
        let mut out = String::new();
        for e in index.entries() {
            let path = String::from_utf8_lossy(&e.path);
            let s = &e.stat;
            let content = match &e.content {
                Content::File(h) => h[..8].iter().map(|b| format!("{b:02x}")).collect(),
                Content::Symlink(t) => format!("-> {}", String::from_utf8_lossy(t)),
                Content::Dir => "dir".to_string(),
            };
            let _ = writeln!(
                out,
                "{} {path} {:o} {} {}.{} {} {content}",
                e.root, s.mode, s.size, s.mtime_sec, s.mtime_nsec, s.ino
            );
        }
        for n in index.not_covered() {
            let path = String::from_utf8_lossy(&n.path);
            let _ = writeln!(out, "{} {path} not covered: {:?}", n.root, n.why);
        }
        Ok(out)
    }

    /// How many recordings looked at the tree (a scan, or the journal's list of changes):
    /// for tests of what is recorded without looking.
    #[doc(hidden)]
    pub fn recordings_that_looked(&self) -> u32 {
        self.looked
    }
}
