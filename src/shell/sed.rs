//! `sed` as a read-only command: its options and a parser for the scripts it may run.
//!
//! sed writes files with `-i`, the `w`/`W` commands and the `w` flag of `s`, runs programs
//! with `e` and the `e` flag, and reads any file with `r`/`R`. A sed command is read-only
//! only when its options are known safe (no `-i`, no script file) and every script parses
//! here completely as commands from a closed list; anything this parser does not understand
//! is refused. Its delimiters follow GNU sed (a delimiter inside `[…]` still ends the regex),
//! so what it reads as a regex, a label or text is what sed reads too.

use super::options::{Grammar, parse};

/// GNU sed's options; `-i`, `-f` and `-s`'s siblings that write are absent or marked `!`.
const SED: Grammar = Grammar {
    flags: "nErsuz",
    valued: "el",
    long: "binary debug expression= !file= follow-symlinks help !in-place? line-length= \
           null-data zero-terminated posix quiet silent regexp-extended sandbox separate \
           unbuffered version",
    digits: false,
    abbrev: true,
};

/// Commands without arguments.
const SIMPLE: &str = "=dDgGhHnNpPxzF";

/// Whether `sed ARGS` only reads (paths are the gate's business). `globs` are the texts of
/// the words that are filename patterns: a script never comes from one.
pub fn is_read_only(args: &[String], globs: &[&str]) -> bool {
    let Ok(parsed) = parse(&SED, args) else {
        return false;
    };
    let mut scripts: Vec<&str> = parsed
        .options
        .iter()
        .filter(|(n, _)| n == "e" || n == "expression")
        .filter_map(|(_, v)| v.as_deref())
        .collect();
    if scripts.is_empty() {
        match parsed.operands.first() {
            Some(s) => scripts.push(s),
            None => return false,
        }
    }
    scripts.iter().all(|s| !globs.contains(s)) && script_is_safe(&scripts.join("\n"))
}

/// The words of `sed ARGS` that name files: the operands after the script.
pub fn file_operands(args: &[String]) -> Option<Vec<String>> {
    let parsed = parse(&SED, args).ok()?;
    let has_e = parsed.has("e") || parsed.has("expression");
    Some(
        parsed
            .operands
            .into_iter()
            .skip(usize::from(!has_e))
            .collect(),
    )
}

struct Script<'a> {
    s: &'a [char],
    i: usize,
}

/// Whether `script` parses completely as read-only sed commands.
pub fn script_is_safe(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut p = Script { s: &chars, i: 0 };
    p.script().is_some()
}

