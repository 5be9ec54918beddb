//! A file change as hunks (unified-diff groups with context), and applying a chosen subset.
//!
//! Invariant: `apply_selected(before, after, all accepted) == after` and with none accepted
//! `== before`, byte for byte (line endings included), for any input.

use similar::{DiffOp, TextDiff};

/// Lines of context around each hunk.
pub const CONTEXT: usize = 3;

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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based first line and line count in the old and new text, as in `@@ -a,b +c,d @@`.
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<HunkLine>,
}

impl Hunk {
    pub fn header(&self) -> String {
        format!(
            "@@ -{},{} +{},{} @@",
            self.old_start, self.old_len, self.new_start, self.new_len
        )
    }

    /// The hunk as unified-diff text (header and lines).
    pub fn to_unified(&self) -> String {
        let mut out = self.header();
        out.push('\n');
        for l in &self.lines {
            let sign = match l.kind {
                LineKind::Context => ' ',
                LineKind::Removed => '-',
                LineKind::Added => '+',
            };
            out.push(sign);
            out.push_str(&l.text);
            out.push('\n');
        }
        out
    }

    pub fn added(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| l.kind == LineKind::Added)
            .count()
    }

    pub fn removed(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| l.kind == LineKind::Removed)
            .count()
    }
}

/// A whole change split into hunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub hunks: Vec<Hunk>,
    pub added: usize,
    pub removed: usize,
}

fn strip_ending(line: &str) -> String {
    line.strip_suffix('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .unwrap_or(line)
        .to_string()
}

/// Split the change from `before` to `after` into hunks with [`CONTEXT`] lines of context.
pub fn diff(before: &str, after: &str) -> FileDiff {
    let d = TextDiff::from_lines(before, after);
    let old: Vec<&str> = d.iter_old_slices().collect();
    let new: Vec<&str> = d.iter_new_slices().collect();
    let mut hunks = Vec::new();
    for group in d.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let new_start = first.new_range().start;
        let old_len = last.old_range().end - old_start;
        let new_len = last.new_range().end - new_start;
        let mut lines = Vec::new();
        for op in &group {
            let (_, o, n) = op.as_tag_tuple();
            match op {
                DiffOp::Equal { .. } => {
                    for (i, j) in o.clone().zip(n.clone()) {
                        lines.push(HunkLine {
                            kind: LineKind::Context,
                            text: strip_ending(old[i]),
                            old_no: Some(i + 1),
                            new_no: Some(j + 1),
                        });
                    }
                }
                _ => {
                    for i in o.clone() {
                        lines.push(HunkLine {
                            kind: LineKind::Removed,
                            text: strip_ending(old[i]),
                            old_no: Some(i + 1),
                            new_no: None,
                        });
                    }
                    for j in n.clone() {
                        lines.push(HunkLine {
                            kind: LineKind::Added,
                            text: strip_ending(new[j]),
                            old_no: None,
                            new_no: Some(j + 1),
                        });
                    }
                }
            }
        }
        hunks.push(Hunk {
            // Unified diffs number an empty range from the line before it.
            old_start: if old_len == 0 {
                old_start
            } else {
                old_start + 1
            },
            old_len,
            new_start: if new_len == 0 {
                new_start
            } else {
                new_start + 1
            },
            new_len,
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

/// The content with only the accepted hunks applied. `accepted[i]` is hunk i of [`diff`] on the
/// same texts; missing entries count as rejected.
pub fn apply_selected(before: &str, after: &str, accepted: &[bool]) -> String {
    let d = TextDiff::from_lines(before, after);
    let old: Vec<&str> = d.iter_old_slices().collect();
    let new: Vec<&str> = d.iter_new_slices().collect();
    // Which hunk each changed op belongs to, keyed by its position in the old text.
    let mut owner: Vec<(usize, usize, usize)> = Vec::new();
    for (h, group) in d.grouped_ops(CONTEXT).iter().enumerate() {
        for op in group {
            if !matches!(op, DiffOp::Equal { .. }) {
                owner.push((op.old_range().start, op.new_range().start, h));
            }
        }
    }
    let mut out = String::with_capacity(after.len().max(before.len()));
    for op in d.ops() {
        let (_, o, n) = op.as_tag_tuple();
        match op {
            DiffOp::Equal { .. } => o.for_each(|i| out.push_str(old[i])),
            _ => {
                let hunk = owner
                    .iter()
                    .find(|(os, ns, _)| *os == o.start && *ns == n.start)
                    .map(|(_, _, h)| *h);
                let take_new = hunk.is_some_and(|h| accepted.get(h).copied().unwrap_or(false));
                if take_new {
                    n.for_each(|j| out.push_str(new[j]));
                } else {
                    o.for_each(|i| out.push_str(old[i]));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const BEFORE: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n";
    const AFTER: &str = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nM\nn\nextra\n";

    #[test]
    fn far_apart_changes_are_separate_hunks() {
        let d = diff(BEFORE, AFTER);
        assert_eq!(d.hunks.len(), 2);
        assert_eq!(d.hunks[0].header(), "@@ -1,5 +1,5 @@");
        assert_eq!((d.added, d.removed), (3, 2));
        assert!(d.hunks[0].to_unified().contains("-b\n+B\n"));
        assert!(d.hunks[1].to_unified().contains("+extra\n"));
    }

    #[test]
    fn accepting_one_of_two_hunks_applies_only_it() {
        assert_eq!(
            apply_selected(BEFORE, AFTER, &[true, false]),
            "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n"
        );
        assert_eq!(
            apply_selected(BEFORE, AFTER, &[false, true]),
            "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nM\nn\nextra\n"
        );
    }

    #[test]
    fn new_and_deleted_files() {
        let d = diff("", "one\ntwo\n");
        assert_eq!(d.hunks.len(), 1);
        assert_eq!(d.hunks[0].header(), "@@ -0,0 +1,2 @@");
        let d = diff("one\n", "");
        assert_eq!(d.removed, 1);
    }

    #[test]
    fn crlf_lines_are_kept_byte_for_byte() {
        let before = "x\r\ny\r\n";
        let after = "x\r\nY\r\n";
        assert_eq!(apply_selected(before, after, &[true]), after);
        assert_eq!(diff(before, after).hunks[0].lines[1].text, "y");
    }

    proptest! {
        #[test]
        fn all_or_nothing_reproduces_either_side(
            a in proptest::collection::vec("[a-c]{0,2}\r?\n?", 0..30),
            b in proptest::collection::vec("[a-c]{0,2}\r?\n?", 0..30),
        ) {
            let before: String = a.concat();
            let after: String = b.concat();
            let n = diff(&before, &after).hunks.len();
            prop_assert_eq!(apply_selected(&before, &after, &vec![true; n]), after.clone());
            prop_assert_eq!(apply_selected(&before, &after, &vec![false; n]), before.clone());
        }
    }
}
