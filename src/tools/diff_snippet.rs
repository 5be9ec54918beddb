//! Unified diffs for the model: 3 lines of context, line numbers on every line, `+N -M` counts.
//!
//! The hunks come from the one diff model, [`crate::diff`] (windowed, so an edit of a 10 MiB
//! file stays cheap); this module only formats them as text for the model and keeps the
//! seen-range bookkeeping that follows an edit.

use crate::diff::{self, Change, LineKind};

/// A snippet longer than this many lines is cut, saying how much was left out.
pub const MAX_SNIPPET_LINES: usize = 300;

/// A diff summary for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffSummary {
    pub added: usize,
    pub removed: usize,
    /// Hunks in unified form with line numbers; empty when nothing changed.
    pub snippet: String,
}

/// The unified diff of `before` -> `after` (see the module docs). Headers number every range
/// from its first line (`@@ -1,0 +1,2 @@` for a new file), as the model has always been shown.
pub fn diff_snippet(before: &str, after: &str) -> DiffSummary {
    summary(&diff::diff(before, after))
}

/// [`diff_snippet`] of two excerpts `line0` lines into their texts ([`diff::diff_at`]).
pub fn diff_snippet_at(before: &str, after: &str, line0: usize) -> DiffSummary {
    summary(&diff::diff_at(before, after, line0, 0))
}

fn summary(d: &diff::FileDiff) -> DiffSummary {
    let mut lines: Vec<String> = Vec::new();
    for h in &d.hunks {
        lines.push(format!(
            "@@ -{},{} +{},{} @@",
            h.old.start + 1,
            h.old.len(),
            h.new.start + 1,
            h.new.len()
        ));
        for l in &h.lines {
            let n = match l.kind {
                LineKind::Removed => l.old_no,
                LineKind::Context | LineKind::Added => l.new_no,
            };
            let text = l.text.trim_end_matches(['\n', '\r']);
            lines.push(format!("{}{:>6} {text}", l.kind.sign(), n.unwrap_or(1)));
        }
    }
    let total = lines.len();
    if total > MAX_SNIPPET_LINES {
        lines.truncate(MAX_SNIPPET_LINES);
        lines.push(format!(
            "... (diff cut: {} more lines)",
            total - MAX_SNIPPET_LINES
        ));
    }
    DiffSummary {
        added: d.added,
        removed: d.removed,
        snippet: lines.join("\n"),
    }
}

/// Seen ranges after an edit described by `hunks` (0-based, from before to after): lines
/// outside the hunks move with them, and the new lines of each hunk count as seen (the model
/// wrote them).
pub fn shift_ranges(ranges: &[(usize, usize)], hunks: &[Change]) -> Vec<(usize, usize)> {
    // Map a 0-based old line to its new line.
    let map = |line: usize, at_end: bool| -> usize {
        let mut delta: isize = 0;
        for h in hunks {
            if line >= h.old.end {
                delta += h.new.len() as isize - h.old.len() as isize;
            } else if line >= h.old.start {
                return if at_end {
                    h.new.end.max(h.new.start + 1) - 1
                } else {
                    h.new.start
                };
            } else {
                break;
            }
        }
        (line as isize + delta).max(0) as usize
    };
    let mut out = Vec::new();
    for &(s, e) in ranges {
        let ns = map(s.saturating_sub(1), false) + 1;
        let ne = map(e.saturating_sub(1), true) + 1;
        if ne >= ns {
            crate::files::state::add_range(&mut out, (ns, ne));
        }
    }
    for h in hunks {
        if !h.new.is_empty() {
            crate::files::state::add_range(&mut out, (h.new.start + 1, h.new.end));
        }
    }
    out
}

/// `+N -M`, the short form used in results and titles.
pub fn counts(summary: &DiffSummary) -> String {
    format!("+{} -{}", summary.added, summary.removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_change_with_context() {
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 10\n", "line ten\n");
        let d = diff_snippet(&before, &after);
        assert_eq!((d.added, d.removed), (1, 1));
        let expected = "@@ -7,7 +7,7 @@\n      7 line 7\n      8 line 8\n      9 line 9\n-    10 line 10\n+    10 line ten\n     11 line 11\n     12 line 12\n     13 line 13";
        assert_eq!(d.snippet, expected);
    }

    #[test]
    fn insertion_at_start_and_end_without_newline() {
        let d = diff_snippet("a\nb", "x\na\nb\ny");
        assert_eq!((d.added, d.removed), (3, 1));
        assert_eq!(
            d.snippet,
            "@@ -1,2 +1,4 @@\n+     1 x\n      2 a\n-     2 b\n+     3 b\n+     4 y"
        );
    }

    #[test]
    fn new_file_and_identical() {
        let d = diff_snippet("", "one\ntwo\n");
        assert_eq!((d.added, d.removed), (2, 0));
        assert_eq!(d.snippet, "@@ -1,0 +1,2 @@\n+     1 one\n+     2 two");
        assert_eq!(diff_snippet("same", "same").snippet, "");
    }

    #[test]
    fn multibyte_content_is_cut_on_boundaries() {
        let d = diff_snippet("é\nü\nö\n", "é\nü\nø\n");
        assert_eq!((d.added, d.removed), (1, 1));
        assert!(d.snippet.contains("-     3 ö"));
    }

    proptest::proptest! {
        #[test]
        fn snippet_is_empty_only_without_changes(before in "[ab\n]{0,40}", after in "[ab\n]{0,40}") {
            let d = diff_snippet(&before, &after);
            proptest::prop_assert_eq!(d.snippet.is_empty(), before == after);
        }

        #[test]
        fn snippet_never_panics(before in "\\PC{0,60}", after in "\\PC{0,60}") {
            let _ = diff_snippet(&before, &after);
        }
    }

    #[test]
    fn shifting_ranges_after_an_edit() {
        // Lines 10-11 (1-based) replaced by three lines: later lines move down by one.
        let hunks = vec![Change {
            old: 9..11,
            new: 9..12,
        }];
        assert_eq!(
            shift_ranges(&[(1, 5), (20, 30)], &hunks),
            vec![(1, 5), (10, 12), (21, 31)]
        );
        assert_eq!(shift_ranges(&[(1, 40)], &hunks), vec![(1, 41)]);
    }

    #[test]
    fn long_snippets_are_cut() {
        let after: String = (0..1000).map(|i| format!("{i}\n")).collect();
        let d = diff_snippet("", &after);
        assert_eq!(d.added, 1000);
        assert!(d.snippet.ends_with("... (diff cut: 701 more lines)"));
    }
}
