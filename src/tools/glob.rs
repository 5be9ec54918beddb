//! The Glob tool: files whose path matches a glob, newest first.
//!
//! Walks with `ignore`'s parallel walker, honouring .gitignore/.ignore files also outside git
//! repositories (`require_git(false)`), skipping hidden files unless the pattern names a hidden
//! component. A pattern without `/` matches file names at any depth (as in ripgrep's `--glob`).
//! Results are ordered by modification time, newest first, ties by path, so equal trees give
//! equal answers; at most [`MAX_RESULTS`] are listed with a note saying how many more matched.
//! Read-only and concurrency-safe. Also home of the path helpers Grep shares.

use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::protocol::Display;
use crate::session::context::SessionContext;
use crate::tools::search_budget::Budget;
use crate::tools::{Access, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};

/// How many files a Glob result lists.
pub const MAX_RESULTS: usize = 100;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// E.g. `src/**/*.{ts,tsx}`.
    pub pattern: String,
    /// Directory (default: working directory).
    #[serde(default)]
    pub path: Option<String>,
}

/// Fast file-pattern matching over the working tree.
#[derive(Debug, Default, Clone)]
pub struct GlobTool;

#[async_trait]
impl Tool for GlobTool {
    type Input = GlobInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("Glob", ToolKind::Read)
            .searches()
            .aliases(&["list_files"])
            .read_only()
            .concurrency_safe()
    }

    fn description(&self) -> String {
        "Finds files by glob pattern (a pattern without `/` matches names at any depth): at \
         most 100 paths, newest first. Respects .gitignore; hidden files only when the pattern \
         names them."
            .to_string()
    }

    fn title(&self, input: &GlobInput, _ctx: &SessionContext) -> String {
        match &input.path {
            Some(p) => format!("Glob {} in {p}", input.pattern),
            None => format!("Glob {}", input.pattern),
        }
    }

    fn accesses(&self, input: &GlobInput, ctx: &SessionContext) -> Vec<Access> {
        let (root, _) = split_pattern(ctx, &input.pattern, input.path.as_deref());
        vec![Access::Read(root)]
    }

    async fn validate(&self, input: &GlobInput, ctx: &ToolContext) -> Result<(), ToolError> {
        // No I/O before permission: whether the directory exists is the call's to say.
        let (_, pattern) = split_pattern(&ctx.session, &input.pattern, input.path.as_deref());
        compile(&pattern).map(|_| ())
    }

    async fn call(&self, input: GlobInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let (root, pattern) = split_pattern(&ctx.session, &input.pattern, input.path.as_deref());
        check_dir(&root)?;
        let matcher = compile(&pattern)?;
        let hidden = names_hidden(&pattern);
        let cancel = ctx.cancel.clone();
        let walk_root = root.clone();
        let budget = std::sync::Arc::new(Budget::start(&ctx.session));
        let walk_budget = budget.clone();
        let found = tokio::task::spawn_blocking(move || {
            find_files(&walk_root, &matcher, hidden, MAX_RESULTS, &|| {
                cancel.is_cancelled() || walk_budget.spent()
            })
        })
        .await
        .map_err(|e| ToolError::new(format!("Glob failed: {e}")))?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new("Interrupted by the user."));
        }
        let (files, total) = found;
        let more = total.saturating_sub(files.len());
        let mut text = if files.is_empty() {
            "No files found".to_string()
        } else {
            files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join("\n")
        };
        if more > 0 {
            text.push_str(&format!(
                "\n(Results are truncated: showing the {MAX_RESULTS} most recently modified of \
                 {total} files. Use a more specific path or pattern to see the others.)"
            ));
        }
        if let Some(note) = budget.note() {
            text.push('\n');
            text.push_str(&note);
        }
        Ok(ToolOutput::with_display(
            text,
            Display::FileList { files, more },
        ))
    }
}

/// The newest `limit` files under `root` whose path relative to `root` matches (newest first,
/// ties by path), and how many matched in all. Memory stays at a few `limit`s per thread
/// whatever the tree. `cancelled` is polled; a cancelled walk returns what it has.
pub fn find_files(
    root: &Path,
    matcher: &GlobMatcher,
    include_hidden: bool,
    limit: usize,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> (Vec<PathBuf>, usize) {
    let found: Mutex<Newest> = Mutex::new(Newest::default());
    walker(root, include_hidden).build_parallel().run(|| {
        // Each thread collects on its own; the batch is merged when the walker drops the
        // visitor at the end of that thread's walk.
        let mut flush = FlushOnDrop {
            found: &found,
            local: Newest::default(),
            limit,
        };
        Box::new(move |entry| {
            if cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.file_type().is_none_or(|t| t.is_dir()) {
                return WalkState::Continue;
            }
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            if matcher.is_match(rel) {
                let mtime = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                flush.local.push((mtime, entry.into_path()), limit);
            }
            WalkState::Continue
        })
    });
    let mut found = match found.into_inner() {
        Ok(v) => v,
        Err(p) => p.into_inner(),
    };
    found.keep_newest(limit);
    let files = found.files.into_iter().map(|(_, p)| p).collect();
    (files, found.total)
}

/// The newest files seen so far, and how many were seen.
#[derive(Default)]
struct Newest {
    files: Vec<(SystemTime, PathBuf)>,
    total: usize,
}

impl Newest {
    fn push(&mut self, file: (SystemTime, PathBuf), limit: usize) {
        self.total += 1;
        self.files.push(file);
        if self.files.len() >= limit.saturating_mul(4).max(1024) {
            self.keep_newest(limit);
        }
    }

    /// Sort newest first (ties by path) and drop all but `limit`.
    fn keep_newest(&mut self, limit: usize) {
        self.files
            .sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        self.files.truncate(limit);
    }
}

struct FlushOnDrop<'a> {
    found: &'a Mutex<Newest>,
    local: Newest,
    limit: usize,
}

