//! Unified diffs for the model: 3 lines of context, line numbers on every line, `+N -M` counts.
//!
//! Edits change a small part of a possibly large file, so the common prefix and suffix are cut
//! off (at line boundaries, by plain byte comparison) before the line diff runs; the diff then
//! only sees the changed window plus its context. This keeps an edit of a 10 MiB file cheap.
//! The same trimming backs [`changed_hunks`], which the merge of outside changes uses.

use std::ops::Range;
use std::time::Duration;

use similar::{ChangeTag, DiffTag, TextDiff};

/// Lines of context around each change.
pub const CONTEXT: usize = 3;
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

/// One changed region, as 0-based line ranges in `before` and `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

/// The window of both texts that holds every change, with `context` lines around it.
struct Window<'a> {
    old: &'a str,
    new: &'a str,
    /// Lines before the window (same in both texts).
    first_line: usize,
}

fn window<'a>(before: &'a str, after: &'a str, context: usize) -> Window<'a> {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let prefix = common_prefix(b, a);
    // Cut after the last newline of the common prefix: a line start in both texts.
    let mut start = b[..prefix]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let max_suffix = b.len().min(a.len()) - start;
    let suffix = common_suffix(&b[b.len() - max_suffix..], &a[a.len() - max_suffix..]);
    // Cut after the first newline inside the common suffix: again a line start in both.
    let suffix_start = b.len() - suffix;
    let mut end_from_back = match b[suffix_start..].iter().position(|&c| c == b'\n') {
        Some(i) => b.len() - (suffix_start + i + 1),
        None => 0,
    };
    for _ in 0..context {
        if start == 0 {
            break;
        }
        start = b[..start - 1]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
    }
    for _ in 0..context {
        if end_from_back == 0 {
            break;
        }
        let from = b.len() - end_from_back;
        end_from_back = match b[from..].iter().position(|&c| c == b'\n') {
            Some(i) => b.len() - (from + i + 1),
            None => 0,
        };
    }
    let first_line = b[..start].iter().filter(|&&c| c == b'\n').count();
    Window {
        old: &before[start..before.len() - end_from_back],
        new: &after[start..after.len() - end_from_back],
        first_line,
    }
}

/// Compared in blocks first: slice equality is a vectorised memcmp, a byte loop is not.
const BLOCK: usize = 256;

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + BLOCK <= n && a[n - i - BLOCK..n - i] == b[n - i - BLOCK..n - i] {
        i += BLOCK;
    }
    i + a[..n - i]
        .iter()
        .rev()
        .zip(b[..n - i].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

fn line_diff<'a>(w: &Window<'a>) -> TextDiff<'a, 'a, str> {
    TextDiff::configure()
        .timeout(Duration::from_millis(500))
        .diff_lines(w.old, w.new)
}

/// The unified diff of `before` -> `after` (see the module docs).
pub fn diff_snippet(before: &str, after: &str) -> DiffSummary {
    if before == after {
        return DiffSummary {
            added: 0,
            removed: 0,
            snippet: String::new(),
        };
    }
    let w = window(before, after, CONTEXT);
    let diff = line_diff(&w);
    let mut added = 0;
    let mut removed = 0;
    let mut lines: Vec<String> = Vec::new();
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let new_start = first.new_range().start;
        let old_len = last.old_range().end - old_start;
        let new_len = last.new_range().end - new_start;
        lines.push(format!(
            "@@ -{},{} +{},{} @@",
            w.first_line + old_start + 1,
            old_len,
            w.first_line + new_start + 1,
            new_len
        ));
        for op in &group {
            for change in diff.iter_changes(op) {
                let text = change.value().trim_end_matches(['\n', '\r']);
                let (sign, idx) = match change.tag() {
                    ChangeTag::Equal => (' ', change.new_index()),
                    ChangeTag::Delete => {
                        removed += 1;
                        ('-', change.old_index())
                    }
                    ChangeTag::Insert => {
                        added += 1;
                        ('+', change.new_index())
                    }
                };
                let n = w.first_line + idx.unwrap_or(0) + 1;
                lines.push(format!("{sign}{n:>6} {text}"));
            }
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
        added,
        removed,
        snippet: lines.join("\n"),
    }
}

/// Changed regions of `before` -> `after` without context, adjacent changes merged.
pub fn changed_hunks(before: &str, after: &str) -> Vec<Hunk> {
    if before == after {
        return Vec::new();
    }
    let w = window(before, after, 0);
    let diff = line_diff(&w);
    let off = w.first_line;
    let mut hunks: Vec<Hunk> = Vec::new();
    for op in diff.ops() {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        let h = Hunk {
            old: old.start + off..old.end + off,
            new: new.start + off..new.end + off,
        };
        match hunks.last_mut() {
            Some(prev) if prev.old.end == h.old.start && prev.new.end == h.new.start => {
                prev.old.end = h.old.end;
                prev.new.end = h.new.end;
            }
            _ => hunks.push(h),
        }
    }
    hunks
}

/// Seen ranges after an edit described by `hunks` (0-based, from before to after): lines
/// outside the hunks move with them, and the new lines of each hunk count as seen (the model
/// wrote them).
pub fn shift_ranges(ranges: &[(usize, usize)], hunks: &[Hunk]) -> Vec<(usize, usize)> {
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
    fn hunks_are_absolute_line_ranges() {
        let before: String = (0..100).map(|i| format!("{i}\n")).collect();
        let after = before
            .replace("10\n", "ten\n")
            .replace("50\n", "")
            .replace("90\n", "90\nx\ny\n");
        assert_eq!(
            changed_hunks(&before, &after),
            vec![
                Hunk {
                    old: 10..11,
                    new: 10..11
                },
                Hunk {
                    old: 50..51,
                    new: 50..50
                },
                Hunk {
                    old: 91..91,
                    new: 90..92
                },
            ]
        );
    }

    #[test]
    fn multibyte_content_is_cut_on_boundaries() {
        let d = diff_snippet("é\nü\nö\n", "é\nü\nø\n");
        assert_eq!((d.added, d.removed), (1, 1));
        assert!(d.snippet.contains("-     3 ö"));
    }

    fn lines_of(text: &str) -> Vec<&str> {
        text.split_inclusive('\n').collect()
    }

    proptest::proptest! {
        /// Replaying the hunks on `before` gives `after`, whatever the texts.
        #[test]
        fn hunks_rebuild_after(before in "[ab\n]{0,40}", after in "[ab\n]{0,40}") {
            let (b, a) = (lines_of(&before), lines_of(&after));
            let mut rebuilt: Vec<&str> = Vec::new();
            let mut at = 0;
            for h in changed_hunks(&before, &after) {
                proptest::prop_assert!(h.old.start >= at && h.old.end <= b.len() && h.new.end <= a.len());
                rebuilt.extend(&b[at..h.old.start]);
                rebuilt.extend(&a[h.new.clone()]);
                at = h.old.end;
            }
            rebuilt.extend(&b[at..]);
            proptest::prop_assert_eq!(rebuilt.concat(), after.clone());
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
        let hunks = vec![Hunk {
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
