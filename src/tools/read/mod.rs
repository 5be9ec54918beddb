//! The Read tool: a text file in `cat -n` form, a range at a time; images, PDFs and notebooks
//! through their own readers (`media.rs`).
//!
//! What a file is comes from its extension, then its magic number, then a NUL sniff: media go to
//! their readers, other binaries get a refusal naming the format. Text files under 10 MiB are
//! read whole (and their content kept in the read-file state as the merge base for later edits);
//! larger ones are streamed, keeping only the requested lines, so memory stays flat however large
//! the file. The limits of the design notes apply (`limits.rs`): a whole-file read over 256 KB
//! and output over 25,000 tokens are refused with a hint. Devices that never end and
//! directories are refused too. A repeated Read of the same range of an unchanged file answers
//! briefly instead of repeating the content. A macOS screenshot name that does not exist is
//! tried again with the other space before AM/PM (U+202F or a plain space). When the client
//! serves files (an editor's buffers), a text file's lines come from it (`client.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

mod attach;
mod client;
mod limits;
mod media;
mod text;

use super::file_common::{
    LARGE_FILE_BYTES, binary_error, check_path_no_io, client_for, directory_error,
    has_binary_extension, input_path, title_path,
};
use super::{Access, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::files::encoding;
use crate::files::state::{EntrySource, ReadRecord, content_hash};
use crate::protocol::Display;
use crate::session::context::SessionContext;
pub use attach::{Attached, attach};
pub use limits::ReadLimits;
pub use media::MediaKind;
use media::pdf_pages;
pub use text::MAX_LINE_CHARS;
use text::{render, select_lines, shown_range, stream_lines};

pub const DEFAULT_LIMIT: usize = 2000;
/// Files at least this large are streamed (and stay on disk when the client serves files).
pub const FAST_PATH_MAX_BYTES: u64 = LARGE_FILE_BYTES;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// Absolute path.
    pub file_path: String,
    /// First line (1-based), for long files.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Lines to read (default 2000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// PDF pages, `"3"` or `"1-5"` (at most 20).
    #[serde(default)]
    pub pages: Option<String>,
}

#[derive(Debug, Default)]
pub struct ReadTool;

/// The limits of this process's Read, fixed at first use (the environment can lower or raise
/// the token limit).
fn limits() -> ReadLimits {
    static LIMITS: std::sync::OnceLock<ReadLimits> = std::sync::OnceLock::new();
    *LIMITS.get_or_init(|| ReadLimits::from_env(|k| std::env::var(k).ok()))
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
        "Reads a file: up to 2000 lines as `cat -n` (line number, tab, line; lines over 2000 \
characters cut). Shows images, PDFs and notebooks; refuses other binary files and \
directories."
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
        if let Some(pages) = &input.pages {
            pdf_pages(pages)?;
        }
        if has_binary_extension(&path) && MediaKind::of_path(&path).is_none() {
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
        let media = MediaKind::of_path(&path);
        if has_binary_extension(&path) && media.is_none() {
            return Err(binary_error(&path));
        }
        let offset = input.offset.unwrap_or(1).max(1);
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT).max(1);
        if media.is_none()
            && let Some(client) = client_for(&path, &ctx.session)
        {
            if input.pages.is_some() {
                return Err(pages_error());
            }
            let whole = input.offset.is_none() && input.limit.is_none();
            let range = client::Range {
                offset,
                limit,
                whole,
            };
            if let Some(out) = client::read(client.as_ref(), &path, range, ctx).await? {
                return Ok(out);
            }
        }

        let (path, meta) = find(path, &ctx.session.cwd()).await?;
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
        if let Some(kind) = media {
            return media::read(kind, &path, size, input.pages.as_deref(), limits(), ctx).await;
        }
        if input.pages.is_some() {
            return Err(pages_error());
        }
        let state = &ctx.session.read_files;

        if let Some(prev) = state.get(&path)
            && prev.source == EntrySource::Read
            && !prev.stale
            && prev.mtime == mtime
            && prev.size == size
            && prev.last_read == Some((offset, limit))
        {
            return Ok(unchanged());
        }

        if input.offset.is_none() && input.limit.is_none() {
            limits().check_size(size)?;
        }
        let (selection, record, lossy) = if size < FAST_PATH_MAX_BYTES {
            let bytes = tokio::fs::read(&path)
                .await
                .map_err(|e| ToolError::new(format!("Cannot read {}: {e}", path.display())))?;
            if let Some(format) = crate::media::sniff(&bytes) {
                return match MediaKind::of_format(format) {
                    Some(kind) => {
                        let pages = input.pages.as_deref();
                        media::read(kind, &path, size, pages, limits(), ctx).await
                    }
                    None => Err(media::binary_format_error(&path, format)),
                };
            }
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
        answer(&path, &selection, record, size, lossy, ctx)
    }
}

