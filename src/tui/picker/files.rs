//! The `@` file picker's data: walking the project (ignore's walker, so .gitignore is honoured)
//! and fuzzy-matching paths with nucleo-matcher. Both are blocking and run off the input path
//! (the event loop calls them in `spawn_blocking`); results carry the request id so stale ones
//! are dropped.

use std::path::Path;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

/// Walk at most this many files (a huge tree must not stall the picker).
const MAX_FILES: usize = 50_000;

/// How many matches the picker shows.
pub const MAX_MATCHES: usize = 8;

/// Relative paths (with `/`) of the files under `root`, honouring ignore files, sorted.
pub fn list_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(rel) = entry.path().strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
        if out.len() >= MAX_FILES {
            break;
        }
    }
    out.sort();
    out
}

/// The best matches of `query` among `files`, best first. An empty query lists the first files.
pub fn match_files(files: &[String], query: &str) -> Vec<String> {
    if query.is_empty() {
        return files.iter().take(MAX_MATCHES).cloned().collect();
    }
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut scored = pattern.match_list(files.iter(), &mut matcher);
    // Equal scores: shorter paths first, then alphabetical, so results are stable.
    scored.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(a.0.len().cmp(&b.0.len()))
            .then(a.0.cmp(b.0))
    });
    scored
        .into_iter()
        .take(MAX_MATCHES)
        .map(|(p, _)| p.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_honouring_gitignore_and_matches_fuzzily() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/tui")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("src/main.rs"), "").unwrap();
        std::fs::write(root.join("src/tui/app.rs"), "").unwrap();
        std::fs::write(root.join("target/junk.rs"), "").unwrap();
        let files = list_files(root);
        assert_eq!(files, [".gitignore", "src/main.rs", "src/tui/app.rs"]);
        assert_eq!(match_files(&files, "tuiapp"), ["src/tui/app.rs"]);
        assert_eq!(match_files(&files, "main")[0], "src/main.rs");
        assert!(match_files(&files, "zzz").is_empty());
    }
}
