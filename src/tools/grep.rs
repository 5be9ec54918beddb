//! The Grep tool: regex search over the working tree, in-process with ripgrep's own crates
//! (`grep-regex` matcher, `grep-searcher` searcher) over `ignore`'s parallel walker. No `grep`
//! or `rg` process is started.
//!
//! Invariants: .gitignore/.ignore apply inside and outside git repositories; hidden files and
//! binary files (a NUL byte) are skipped; results are sorted by path (lines in file order), so
//! the same tree always gives the same answer whatever the thread schedule; `head_limit` and
//! `offset` page over the sorted entries. Read-only and concurrency-safe.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::WalkState;
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::agent::session::SessionContext;
use crate::protocol::{Display, SearchMatch};
use crate::tools::glob::{resolve_path, walker};
use crate::tools::{Access, Tool, ToolContext, ToolError, ToolOutput};

/// Entries returned when the model gives no `head_limit`.
pub const DEFAULT_HEAD_LIMIT: usize = 250;
/// Longer lines are cut in content mode (minified files would flood the context).
const MAX_LINE_CHARS: usize = 500;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Matching lines, with `path:line:` prefixes.
    Content,
    /// Paths of files that contain a match (the default).
    #[default]
    FilesWithMatches,
    /// The number of matching lines per file.
    Count,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// The regular expression to search for (Rust regex syntax, as ripgrep).
    pub pattern: String,
    /// File or directory to search in. Defaults to the current working directory.
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob, e.g. `*.js` or `*.{ts,tsx}`.
    #[serde(default)]
    pub glob: Option<String>,
    /// Only search files of this ripgrep file type, e.g. `rust`, `py`, `js`.
    #[serde(default, rename = "type")]
    pub file_type: Option<String>,
    /// `content` shows matching lines, `files_with_matches` (default) file paths, `count` counts.
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    /// Case-insensitive search.
    #[serde(default, rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Show line numbers (content mode; on by default).
    #[serde(default, rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines of context after each match (content mode).
    #[serde(default, rename = "-A")]
    pub after: Option<usize>,
    /// Lines of context before each match (content mode).
    #[serde(default, rename = "-B")]
    pub before: Option<usize>,
    /// Lines of context before and after each match (content mode).
    #[serde(default, rename = "-C")]
    pub context: Option<usize>,
    /// Let patterns span lines and `.` match newlines.
    #[serde(default)]
    pub multiline: Option<bool>,
    /// Return at most this many lines / files / counts (default 250; 0 for no limit).
    #[serde(default)]
    pub head_limit: Option<usize>,
    /// Skip this many entries first (for paging with head_limit).
    #[serde(default)]
    pub offset: Option<usize>,
}

/// Searches file contents with ripgrep's engine.
#[derive(Debug, Default, Clone)]
pub struct GrepTool;

#[async_trait]
impl Tool for GrepTool {
    type Input = GrepInput;

    fn name(&self) -> &'static str {
        "Grep"
    }

    fn description(&self) -> String {
        "A powerful search tool built on ripgrep's engine.\n\
         - ALWAYS use Grep for search tasks; never run `grep` or `rg` with Bash\n\
         - Full regex syntax (e.g. \"log.*Error\", \"function\\s+\\w+\"); escape literal braces \
         (`interface\\{\\}`)\n\
         - Filter files with `glob` (\"*.js\", \"**/*.tsx\") or `type` (\"js\", \"py\", \"rust\")\n\
         - output_mode: \"content\" shows matching lines (supports -A/-B/-C, -n, -i), \
         \"files_with_matches\" (default) shows file paths, \"count\" shows match counts\n\
         - Patterns match within a line; set `multiline: true` for patterns that span lines\n\
         - Results are capped by head_limit (default 250); use offset to page"
            .to_string()
    }

    fn is_concurrency_safe(&self, _input: &GrepInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &GrepInput) -> bool {
        true
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
        let search = Search::new(&input, &ctx.session)?;
        let cancel = ctx.cancel.clone();
        let mut files = tokio::task::spawn_blocking(move || search.run(&|| cancel.is_cancelled()))
            .await
            .map_err(|e| ToolError::new(format!("Grep failed: {e}")))??;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new("Interrupted by the user."));
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(format_results(&input, files))
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
}

