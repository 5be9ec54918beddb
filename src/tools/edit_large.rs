//! An edit of a large file made in place: the text read from disk becomes the text to write,
//! and of the text before only an excerpt is kept — the changed lines with some unchanged ones
//! around them — so planning, previewing and writing a one-line edit of a 50 MB file holds one
//! copy of it, not two.
//!
//! [`splice_in_place`] applies one edit's replacements to the loaded text when the text is
//! large ([`LARGE_TEXT`]), the change lies between unchanged lines on both sides and its
//! excerpt is small; otherwise it leaves the text alone and the caller edits a copy as usual.
//! A [`Spliced`] then stands for the text before: the diff, the line bookkeeping and the
//! result's snippet are computed on the two excerpts, numbered as in the whole files; the
//! whole text before is rebuilt only where something needs it whole (a settings file's
//! check, a person's own version of the change).

use super::diff_snippet::{DiffSummary, diff_snippet_at};
use super::file_common::line_count;
use super::text_match::Occurrence;
use crate::diff::{self, Change};

/// Past this many bytes a text is large: an edit of it is made in place when it can be, the
/// read-file state keeps no copy of what was written, and the displays carry the diff's
/// snippet rather than the whole texts.
pub const LARGE_TEXT: usize = 4 * 1024 * 1024;

/// Unchanged lines kept on each side of the change in the excerpts: the diff's context and
/// some margin, so the diff of the excerpts is the diff of the whole texts.
const AROUND: usize = diff::CONTEXT + 3;

/// The most bytes of the text before an in-place edit keeps; a change spread wider (a
/// `replace_all` across the file) is made on a copy.
const MAX_EXCERPT: usize = 1024 * 1024;

/// The text before an in-place edit, as the excerpt of it that differs from the text after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spliced {
    /// Where the excerpts start, the same byte in both texts (a line start).
    pub start: usize,
    /// Lines before `start`.
    pub first_line: usize,
    /// The excerpt of the text before: whole lines.
    pub old: String,
    /// Bytes of the excerpt of the text after, from `start`.
    pub new_len: usize,
    /// [`line_count`] of the whole text before.
    pub old_lines: usize,
}

impl Spliced {
    /// The excerpt of `after` that replaced [`Self::old`].
    pub fn new_excerpt<'a>(&self, after: &'a str) -> &'a str {
        &after[self.start..self.start + self.new_len]
    }

    /// The whole text before, rebuilt from `after` (a copy of the file: only when needed).
    pub fn before(&self, after: &str) -> String {
        let tail = &after[self.start + self.new_len..];
        let mut out = String::with_capacity(self.start + self.old.len() + tail.len());
        out.push_str(&after[..self.start]);
        out.push_str(&self.old);
        out.push_str(tail);
        out
    }

    /// [`diff::changes`] of the whole texts.
    pub fn changes(&self, after: &str) -> Vec<Change> {
        diff::changes_at(&self.old, self.new_excerpt(after), self.first_line)
    }

    /// [`super::diff_snippet::diff_snippet`] of the whole texts.
    pub fn snippet(&self, after: &str) -> DiffSummary {
        diff_snippet_at(&self.old, self.new_excerpt(after), self.first_line)
    }
}

/// Replaces `occurrences` (ranges of `text`, in order, not overlapping) in `text` itself when
/// it is large and the change has [`AROUND`] unchanged lines on both sides (see the module
/// docs), returning what the text was. `None`: `text` is untouched.
pub fn splice_in_place(text: &mut String, occurrences: &[Occurrence]) -> Option<Spliced> {
    let (first, last) = (occurrences.first()?, occurrences.last()?);
    if text.len() <= LARGE_TEXT {
        return None;
    }
    let (from, to) = (first.range.start, last.range.end);
    let bytes = text.as_bytes();
    // Back to the start of the first changed line, then AROUND lines more.
    let mut start = bytes[..from].iter().rposition(|&b| b == b'\n')? + 1;
    for _ in 0..AROUND {
        start = bytes[..start - 1].iter().rposition(|&b| b == b'\n')? + 1;
    }
    // On to the end of the last changed line, then AROUND lines more; the text goes on after.
    let mut end = to + bytes[to..].iter().position(|&b| b == b'\n')? + 1;
    for _ in 0..AROUND {
        end += bytes[end..].iter().position(|&b| b == b'\n')? + 1;
    }
    if end >= bytes.len() || end - start > MAX_EXCERPT {
        return None;
    }
    let old = text[start..end].to_string();
    let old_lines = line_count(text);
    let first_line = bytes[..start].iter().filter(|&&b| b == b'\n').count();
    let mut middle = String::new();
    let mut at = from;
    for occ in occurrences {
        middle.push_str(&text[at..occ.range.start]);
        middle.push_str(&occ.replacement);
        at = occ.range.end;
    }
    // In place: the tail moves, and a text that grows is reallocated, which for a buffer this
    // large remaps its pages rather than copying them.
    text.replace_range(from..to, &middle);
    Some(Spliced {
        start,
        first_line,
        new_len: end - start + middle.len() - (to - from),
        old,
        old_lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::diff_snippet::diff_snippet;

    fn big(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("line {i:07} of a large file\n"))
            .collect()
    }

    fn occurrence(text: &str, old: &str, new: &str) -> Occurrence {
        let at = text.find(old).unwrap();
        Occurrence {
            range: at..at + old.len(),
            replacement: new.to_string(),
        }
    }

    #[test]
    fn an_edit_in_place_gives_the_same_text_diff_and_changes_as_on_a_copy() {
        let before = big(200_000);
        assert!(before.len() > LARGE_TEXT);
        for (old, new) in [
            ("line 0100000 of", "LINE ONE HUNDRED THOUSAND of"),
            ("line 0100000 of a large file\n", ""),
            ("line 0100000", "inserted\nlines\nline 0100000"),
        ] {
            let occ = occurrence(&before, old, new);
            let on_a_copy = before.replacen(old, new, 1);
            let mut text = before.clone();
            let spliced = splice_in_place(&mut text, std::slice::from_ref(&occ)).unwrap();
            assert_eq!(text, on_a_copy);
            assert_eq!(spliced.before(&text), before);
            assert_eq!(spliced.old_lines, line_count(&before));
            assert_eq!(spliced.changes(&text), diff::changes(&before, &text));
            assert_eq!(spliced.snippet(&text), diff_snippet(&before, &text));
        }
    }

    #[test]
    fn a_small_text_an_edit_at_either_end_or_a_wide_change_is_left_to_a_copy() {
        let small = big(10);
        let mut text = small.clone();
        let occ = occurrence(&text, "line 0000005", "x");
        assert_eq!(splice_in_place(&mut text, &[occ]), None);
        assert_eq!(text, small);
        let large = big(200_000);
        for old in ["line 0000001 of", "line 0199998 of"] {
            let mut text = large.clone();
            let occ = occurrence(&text, old, "x");
            assert_eq!(splice_in_place(&mut text, &[occ]), None, "{old}");
            assert_eq!(text, large);
        }
        let mut text = large.clone();
        let wide = [
            occurrence(&large, "line 0000100 of", "x"),
            occurrence(&large, "line 0150000 of", "y"),
        ];
        assert_eq!(splice_in_place(&mut text, &wide), None);
        assert_eq!(text, large);
    }
}
