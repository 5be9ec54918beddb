//! The Grep tool: regex search over the working tree, in-process with ripgrep's own crates
//! (`grep-regex` matcher, `grep-searcher` searcher) over `ignore`'s parallel walker. No `grep`
//! or `rg` process is started.
//!
//! Invariants: .gitignore/.ignore apply inside and outside git repositories; hidden files and
//! binary files (a NUL byte) are skipped; results are sorted by path (lines in file order), so
//! the same tree always gives the same answer whatever the thread schedule; `head_limit` and
//! `offset` page over the sorted entries. Memory stays bounded whatever the pattern: past
//! [`MAX_STORED_LINES`] line texts, files keep only their counts and the page shown is searched
//! again. Read-only and concurrency-safe. `sink` collects one file, `output` renders the page.

mod output;
mod sink;

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::session::context::SessionContext;
use crate::tools::glob::{resolve_path, walker};
use crate::tools::search_budget::Budget;
use crate::tools::{Access, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use sink::{Collect, FileResult};

/// Entries returned when the model gives no `head_limit`.
pub const DEFAULT_HEAD_LIMIT: usize = 250;
/// Line texts held in memory during a content search before files keep only their counts.
const MAX_STORED_LINES: usize = 100_000;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    // Matching lines, with `path:line:` prefixes.
    Content,
    // Paths of files that contain a match (the default).
    #[default]
    FilesWithMatches,
    // The number of matching lines per file.
    Count,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// Regular expression (ripgrep syntax).
    pub pattern: String,
    /// File or directory (default: working directory).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files matching this glob (`*.{ts,tsx}`).
    #[serde(default, alias = "include")]
    pub glob: Option<String>,
    /// Only files of this ripgrep type (`rust`, `py`).
    #[serde(default, rename = "type")]
    pub file_type: Option<String>,
    /// `content`: matching lines; `files_with_matches` (default): paths; `count`: counts.
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    /// Case-insensitive search.
    #[serde(default, rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Line numbers (content; default true).
    #[serde(default, rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines after each match (content).
    #[serde(default, rename = "-A")]
    pub after: Option<usize>,
    /// Lines before each match (content).
    #[serde(default, rename = "-B")]
    pub before: Option<usize>,
    /// Lines around each match (content).
    #[serde(default, rename = "-C")]
    pub context: Option<usize>,
    /// Patterns may span lines.
    #[serde(default)]
    pub multiline: Option<bool>,
    /// At most this many entries (default 250; 0: all).
    #[serde(default)]
    pub head_limit: Option<usize>,
    /// Skip this many entries first.
    #[serde(default)]
    pub offset: Option<usize>,
}

/// Searches file contents with ripgrep's engine.
#[derive(Debug, Default, Clone)]
pub struct GrepTool;

#[async_trait]
impl Tool for GrepTool {
    type Input = GrepInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("Grep", ToolKind::Read)
            .searches()
            .aliases(&[NOTES_NAME])
            .read_only()
            .concurrency_safe()
    }

    fn description(&self) -> String {
        "Searches file contents with ripgrep's engine. Always use it for searches, never \
         `grep` or `rg` in Bash. Full regex: escape literal braces (`interface\\{\\}`). \
         Page with head_limit and offset."
            .to_string()
    }

    fn title(&self, input: &GrepInput, _ctx: &SessionContext) -> String {
        match &input.path {
            Some(p) => format!("Grep \"{}\" in {p}", input.pattern),
            None => format!("Grep \"{}\"", input.pattern),
        }
    }

    fn accesses(&self, input: &GrepInput, ctx: &SessionContext) -> Vec<Access> {
        vec![Access::Read(resolve_path(ctx, input.path.as_deref()))]
    }

    async fn validate(&self, input: &GrepInput, ctx: &ToolContext) -> Result<(), ToolError> {
        Search::new(input, &ctx.session).map(|_| ())
    }

    async fn call(&self, input: GrepInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Called by the notes' name, the notes' answer: `path:line:text`, at most 100 lines.
        let notes_form = ctx.called_as.as_deref() == Some(NOTES_NAME);
        let input = if notes_form {
            GrepInput {
                output_mode: Some(OutputMode::Content),
                line_numbers: Some(true),
                head_limit: Some(NOTES_LIMIT),
                offset: None,
                ..input
            }
        } else {
            input
        };
        let mut search = Search::new(&input, &ctx.session)?;
        search.notes_form = notes_form;
        if !search.root.exists() {
            return Err(ToolError::new(format!(
                "Path does not exist: {}. Check the path or search the current directory.",
                search.root.display()
            )));
        }
        let cancel = ctx.cancel.clone();
        let budget = std::sync::Arc::new(Budget::start(&ctx.session));
        let walk_budget = budget.clone();
        let mut output = tokio::task::spawn_blocking(move || {
            let mut files = search.run(&|| cancel.is_cancelled() || walk_budget.spent());
            files.sort_by(|a, b| a.path.cmp(&b.path));
            output::format_results(&input, &search, files)
        })
        .await
        .map_err(|e| ToolError::new(format!("Grep failed: {e}")))?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new("Interrupted by the user."));
        }
        if let Some(note) = budget.note() {
            output.content = format!("{}\n{note}", output.content.into_text()).into();
        }
        Ok(output)
    }
}

