//! The one diff model: a change from `before` to `after` as hunks, computed once and shared by
//! everything that shows or applies a change — the snippet the model gets after an edit
//! (`tools::diff_snippet` formats it), the review widget's per-hunk accept/reject and applying
//! the accepted hunks ([`apply`]), `/diff`, the conversation's diff cells, and the notes that
//! tell the model what the person rejected or changed ([`notes`]).
//!
//! Pure text logic: no terminal, no tools. The line diff (`similar`, with a time budget) only
//! runs over the window of the texts that holds the changes (see `window`), so an edit of a
//! 10 MiB file costs a byte comparison plus a diff of a few lines. Line numbers and byte ranges
//! are absolute (in the whole texts). Invariant: the hunks, replayed over `before`, give
//! `after` byte for byte (see [`apply::apply_selected`]).

pub mod apply;
pub mod notes;
mod window;

use std::ops::Range;
use std::time::Duration;

use similar::{DiffOp, DiffTag, TextDiff};

pub use apply::apply_selected;

/// Lines of context around each hunk.
pub const CONTEXT: usize = 3;
/// Longest time the line diff may take; past it `similar` gives a correct but coarser diff.
const DIFF_BUDGET: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Context,
    Removed,
    Added,
}

/// One displayed line of a hunk. Numbers are 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    pub kind: LineKind,
    /// The line without its line ending.
    pub text: String,
    pub old_no: Option<usize>,
    pub new_no: Option<usize>,
}

/// A group of changes with [`CONTEXT`] lines around them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// 0-based line ranges covered in the old and the new text (context included).
    pub old: Range<usize>,
    pub new: Range<usize>,
    /// The same lines as byte ranges of the old and the new text.
    pub old_bytes: Range<usize>,
    pub new_bytes: Range<usize>,
    pub lines: Vec<HunkLine>,
}

impl Hunk {
    /// The change blocks of the hunk, in order: each run of removed lines with the run of added
    /// lines after it, as index ranges into `lines` (either may be empty). Context lines are in
    /// no block.
    pub fn blocks(&self) -> Vec<(Range<usize>, Range<usize>)> {
        let lines = &self.lines;
        let run = |mut i: usize, kind: LineKind| {
            while i < lines.len() && lines[i].kind == kind {
                i += 1;
            }
            i
        };
        let mut out = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            if lines[i].kind == LineKind::Context {
                i += 1;
                continue;
            }
            let added = run(i, LineKind::Removed);
            let end = run(added, LineKind::Added);
            out.push((i..added, added..end));
            i = end;
        }
        out
    }

    /// `@@ -a,b +c,d @@`, numbered as unified diffs do (an empty range from the line before it).
    pub fn header(&self) -> String {
        let from = |r: &Range<usize>| if r.is_empty() { r.start } else { r.start + 1 };
        format!(
            "@@ -{},{} +{},{} @@",
            from(&self.old),
            self.old.len(),
            from(&self.new),
            self.new.len()
        )
    }

    /// The hunk as unified-diff text (header and lines).
    pub fn to_unified(&self) -> String {
        let mut out = self.header();
        out.push('\n');
        for l in &self.lines {
            out.push(l.kind.sign());
            out.push_str(&l.text);
            out.push('\n');
        }
        out
    }

    pub fn added(&self) -> usize {
        self.count(LineKind::Added)
    }

    pub fn removed(&self) -> usize {
        self.count(LineKind::Removed)
    }

    fn count(&self, kind: LineKind) -> usize {
        self.lines.iter().filter(|l| l.kind == kind).count()
    }
}

impl LineKind {
    /// The unified-diff sign: ` `, `-` or `+`.
    pub fn sign(self) -> char {
        match self {
            LineKind::Context => ' ',
            LineKind::Removed => '-',
            LineKind::Added => '+',
        }
    }
}

/// A whole change split into hunks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiff {
    pub hunks: Vec<Hunk>,
    pub added: usize,
    pub removed: usize,
}

/// One changed region without context, as 0-based line ranges of `before` and `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

