//! Word-level emphasis inside changed lines, and the styled pieces a line is drawn from.
//!
//! Pure text work, no buffer: which removed line is compared with which added line, which byte
//! ranges of each differ word by word, and how those ranges cut a line already split into
//! syntax-highlighted segments. Invariant: the pieces of a line always spell the line exactly
//! (tabs expanded and control characters made visible), whatever the highlighter returned.

use std::ops::Range;

use ratatui::style::Style;
use similar::{ChangeTag, TextDiff};
use unicode_width::UnicodeWidthChar;

use crate::diff::{Hunk, LineKind};
use crate::tui::untrusted::{escaped, is_invisible};

/// Lines longer than this (in bytes) get no word-level emphasis: the word diff would cost more
/// than it tells on a minified line.
const MAX_EMPHASIS_LEN: usize = 1_000;
/// Below this similarity every word would light up, which says nothing; show the lines plain.
const MIN_RATIO: f32 = 0.3;
/// Tab stops, in columns from the start of the line's text.
pub const TAB_WIDTH: usize = 4;

/// One run of a line with one style. `emphasized` marks words that differ from the partner line.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub style: Style,
    pub text: String,
    pub emphasized: bool,
}

/// For each line of `hunk`, the line it is compared with word by word: inside each change block
/// the k-th removed line pairs with the k-th added line; lines beyond the shorter run pair with
/// nothing.
pub fn partners(hunk: &Hunk) -> Vec<Option<usize>> {
    let mut out = vec![None; hunk.lines.len()];
    for (removed, added) in hunk.blocks() {
        for (r, a) in removed.zip(added) {
            out[r] = Some(a);
            out[a] = Some(r);
        }
    }
    out
}

/// The changed byte ranges of line `line` of `hunk` against its partner (from [`partners`]), or
/// `None` when it has no partner or emphasis would not help.
pub fn line_emphasis(
    hunk: &Hunk,
    partners: &[Option<usize>],
    line: usize,
) -> Option<Vec<Range<usize>>> {
    let hl = hunk.lines.get(line)?;
    let other = hunk.lines.get(partners.get(line).copied().flatten()?)?;
    match hl.kind {
        LineKind::Removed => word_changes(&hl.text, &other.text).map(|r| r.0),
        LineKind::Added => word_changes(&other.text, &hl.text).map(|r| r.1),
        LineKind::Context => None,
    }
}

/// Changed byte ranges of the old line and of the new line.
pub type WordChanges = (Vec<Range<usize>>, Vec<Range<usize>>);

/// Byte ranges of `old` and of `new` whose words differ, adjacent ranges merged. `None` when the
/// lines are too long or too different for emphasis to help.
pub fn word_changes(old: &str, new: &str) -> Option<WordChanges> {
    if old.len() > MAX_EMPHASIS_LEN || new.len() > MAX_EMPHASIS_LEN {
        return None;
    }
    let diff = TextDiff::from_unicode_words(old, new);
    if diff.ratio() < MIN_RATIO {
        return None;
    }
    let (mut old_ranges, mut new_ranges) = (Vec::new(), Vec::new());
    let (mut o, mut n) = (0, 0);
    for change in diff.iter_all_changes() {
        let len = change.value().len();
        match change.tag() {
            ChangeTag::Equal => {
                o += len;
                n += len;
            }
            ChangeTag::Delete => {
                push_merged(&mut old_ranges, o..o + len);
                o += len;
            }
            ChangeTag::Insert => {
                push_merged(&mut new_ranges, n..n + len);
                n += len;
            }
        }
    }
    Some((old_ranges, new_ranges))
}

fn push_merged(ranges: &mut Vec<Range<usize>>, r: Range<usize>) {
    match ranges.last_mut() {
        Some(last) if last.end == r.start => last.end = r.end,
        _ => ranges.push(r),
    }
}

/// The pieces of `line`: the highlighter's segments when they spell the line (else one plain
/// segment), cut at the edges of `emphasis`, with tabs expanded and control characters replaced.
pub fn pieces(
    line: &str,
    highlighted: Option<Vec<(Style, String)>>,
    emphasis: &[Range<usize>],
) -> Vec<Piece> {
    let segments = match highlighted {
        Some(segs) if spells(&segs, line) => segs,
        _ => vec![(Style::default(), line.to_string())],
    };
    let mut out: Vec<Piece> = Vec::new();
    let mut start = 0;
    for (style, text) in segments {
        let end = start + text.len();
        let mut at = start;
        while at < end {
            // The next cut: an emphasis edge inside this segment, or the segment's end.
            let (emphasized, cut) = match emphasis.iter().find(|r| r.end > at) {
                Some(r) if r.start <= at => (true, r.end.min(end)),
                Some(r) => (false, r.start.min(end)),
                None => (false, end),
            };
            if let Some(part) = line.get(at..cut) {
                out.push(Piece {
                    style,
                    text: part.to_string(),
                    emphasized,
                });
            }
            at = cut;
        }
        start = end;
    }
    visible(&mut out);
    out
}