/// One validated search: matcher, searcher settings and walker settings.
struct Search {
    root: PathBuf,
    matcher: RegexMatcher,
    mode: OutputMode,
    multiline: bool,
    before: usize,
    after: usize,
    overrides: Option<ignore::overrides::Override>,
    types: Option<ignore::types::Types>,
    /// Line texts kept during the walk (see [`MAX_STORED_LINES`]).
    stored_limit: usize,
    /// Answer in the design notes' form (`grep_search`): `... and N more matches`.
    notes_form: bool,
}

/// The design notes' name for Grep, and the most lines its answer holds.
pub const NOTES_NAME: &str = "grep_search";
pub const NOTES_LIMIT: usize = 100;

impl Search {
    fn new(input: &GrepInput, session: &SessionContext) -> Result<Search, ToolError> {
        // No I/O here: validation runs before permission; `call` checks the root exists.
        let root = resolve_path(session, input.path.as_deref());
        let multiline = input.multiline.unwrap_or(false);
        let mut builder = RegexMatcherBuilder::new();
        builder
            .case_insensitive(input.case_insensitive.unwrap_or(false))
            .multi_line(true)
            .dot_matches_new_line(multiline);
        if !multiline {
            // Lets the searcher find candidate lines fast; a match can never cross a line.
            builder.line_terminator(Some(b'\n'));
        }
        let matcher = builder.build(&input.pattern).map_err(|e| {
            let hint = if !multiline && e.to_string().contains(r"\n") {
                " Set multiline: true to match across lines."
            } else {
                ""
            };
            ToolError::new(format!("Invalid regex `{}`: {e}.{hint}", input.pattern))
        })?;
        let overrides = match input.glob.as_deref().map(str::trim) {
            Some(globs) if !globs.is_empty() => {
                let mut b = OverrideBuilder::new(&root);
                for g in split_globs(globs) {
                    b.add(&g)
                        .map_err(|e| ToolError::new(format!("Invalid glob `{g}`: {e}")))?;
                }
                Some(
                    b.build()
                        .map_err(|e| ToolError::new(format!("Invalid glob: {e}")))?,
                )
            }
            _ => None,
        };
        let types = match input.file_type.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() => {
                let mut b = TypesBuilder::new();
                b.add_defaults().select(t);
                Some(b.build().map_err(|e| {
                    ToolError::new(format!(
                        "Unknown file type `{t}` ({e}). Use a ripgrep type name such as rust, \
                         py, js, ts, go, java, c, cpp, md, or filter with `glob` instead."
                    ))
                })?)
            }
            _ => None,
        };
        let mode = input.output_mode.unwrap_or_default();
        let (before, after) = if mode == OutputMode::Content {
            (
                input.before.or(input.context).unwrap_or(0),
                input.after.or(input.context).unwrap_or(0),
            )
        } else {
            (0, 0)
        };
        Ok(Search {
            root,
            matcher,
            mode,
            multiline,
            before,
            after,
            overrides,
            types,
            stored_limit: MAX_STORED_LINES,
            notes_form: false,
        })
    }

    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .multi_line(self.multiline)
            .before_context(self.before)
            .after_context(self.after)
            .build()
    }

    /// Search every file under the root; unordered. In content mode line texts are kept only
    /// until [`MAX_STORED_LINES`] are held; files past that keep their counts, and the page
    /// shown is re-searched (see `output`), so memory stays bounded whatever the pattern.
    fn run(&self, cancelled: &(dyn Fn() -> bool + Sync)) -> Vec<FileResult> {
        let results: Mutex<Vec<FileResult>> = Mutex::new(Vec::new());
        let stored = AtomicUsize::new(0);
        let mut walk = walker(&self.root, false);
        if let Some(o) = &self.overrides {
            walk.overrides(o.clone());
        }
        if let Some(t) = &self.types {
            walk.types(t.clone());
        }
        walk.build_parallel().run(|| {
            let mut searcher = self.searcher();
            let (results, stored) = (&results, &stored);
            Box::new(move |entry| {
                if cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let keep = stored.load(Ordering::Relaxed) < self.stored_limit;
                if let Some(r) = self.search_file(&mut searcher, entry.into_path(), keep) {
                    if let Some(lines) = &r.lines {
                        stored.fetch_add(lines.len(), Ordering::Relaxed);
                    }
                    match results.lock() {
                        Ok(mut g) => g.push(r),
                        Err(p) => p.into_inner().push(r),
                    }
                }
                WalkState::Continue
            })
        });
        match results.into_inner() {
            Ok(v) => v,
            Err(p) => p.into_inner(),
        }
    }

    /// Search one file; None when it has no match, is binary or cannot be read (skipped, as
    /// ripgrep does). `keep_lines`: keep the line texts (content mode).
    fn search_file(
        &self,
        searcher: &mut Searcher,
        path: PathBuf,
        keep_lines: bool,
    ) -> Option<FileResult> {
        let mut sink = Collect::new(self.mode, keep_lines);
        searcher.search_path(&self.matcher, &path, &mut sink).ok()?;
        if sink.binary || sink.count == 0 {
            return None;
        }
        Some(FileResult {
            path,
            count: sink.count,
            entries: sink.entries,
            lines: sink.lines,
        })
    }
}

