//! Grep's output: the text the model reads and the display people see, paged by `offset` and
//! `head_limit` over the entries of the path-sorted results (a path per file, a `path:N` count
//! per file, or the content lines with `--` between groups).
//!
//! Only the page is materialised: entry positions are computed from each file's entry count,
//! and a file on the page whose line texts were not kept during the search is searched again.

use std::ops::Range;

use super::sink::{FileResult, Line};
use super::{DEFAULT_HEAD_LIMIT, GrepInput, OutputMode, Search};
use crate::protocol::{Display, SearchMatch};
use crate::tools::ToolOutput;

/// One output line and its display item (None for a `--` separator).
type Entry = (String, Option<SearchMatch>);

/// The text for the model and the display for people.
pub(super) fn format_results(
    input: &GrepInput,
    search: &Search,
    files: Vec<FileResult>,
) -> ToolOutput {
    let mode = search.mode;
    let offset = input.offset.unwrap_or(0);
    let limit = match input.head_limit {
        Some(0) => usize::MAX,
        Some(n) => n,
        None => DEFAULT_HEAD_LIMIT,
    };
    let window = offset..offset.saturating_add(limit);
    let numbers = input.line_numbers.unwrap_or(true);
    let with_context = search.before > 0 || search.after > 0;
    let total_matches: u64 = files.iter().map(|f| f.count).sum();
    let file_count = files.len();

    let mut total = 0usize;
    let mut page: Vec<Entry> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let separator = mode == OutputMode::Content && with_context && i > 0;
        let n = match mode {
            OutputMode::Content => f.entries + usize::from(separator),
            _ => 1,
        };
        let range = total..total + n;
        total += n;
        if !overlaps(&range, &window) {
            continue;
        }
        let entries = file_entries(f, mode, separator, numbers, search);
        for (j, e) in entries.into_iter().enumerate() {
            if window.contains(&(range.start + j)) {
                page.push(e);
            }
        }
    }
    let more = total.saturating_sub(offset).saturating_sub(page.len());
    let body = page
        .iter()
        .map(|(t, _)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let s = |n: usize| if n == 1 { "" } else { "s" };
    let mut text = match mode {
        _ if total == 0 && mode == OutputMode::FilesWithMatches => "No files found".to_string(),
        _ if total == 0 => "No matches found".to_string(),
        OutputMode::FilesWithMatches => format!("Found {file_count} file{}\n{body}", s(file_count)),
        OutputMode::Count => format!(
            "{body}\n\nFound {total_matches} total occurrence{} across {file_count} file{}.",
            s(usize::try_from(total_matches).unwrap_or(usize::MAX)),
            s(file_count)
        ),
        OutputMode::Content => body,
    };
    if total > 0 && page.is_empty() {
        text.push_str(&format!(
            "\n(offset {offset} is past the last of {total} results)"
        ));
    }
    if search.notes_form {
        if total == 0 {
            text = "No matches found.".to_string();
        } else if more > 0 {
            text.push_str(&format!("\n... and {more} more matches"));
        }
    } else if more > 0 {
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

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// All entries of one file, in order.
fn file_entries(
    f: &FileResult,
    mode: OutputMode,
    separator: bool,
    numbers: bool,
    search: &Search,
) -> Vec<Entry> {
    let p = f.path.display();
    match mode {
        OutputMode::FilesWithMatches => vec![(p.to_string(), Some(item(f, None, "")))],
        OutputMode::Count => vec![(
            format!("{p}:{}", f.count),
            Some(item(f, None, &f.count.to_string())),
        )],
        OutputMode::Content => {
            let searched_again;
            let lines = match &f.lines {
                Some(lines) => lines,
                None => {
                    // Not kept during the walk (memory bound): search this one file again. A
                    // file that changed meanwhile may give other lines; it is still this file.
                    let mut searcher = search.searcher();
                    searched_again = search
                        .search_file(&mut searcher, f.path.clone(), true)
                        .and_then(|r| r.lines)
                        .unwrap_or_default();
                    &searched_again
                }
            };
            let mut out = Vec::with_capacity(lines.len() + 1);
            if separator {
                out.push(("--".to_string(), None));
            }
            for line in lines {
                let (sep, number, text) = match line {
                    Line::Match { number, text } => (':', number, text),
                    Line::Context { number, text } => ('-', number, text),
                    Line::Break => {
                        out.push(("--".to_string(), None));
                        continue;
                    }
                };
                let shown = match (numbers, number) {
                    (true, Some(n)) => format!("{p}{sep}{n}{sep}{text}"),
                    _ => format!("{p}{sep}{text}"),
                };
                out.push((shown, Some(item(f, *number, text))));
            }
            out
        }
    }
}

fn item(f: &FileResult, line: Option<u64>, text: &str) -> SearchMatch {
    SearchMatch {
        path: f.path.clone(),
        line,
        text: text.to_string(),
    }
}
