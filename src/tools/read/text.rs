//! The text path of Read: lines selected from a whole file in memory or streamed from a large
//! one (each line cut to [`MAX_LINE_CHARS`]), and the `cat -n` form the model reads, with the
//! footer that says what part of the file it is.

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::files::encoding::{self, Encoding, TextFormat};
use crate::tools::ToolError;
use crate::tools::file_common::{binary_error, line_count};
use crate::tools::text_match::numbered_line;

pub const MAX_LINE_CHARS: usize = 2000;

/// The lines selected from a file, before formatting.
pub(super) struct Selection {
    /// (1-based number, text) of each shown line, already cut to [`MAX_LINE_CHARS`].
    pub lines: Vec<(usize, String)>,
    /// Total lines when known (always for the fast path).
    pub total: Option<usize>,
    /// More lines follow the last shown one.
    pub more: bool,
}

pub(super) fn shown_range(sel: &Selection) -> Option<(usize, usize)> {
    match (sel.lines.first(), sel.lines.last()) {
        (Some(f), Some(l)) => Some((f.0, l.0)),
        _ => None,
    }
}

fn cut_line(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.to_string(),
        Some((byte, _)) => format!(
            "{}… [line cut: {} characters in all]",
            &line[..byte],
            line.chars().count()
        ),
    }
}

pub(super) fn select_lines(text: &str, offset: usize, limit: usize) -> Selection {
    let total = line_count(text);
    let lines = text
        .split('\n')
        .take(total)
        .enumerate()
        .skip(offset - 1)
        .take(limit)
        .map(|(i, l)| (i + 1, cut_line(l)))
        .collect::<Vec<_>>();
    let last = lines.last().map_or(0, |l| l.0);
    Selection {
        more: last < total && !lines.is_empty(),
        total: Some(total),
        lines,
    }
}

pub(super) struct Streamed {
    pub selection: Selection,
    pub format: TextFormat,
    pub lossy: bool,
}

/// Stream a large file, keeping only lines `offset..offset+limit` (each capped in size).
pub(super) fn stream_lines(
    path: &Path,
    offset: usize,
    limit: usize,
) -> Result<Streamed, ToolError> {
    let io_err = |e: std::io::Error| ToolError::new(format!("Cannot read {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(io_err)?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let first = reader.fill_buf().map_err(io_err)?;
    if encoding::looks_binary(first) {
        return Err(binary_error(path));
    }
    let enc = encoding::detect_encoding(first);
    match enc {
        Encoding::Utf16Le | Encoding::Utf16Be => {
            return Err(ToolError::new(format!(
                "{} is UTF-16 and larger than 10 MiB; this tool reads UTF-16 files only up to 10 MiB. Use Bash (e.g. `iconv -f UTF-16 -t UTF-8 | sed -n`) instead.",
                path.display()
            )));
        }
        Encoding::Utf8Bom => reader.consume(3),
        Encoding::Utf8 => {}
    }
    // Enough bytes to hold MAX_LINE_CHARS of any UTF-8 text, plus one to know it was cut.
    let keep_bytes = MAX_LINE_CHARS * 4 + 4;
    let end = offset.saturating_add(limit); // exclusive, 1-based
    let mut line_no = 1usize;
    let mut current: Vec<u8> = Vec::new();
    let mut current_len = 0usize;
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut lossy = false;
    let mut crlf = false;
    let mut at_eof = false;
    let mut push_line = |no: usize, bytes: &[u8], len: usize, lines: &mut Vec<(usize, String)>| {
        let text = String::from_utf8_lossy(bytes);
        if matches!(text, std::borrow::Cow::Owned(_)) && len <= keep_bytes {
            lossy = true;
        }
        let shown = if len > bytes.len() {
            let kept: String = text.chars().take(MAX_LINE_CHARS).collect();
            format!("{kept}… [line cut: {len} bytes in all]")
        } else {
            cut_line(&text)
        };
        lines.push((no, shown));
    };
    while line_no < end {
        let buf = reader.fill_buf().map_err(io_err)?;
        if buf.is_empty() {
            at_eof = true;
            if current_len > 0 && line_no >= offset {
                push_line(line_no, &current, current_len, &mut lines);
            }
            break;
        }
        let in_range = line_no >= offset;
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                if in_range {
                    let take = i.min(keep_bytes.saturating_sub(current.len()));
                    current.extend_from_slice(&buf[..take]);
                    current_len += i;
                    if current.last() == Some(&b'\r') {
                        crlf = true;
                        current.pop();
                    }
                    push_line(line_no, &current, current_len, &mut lines);
                }
                current.clear();
                current_len = 0;
                line_no += 1;
                reader.consume(i + 1);
            }
            None => {
                let n = buf.len();
                if in_range {
                    let take = n.min(keep_bytes.saturating_sub(current.len()));
                    current.extend_from_slice(&buf[..take]);
                }
                current_len += n;
                reader.consume(n);
            }
        }
    }
    let more = !at_eof && !reader.fill_buf().map_err(io_err)?.is_empty();
    let total = if at_eof {
        Some(line_no - usize::from(current_len == 0))
    } else {
        None
    };
    Ok(Streamed {
        selection: Selection { lines, total, more },
        format: TextFormat {
            encoding: enc,
            line_ending: if crlf {
                encoding::LineEnding::CrLf
            } else {
                encoding::LineEnding::Lf
            },
        },
        lossy,
    })
}

