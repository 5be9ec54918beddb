//! Bodies of tool cells: each [`Display`] kind turned into width-independent rows once, when the
//! call finishes, so laying out (and re-laying out on resize) only wraps.
//!
//! Diffs get line numbers, red/green lines and word-level emphasis (`similar`); matches get the
//! searched pattern highlighted; command output keeps its tail and ends with the exit status.
//! Invariant: no text from a tool reaches the screen without [`sanitize`]; computing a body never
//! blocks for long (the inline diff has a deadline).

use std::time::{Duration, Instant};

use ratatui::style::Style;
use ratatui::text::Span;
use similar::{ChangeTag, TextDiff};

use super::wrap::sanitize;
use crate::protocol::{Display, SearchMatch};
use crate::tui::markdown::{self, MdItem, Para};
use crate::tui::theme::Theme;

/// Which end of a long body stays visible when it is collapsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    Head,
    /// Command output: the end matters (errors, summaries, the exit code).
    Tail,
}

pub(crate) struct Body {
    pub items: Vec<MdItem>,
    pub keep: Keep,
}

/// Context lines around each diff hunk.
const DIFF_CONTEXT: usize = 3;
/// Longest time spent on word-level emphasis of one diff.
const INLINE_DIFF_BUDGET: Duration = Duration::from_millis(50);

fn row(spans: Vec<Span<'static>>) -> MdItem {
    MdItem::Para(Para {
        first: Vec::new(),
        rest: Vec::new(),
        spans,
    })
}

fn text_rows(text: &str, style: Style, out: &mut Vec<MdItem>) {
    let text = sanitize(text);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    for line in text.split('\n') {
        out.push(row(vec![Span::styled(line.to_string(), style)]));
    }
}

/// Build the body of a finished call. `is_error` colours plain text bodies red.
pub(crate) fn build(display: &Display, is_error: bool, theme: &Theme) -> Body {
    let mut items = Vec::new();
    let mut keep = Keep::Head;
    match display {
        Display::Empty => {}
        Display::Text { text } => {
            let style = if is_error {
                theme.tool_error
            } else {
                theme.tool_body
            };
            text_rows(text, style, &mut items);
        }
        Display::Markdown { text } => items = markdown::parse(text, theme, false, true),
        Display::Diff {
            path,
            before,
            after,
        } => diff_rows(path, before, after, theme, &mut items),
        Display::FileList { files, more } => {
            for f in files {
                let path = sanitize(&f.to_string_lossy()).into_owned();
                items.push(row(vec![Span::styled(path, theme.match_path)]));
            }
            more_row(*more, theme, &mut items);
        }
        Display::Matches {
            pattern,
            matches,
            more,
        } => {
            let re = regex::Regex::new(pattern).ok();
            for m in matches {
                items.push(match_row(m, re.as_ref(), pattern, theme));
            }
            more_row(*more, theme, &mut items);
        }
        Display::Command {
            command: _,
            stdout,
            stderr,
            exit_code,
            timed_out,
        } => {
            keep = Keep::Tail;
            if !stdout.trim().is_empty() {
                text_rows(stdout, theme.tool_body, &mut items);
            }
            if !stderr.trim().is_empty() {
                text_rows(stderr, theme.stderr, &mut items);
            }
            if stdout.trim().is_empty() && stderr.trim().is_empty() {
                items.push(row(vec![Span::styled("(no output)", theme.dim)]));
            }
            let status = match (timed_out, exit_code) {
                (true, _) => Span::styled("timed out", theme.tool_error),
                (false, Some(0)) => Span::styled("exit code 0", theme.dim),
                (false, Some(code)) => Span::styled(format!("exit code {code}"), theme.tool_error),
                (false, None) => Span::styled("killed by a signal", theme.tool_error),
            };
            items.push(row(vec![status]));
        }
    }
    Body { items, keep }
}

/// The live output tail of a running command.
pub(crate) fn progress(output: &str, theme: &Theme) -> Body {
    let mut items = Vec::new();
    text_rows(output, theme.dim, &mut items);
    Body {
        items,
        keep: Keep::Tail,
    }
}

fn more_row(more: usize, theme: &Theme, out: &mut Vec<MdItem>) {
    if more > 0 {
        out.push(row(vec![Span::styled(
            format!("… and {more} more"),
            theme.dim,
        )]));
    }
}