fn strip_ending(line: &str) -> &str {
    line.strip_suffix('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .unwrap_or(line)
}

fn line_diff<'a>(old: &'a str, new: &'a str) -> TextDiff<'a, 'a, str> {
    TextDiff::configure()
        .timeout(DIFF_BUDGET)
        .diff_lines(old, new)
}

/// Byte offset of the start of each line slice, and the end of the last.
fn offsets<'a>(slices: impl Iterator<Item = &'a str>, base: usize) -> Vec<usize> {
    let mut out = vec![base];
    let mut at = base;
    for s in slices {
        at += s.len();
        out.push(at);
    }
    out
}

/// Split the change from `before` to `after` into hunks with [`CONTEXT`] lines of context.
pub fn diff(before: &str, after: &str) -> FileDiff {
    diff_at(before, after, 0, 0)
}

/// [`diff`] of two excerpts that start `line0` lines and `byte0` bytes into their texts (the
/// same in both: the text before them is common), numbered as in the whole texts. The
/// excerpts must hold [`CONTEXT`] unchanged lines around the change, or reach the texts' ends.
pub fn diff_at(before: &str, after: &str, line0: usize, byte0: usize) -> FileDiff {
    if before == after {
        return FileDiff::default();
    }
    let w = window::window(before, after, CONTEXT);
    let d = line_diff(w.old, w.new);
    let old: Vec<&str> = d.iter_old_slices().collect();
    let new: Vec<&str> = d.iter_new_slices().collect();
    let old_at = offsets(old.iter().copied(), byte0 + w.start);
    let new_at = offsets(new.iter().copied(), byte0 + w.start);
    let line = |i: usize| line0 + w.first_line + i;
    let mut hunks = Vec::new();
    for group in d.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o, n) = (
            first.old_range().start..last.old_range().end,
            first.new_range().start..last.new_range().end,
        );
        let mut lines = Vec::new();
        for op in &group {
            let (_, o, n) = op.as_tag_tuple();
            let text = |s: &str| strip_ending(s).to_string();
            if let DiffOp::Equal { .. } = op {
                lines.extend(o.zip(n).map(|(i, j)| HunkLine {
                    kind: LineKind::Context,
                    text: text(old[i]),
                    old_no: Some(line(i) + 1),
                    new_no: Some(line(j) + 1),
                }));
                continue;
            }
            lines.extend(o.map(|i| HunkLine {
                kind: LineKind::Removed,
                text: text(old[i]),
                old_no: Some(line(i) + 1),
                new_no: None,
            }));
            lines.extend(n.map(|j| HunkLine {
                kind: LineKind::Added,
                text: text(new[j]),
                old_no: None,
                new_no: Some(line(j) + 1),
            }));
        }
        hunks.push(Hunk {
            old: line(o.start)..line(o.end),
            new: line(n.start)..line(n.end),
            old_bytes: old_at[o.start]..old_at[o.end],
            new_bytes: new_at[n.start]..new_at[n.end],
            lines,
        });
    }
    let added = hunks.iter().map(Hunk::added).sum();
    let removed = hunks.iter().map(Hunk::removed).sum();
    FileDiff {
        hunks,
        added,
        removed,
    }
}

/// Changed regions of `before` -> `after` without context, adjacent changes merged (what the
/// merge of outside changes and the seen-range bookkeeping need).
pub fn changes(before: &str, after: &str) -> Vec<Change> {
    changes_at(before, after, 0)
}

/// [`changes`] of two excerpts that start `line0` lines into their texts (see [`diff_at`]).
pub fn changes_at(before: &str, after: &str, line0: usize) -> Vec<Change> {
    if before == after {
        return Vec::new();
    }
    let w = window::window(before, after, 0);
    let d = line_diff(w.old, w.new);
    let off = line0 + w.first_line;
    let mut out: Vec<Change> = Vec::new();
    for op in d.ops() {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        let c = Change {
            old: old.start + off..old.end + off,
            new: new.start + off..new.end + off,
        };
        match out.last_mut() {
            Some(prev) if prev.old.end == c.old.start && prev.new.end == c.new.start => {
                prev.old.end = c.old.end;
                prev.new.end = c.new.end;
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