/// The file's lines as the model reads them, once the token limit allows: the read recorded
/// in the read-file state, memory files of the directories on the way noted.
fn answer(
    path: &Path,
    selection: &text::Selection,
    record: ReadRecord,
    size: u64,
    lossy: bool,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let text = render(selection, record.offset, size, lossy);
    limits().check_tokens(&text)?;
    // A lossy read is recorded too: Edit reloads from disk and refuses invalid text itself.
    ctx.session.read_files.record_read(path, record);
    remind_nested_memory(path, &ctx.session);

    let shown = selection.lines.len();
    Ok(ToolOutput::with_display(
        text,
        Display::Text {
            text: format!("Read {shown} line{}", if shown == 1 { "" } else { "s" }),
        },
    ))
}

fn pages_error() -> ToolError {
    ToolError::new(
        "The pages parameter is for PDF files only; for text files use offset and limit.",
    )
}

/// The answer to a repeated Read of the same range of an unchanged file.
fn unchanged() -> ToolOutput {
    ToolOutput::with_display(
        "File unchanged since last read. The content from the earlier Read result in this conversation is still current; refer to it instead of reading again.",
        Display::Text {
            text: "Unchanged since last read".into(),
        },
    )
}

/// Memory files of the directories between the working directory and `path` that the model has
/// not seen yet go to it as a reminder with its next request.
fn remind_nested_memory(path: &Path, session: &SessionContext) {
    // Each directory is looked at once per session: later reads there do no I/O for this.
    let dirs = crate::memory::nested_dirs(path, &session.cwd());
    let fresh: Vec<PathBuf> = dirs
        .into_iter()
        .filter(|d| session.first_memory_dir(d))
        .collect();
    if fresh.is_empty() {
        return;
    }
    // Each file resolved and kept inside the project (or approved) before it is opened.
    let roots = session.memory_roots();
    for file in fresh.iter().flat_map(|d| crate::memory::files_in(d)) {
        let memory = crate::memory::load_file(&file, &roots);
        for problem in &memory.problems {
            tracing::warn!("memory file: {problem}");
        }
        let text: Vec<String> = memory
            .files
            .iter()
            .map(|f| format!("Contents of {}:\n{}", f.path.display(), f.text.trim_end()))
            .collect();
        if !text.is_empty() {
            session.remind(format!(
                "Instructions from the memory file of the directory you just read in (follow them \
                 for work there):\n{}",
                text.join("\n\n")
            ));
        }
    }
}

/// The file's metadata, trying the other space of a macOS screenshot name when the name as
/// given does not exist. Returns the path that exists.
async fn find(path: PathBuf, cwd: &Path) -> Result<(PathBuf, std::fs::Metadata), ToolError> {
    let cannot =
        |p: &Path, e: std::io::Error| ToolError::new(format!("Cannot read {}: {e}", p.display()));
    match tokio::fs::metadata(&path).await {
        Ok(m) => Ok((path, m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(other) = screenshot_alternative(&path)
                && let Ok(m) = tokio::fs::metadata(&other).await
            {
                return Ok((other, m));
            }
            Err(not_found(&path, cwd))
        }
        Err(e) => Err(cannot(&path, e)),
    }
}

/// macOS writes screenshot names with U+202F (narrow no-break space) before AM/PM in some
/// versions and a plain space in others: `Screenshot 2026-01-02 at 3.04.05 PM.png`. The same
/// path with the other space, when the name has that shape.
pub fn screenshot_alternative(path: &Path) -> Option<PathBuf> {
    const THIN: char = '\u{202F}';
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".png")?;
    let (head, ampm) = stem.split_at(stem.len().checked_sub(2)?);
    if ampm != "AM" && ampm != "PM" {
        return None;
    }
    let other = match head.chars().last()? {
        ' ' => THIN,
        THIN => ' ',
        _ => return None,
    };
    let head = &head[..head.len() - head.chars().last()?.len_utf8()];
    Some(path.with_file_name(format!("{head}{other}{ampm}.png")))
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
