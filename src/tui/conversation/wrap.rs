//! Word wrapping of styled text to a column width, and cleaning of untrusted text.
//!
//! Invariants: no output line is wider than the width asked for (measured with `unicode-width`,
//! so CJK and emoji count as two columns); every call terminates and never panics, whatever the
//! input; wrapping is greedy on spaces, and a word longer than a line is broken between chars.
//! Text from tools and models goes through [`sanitize`] first, so no escape sequence or control
//! character reaches the terminal.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::tui::untrusted::{escaped, is_bidi_control};

/// Columns a tab advances; tabs have no width of their own on a terminal grid we draw ourselves.
const TAB_WIDTH: usize = 4;

/// Display width of `s` in terminal columns.
pub fn str_width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

fn char_width(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

/// Make untrusted text safe to draw: tabs become spaces, ANSI escape sequences are removed, a
/// carriage return keeps only what was written after it on that line (progress bars), other
/// control characters are dropped, and bidi controls are shown escaped (`<U+202E>`), so no text
/// reads in another order than it is. Newlines are kept. Sequences terminals draw at widths of
/// their own are taken apart, so what the buffer counts is what appears (else a scroll leaves
/// half a glyph behind): a zero width joiner between two emoji is dropped (each emoji drawn on
/// its own, two columns each, where some terminals join them into one glyph and others do
/// not), and a regional indicator without its pair (half a flag) is shown escaped. (The
/// permission prompt shows text stricter still: [`crate::tui::untrusted`].)
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s
        .chars()
        .any(|c| (c.is_control() && c != '\n') || is_bidi_control(c) || c == ZWJ || is_regional(c))
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut line_start = 0;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                out.push('\n');
                line_start = out.len();
            }
            '\t' => out.push_str(&" ".repeat(TAB_WIDTH)),
            '\r' => {
                // "\r\n" is a plain line end; a lone '\r' rewinds the line.
                if chars.peek() != Some(&'\n') {
                    out.truncate(line_start);
                }
            }
            '\u{1b}' => crate::media::ansi::skip_escape(&mut chars),
            c if c.is_control() => {}
            c if is_bidi_control(c) => out.push_str(&escaped(c)),
            ZWJ if joins_emoji(&out, chars.peek().copied()) => {}
            c if is_regional(c) => match chars.next_if(|&n| is_regional(n)) {
                Some(pair) => {
                    out.push(c);
                    out.push(pair);
                }
                None => out.push_str(&escaped(c)),
            },
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

const ZWJ: char = '\u{200D}';

/// A regional indicator (two make a flag).
fn is_regional(c: char) -> bool {
    ('\u{1F1E6}'..='\u{1F1FF}').contains(&c)
}

/// A character drawn as an emoji (pictographs, symbols, dingbats).
fn is_emoji(c: char) -> bool {
    matches!(c,
        '\u{1F000}'..='\u{1FAFF}' | '\u{2300}'..='\u{23FF}' | '\u{2600}'..='\u{27BF}'
            | '\u{2B00}'..='\u{2BFF}')
}

/// Whether a ZWJ after `before` (the presentation selector aside) and before `next` joins two
/// emoji.
fn joins_emoji(before: &str, next: Option<char>) -> bool {
    let prev = before.chars().rev().find(|&c| c != '\u{FE0F}');
    prev.is_some_and(is_emoji) && next.is_some_and(is_emoji)
}

/// One output line being built: prefix spans, then content merged into spans by style.
struct LineBuf {
    spans: Vec<Span<'static>>,
    width: usize,
    prefix_width: usize,
    cur: String,
    cur_style: Style,
}

