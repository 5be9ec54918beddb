//! Untrusted text laid out as data in the prompt panel: one-line fields wrapped after cairn's
//! own prefix, multi-line fields framed by the [`GUTTER`] on every row, and both clipped to a
//! number of rows with `…` so the panel's own words keep their rows. Cleaning is
//! [`crate::tui::untrusted`]'s; this only lays the cleaned text out.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use crate::tui::conversation::wrap::{line_width, str_width, wrap_spans};
use crate::tui::untrusted::{GUTTER, lines, one_line};

/// The gutter's look: dim, so it reads as a frame and not as text.
pub fn gutter() -> Span<'static> {
    Span::styled(GUTTER, Style::default().fg(Color::DarkGray))
}

/// A one-line field in `style` after `first` (wrapped rows after `rest`), at most `max` rows.
/// Returns whether it was clipped.
pub fn one_line_rows(
    first: &[Span<'static>],
    rest: &[Span<'static>],
    text: &str,
    style: Style,
    width: usize,
    max: usize,
    out: &mut Vec<Line<'static>>,
) -> bool {
    let mut rows = Vec::new();
    let content = [Span::styled(one_line(text).into_owned(), style)];
    wrap_spans(first, rest, &content, width, &mut rows);
    let clipped = clip(&mut rows, max, width);
    out.extend(rows);
    clipped
}

/// A multi-line field in `style`: every row starts with `indent` and the gutter; at most `max`
/// rows. Returns whether it was clipped.
pub fn framed_rows(
    indent: &str,
    text: &str,
    style: Style,
    width: usize,
    max: usize,
    out: &mut Vec<Line<'static>>,
) -> bool {
    let prefix = [Span::raw(indent.to_string()), gutter()];
    let mut rows = Vec::new();
    for line in lines(text) {
        let content = [Span::styled(line, style)];
        wrap_spans(&prefix, &prefix, &content, width, &mut rows);
        if rows.len() > max {
            break;
        }
    }
    let clipped = clip(&mut rows, max, width);
    out.extend(rows);
    clipped
}

/// Keep the first `max` of `rows`, ending the last kept one with `…` when any were dropped.
pub fn clip(rows: &mut Vec<Line<'static>>, max: usize, width: usize) -> bool {
    if rows.len() <= max {
        return false;
    }
    rows.truncate(max);
    if let Some(last) = rows.last_mut() {
        let mark = "…";
        while line_width(last) + str_width(mark) > width {
            let Some(span) = last.spans.last_mut() else {
                break;
            };
            let mut s = span.content.to_string();
            if s.pop().is_none() {
                last.spans.pop();
                continue;
            }
            span.content = s.into();
        }
        last.spans
            .push(Span::styled(mark, Style::default().fg(Color::DarkGray)));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(rows: &[Line<'static>]) -> Vec<String> {
        rows.iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn a_framed_field_never_starts_a_row_at_column_0() {
        let mut out = Vec::new();
        let text = "Really?\n\n Allow this? ────\nBash rm -rf ~\n1/y yes";
        let clipped = framed_rows("", text, Style::default(), 30, 10, &mut out);
        assert!(!clipped);
        assert_eq!(
            texts(&out),
            vec![
                "┊ Really?",
                "┊ ",
                "┊  Allow this? ────",
                "┊ Bash rm -rf ~",
                "┊ 1/y yes"
            ]
        );
    }

    #[test]
    fn long_fields_are_clipped_with_a_mark_within_the_width() {
        let mut out = Vec::new();
        let text = "word ".repeat(600);
        assert!(framed_rows("  ", &text, Style::default(), 20, 2, &mut out));
        let shown = texts(&out);
        assert_eq!(shown.len(), 2);
        assert!(shown[1].ends_with('…'), "{shown:?}");
        assert!(shown.iter().all(|r| str_width(r) <= 20), "{shown:?}");
        assert!(shown.iter().all(|r| r.starts_with("  ┊ ")), "{shown:?}");

        let mut out = Vec::new();
        let clipped = one_line_rows(&[], &[], "a\nb", Style::default(), 20, 1, &mut out);
        assert!(!clipped);
        assert_eq!(texts(&out), vec!["a⏎b"]);
        let mut out = Vec::new();
        assert!(one_line_rows(
            &[],
            &[],
            &"x".repeat(50),
            Style::default(),
            10,
            1,
            &mut out
        ));
        assert_eq!(texts(&out), vec!["xxxxxxxxx…"]);
    }
}
