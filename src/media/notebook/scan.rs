//! Locating the cells in the file text: a minimal JSON scanner that finds the
//! byte spans of the `cells` array and of each cell in text serde_json has
//! already accepted, plus the line and indentation helpers edits need to
//! splice new text in place.

/// A byte range of the file text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) end: usize,
}

/// Where the `cells` array and each cell are in the file text.
pub(super) struct Layout {
    pub(super) array: Span,
    pub(super) cells: Vec<Span>,
}

impl Layout {
    /// Scan text that serde_json has already accepted.
    pub(super) fn scan(text: &str) -> Result<Layout, String> {
        let mut scanner = Scanner {
            bytes: text.as_bytes(),
            pos: 0,
        };
        scanner.expect(b'{')?;
        let mut array = None;
        loop {
            scanner.skip_ws();
            if scanner.peek() == Some(b'}') {
                break;
            }
            let key = scanner.string()?;
            scanner.expect(b':')?;
            let value = scanner.value()?;
            if &text[key.start..key.end] == "\"cells\"" {
                array = Some(value);
            }
            if scanner.list_end(b'}')? {
                break;
            }
        }
        let array = array.ok_or_else(layout_error)?;
        let cells = element_spans(text, array)?;
        Ok(Layout { array, cells })
    }
}

fn layout_error() -> String {
    "could not locate the notebook's cells in the file text".to_string()
}

fn element_spans(text: &str, array: Span) -> Result<Vec<Span>, String> {
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        pos: array.start,
    };
    scanner.expect(b'[')?;
    let mut spans = Vec::new();
    scanner.skip_ws();
    if scanner.peek() == Some(b']') {
        return Ok(spans);
    }
    loop {
        spans.push(scanner.value()?);
        if scanner.list_end(b']')? {
            return Ok(spans);
        }
    }
}

/// A minimal JSON tokenizer that only finds value boundaries.
struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        self.skip_ws();
        if self.peek() != Some(byte) {
            return Err(layout_error());
        }
        self.pos += 1;
        Ok(())
    }

    /// After a list item: `true` at the closing byte, `false` after a comma.
    fn list_end(&mut self, close: u8) -> Result<bool, String> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(false)
            }
            Some(b) if b == close => Ok(true),
            _ => Err(layout_error()),
        }
    }

    /// A string, quotes included.
    fn string(&mut self) -> Result<Span, String> {
        self.skip_ws();
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return Err(layout_error());
        }
        self.pos += 1;
        loop {
            match self.peek() {
                Some(b'\\') => self.pos += 2,
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Span {
                        start,
                        end: self.pos,
                    });
                }
                Some(_) => self.pos += 1,
                None => return Err(layout_error()),
            }
        }
    }

    fn value(&mut self) -> Result<Span, String> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            Some(b'"') => return self.string(),
            Some(b'{' | b'[') => self.nested()?,
            Some(_) => self.scalar(),
            None => return Err(layout_error()),
        }
        if self.pos == start {
            return Err(layout_error());
        }
        Ok(Span {
            start,
            end: self.pos,
        })
    }

    fn nested(&mut self) -> Result<(), String> {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.string()?;
                }
                Some(b'{' | b'[') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b'}' | b']') => {
                    depth = depth.checked_sub(1).ok_or_else(layout_error)?;
                    self.pos += 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Some(_) => self.pos += 1,
                None => return Err(layout_error()),
            }
        }
    }

    fn scalar(&mut self) {
        while let Some(b) = self.peek() {
            if matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.pos += 1;
        }
    }
}

/// The start of the line holding `pos`.
fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The leading spaces / tabs of the line holding `pos`.
pub(super) fn leading_indent(text: &str, pos: usize) -> &str {
    let line = &text[line_start(text, pos)..];
    let width = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..width]
}

/// The whitespace before `pos` on its line, if nothing else precedes it there.
pub(super) fn own_line_indent(text: &str, pos: usize) -> Option<&str> {
    let prefix = &text[line_start(text, pos)..pos];
    prefix
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then_some(prefix)
}
