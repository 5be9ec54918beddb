//! Text that came from the model, a file or a server, made safe to show as data: whatever it
//! contains, it cannot move the cursor, reorder what is drawn around it, hide part of itself, or
//! pass for cairn's own chrome.
//!
//! Two shapes of field:
//! - a **one-line** field (a tool title, a question's header, an option's label) comes out
//!   with no line break left: `\n`, `\r\n`, a lone `\r`, NEL, U+2028 and U+2029 become
//!   [`NEWLINE_MARK`], a tab becomes [`TAB_MARK`];
//! - a **multi-line** field (a question, an option's description, a command) keeps its line
//!   breaks (any of the above, a lone `\r` included, so nothing can be overwritten by a
//!   "carriage return" rewind), tabs become spaces, and its lines are drawn after
//!   [`GUTTER`], a mark cairn's own chrome never uses, so no line of it starts at column 0.
//!
//! In both, every other control character (C0, DEL, C1, ESC — so an escape sequence shows as
//! `<U+001B>[31m` and does nothing) and every invisible format character is shown escaped as
//! `<U+XXXX>`: the bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), zero
//! widths and joiners (U+200B–U+200D, U+2060–U+2064, U+FEFF), the soft hyphen, the rest of
//! Unicode's format category (Arabic number signs, U+180E, interlinear annotation, shorthand
//! format controls, musical symbol formats, Egyptian hieroglyph format controls), the tag
//! characters (U+E0000–U+E007F), the variation selectors that can carry hidden data
//! (U+180B–U+180F, U+FE00–U+FE0D, U+E0100–U+E01EF), the combining grapheme joiner and the
//! blank Hangul fillers. Kept as they are: U+FE0E and U+FE0F (text and emoji presentation,
//! which ordinary emoji carry) and every visible character. A ZWJ inside an emoji sequence is
//! escaped too: in a prompt, showing what is there matters more than a joined glyph.
//!
//! Pure functions over strings; nothing here draws.

use std::borrow::Cow;

/// What a line break in a one-line field is shown as.
pub const NEWLINE_MARK: char = '⏎';
/// What a tab in a one-line field is shown as.
pub const TAB_MARK: char = '→';
/// The mark before every line of a multi-line field (and its wrapped rows).
pub const GUTTER: &str = "┊ ";

/// Columns a tab becomes in a multi-line field.
const TAB_SPACES: &str = "    ";

/// Whether `c` is a character that changes or hides text without showing itself (see the
/// module doc for the list and what is kept).
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{0600}'..='\u{0605}'
            | '\u{061C}'
            | '\u{06DD}'
            | '\u{070F}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08E2}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0D}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E007F}'
            | '\u{E0100}'..='\u{E01EF}'
    )
}

/// Whether `c` is a bidi control: it reorders the text drawn after it (Trojan Source). The
/// conversation's own cleaning ([`crate::tui::conversation::wrap::sanitize`]) escapes these
/// too, while it leaves the gentler invisible characters (joiners in emoji and Persian) be.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// Whether `c` ends a line (besides `\r`, which callers pair with a following `\n`).
fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Whether `c` must be shown escaped.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\r' && c != '\t' && c != '\u{85}') || is_invisible(c)
}

fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write;
    // Writing to a String cannot fail.
    let _ = write!(out, "<U+{:04X}>", u32::from(c));
}

/// How `c` is shown escaped: `<U+202E>` (ASCII, one column a byte).
pub fn escaped(c: char) -> String {
    let mut out = String::with_capacity(10);
    push_escaped(&mut out, c);
    out
}

/// Whether `s` has anything that [`one_line`] or [`lines`] would change.
fn is_clean(s: &str) -> bool {
    !s.chars()
        .any(|c| c == '\r' || c == '\t' || is_line_break(c) || needs_escape(c))
}

