//! Prompt history: the prompts sent in this project, oldest first, persisted as JSON lines (one
//! JSON string per line) in one file per project under the data dir, so a prompt with newlines
//! survives. Loading or saving failures are logged and never stop the TUI.
//!
//! Also the pure part of walking (Up/Down) and of Ctrl+R search over the entries.

use std::io::Write;
use std::path::{Path, PathBuf};

/// How many prompts are kept in the file and in memory.
const MAX_ENTRIES: usize = 1000;

/// The prompt history of one project.
#[derive(Debug, Default)]
pub struct History {
    entries: Vec<String>,
    path: Option<PathBuf>,
    /// Index into `entries` while walking; `None` when editing a fresh prompt.
    cursor: Option<usize>,
    /// What was in the composer before walking started, restored when walking past the newest.
    draft: String,
}

/// The history file of a project: `<data_dir>/history/<project path with non-alphanumerics
/// replaced by '-'>.jsonl` (the same slug shape as Claude Code's per-project folders).
pub fn history_path(data_dir: &Path, project_dir: &Path) -> PathBuf {
    let slug: String = project_dir
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    data_dir.join("history").join(format!("{slug}.jsonl"))
}

impl History {
    /// In memory only (tests, or no data dir).
    pub fn in_memory(entries: Vec<String>) -> History {
        History {
            entries,
            ..History::default()
        }
    }

    /// Load from `path` (missing file: empty history). Unreadable lines are skipped.
    pub fn load(path: PathBuf) -> History {
        let entries = match std::fs::read_to_string(&path) {
            Ok(text) => text
                .lines()
                .filter_map(|l| serde_json::from_str::<String>(l).ok())
                .collect::<Vec<_>>(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                tracing::warn!("cannot read prompt history {}: {e}", path.display());
                Vec::new()
            }
        };
        let skip = entries.len().saturating_sub(MAX_ENTRIES);
        History {
            entries: entries.into_iter().skip(skip).collect(),
            path: Some(path),
            ..History::default()
        }
    }

    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Record a sent prompt (not twice in a row) and append it to the file.
    pub fn record(&mut self, prompt: &str) {
        self.cursor = None;
        self.draft.clear();
        if prompt.trim().is_empty() || self.entries.last().is_some_and(|l| l == prompt) {
            return;
        }
        self.entries.push(prompt.to_string());
        if self.entries.len() > MAX_ENTRIES {
            self.entries.remove(0);
        }
        if let Some(path) = &self.path
            && let Err(e) = append_line(path, prompt)
        {
            tracing::warn!("cannot save prompt history {}: {e}", path.display());
        }
    }

    /// Whether the composer currently shows a recalled entry.
    pub fn is_walking(&self) -> bool {
        self.cursor.is_some()
    }

    /// The entry that is recalled now, if walking.
    pub fn current(&self) -> Option<&str> {
        self.cursor
            .and_then(|i| self.entries.get(i))
            .map(String::as_str)
    }

    /// Step to the older entry. `draft` is the composer text, kept when walking starts.
    pub fn older(&mut self, draft: &str) -> Option<&str> {
        let next = match self.cursor {
            None if self.entries.is_empty() => return None,
            None => {
                self.draft = draft.to_string();
                self.entries.len() - 1
            }
            Some(0) => return None,
            Some(i) => i - 1,
        };
        self.cursor = Some(next);
        self.entries.get(next).map(String::as_str)
    }

    /// Step to the newer entry; past the newest, the draft comes back and walking stops.
    pub fn newer(&mut self) -> Option<String> {
        let i = self.cursor?;
        if i + 1 < self.entries.len() {
            self.cursor = Some(i + 1);
            self.entries.get(i + 1).cloned()
        } else {
            self.cursor = None;
            Some(std::mem::take(&mut self.draft))
        }
    }

    /// Stop walking (the person edited the recalled text).
    pub fn stop_walking(&mut self) {
        self.cursor = None;
    }

    /// The newest entry older than `before` (exclusive; `None` = from the newest) containing
    /// `query`, case-insensitively.
    pub fn search(&self, query: &str, before: Option<usize>) -> Option<usize> {
        let end = before.unwrap_or(self.entries.len()).min(self.entries.len());
        let q = query.to_lowercase();
        (0..end)
            .rev()
            .find(|&i| self.entries[i].to_lowercase().contains(&q))
    }

    pub fn get(&self, index: usize) -> Option<&str> {
        self.entries.get(index).map(String::as_str)
    }
}

fn append_line(path: &Path, prompt: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let line = serde_json::to_string(prompt).map_err(std::io::Error::other)?;
    writeln!(f, "{line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_back_and_forth_and_restores_the_draft() {
        let mut h = History::in_memory(vec!["one".into(), "two".into()]);
        assert_eq!(h.older("draft"), Some("two"));
        assert_eq!(h.older("ignored"), Some("one"));
        assert_eq!(h.older("ignored"), None);
        assert_eq!(h.current(), Some("one"));
        assert_eq!(h.newer().as_deref(), Some("two"));
        assert_eq!(h.newer().as_deref(), Some("draft"));
        assert!(!h.is_walking());
        assert_eq!(h.newer(), None);
    }

    #[test]
    fn persists_per_project_and_survives_newlines() {
        let dir = tempfile::tempdir().unwrap();
        let path = history_path(dir.path(), Path::new("/home/me/my proj"));
        assert!(path.ends_with("history/-home-me-my-proj.jsonl"));
        let mut h = History::load(path.clone());
        h.record("first");
        h.record("multi\nline");
        h.record("multi\nline");
        h.record("   ");
        let again = History::load(path.clone());
        assert_eq!(again.entries(), ["first", "multi\nline"]);
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(text, "\"first\"\n\"multi\\nline\"\n");
    }

    #[test]
    fn search_finds_newest_older_match() {
        let h = History::in_memory(vec![
            "cargo test".into(),
            "git status".into(),
            "cargo build".into(),
        ]);
        assert_eq!(h.search("CARGO", None), Some(2));
        assert_eq!(h.search("cargo", Some(2)), Some(0));
        assert_eq!(h.search("cargo", Some(0)), None);
        assert_eq!(h.search("nothing", None), None);
    }
}
