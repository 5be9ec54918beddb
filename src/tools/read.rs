//! The Read tool: a text file in `cat -n` form, a range at a time.
//!
//! Files under 10 MiB are read whole (and their content kept in the read-file state as the
//! merge base for later edits); larger ones are streamed, keeping only the requested lines, so
//! memory stays flat however large the file. Devices that never end, directories and binary
//! files are refused with a message saying what to do instead. A repeated Read of the same
//! range of an unchanged file answers briefly instead of repeating the content.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::file_common::{
    binary_error, check_path_no_io, directory_error, has_binary_extension, input_path, line_count,
    title_path,
};
use super::text_match::numbered_line;
use super::{Access, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::files::encoding::{self, Encoding, TextFormat};
use crate::files::state::{EntrySource, ReadRecord, content_hash};
use crate::protocol::Display;
use crate::session::context::SessionContext;

pub const DEFAULT_LIMIT: usize = 2000;
pub const MAX_LINE_CHARS: usize = 2000;
/// Files at least this large are streamed.
pub const FAST_PATH_MAX_BYTES: u64 = 10 * 1024 * 1024;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// The absolute path of the file to read.
    pub file_path: String,
    /// The line number to start reading from (1-based). Only give it for large files.
    #[serde(default)]
    pub offset: Option<usize>,
    /// How many lines to read (default 2000). Only give it for large files.
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Default)]
pub struct ReadTool;

/// The lines selected from a file, before formatting.
struct Selection {
    /// (1-based number, text) of each shown line, already cut to [`MAX_LINE_CHARS`].
    lines: Vec<(usize, String)>,
    /// Total lines when known (always for the fast path).
    total: Option<usize>,
    /// More lines follow the last shown one.
    more: bool,
}