/// `s` as a one-line field: line breaks become [`NEWLINE_MARK`] (`\r\n` one mark), tabs
/// [`TAB_MARK`], controls and invisible characters `<U+XXXX>`.
pub fn one_line(s: &str) -> Cow<'_, str> {
    if is_clean(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(NEWLINE_MARK);
            }
            c if is_line_break(c) => out.push(NEWLINE_MARK),
            '\t' => out.push(TAB_MARK),
            c if needs_escape(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` as a multi-line field: its lines (`\n`, `\r\n`, a lone `\r`, NEL, U+2028, U+2029 all
/// end one), tabs as spaces, controls and invisible characters `<U+XXXX>`. At least one line.
pub fn lines(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(std::mem::take(&mut line));
            }
            c if is_line_break(c) => out.push(std::mem::take(&mut line)),
            '\t' => line.push_str(TAB_SPACES),
            c if needs_escape(c) => push_escaped(&mut line, c),
            c => line.push(c),
        }
    }
    out.push(line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_text_is_borrowed_unchanged() {
        let s = "Bash cargo test — «ok» 日本語 ❤️";
        assert!(matches!(one_line(s), Cow::Borrowed(_)));
        assert_eq!(lines(s), vec![s.to_string()]);
    }

    #[test]
    fn line_breaks_become_one_mark_each_in_a_one_line_field() {
        assert_eq!(one_line("a\nb"), "a⏎b");
        assert_eq!(one_line("a\r\nb"), "a⏎b");
        assert_eq!(one_line("a\rb"), "a⏎b");
        assert_eq!(one_line("a\u{85}b\u{2028}c\u{2029}d"), "a⏎b⏎c⏎d");
        assert_eq!(one_line("a\tb"), "a→b");
    }

    #[test]
    fn a_lone_carriage_return_cannot_overwrite_a_multi_line_field() {
        // A terminal would draw "ls" over "rm -rf ~": here both stay, on lines of their own.
        assert_eq!(lines("rm -rf ~\rls     "), vec!["rm -rf ~", "ls     "]);
        assert_eq!(lines("a\r\nb\n\nc\u{2028}d"), vec!["a", "b", "", "c", "d"]);
        assert_eq!(lines("\tx"), vec!["    x"]);
        assert_eq!(lines(""), vec![String::new()]);
    }

    #[test]
    fn controls_and_escape_sequences_are_shown_escaped() {
        assert_eq!(one_line("a\u{1b}[31mred"), "a<U+001B>[31mred");
        assert_eq!(one_line("bell\u{7}\u{0}"), "bell<U+0007><U+0000>");
        assert_eq!(one_line("del\u{7f} csi\u{9b}"), "del<U+007F> csi<U+009B>");
        assert_eq!(lines("x\u{1b}]0;t\u{7}"), vec!["x<U+001B>]0;t<U+0007>"]);
        assert_eq!(one_line("vt\u{b}ff\u{c}"), "vt<U+000B>ff<U+000C>");
    }

    #[test]
    fn bidi_controls_are_shown_escaped() {
        for c in [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}',
        ] {
            let shown = one_line(&format!("a{c}b")).into_owned();
            assert_eq!(shown, format!("a<U+{:04X}>b", u32::from(c)));
            assert_eq!(lines(&format!("a{c}b")), vec![shown]);
        }
        assert_eq!(
            one_line("rm -rf ~ \u{202E}txt.exe"),
            "rm -rf ~ <U+202E>txt.exe"
        );
    }

    #[test]
    fn zero_widths_tags_and_hidden_variation_selectors_are_shown_escaped() {
        assert_eq!(
            one_line("a\u{200B}b\u{200D}c\u{2060}d"),
            "a<U+200B>b<U+200D>c<U+2060>d"
        );
        assert_eq!(one_line("\u{FEFF}x\u{AD}y"), "<U+FEFF>x<U+00AD>y");
        assert_eq!(one_line("t\u{E0041}\u{E007F}"), "t<U+E0041><U+E007F>");
        assert_eq!(one_line("v\u{FE00}\u{E0100}"), "v<U+FE00><U+E0100>");
        assert_eq!(one_line("h\u{3164}\u{115F}"), "h<U+3164><U+115F>");
    }

    #[test]
    fn emoji_presentation_selectors_are_kept() {
        assert_eq!(one_line("❤\u{FE0F} ☺\u{FE0E}"), "❤\u{FE0F} ☺\u{FE0E}");
    }

    #[test]
    fn nothing_unsafe_survives_either_shape() {
        let nasty: String = (0u32..0x3000)
            .chain(0xE0000..0xE0200)
            .chain(0xFE00..0xFF00)
            .filter_map(char::from_u32)
            .collect();
        let one = one_line(&nasty);
        assert!(!one.chars().any(|c| c.is_control() || is_invisible(c)));
        for line in lines(&nasty) {
            assert!(!line.chars().any(|c| c.is_control() || is_invisible(c)));
            assert!(!line.contains(['\u{2028}', '\u{2029}']));
        }
    }
}
