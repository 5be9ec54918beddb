//! The compact mode of the diff renderer, for the conversation's diff cells: a `path +N -M`
//! title, then every hunk's lines with one line-number column, hunks separated by `⋮`, and no
//! per-hunk choice. Rows are width-independent [`Para`]s the conversation wraps.
//!
//! Hunks come from [`crate::diff`] and each line's pieces from the same builder the
//! [`super::DiffView`] draws from (`emphasis`: partner lines, word-level changes, tabs and
//! control characters made visible); only the styling (the theme's colours) differs.
//! Word-level emphasis stops after [`EMPHASIS_BUDGET`], so a huge change never stalls a frame.

use std::path::Path;
use std::time::{Duration, Instant};

use ratatui::text::Span;

use super::emphasis::{self, Piece};
use super::rows::number_width;
use crate::diff::{self, LineKind};
use crate::tui::conversation::wrap::sanitize;
use crate::tui::markdown::Para;
use crate::tui::theme::Theme;

/// Longest time spent on word-level emphasis of one diff.
pub const EMPHASIS_BUDGET: Duration = Duration::from_millis(50);

fn para(first: Vec<Span<'static>>, rest: Vec<Span<'static>>, spans: Vec<Span<'static>>) -> Para {
    Para { first, rest, spans }
}

/// The rows of the change from `before` to `after` to `path`, every hunk with its full context.
pub fn rows(path: &Path, before: &str, after: &str, theme: &Theme) -> Vec<Para> {
    rows_with_context(path, before, after, theme, diff::CONTEXT)
}

/// Context lines kept around a change in the collapsed view of an edit.
pub const TIGHT_CONTEXT: usize = 1;

/// The rows of the change with at most `context` unchanged lines around each changed one
/// (a gap left by dropped context is a `⋮` row, like one between hunks).
pub fn rows_with_context(
    path: &Path,
    before: &str,
    after: &str,
    theme: &Theme,
    context: usize,
) -> Vec<Para> {
    let before = sanitize(before);
    let after = sanitize(after);
    let d = diff::diff(&before, &after);
    let mut out = Vec::new();
    let what = if before.is_empty() && !after.is_empty() {
        " (new file)"
    } else if after.is_empty() && !before.is_empty() {
        " (deleted)"
    } else {
        ""
    };
    out.push(para(
        Vec::new(),
        Vec::new(),
        vec![
            Span::styled(
                sanitize(&path.to_string_lossy()).into_owned(),
                theme.diff_header,
            ),
            Span::styled(what, theme.dim),
            Span::styled(format!(" +{}", d.added), theme.diff_added),
            Span::styled(format!(" \u{2212}{}", d.removed), theme.diff_removed),
        ],
    ));
    let num_w = number_width(&d);
    let deadline = Instant::now() + EMPHASIS_BUDGET;
    let gap = || {
        para(
            Vec::new(),
            Vec::new(),
            vec![Span::styled(
                format!("{:>num_w$} ⋮", ""),
                theme.diff_line_no,
            )],
        )
    };
    for (h, hunk) in d.hunks.iter().enumerate() {
        if h > 0 {
            out.push(gap());
        }
        let partners = emphasis::partners(hunk);
        let keep = near_changes(&hunk.lines, context);
        for (i, line) in hunk.lines.iter().enumerate() {
            if !keep[i] {
                if i > 0 && keep[i - 1] && keep[i..].iter().any(|k| *k) {
                    out.push(gap());
                }
                continue;
            }
            let (no, style, emph) = match line.kind {
                LineKind::Removed => (line.old_no, theme.diff_removed, theme.diff_removed_emph),
                LineKind::Added => (line.new_no, theme.diff_added, theme.diff_added_emph),
                LineKind::Context => (line.new_no, theme.tool_body, theme.tool_body),
            };
            let ranges = if Instant::now() < deadline {
                emphasis::line_emphasis(hunk, &partners, i)
            } else {
                None
            };
            let pieces = emphasis::pieces(&line.text, None, ranges.as_deref().unwrap_or(&[]));
            let no = no.map(|n| n.to_string()).unwrap_or_default();
            let gutter = vec![
                Span::styled(format!("{no:>num_w$} "), theme.diff_line_no),
                Span::styled(format!("{} ", line.kind.sign()), style),
            ];
            let spans = pieces
                .into_iter()
                .filter(|p| !p.text.is_empty())
                .map(
                    |Piece {
                         text, emphasized, ..
                     }| {
                        Span::styled(text, if emphasized { emph } else { style })
                    },
                )
                .collect();
            out.push(para(gutter, vec![Span::raw(" ".repeat(num_w + 3))], spans));
        }
    }
    out
}

/// Which lines of a hunk are changed or within `context` lines of a change.
fn near_changes(lines: &[diff::HunkLine], context: usize) -> Vec<bool> {
    let changed: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.kind != LineKind::Context)
        .map(|(i, _)| i)
        .collect();
    (0..lines.len())
        .map(|i| changed.iter().any(|&c| c.abs_diff(i) <= context))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: &Para) -> String {
        p.first
            .iter()
            .chain(&p.spans)
            .map(|s| s.content.as_ref())
            .collect()
    }

    #[test]
    fn one_number_column_and_a_separator_between_hunks() {
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before
            .replace("line 2\n", "line two\n")
            .replace("line 19\n", "");
        let theme = Theme::default();
        let rows = rows(Path::new("n.txt"), &before, &after, &theme);
        let texts: Vec<String> = rows.iter().map(text).collect();
        assert_eq!(texts[0], "n.txt +1 \u{2212}2");
        assert_eq!(texts[1], " 1   line 1");
        assert_eq!(texts[2], " 2 - line 2");
        assert_eq!(texts[3], " 2 + line two");
        assert!(texts.contains(&"   ⋮".to_string()), "{texts:#?}");
        assert!(texts.contains(&"19 - line 19".to_string()), "{texts:#?}");
        // The changed word is emphasised, the rest of the line is not.
        let two = &rows[3].spans;
        assert_eq!(two.last().map(|s| s.content.as_ref()), Some("two"));
        assert_eq!(two.last().map(|s| s.style), Some(theme.diff_added_emph));
        assert_eq!(two[0].style, theme.diff_added);
    }

    #[test]
    fn tight_context_keeps_one_line_around_each_change() {
        let before: String = (1..=12).map(|i| format!("line {i}\n")).collect();
        let after = before
            .replace("line 3\n", "line three\n")
            .replace("line 9\n", "line nine\n");
        let rows = rows_with_context(Path::new("n.txt"), &before, &after, &Theme::default(), 1);
        let texts: Vec<String> = rows.iter().map(text).collect();
        assert_eq!(
            texts,
            [
                "n.txt +2 \u{2212}2",
                " 2   line 2",
                " 3 - line 3",
                " 3 + line three",
                " 4   line 4",
                "   ⋮",
                " 8   line 8",
                " 9 - line 9",
                " 9 + line nine",
                "10   line 10",
            ]
        );
    }

    #[test]
    fn new_files_say_so() {
        let rows = rows(Path::new("a"), "", "x\n", &Theme::default());
        assert_eq!(text(&rows[0]), "a (new file) +1 \u{2212}0");
        assert_eq!(text(&rows[1]), "1 + x");
    }
}