#[async_trait]
impl Tool for ReadTool {
    type Input = ReadInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("Read", ToolKind::Read)
            .aliases(&["read_file"])
            .read_only()
            .concurrency_safe()
    }

    fn description(&self) -> String {
        "Reads a text file from the local filesystem. file_path must be absolute (relative paths are \
resolved against the working directory). By default up to 2000 lines from the start are returned; \
give offset (1-based line) and limit for long files. Output is in `cat -n` format: the line number, \
a tab, then the line. Lines longer than 2000 characters are cut. Directories and binary files are \
refused; use Glob to list files."
            .into()
    }

    fn prompt(&self) -> String {
        "- Read a file before editing it; Edit and Write refuse files you have not read.\n\
- The `   12\\t` prefix in Read output is not part of the file: never copy it into old_string.\n\
- For large files read the relevant range with offset/limit instead of the whole file."
            .into()
    }

    fn title(&self, input: &ReadInput, ctx: &SessionContext) -> String {
        let path = title_path(&input.file_path, ctx);
        match (input.offset, input.limit) {
            (None, None) => format!("Read {path}"),
            (offset, limit) => {
                let start = offset.unwrap_or(1).max(1);
                match limit {
                    Some(l) => format!("Read {path} (lines {start}-{})", start + l.max(1) - 1),
                    None => format!("Read {path} (from line {start})"),
                }
            }
        }
    }

    fn accesses(&self, input: &ReadInput, ctx: &SessionContext) -> Vec<Access> {
        input_path(&input.file_path, ctx)
            .map(|p| vec![Access::Read(p)])
            .unwrap_or_default()
    }

    async fn validate(&self, input: &ReadInput, ctx: &ToolContext) -> Result<(), ToolError> {
        let path = input_path(&input.file_path, &ctx.session)?;
        check_path_no_io(&path)?;
        if has_binary_extension(&path) {
            return Err(binary_error(&path));
        }
        Ok(())
    }

    fn max_result_chars(&self) -> Option<usize> {
        None
    }

    async fn call(&self, input: ReadInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = input_path(&input.file_path, &ctx.session)?;
        check_path_no_io(&path)?;
        if has_binary_extension(&path) {
            return Err(binary_error(&path));
        }
        let offset = input.offset.unwrap_or(1).max(1);
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT).max(1);

        let meta = match tokio::fs::metadata(&path).await {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not_found(&path, &ctx.session.cwd()));
            }
            Err(e) => {
                return Err(ToolError::new(format!(
                    "Cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        if meta.is_dir() {
            return Err(directory_error(&path));
        }
        let is_dev_null = path == Path::new("/dev/null");
        if !meta.is_file() && !is_dev_null {
            return Err(ToolError::new(format!(
                "{} is not a regular file (device, FIFO or socket); reading it could block. Refusing.",
                path.display()
            )));
        }
        let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let size = meta.len();
        let state = &ctx.session.read_files;

        if let Some(prev) = state.get(&path)
            && prev.source == EntrySource::Read
            && !prev.stale
            && prev.mtime == mtime
            && prev.size == size
            && prev.last_read == Some((offset, limit))
        {
            return Ok(ToolOutput::with_display(
                "File unchanged since last read. The content from the earlier Read result in this conversation is still current; refer to it instead of reading again.",
                Display::Text {
                    text: "Unchanged since last read".into(),
                },
            ));
        }

        let (selection, record, lossy) = if size < FAST_PATH_MAX_BYTES {
            let bytes = tokio::fs::read(&path)
                .await
                .map_err(|e| ToolError::new(format!("Cannot read {}: {e}", path.display())))?;
            if encoding::looks_binary(&bytes) {
                return Err(binary_error(&path));
            }
            let decoded = encoding::decode(&bytes);
            let selection = select_lines(&decoded.text, offset, limit);
            let content: Arc<str> = Arc::from(decoded.text);
            let record = ReadRecord {
                content: Some(content),
                mtime,
                size,
                hash: Some(content_hash(&bytes)),
                format: decoded.format,
                shown: shown_range(&selection),
                offset,
                limit,
            };
            (selection, record, decoded.lossy)
        } else {
            let p = path.clone();
            let streamed = tokio::task::spawn_blocking(move || stream_lines(&p, offset, limit))
                .await
                .map_err(|e| ToolError::new(format!("Read was interrupted: {e}")))??;
            let record = ReadRecord {
                content: None,
                mtime,
                size,
                hash: None,
                format: streamed.format,
                shown: shown_range(&streamed.selection),
                offset,
                limit,
            };
            (streamed.selection, record, streamed.lossy)
        };
        // A lossy read is recorded too: Edit reloads from disk and refuses invalid text itself.
        state.record_read(&path, record);

        let text = render(&selection, offset, size, lossy);
        let shown = selection.lines.len();
        Ok(ToolOutput::with_display(
            text,
            Display::Text {
                text: format!("Read {shown} line{}", if shown == 1 { "" } else { "s" }),
            },
        ))
    }
}

fn shown_range(sel: &Selection) -> Option<(usize, usize)> {
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

fn select_lines(text: &str, offset: usize, limit: usize) -> Selection {
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

struct Streamed {
    selection: Selection,
    format: TextFormat,
    lossy: bool,
}

/// Stream a large file, keeping only lines `offset..offset+limit` (each capped in size).
fn stream_lines(path: &Path, offset: usize, limit: usize) -> Result<Streamed, ToolError> {
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

fn render(sel: &Selection, offset: usize, size: u64, lossy: bool) -> String {
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

/// "File does not exist." with close names from the same directory, when there are any.
fn not_found(path: &Path, cwd: &Path) -> ToolError {
    let mut msg = format!(
        "File does not exist. Current working directory: {}",
        cwd.display()
    );
    if let Some(similar) = similar_name(path) {
        msg.push_str(&format!("\nDid you mean {}?", similar.display()));
    }
    ToolError::new(msg)
}

fn similar_name(path: &Path) -> Option<PathBuf> {
    let dir = path.parent()?;
    let name = path.file_name()?.to_str()?.to_lowercase();
    let stem = name.split('.').next().unwrap_or(&name).to_string();
    let entries = std::fs::read_dir(dir).ok()?;
    let mut best: Option<(f32, PathBuf)> = None;
    for entry in entries.take(2000).flatten() {
        let cand = entry.file_name().to_string_lossy().to_lowercase();
        let ratio = if cand.split('.').next() == Some(stem.as_str()) {
            0.9
        } else {
            similar::TextDiff::from_chars(name.as_str(), cand.as_str()).ratio()
        };
        if ratio >= 0.7 && best.as_ref().is_none_or(|(r, _)| ratio > *r) {
            best = Some((ratio, entry.path()));
        }
    }
    best.map(|(_, p)| p)
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