impl LineBuf {
    fn new(prefix: &[Span<'static>], max: usize) -> LineBuf {
        // Keep at least one column for content when there is room for one.
        let limit = max.saturating_sub(1);
        let mut spans = Vec::with_capacity(prefix.len() + 2);
        let mut width = 0;
        for span in prefix {
            let w = str_width(&span.content);
            if width + w <= limit {
                spans.push(span.clone());
                width += w;
            } else {
                let mut s = String::new();
                for c in span.content.chars() {
                    let cw = char_width(c);
                    if width + cw > limit {
                        break;
                    }
                    s.push(c);
                    width += cw;
                }
                spans.push(Span::styled(s, span.style));
                break;
            }
        }
        LineBuf {
            spans,
            width,
            prefix_width: width,
            cur: String::new(),
            cur_style: Style::default(),
        }
    }

    fn has_content(&self) -> bool {
        self.width > self.prefix_width
    }

    fn push(&mut self, g: &str, style: Style, w: usize) {
        if style != self.cur_style && !self.cur.is_empty() {
            let s = std::mem::take(&mut self.cur);
            self.spans.push(Span::styled(s, self.cur_style));
        }
        self.cur_style = style;
        self.cur.push_str(g);
        self.width += w;
    }

    fn finish(mut self) -> Line<'static> {
        if !self.cur.is_empty() {
            self.spans.push(Span::styled(self.cur, self.cur_style));
        }
        Line::from(self.spans)
    }
}

/// Wrap `content` to `width` columns. The first output line starts with `first_prefix`, the
/// others with `rest_prefix` (list bullets, quote bars, gutters). A `'\n'` in the content forces a
/// break. At least one line is produced when `width > 0`; nothing when it is 0.
pub fn wrap_spans(
    first_prefix: &[Span<'static>],
    rest_prefix: &[Span<'static>],
    content: &[Span<'static>],
    width: usize,
    out: &mut Vec<Line<'static>>,
) {
    if width == 0 {
        return;
    }
    // Whole grapheme clusters, each as wide as ratatui will draw it: a flag (two regional
    // indicators) or an emoji with its presentation selector is never split across lines or
    // spans, nor counted differently from the buffer (a half-drawn glyph left on screen).
    let chars: Vec<(&str, Style, usize)> = content
        .iter()
        .flat_map(|s| {
            s.content
                .graphemes(true)
                .map(move |g| (g, s.style, grapheme_width(g)))
        })
        .collect();
    let mut line = LineBuf::new(first_prefix, width);
    // Leading spaces are kept at the start of the text and after a hard break (indentation in
    // code and command output), and dropped where a soft wrap happened.
    let mut hard_start = true;
    let mut pending_space: Option<(usize, usize)> = None; // (start index, end index)
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].0;
        if is_break(c) {
            out.push(line.finish());
            line = LineBuf::new(rest_prefix, width);
            hard_start = true;
            pending_space = None;
            i += 1;
            continue;
        }
        if c == " " {
            let mut j = i;
            while j < chars.len() && chars[j].0 == " " {
                j += 1;
            }
            if hard_start && !line.has_content() {
                for &(c, style, w) in &chars[i..j] {
                    if line.width + w < width {
                        line.push(c, style, w);
                    }
                }
            } else if line.has_content() {
                pending_space = Some((i, j));
            }
            i = j;
            continue;
        }
        let mut j = i;
        let mut word_w = 0;
        while j < chars.len() && chars[j].0 != " " && !is_break(chars[j].0) {
            word_w += chars[j].2;
            j += 1;
        }
        let space_w: usize = pending_space
            .map(|(a, b)| chars[a..b].iter().map(|c| c.2).sum())
            .unwrap_or(0);
        if line.width + space_w + word_w <= width {
            if let Some((a, b)) = pending_space.take() {
                for &(c, style, w) in &chars[a..b] {
                    line.push(c, style, w);
                }
            }
            for &(c, style, w) in &chars[i..j] {
                line.push(c, style, w);
            }
        } else if line.has_content() && line_fresh_width(rest_prefix, width) + word_w <= width {
            out.push(line.finish());
            line = LineBuf::new(rest_prefix, width);
            hard_start = false;
            pending_space = None;
            for &(c, style, w) in &chars[i..j] {
                line.push(c, style, w);
            }
        } else {
            // A word longer than a whole line: break it between characters.
            if let Some((a, b)) = pending_space.take()
                && line.width + space_w < width
            {
                for &(c, style, w) in &chars[a..b] {
                    line.push(c, style, w);
                }
            }
            for &(c, style, w) in &chars[i..j] {
                if line.width + w > width && line.has_content() {
                    out.push(line.finish());
                    line = LineBuf::new(rest_prefix, width);
                    hard_start = false;
                }
                if line.width + w <= width {
                    line.push(c, style, w);
                }
            }
        }
        i = j;
    }
    out.push(line.finish());
}

/// A hard line break.
fn is_break(g: &str) -> bool {
    g == "\n" || g == "\r\n"
}

/// Columns a grapheme cluster takes, as ratatui's buffer counts it (`Buffer::set_stringn`
/// draws one cluster per cell, as wide as its string width; control characters not at all).
fn grapheme_width(g: &str) -> usize {
    if g.contains(char::is_control) {
        0
    } else {
        UnicodeWidthStr::width(g)
    }
}

/// Width a fresh line with this prefix starts at (after truncation to the width).
fn line_fresh_width(prefix: &[Span<'static>], width: usize) -> usize {
    let w: usize = prefix.iter().map(|s| str_width(&s.content)).sum();
    w.min(width.saturating_sub(1))
}

/// Width of a rendered line in columns.
pub fn line_width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| str_width(&s.content)).sum()
}