fn match_row(m: &SearchMatch, re: Option<&regex::Regex>, pattern: &str, theme: &Theme) -> MdItem {
    let mut spans = vec![Span::styled(
        sanitize(&m.path.to_string_lossy()).into_owned(),
        theme.match_path,
    )];
    let Some(line) = m.line else {
        return row(spans);
    };
    spans.push(Span::styled(":", theme.dim));
    spans.push(Span::styled(line.to_string(), theme.match_line_no));
    spans.push(Span::styled(": ", theme.dim));
    let text = sanitize(&m.text);
    let text = text.trim_end();
    let hits: Vec<(usize, usize)> = match re {
        Some(re) => re
            .find_iter(text)
            .filter(|h| !h.is_empty())
            .map(|h| (h.start(), h.end()))
            .collect(),
        None if !pattern.is_empty() => text
            .match_indices(pattern)
            .map(|(i, s)| (i, i + s.len()))
            .collect(),
        None => Vec::new(),
    };
    let mut at = 0;
    for (start, end) in hits {
        if start > at {
            spans.push(Span::styled(text[at..start].to_string(), theme.tool_body));
        }
        spans.push(Span::styled(text[start..end].to_string(), theme.match_hit));
        at = end;
    }
    if at < text.len() {
        spans.push(Span::styled(text[at..].to_string(), theme.tool_body));
    }
    row(spans)
}

fn diff_rows(
    path: &std::path::Path,
    before: &str,
    after: &str,
    theme: &Theme,
    out: &mut Vec<MdItem>,
) {
    let before = sanitize(before);
    let after = sanitize(after);
    let diff = TextDiff::configure()
        .timeout(INLINE_DIFF_BUDGET)
        .diff_lines(before.as_ref(), after.as_ref());
    let (mut added, mut removed) = (0usize, 0usize);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let mut header = vec![Span::styled(
        sanitize(&path.to_string_lossy()).into_owned(),
        theme.diff_header,
    )];
    let what = if before.is_empty() && !after.is_empty() {
        " (new file)"
    } else if after.is_empty() && !before.is_empty() {
        " (deleted)"
    } else {
        ""
    };
    header.push(Span::styled(what, theme.dim));
    header.push(Span::styled(format!(" +{added}"), theme.diff_added));
    header.push(Span::styled(format!(" -{removed}"), theme.diff_removed));
    out.push(row(header));
    let lines = before.lines().count().max(after.lines().count()).max(1);
    let num_w = lines.to_string().len();
    let deadline = Instant::now() + INLINE_DIFF_BUDGET;
    for (g, group) in diff.grouped_ops(DIFF_CONTEXT).iter().enumerate() {
        if g > 0 {
            out.push(row(vec![Span::styled(
                format!("{:>num_w$} ⋮", ""),
                theme.diff_line_no,
            )]));
        }
        for op in group {
            for change in diff.iter_inline_changes_deadline(op, Some(deadline)) {
                let (sign, no, style, emph) = match change.tag() {
                    ChangeTag::Delete => (
                        "-",
                        change.old_index(),
                        theme.diff_removed,
                        theme.diff_removed_emph,
                    ),
                    ChangeTag::Insert => (
                        "+",
                        change.new_index(),
                        theme.diff_added,
                        theme.diff_added_emph,
                    ),
                    ChangeTag::Equal => (" ", change.new_index(), theme.tool_body, theme.tool_body),
                };
                let no = no.map(|n| (n + 1).to_string()).unwrap_or_default();
                let gutter = vec![
                    Span::styled(format!("{no:>num_w$} "), theme.diff_line_no),
                    Span::styled(format!("{sign} "), style),
                ];
                let mut spans = Vec::new();
                for (emphasised, text) in change.iter_strings_lossy() {
                    let text = text.trim_end_matches(['\n', '\r']);
                    if !text.is_empty() {
                        let s = if emphasised { emph } else { style };
                        spans.push(Span::styled(text.to_string(), s));
                    }
                }
                let rest = vec![Span::raw(" ".repeat(num_w + 3))];
                out.push(MdItem::Para(Para {
                    first: gutter,
                    rest,
                    spans,
                }));
            }
        }
    }
}