impl Drop for FlushOnDrop<'_> {
    fn drop(&mut self) {
        let mut g = match self.found.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g.total += self.local.total;
        g.files.append(&mut self.local.files);
        g.keep_newest(self.limit);
    }
}

/// The walker both search tools use: ignore files apply inside and outside git repositories,
/// `.git` itself is never entered.
pub(crate) fn walker(root: &Path, include_hidden: bool) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.require_git(false)
        .hidden(!include_hidden)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git");
    b
}

/// Compile a glob the way ripgrep's `--glob` reads it: `*` stays within one path component, and
/// a pattern without `/` matches a file name at any depth.
pub fn compile(pattern: &str) -> Result<GlobMatcher, ToolError> {
    let full = if pattern.contains('/') {
        pattern.trim_start_matches("./").to_string()
    } else {
        format!("**/{pattern}")
    };
    GlobBuilder::new(&full)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ToolError::new(format!("Invalid glob pattern `{pattern}`: {e}")))
}

/// Whether the pattern asks for hidden files (a component starting with `.`).
fn names_hidden(pattern: &str) -> bool {
    pattern
        .split('/')
        .any(|c| c.starts_with('.') && c != "." && c != "..")
}

/// The directory to walk and the pattern relative to it. An absolute pattern carries its own
/// root: the components before the first one with glob syntax.
fn split_pattern(ctx: &SessionContext, pattern: &str, path: Option<&str>) -> (PathBuf, String) {
    if Path::new(pattern).is_absolute() {
        let mut root = PathBuf::from("/");
        let mut rest: Vec<&str> = Vec::new();
        for comp in pattern.split('/').filter(|c| !c.is_empty()) {
            if rest.is_empty() && !comp.contains(['*', '?', '[', '{']) {
                root.push(comp);
            } else {
                rest.push(comp);
            }
        }
        if rest.is_empty() {
            // A literal absolute path: search its directory for that name.
            let name = root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let parent = root.parent().map(Path::to_path_buf).unwrap_or(root.clone());
            return (parent, name);
        }
        return (root, rest.join("/"));
    }
    (resolve_path(ctx, path), pattern.to_string())
}

/// A path from the model, made absolute against the session's cwd (`~` is the home directory),
/// with `.` and `..` folded without touching the disk. `None` or empty means the cwd.
pub fn resolve_path(ctx: &SessionContext, path: Option<&str>) -> PathBuf {
    let cwd = ctx.cwd();
    let Some(path) = path.filter(|p| !p.trim().is_empty()) else {
        return cwd;
    };
    let expanded = match path.strip_prefix("~") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    };
    let joined = cwd.join(expanded);
    let mut out = PathBuf::new();
    for comp in joined.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A clear error when the search root is missing or not a directory.
fn check_dir(root: &Path) -> Result<(), ToolError> {
    match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(ToolError::new(format!(
            "Path is not a directory: {}. Give a directory as `path`.",
            root.display()
        ))),
        Err(_) => Err(ToolError::new(format!(
            "Path does not exist: {}. Check the path or use the current directory.",
            root.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_keeps_the_top_files_and_counts_all() {
        let mut n = Newest::default();
        for i in 0..3000u64 {
            // Shuffled times, with ties broken by path.
            let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs((i * 7919) % 1000);
            n.push((t, PathBuf::from(format!("f{i:04}"))), 3);
        }
        n.keep_newest(3);
        assert_eq!(n.total, 3000);
        let names: Vec<String> = n
            .files
            .iter()
            .map(|(_, p)| p.display().to_string())
            .collect();
        // The latest time, 999 s, is reached by i = 321, 1321 and 2321 (i * 7919 % 1000).
        assert_eq!(names, vec!["f0321", "f1321", "f2321"]);
    }

    #[test]
    fn patterns_without_slash_match_at_any_depth() {
        let m = compile("*.rs").unwrap();
        assert!(m.is_match("a.rs"));
        assert!(m.is_match("src/deep/a.rs"));
        assert!(!m.is_match("a.rsx"));
        let m = compile("src/*.rs").unwrap();
        assert!(m.is_match("src/a.rs"));
        assert!(!m.is_match("src/x/a.rs"));
        let m = compile("**/*.{ts,tsx}").unwrap();
        assert!(m.is_match("a/b.tsx"));
        assert!(m.is_match("b.ts"));
    }

    #[test]
    fn bad_globs_quote_the_pattern() {
        let e = compile("a[").unwrap_err();
        assert!(
            e.message.starts_with("Invalid glob pattern `a[`: "),
            "{}",
            e.message
        );
    }

    #[test]
    fn hidden_components_are_detected() {
        assert!(names_hidden(".github/**/*.yml"));
        assert!(names_hidden("**/.env"));
        assert!(!names_hidden("./src/**/*.rs"));
        assert!(!names_hidden("../x/*.rs"));
    }

    #[test]
    fn paths_resolve_against_the_session_cwd() {
        let ctx = SessionContext::for_dir(Path::new("/w/p"));
        assert_eq!(resolve_path(&ctx, None), PathBuf::from("/w/p"));
        assert_eq!(
            resolve_path(&ctx, Some("src/../lib")),
            PathBuf::from("/w/p/lib")
        );
        assert_eq!(resolve_path(&ctx, Some("/abs")), PathBuf::from("/abs"));
        let (root, pat) = split_pattern(&ctx, "/w/p/src/**/*.rs", Some("ignored"));
        assert_eq!((root, pat.as_str()), (PathBuf::from("/w/p/src"), "**/*.rs"));
    }
}