pub(super) fn render(sel: &Selection, offset: usize, size: u64, lossy: bool) -> String {
    if sel.lines.is_empty() {
        return match sel.total {
            Some(0) | None if offset == 1 => {
                "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>".into()
            }
            Some(total) => format!(
                "<system-reminder>Warning: the file exists but is shorter than the provided offset ({offset}). The file has {total} lines.</system-reminder>"
            ),
            None => format!(
                "<system-reminder>Warning: the file exists but is shorter than the provided offset ({offset}).</system-reminder>"
            ),
        };
    }
    let mut out = String::with_capacity(sel.lines.iter().map(|l| l.1.len() + 8).sum());
    for (i, (no, line)) in sel.lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&numbered_line(*no, line));
    }
    let first = sel.lines.first().map_or(1, |l| l.0);
    let last = sel.lines.last().map_or(1, |l| l.0);
    let partial = first > 1 || sel.more;
    if partial {
        match sel.total {
            Some(total) if sel.more => out.push_str(&format!(
                "\n\n(Showing lines {first}-{last} of {total}. Use offset={} to read more.)",
                last + 1
            )),
            Some(total) => out.push_str(&format!("\n\n(Showing lines {first}-{last} of {total}.)")),
            None => out.push_str(&format!(
                "\n\n(Showing lines {first}-{last} of a {size}-byte file; the total line count is not computed for files over 10 MiB. Use offset={} to read more.)",
                last + 1
            )),
        }
    }
    if lossy {
        out.push_str(
            "\n\n(Note: the file is not valid UTF-8; invalid bytes are shown as \u{FFFD}. Edit will refuse it; use Bash to change it.)",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_and_footer() {
        let text: String = (1..=5).map(|i| format!("l{i}\n")).collect();
        let sel = select_lines(&text, 2, 2);
        assert_eq!(
            render(&sel, 2, 0, false),
            "     2\tl2\n     3\tl3\n\n(Showing lines 2-3 of 5. Use offset=4 to read more.)"
        );
        let sel = select_lines(&text, 1, 10);
        assert_eq!(render(&sel, 1, 0, false).lines().count(), 5);
        let sel = select_lines(&text, 9, 10);
        assert!(
            render(&sel, 9, 0, false)
                .contains("shorter than the provided offset (9). The file has 5 lines.")
        );
        let sel = select_lines("", 1, 10);
        assert!(render(&sel, 1, 0, false).contains("contents are empty"));
    }

    #[test]
    fn long_lines_are_cut() {
        let long = "é".repeat(2500);
        let cut = cut_line(&long);
        assert!(cut.starts_with(&"é".repeat(2000)));
        assert!(cut.ends_with("… [line cut: 2500 characters in all]"));
        assert_eq!(cut_line("short\r"), "short");
    }
}