/// Split a `glob` argument into patterns: whitespace or commas outside braces separate them.
fn split_globs(globs: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in globs.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c.is_whitespace() || c == ',') {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_the_same_whether_lines_were_kept_or_searched_again() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["a", "b", "c"] {
            let text: String = (0..20).map(|i| format!("{f} line {i}\n")).collect();
            std::fs::write(dir.path().join(format!("{f}.txt")), text).unwrap();
        }
        let session = SessionContext::for_dir(dir.path());
        let input: GrepInput = serde_json::from_value(serde_json::json!({
            "pattern": "line 1", "output_mode": "content", "-C": 1, "head_limit": 12, "offset": 5
        }))
        .unwrap();
        let render = |limit: usize| {
            let mut search = Search::new(&input, &session).unwrap();
            search.stored_limit = limit;
            let mut files = search.run(&|| false);
            files.sort_by(|a, b| a.path.cmp(&b.path));
            output::format_results(&input, &search, files)
        };
        let kept = render(usize::MAX);
        let again = render(0);
        assert_eq!(kept, again);
        let a = dir.path().join("a.txt");
        let b = dir.path().join("b.txt");
        assert!(
            kept.content.text().starts_with(&format!(
                "{a}:11:a line 10\n{a}:12:a line 11\n",
                a = a.display()
            )),
            "{}",
            kept.content.text()
        );
        assert!(
            kept.content
                .text()
                .contains(&format!("--\n{}-1-b line 0\n", b.display()))
        );
    }

    #[test]
    fn globs_split_on_spaces_and_commas_outside_braces() {
        assert_eq!(
            split_globs("*.{ts,tsx} *.js,*.md"),
            vec!["*.{ts,tsx}", "*.js", "*.md"]
        );
    }

    #[test]
    fn input_uses_claude_code_field_names() {
        let v = serde_json::json!({"pattern": "x", "-i": true, "-C": 2, "type": "rust",
            "output_mode": "content", "head_limit": 5});
        let i: GrepInput = serde_json::from_value(v).unwrap();
        assert_eq!(i.case_insensitive, Some(true));
        assert_eq!(i.context, Some(2));
        assert_eq!(i.file_type.as_deref(), Some("rust"));
        assert_eq!(i.output_mode, Some(OutputMode::Content));
        assert!(
            serde_json::from_value::<GrepInput>(serde_json::json!({"pattern": "x", "-z": 1}))
                .is_err()
        );
    }
}