impl Search {
    fn new(input: &GrepInput, session: &SessionContext) -> Result<Search, ToolError> {
        let root = resolve_path(session, input.path.as_deref());
        if !root.exists() {
            return Err(ToolError::new(format!(
                "Path does not exist: {}. Check the path or search the current directory.",
                root.display()
            )));
        }
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

    /// Search every file under the root; unordered.
    fn run(&self, cancelled: &(dyn Fn() -> bool + Sync)) -> Result<Vec<FileResult>, ToolError> {
        let results: Mutex<Vec<FileResult>> = Mutex::new(Vec::new());
        let mut walk = walker(&self.root, false);
        if let Some(o) = &self.overrides {
            walk.overrides(o.clone());
        }
        if let Some(t) = &self.types {
            walk.types(t.clone());
        }
        walk.build_parallel().run(|| {
            let mut searcher = self.searcher();
            let matcher = self.matcher.clone();
            let results = &results;
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
                let mut sink = Collect::new(self.mode);
                // Unreadable files are skipped, as ripgrep does (it only warns).
                if searcher
                    .search_path(&matcher, entry.path(), &mut sink)
                    .is_ok()
                    && !sink.binary
                    && sink.count > 0
                {
                    let r = FileResult {
                        path: entry.into_path(),
                        count: sink.count,
                        lines: sink.lines,
                    };
                    match results.lock() {
                        Ok(mut g) => g.push(r),
                        Err(p) => p.into_inner().push(r),
                    }
                }
                WalkState::Continue
            })
        });
        Ok(match results.into_inner() {
            Ok(v) => v,
            Err(p) => p.into_inner(),
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

/// What one file produced.
#[derive(Debug)]
struct FileResult {
    path: PathBuf,
    /// Matching lines.
    count: u64,
    /// Content mode: matches and context in file order.
    lines: Vec<Line>,
}

#[derive(Debug)]
enum Line {
    Match {
        number: Option<u64>,
        text: String,
    },
    Context {
        number: Option<u64>,
        text: String,
    },
    /// A gap between non-adjacent groups of context.
    Break,
}

/// Collects one file's matches. In files mode it stops at the first match.
struct Collect {
    mode: OutputMode,
    count: u64,
    lines: Vec<Line>,
    binary: bool,
}

impl Collect {
    fn new(mode: OutputMode) -> Collect {
        Collect {
            mode,
            count: 0,
            lines: Vec::new(),
            binary: false,
        }
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let first = mat.line_number();
        let mut n = 0u64;
        for (i, line) in mat.lines().enumerate() {
            n += 1;
            if self.mode == OutputMode::Content {
                self.lines.push(Line::Match {
                    number: first.map(|f| f + i as u64),
                    text: line_text(line),
                });
            }
        }
        self.count += n.max(1);
        Ok(self.mode != OutputMode::FilesWithMatches)
    }

    fn context(&mut self, _s: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.mode == OutputMode::Content && *ctx.kind() != SinkContextKind::Other {
            self.lines.push(Line::Context {
                number: ctx.line_number(),
                text: line_text(ctx.bytes()),
            });
        }
        Ok(true)
    }

    fn context_break(&mut self, _s: &Searcher) -> Result<bool, Self::Error> {
        if self.mode == OutputMode::Content {
            self.lines.push(Line::Break);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _s: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A line without its terminator, lossily decoded, cut past [`MAX_LINE_CHARS`].
fn line_text(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim_end_matches(['\n', '\r']);
    match s.char_indices().nth(MAX_LINE_CHARS) {
        Some((i, _)) => format!("{} [... line truncated]", &s[..i]),
        None => s.to_string(),
    }
}

/// The text for the model and the display for people, paged by offset and head_limit.
fn format_results(input: &GrepInput, files: Vec<FileResult>) -> ToolOutput {
    let mode = input.output_mode.unwrap_or_default();
    let offset = input.offset.unwrap_or(0);
    let limit = match input.head_limit {
        Some(0) => usize::MAX,
        Some(n) => n,
        None => DEFAULT_HEAD_LIMIT,
    };
    let numbers = input.line_numbers.unwrap_or(true);
    // Every entry: (text line for the model, display item or None for separators).
    let mut entries: Vec<(String, Option<SearchMatch>)> = Vec::new();
    let total_matches: u64 = files.iter().map(|f| f.count).sum();
    let file_count = files.len();
    match mode {
        OutputMode::FilesWithMatches => {
            for f in &files {
                entries.push((f.path.display().to_string(), Some(item(&f.path, None, ""))));
            }
        }
        OutputMode::Count => {
            for f in &files {
                entries.push((
                    format!("{}:{}", f.path.display(), f.count),
                    Some(item(&f.path, None, &f.count.to_string())),
                ));
            }
        }
        OutputMode::Content => {
            let with_context = files.iter().any(|f| {
                f.lines
                    .iter()
                    .any(|l| matches!(l, Line::Context { .. } | Line::Break))
            });
            for (i, f) in files.iter().enumerate() {
                if with_context && i > 0 {
                    entries.push(("--".to_string(), None));
                }
                let p = f.path.display();
                for line in &f.lines {
                    let (sep, number, text) = match line {
                        Line::Match { number, text } => (':', number, text),
                        Line::Context { number, text } => ('-', number, text),
                        Line::Break => {
                            entries.push(("--".to_string(), None));
                            continue;
                        }
                    };
                    let shown = match (numbers, number) {
                        (true, Some(n)) => format!("{p}{sep}{n}{sep}{text}"),
                        _ => format!("{p}{sep}{text}"),
                    };
                    entries.push((shown, Some(item(&f.path, *number, text))));
                }
            }
        }
    }
    let total = entries.len();
    let page: Vec<(String, Option<SearchMatch>)> =
        entries.into_iter().skip(offset).take(limit).collect();
    let more = total.saturating_sub(offset).saturating_sub(page.len());
    let body = page
        .iter()
        .map(|(t, _)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut text = match mode {
        _ if total == 0 && mode == OutputMode::FilesWithMatches => "No files found".to_string(),
        _ if total == 0 => "No matches found".to_string(),
        OutputMode::FilesWithMatches => format!(
            "Found {file_count} file{}\n{body}",
            if file_count == 1 { "" } else { "s" }
        ),
        OutputMode::Count => format!(
            "{body}\n\nFound {total_matches} total occurrence{} across {file_count} file{}.",
            if total_matches == 1 { "" } else { "s" },
            if file_count == 1 { "" } else { "s" }
        ),
        OutputMode::Content => body,
    };
    if total > 0 && page.is_empty() {
        text.push_str(&format!(
            "\n(offset {offset} is past the last of {total} results)"
        ));
    }
    if more > 0 {
        text.push_str(&format!(
            "\n\n({more} more results not shown; call again with offset: {} to see them, or \
             narrow the search.)",
            offset + page.len()
        ));
    }
    let matches: Vec<SearchMatch> = page.into_iter().filter_map(|(_, m)| m).collect();
    ToolOutput::with_display(
        text,
        Display::Matches {
            pattern: input.pattern.clone(),
            matches,
            more,
        },
    )
}

fn item(path: &Path, line: Option<u64>, text: &str) -> SearchMatch {
    SearchMatch {
        path: path.to_path_buf(),
        line,
        text: text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_split_on_spaces_and_commas_outside_braces() {
        assert_eq!(
            split_globs("*.{ts,tsx} *.js,*.md"),
            vec!["*.{ts,tsx}", "*.js", "*.md"]
        );
    }

    #[test]
    fn long_lines_are_cut() {
        let t = line_text(format!("{}\r\n", "x".repeat(600)).as_bytes());
        assert_eq!(t, format!("{} [... line truncated]", "x".repeat(500)));
        assert_eq!(line_text(b"abc\n"), "abc");
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