fn spells(segs: &[(Style, String)], line: &str) -> bool {
    let mut rest = line;
    for (_, text) in segs {
        match rest.strip_prefix(text.as_str()) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// Expand tabs (stops every [`TAB_WIDTH`] columns from the line start, carried across pieces)
/// and replace control characters, which the terminal would otherwise interpret; bidi controls
/// and other invisible format characters are shown escaped (`<U+202E>`), so a proposed line
/// cannot read differently from what would be written.
fn visible(pieces: &mut [Piece]) {
    let mut col = 0;
    for piece in pieces {
        if !piece
            .text
            .chars()
            .any(|c| c.is_control() || is_invisible(c))
        {
            col += unicode_width::UnicodeWidthStr::width(piece.text.as_str());
            continue;
        }
        let mut text = String::with_capacity(piece.text.len() + 8);
        for c in piece.text.chars() {
            if c == '\t' {
                let n = TAB_WIDTH - col % TAB_WIDTH;
                text.extend(std::iter::repeat_n(' ', n));
                col += n;
            } else if c.is_control() {
                text.push('\u{fffd}');
                col += 1;
            } else if is_invisible(c) {
                let shown = escaped(c);
                col += shown.len();
                text.push_str(&shown);
            } else {
                text.push(c);
                col += c.width().unwrap_or(0);
            }
        }
        piece.text = text;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff;
    use ratatui::style::Color;

    fn texts(p: &[Piece]) -> Vec<(&str, bool)> {
        p.iter().map(|p| (p.text.as_str(), p.emphasized)).collect()
    }

    #[test]
    fn removed_and_added_lines_pair_in_order() {
        let d = diff::diff("a\nb\nc\nz\n", "a\nB\nC\nD\nz\n");
        let h = &d.hunks[0];
        // a, -b, -c, +B, +C, +D, z
        assert_eq!(
            partners(h),
            vec![None, Some(3), Some(4), Some(1), Some(2), None, None]
        );
    }

    #[test]
    fn changed_words_are_found_on_both_sides() {
        let (o, n) = word_changes("let x = foo(1);", "let x = bar(1);").unwrap();
        assert_eq!(&"let x = foo(1);"[o[0].clone()], "foo");
        assert_eq!(&"let x = bar(1);"[n[0].clone()], "bar");
        assert_eq!((o.len(), n.len()), (1, 1));
        assert_eq!(word_changes("completely", "different words here"), None);
    }

    #[test]
    fn emphasis_cuts_highlighted_segments() {
        let red = Style::default().fg(Color::Red);
        let segs = vec![
            (red, "let ".to_string()),
            (Style::default(), "xy = 1".into()),
        ];
        let p = pieces("let xy = 1", Some(segs), &[Range { start: 2, end: 5 }]);
        assert_eq!(
            texts(&p),
            vec![("le", false), ("t ", true), ("x", true), ("y = 1", false)]
        );
        assert_eq!(p[1].style, red);
        assert_eq!(p[2].style, Style::default());
    }

    #[test]
    fn a_highlighter_that_does_not_spell_the_line_is_ignored() {
        let p = pieces("abc", Some(vec![(Style::default(), "abd".into())]), &[]);
        assert_eq!(texts(&p), vec![("abc", false)]);
    }

    #[test]
    fn tabs_expand_across_pieces_and_controls_are_replaced() {
        let p = pieces("ab\tc\x1b\td", None, &[Range { start: 1, end: 2 }]);
        assert_eq!(
            texts(&p),
            vec![("a", false), ("b", true), ("  c\u{fffd}  d", false)]
        );
    }

    #[test]
    fn bidi_controls_in_a_proposed_line_are_shown_escaped() {
        // Trojan Source: the override would make the comment's end look like code order.
        let p = pieces(
            "x = 1; /* \u{202E} } \u{2066}if (admin)\u{2069} */",
            None,
            &[],
        );
        assert_eq!(
            texts(&p),
            vec![("x = 1; /* <U+202E> } <U+2066>if (admin)<U+2069> */", false)]
        );
    }
}