/// Wrap plain text (may contain newlines) in one style, with the same prefix on every line.
pub fn wrap_text(
    prefix: &[Span<'static>],
    text: &str,
    style: Style,
    width: usize,
    out: &mut Vec<Line<'static>>,
) {
    let content = [Span::styled(text.to_string(), style)];
    wrap_spans(prefix, prefix, &content, width, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn texts(lines: &[Line<'static>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn wrap(first: &str, rest: &str, text: &str, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        wrap_spans(
            &[Span::raw(first.to_string())],
            &[Span::raw(rest.to_string())],
            &[Span::raw(text.to_string())],
            width,
            &mut out,
        );
        texts(&out)
    }

    #[test]
    fn wraps_on_spaces_with_prefixes() {
        assert_eq!(
            wrap("- ", "  ", "the quick brown fox jumps", 12),
            vec!["- the quick", "  brown fox", "  jumps"]
        );
    }

    #[test]
    fn breaks_long_words_and_keeps_indentation_after_hard_breaks() {
        assert_eq!(wrap("", "", "abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(
            wrap("", "", "fn x() {\n    body();\n}", 20),
            vec!["fn x() {", "    body();", "}"]
        );
    }

    #[test]
    fn counts_wide_characters_as_two_columns() {
        assert_eq!(
            wrap("", "", "日本語のテキスト", 6),
            vec!["日本語", "のテキ", "スト"]
        );
        // A wide char never straddles the edge: it moves to the next line.
        assert_eq!(wrap("> ", "> ", "a日本", 6), vec!["> a日", "> 本"]);
    }

    #[test]
    fn empty_text_gives_one_line_and_zero_width_gives_none() {
        assert_eq!(wrap("* ", "", "", 10), vec!["* "]);
        assert!(wrap("* ", "", "some text", 0).is_empty());
    }

    #[test]
    fn sanitize_removes_escapes_and_rewinds_carriage_returns() {
        assert_eq!(sanitize("plain"), "plain");
        assert_eq!(
            sanitize("\u{1b}[31mred\u{1b}[0m\tx\r\nnext"),
            "red    x\nnext"
        );
        assert_eq!(sanitize("10%\r50%\r100%\ndone"), "100%\ndone");
        assert_eq!(sanitize("a\u{1b}]0;title\u{7}b\u{0}c"), "abc");
    }

    #[test]
    fn sanitize_shows_bidi_controls_escaped_and_keeps_joiners() {
        assert_eq!(
            sanitize("access \u{202E}nimda\u{202C} \u{2066}x\u{2069}"),
            "access <U+202E>nimda<U+202C> <U+2066>x<U+2069>"
        );
        // Joiners are not reorderings: Persian text keeps them (an emoji sequence does not:
        // see below).
        assert_eq!(sanitize("می\u{200C}خواهم"), "می\u{200C}خواهم");
    }

    /// Issue #27: a flag left half a glyph on screen after scrolling. The buffer (ratatui)
    /// counts a flag as one two-column cell; the wrap used to count and break it as two
    /// one-column characters, so a flag could be cut in two at a line's end (each half a lone
    /// regional indicator, which terminals draw two columns wide over the next cell).
    #[test]
    fn a_flag_is_never_split_and_is_as_wide_as_the_buffer_counts_it() {
        let flag = "\u{1F1EB}\u{1F1F7}";
        // Three flags in a 5-column line: two fit, the third moves whole to the next line.
        let text = flag.repeat(3);
        let lines = wrap("", "", &text, 5);
        assert_eq!(lines, vec![flag.repeat(2), flag.to_string()]);
        // An odd column left: the flag moves on rather than leaving half of it behind.
        assert_eq!(
            wrap("", "", &format!("abc{flag}"), 4),
            vec!["abc".to_string(), flag.to_string()]
        );
        // What the wrap measures is what ratatui's buffer draws.
        let mut buf = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 8, 1));
        let (x, _) = buf.set_stringn(0, 0, flag, 8, Style::default());
        assert_eq!(x, 2);
        assert_eq!(str_width(flag), 2);
        // An emoji with its presentation selector is one cell as wide as the buffer says.
        let heart = "\u{2764}\u{FE0F}";
        let mut out = Vec::new();
        wrap_text(
            &[],
            &format!("{heart}{heart}{heart}"),
            Style::default(),
            4,
            &mut out,
        );
        assert!(out.iter().all(|l| line_width(l) <= 4), "{:?}", texts(&out));
    }

    /// Half a flag and joined emoji sequences are taken apart before they reach the terminal.
    #[test]
    fn sanitize_takes_apart_what_terminals_draw_at_their_own_width() {
        let (f, r) = ("\u{1F1EB}", "\u{1F1F7}");
        assert_eq!(sanitize(&format!("{f}{r}")), format!("{f}{r}"));
        assert_eq!(
            sanitize(&format!("{f}{r}{f} x")),
            format!("{f}{r}<U+1F1EB> x")
        );
        assert_eq!(sanitize("👩\u{200D}💻 a\u{200D}b"), "👩💻 a\u{200D}b");
        assert_eq!(sanitize("❤\u{FE0F}\u{200D}🔥"), "❤\u{FE0F}🔥");
        // Each emoji is then drawn on its own, as wide as the buffer counts it.
        assert_eq!(str_width(&sanitize("👩\u{200D}💻")), 4);
    }

    proptest! {
        #[test]
        fn wrapping_never_exceeds_the_width(
            text in "[ a-zé日本😀🇫🇷\u{FE0F}\\n]{0,120}",
            prefix in "[ >│-]{0,6}",
            width in 0usize..40,
        ) {
            let mut out = Vec::new();
            wrap_spans(
                &[Span::raw(prefix.clone())],
                &[Span::raw(prefix.clone())],
                &[Span::raw(text.clone())],
                width,
                &mut out,
            );
            for line in &out {
                prop_assert!(line_width(line) <= width, "{:?} wider than {}", line, width);
            }
            if width > 0 {
                prop_assert!(!out.is_empty());
            }
        }

        #[test]
        fn wrapping_keeps_every_non_space_char_when_there_is_room(
            text in "[a-z日 ]{0,80}",
            width in 3usize..30,
        ) {
            let out = wrap("", "", &text, width);
            let kept: String = out.concat().chars().filter(|c| *c != ' ').collect();
            let want: String = text.chars().filter(|c| *c != ' ').collect();
            prop_assert_eq!(kept, want);
        }
    }
}
