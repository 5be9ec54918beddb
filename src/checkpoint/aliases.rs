//! Labels that name an existing checkpoint: when nothing changed since the latest checkpoint,
//! recording another writes no checkpoint file; its label becomes an alias of the latest one
//! (`before prompt 3` → checkpoint 2), so whoever looks the label up finds the same state.
//!
//! The aliases of a store are one append-only file (`aliases`), a line per alias:
//! `<id> <created_ms> <label>`. Appending is not fsynced: an alias lost to a power cut costs
//! only the label (`/rewind` then offers that prompt without restoring files), never a wrong
//! state. Lines that do not parse, or name a checkpoint that no longer exists (pruned,
//! damaged), are ignored.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{CheckpointId, CheckpointInfo};

const FILE: &str = "aliases";

/// One label naming an existing checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Alias {
    pub id: u64,
    pub created_ms: u64,
    pub label: String,
}

/// A store's aliases, as read at open and appended since.
#[derive(Debug, Default)]
pub(super) struct Aliases {
    pub(super) path: PathBuf,
    list: Vec<Alias>,
}

impl Aliases {
    /// The aliases in store `dir` (none when the file is missing or unreadable).
    pub fn load(dir: &Path) -> Aliases {
        let path = dir.join(FILE);
        let text = fs::read(&path).unwrap_or_default();
        let list = String::from_utf8_lossy(&text)
            .lines()
            .filter_map(parse)
            .collect();
        Aliases { path, list }
    }

    /// Name checkpoint `id` `label` too, on disk and here.
    pub fn add(&mut self, id: u64, created_ms: u64, label: &str) -> io::Result<()> {
        // A label is one line: a line break in it would forge the next alias.
        let label: String = label
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        file.write_all(format!("{id} {created_ms} {label}\n").as_bytes())?;
        self.list.push(Alias {
            id,
            created_ms,
            label,
        });
        Ok(())
    }

    /// The aliases of the checkpoints that exist, as checkpoint infos: `exists` gives an
    /// existing checkpoint's roots.
    pub fn infos(&self, exists: impl Fn(u64) -> Option<Vec<PathBuf>>) -> Vec<CheckpointInfo> {
        self.list
            .iter()
            .filter_map(|a| {
                Some(CheckpointInfo {
                    id: CheckpointId(a.id),
                    created_ms: a.created_ms,
                    label: a.label.clone(),
                    roots: exists(a.id)?,
                })
            })
            .collect()
    }
}

fn parse(line: &str) -> Option<Alias> {
    let mut parts = line.splitn(3, ' ');
    let id = parts.next()?.parse().ok()?;
    let created_ms = parts.next()?.parse().ok()?;
    let label = parts.next()?.to_string();
    Some(Alias {
        id,
        created_ms,
        label,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_survive_a_reopen_and_a_label_cannot_forge_a_line() {
        let tmp = tempfile::tempdir().unwrap();
        let mut a = Aliases::load(tmp.path());
        a.add(2, 100, "before prompt x").unwrap();
        a.add(3, 200, "evil\n9 9 forged").unwrap();
        let b = Aliases::load(tmp.path());
        let known = |id: u64| (id != 3).then(|| vec![PathBuf::from("/r")]);
        let infos = b.infos(known);
        assert_eq!(infos.len(), 1, "{infos:?}");
        assert_eq!(infos[0].label, "before prompt x");
        assert_eq!(infos[0].id, CheckpointId(2));
        assert_eq!(b.list[1].label, "evil 9 9 forged");
    }
}
