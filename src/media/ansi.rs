//! Terminal escape sequences in text that came from elsewhere (command output, notebook
//! outputs): skipping one, so callers can drop them before showing or sending the text.

/// Skip the rest of an escape sequence whose ESC was just consumed: CSI (parameters up to a final
/// byte in `@`..=`~`), OSC (up to BEL or ESC `\`), or a two-character one.
pub fn skip_escape(chars: &mut impl Iterator<Item = char>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next();
                    break;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                skip_escape(&mut chars);
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn csi_osc_and_short_sequences_are_skipped() {
        assert_eq!(strip("a\u{1b}[1;31mred\u{1b}[0m b"), "ared b");
        assert_eq!(strip("\u{1b}]0;title\u{7}x\u{1b}]8;;u\u{1b}\\y"), "xy");
        assert_eq!(strip("\u{1b}=z"), "z");
    }
}
