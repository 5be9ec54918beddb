//! The diff as a list of screen rows, and the scroll arithmetic over it.
//!
//! A row is a few indices into the hunks (no text), so building the list for a whole diff is
//! cheap; only the rows on screen are ever laid out. Invariant: every hunk contributes exactly
//! one `Header` row followed by its line rows, in hunk order.

use crate::diff::{FileDiff, Hunk};

/// How changed lines are arranged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One column: removed lines above the added lines that replace them.
    Unified,
    /// Old text on the left, new text on the right, changed lines side by side.
    SideBySide,
}

impl Layout {
    pub fn toggled(self) -> Layout {
        match self {
            Layout::Unified => Layout::SideBySide,
            Layout::SideBySide => Layout::Unified,
        }
    }
}

/// One screen row of the diff body. Line indices are into `Hunk::lines`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    Header {
        hunk: usize,
    },
    /// Unified layout: one line.
    Line {
        hunk: usize,
        line: usize,
    },
    /// Side-by-side layout: the old line on the left, the new one on the right.
    Pair {
        hunk: usize,
        old: Option<usize>,
        new: Option<usize>,
    },
}

impl Row {
    pub fn hunk(&self) -> usize {
        match *self {
            Row::Header { hunk } | Row::Line { hunk, .. } | Row::Pair { hunk, .. } => hunk,
        }
    }

    /// Whether this row shows line `line` of hunk `hunk` (a header shows none).
    fn shows(&self, h: usize, line: usize) -> bool {
        match *self {
            Row::Header { .. } => false,
            Row::Line { hunk, line: l } => hunk == h && l == line,
            Row::Pair { hunk, old, new } => hunk == h && (old == Some(line) || new == Some(line)),
        }
    }
}

/// The rows of `hunks` in `layout`.
pub fn build(hunks: &[Hunk], layout: Layout) -> Vec<Row> {
    let mut rows = Vec::with_capacity(hunks.iter().map(|h| h.lines.len() + 1).sum());
    for (h, hunk) in hunks.iter().enumerate() {
        rows.push(Row::Header { hunk: h });
        match layout {
            Layout::Unified => {
                rows.extend((0..hunk.lines.len()).map(|line| Row::Line { hunk: h, line }));
            }
            Layout::SideBySide => pair_rows(h, hunk, &mut rows),
        }
    }
    rows
}

/// Context lines sit on both sides; in each change block the k-th removed line faces the k-th
/// added line and the longer run continues alone.
fn pair_rows(h: usize, hunk: &Hunk, rows: &mut Vec<Row>) {
    let context = |i: usize| Row::Pair {
        hunk: h,
        old: Some(i),
        new: Some(i),
    };
    let mut next = 0;
    for (removed, added) in hunk.blocks() {
        rows.extend((next..removed.start).map(context));
        for k in 0..removed.len().max(added.len()) {
            rows.push(Row::Pair {
                hunk: h,
                old: (k < removed.len()).then_some(removed.start + k),
                new: (k < added.len()).then_some(added.start + k),
            });
        }
        next = added.end;
    }
    rows.extend((next..hunk.lines.len()).map(context));
}

/// Digits of the largest line number the diff shows (at least one).
pub fn number_width(diff: &FileDiff) -> usize {
    let largest = diff
        .hunks
        .last()
        .into_iter()
        .flat_map(|h| &h.lines)
        .flat_map(|l| [l.old_no, l.new_no])
        .flatten()
        .max()
        .unwrap_or(1);
    largest.max(1).to_string().len()
}

/// Index of each hunk's header row.
pub fn header_rows(rows: &[Row]) -> Vec<usize> {
    rows.iter()
        .enumerate()
        .filter(|(_, r)| matches!(r, Row::Header { .. }))
        .map(|(i, _)| i)
        .collect()
}

/// The row range of hunk `h` given the header indices.
pub fn hunk_span(headers: &[usize], total_rows: usize, h: usize) -> Option<(usize, usize)> {
    let first = *headers.get(h)?;
    let end = headers.get(h + 1).copied().unwrap_or(total_rows);
    Some((first, end))
}

/// The largest useful top row: the last page ends at the last row.
pub fn max_top(total_rows: usize, height: usize) -> usize {
    total_rows.saturating_sub(height)
}

/// A top row that shows rows `first..end` (a hunk): unchanged when they are all visible, else
/// the hunk's header goes to the top (as far as the end of the diff allows).
pub fn reveal(top: usize, height: usize, total_rows: usize, first: usize, end: usize) -> usize {
    if height == 0 {
        return top.min(max_top(total_rows, height));
    }
    if first >= top && end <= top + height {
        return top;
    }
    first.min(max_top(total_rows, height))
}

/// The row in `to` that shows the same place as row `top` of `from` (used when the layout
/// changes, so the person keeps their place).
pub fn remap(from: &[Row], to: &[Row], top: usize) -> usize {
    let found = match from.get(top) {
        Some(Row::Header { hunk }) => to.iter().position(|r| *r == Row::Header { hunk: *hunk }),
        Some(Row::Line { hunk, line }) => to.iter().position(|r| r.shows(*hunk, *line)),
        Some(Row::Pair { hunk, old, new }) => old
            .or(*new)
            .and_then(|line| to.iter().position(|r| r.shows(*hunk, line))),
        None => None,
    };
    found.unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff;

    #[test]
    fn side_by_side_pairs_changes_and_keeps_context_on_both_sides() {
        let d = diff::diff("a\nb\nc\nz\n", "a\nB\nz\n");
        let rows = build(&d.hunks, Layout::SideBySide);
        assert_eq!(
            rows,
            vec![
                Row::Header { hunk: 0 },
                Row::Pair {
                    hunk: 0,
                    old: Some(0),
                    new: Some(0)
                },
                Row::Pair {
                    hunk: 0,
                    old: Some(1),
                    new: Some(3)
                },
                Row::Pair {
                    hunk: 0,
                    old: Some(2),
                    new: None
                },
                Row::Pair {
                    hunk: 0,
                    old: Some(4),
                    new: Some(4)
                },
            ]
        );
        let unified = build(&d.hunks, Layout::Unified);
        assert_eq!(unified.len(), 1 + d.hunks[0].lines.len());
    }

    #[test]
    fn reveal_moves_only_when_the_hunk_is_not_fully_visible() {
        assert_eq!(reveal(0, 10, 100, 2, 8), 0);
        assert_eq!(reveal(0, 10, 100, 20, 30), 20);
        assert_eq!(reveal(50, 10, 100, 20, 30), 20);
        // Near the end the last page is the furthest we go.
        assert_eq!(reveal(0, 10, 100, 95, 100), 90);
        assert_eq!(reveal(7, 0, 100, 95, 100), 7);
    }

    #[test]
    fn remap_keeps_the_same_line_on_top() {
        let d = diff::diff("a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nD\nE\nf\ng\n");
        let uni = build(&d.hunks, Layout::Unified);
        let sbs = build(&d.hunks, Layout::SideBySide);
        // Unified row 6 is "+D" (line 5 of the hunk); side by side it faces "-d" on row 4.
        assert_eq!(uni[6], Row::Line { hunk: 0, line: 5 });
        assert_eq!(remap(&uni, &sbs, 6), 4);
        assert_eq!(remap(&sbs, &uni, 4), 4);
        assert_eq!(remap(&uni, &[], 3), 0);
    }
}
