//! The sink that collects one file's results for Grep: the number of matching lines, the
//! number of output entries (match lines, context lines, breaks) and, when asked, their texts.
//!
//! Invariant: `entries` counts exactly the lines that a keeping sink would store, so a file
//! searched without its texts can be placed on a page and re-searched to fill it.

use std::path::PathBuf;

use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};

use super::OutputMode;

/// Longer lines are cut in content mode (minified files would flood the context).
const MAX_LINE_CHARS: usize = 500;

/// What one file produced.
#[derive(Debug)]
pub(super) struct FileResult {
    pub path: PathBuf,
    /// Matching lines.
    pub count: u64,
    /// Content mode: how many output lines the file gives (matches, context, breaks).
    pub entries: usize,
    /// Content mode: those lines, in file order, when they were kept.
    pub lines: Option<Vec<Line>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Line {
    Match {
        number: Option<u64>,
        text: String,
    },
    Context {
        number: Option<u64>,
        text: String,
    },
    /// A gap between non-adjacent groups of context.
    Break,
}

/// Collects one file's matches. In files mode it stops at the first match.
pub(super) struct Collect {
    mode: OutputMode,
    pub count: u64,
    pub entries: usize,
    pub lines: Option<Vec<Line>>,
    pub binary: bool,
}

impl Collect {
    pub fn new(mode: OutputMode, keep_lines: bool) -> Collect {
        Collect {
            mode,
            count: 0,
            entries: 0,
            lines: (keep_lines && mode == OutputMode::Content).then(Vec::new),
            binary: false,
        }
    }

    fn push(&mut self, line: impl FnOnce() -> Line) {
        self.entries += 1;
        if let Some(lines) = &mut self.lines {
            lines.push(line());
        }
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let first = mat.line_number();
        let mut n = 0u64;
        for (i, line) in mat.lines().enumerate() {
            n += 1;
            if self.mode == OutputMode::Content {
                self.push(|| Line::Match {
                    number: first.map(|f| f + i as u64),
                    text: line_text(line),
                });
            }
        }
        self.count += n.max(1);
        Ok(self.mode != OutputMode::FilesWithMatches)
    }

    fn context(&mut self, _s: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.mode == OutputMode::Content && *ctx.kind() != SinkContextKind::Other {
            self.push(|| Line::Context {
                number: ctx.line_number(),
                text: line_text(ctx.bytes()),
            });
        }
        Ok(true)
    }

    fn context_break(&mut self, _s: &Searcher) -> Result<bool, Self::Error> {
        if self.mode == OutputMode::Content {
            self.push(|| Line::Break);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _s: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A line without its terminator, lossily decoded, cut past [`MAX_LINE_CHARS`].
pub(super) fn line_text(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim_end_matches(['\n', '\r']);
    match s.char_indices().nth(MAX_LINE_CHARS) {
        Some((i, _)) => format!("{} [... line truncated]", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut() {
        let t = line_text(format!("{}\r\n", "x".repeat(600)).as_bytes());
        assert_eq!(t, format!("{} [... line truncated]", "x".repeat(500)));
        assert_eq!(line_text(b"abc\n"), "abc");
    }
}