impl Script<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    fn script(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.i += 1;
            }
            let Some(c) = self.peek() else {
                return (depth == 0).then_some(());
            };
            if c == '#' {
                self.skip_to_line_end();
                continue;
            }
            if c == '}' {
                depth = depth.checked_sub(1)?;
                self.i += 1;
                self.end_of_command()?;
                continue;
            }
            if c == ':' {
                self.i += 1;
                self.label(true)?;
                continue;
            }
            self.addresses()?;
            self.blanks();
            let cmd = self.next()?;
            match cmd {
                '{' => depth += 1,
                c if SIMPLE.contains(c) => self.end_of_command()?,
                'l' | 'q' | 'Q' => {
                    self.blanks();
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.i += 1;
                    }
                    self.end_of_command()?;
                }
                'b' | 't' | 'T' => self.label(false)?,
                'a' | 'i' | 'c' => self.text()?,
                's' => self.substitute()?,
                'y' => {
                    let delim = self.delimiter()?;
                    self.delimited(delim)?;
                    self.delimited(delim)?;
                    self.end_of_command()?;
                }
                // `e`, `r`, `R`, `w`, `W`, `v` and anything unknown.
                _ => return None,
            }
        }
    }

    fn skip_to_line_end(&mut self) {
        while self.next().is_some_and(|c| c != '\n') {}
    }

    /// After a command: blanks, then `;`, a newline, `}`, `#` or the end.
    fn end_of_command(&mut self) -> Option<()> {
        self.blanks();
        match self.peek() {
            None | Some('}' | '#' | '\n') => Some(()),
            Some(';') => {
                self.i += 1;
                Some(())
            }
            _ => None,
        }
    }

    /// A label of letters, digits and `_` (`:` needs one; `b` may have none).
    fn label(&mut self, required: bool) -> Option<()> {
        self.blanks();
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.i += 1;
        }
        if required && self.i == start {
            return None;
        }
        self.end_of_command()
    }

    /// `a text`, `i text`, `c text` (GNU's one-line form, and `a\` then a line): the text runs
    /// to the end of the line and may not hold a backslash, so where it ends is never in doubt.
    fn text(&mut self) -> Option<()> {
        self.blanks();
        if self.peek() == Some('\\') {
            self.i += 1;
            if self.peek() == Some('\n') {
                self.i += 1;
            }
        }
        while let Some(c) = self.next() {
            match c {
                '\n' => return Some(()),
                '\\' => return None,
                _ => {}
            }
        }
        Some(())
    }

    fn addresses(&mut self) -> Option<()> {
        if self.address()? {
            self.blanks();
            if self.peek() == Some(',') {
                self.i += 1;
                self.blanks();
                if matches!(self.peek(), Some('+' | '~')) {
                    self.i += 1;
                    self.number()?;
                } else if !self.address()? {
                    return None;
                }
            }
        }
        self.blanks();
        if self.peek() == Some('!') {
            self.i += 1;
        }
        Some(())
    }

    /// One address, if there is one: `N`, `first~step`, `$`, `/re/` or `\cREc` with `I`/`M`.
    fn address(&mut self) -> Option<bool> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.number()?;
                if self.peek() == Some('~') {
                    self.i += 1;
                    self.number()?;
                }
            }
            Some('$') => self.i += 1,
            Some('/') => {
                self.i += 1;
                self.delimited('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.i += 1;
                let delim = self.delimiter()?;
                self.delimited(delim)?;
                self.regex_flags();
            }
            _ => return Some(false),
        }
        Some(true)
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.i += 1;
        }
    }

    fn number(&mut self) -> Option<()> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        (self.i > start).then_some(())
    }

    fn delimiter(&mut self) -> Option<char> {
        self.next().filter(|&c| c != '\n' && c != '\\')
    }

    /// Up to the next unescaped `delim` (consumed); a newline inside is refused.
    fn delimited(&mut self, delim: char) -> Option<()> {
        loop {
            match self.next()? {
                '\\' => {
                    self.next().filter(|&c| c != '\n')?;
                }
                '\n' => return None,
                c if c == delim => return Some(()),
                _ => {}
            }
        }
    }

    /// `s/re/replacement/flags`, flags from `gpiImM` and a number (never `e` or `w`).
    fn substitute(&mut self) -> Option<()> {
        let delim = self.delimiter()?;
        self.delimited(delim)?;
        self.delimited(delim)?;
        while self
            .peek()
            .is_some_and(|c| "gpiImM".contains(c) || c.is_ascii_digit())
        {
            self.i += 1;
        }
        self.end_of_command()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn scripts_that_only_print_parse() {
        for ok in [
            "1p",
            "1,5p",
            "$p",
            "/fn /p",
            "/a/,/b/{p;n}",
            "s/a/b/g",
            "s|/usr|/opt|2p",
            "2~3p;$!d",
            "0,/x/s/x/y/",
            ":a;N;$!ba;s/\\n/ /g",
            "/x/I,+2 d",
            "y/abc/xyz/",
            "1i header",
            "# a comment\np",
            "\\,x,p",
            "l 40;q 3",
        ] {
            assert!(script_is_safe(ok), "{ok}");
        }
        for bad in [
            "w /tmp/x",
            "1w x",
            "s/a/b/w x",
            "s/a/b/e",
            "e id",
            "1e id",
            "r /etc/passwd",
            "R /etc/passwd",
            "W x",
            "p;w x",
            "s/[/]/x/w y",
            "/[/]/p",
            "{p",
            "p}",
            "a x\\\nw y",
            "s/a/b",
            "v",
            "1,p",
            "b x;w y",
            "p w",
        ] {
            assert!(!script_is_safe(bad), "{bad}");
        }
    }

    #[test]
    fn options_and_script_sources() {
        assert!(is_read_only(&args(&["-n", "1p", "f"]), &[]));
        assert!(is_read_only(&args(&["-ne", "1p", "-e", "$p", "f"]), &[]));
        assert!(is_read_only(&args(&["--quiet", "--expr=1p", "f"]), &[]));
        for bad in [
            &["-n", "1p", "-i", "f"][..],
            &["-i", "s/a/b/", "f"],
            &["--in-place", "s/a/b/", "f"],
            &["--in", "s/a/b/", "f"],
            &["-ni", "1p", "f"],
            &["-f", "script.sed", "f"],
            &["-ne", "e id"],
            &["-n", "w /tmp/x", "f"],
            &["-n"],
        ] {
            assert!(!is_read_only(&args(bad), &[]), "{bad:?}");
        }
        // A script may not come from a filename pattern.
        assert!(!is_read_only(&args(&["-n", "s*", "f"]), &["s*"]));
        assert_eq!(
            file_operands(&args(&["-n", "/x/p", "a", "b"])),
            Some(args(&["a", "b"]))
        );
        assert_eq!(
            file_operands(&args(&["-e", "/x/p", "a"])),
            Some(args(&["a"]))
        );
    }
}
