//! The text path of Read for a file the client serves (an editor's buffer, unsaved changes
//! included; see `files::client`): the whole text from the client, the lines selected from
//! it, and the read recorded with the hash of that text, which is what later tells an edit
//! (and a repeated Read) whether the buffer changed since. The disk is asked only for what the
//! client cannot say: whether the file exists there (a client that cannot give a file that is
//! not on disk either gets "File does not exist"), and its mtime, so the watcher takes a save
//! of this very text for no change.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use super::text::{select_lines, shown_range};
use super::{answer, limits, not_found, unchanged};
use crate::files::client::ClientFiles;
use crate::files::state::{EntrySource, ReadRecord};
use crate::tools::file_common::{client_error, client_text, disk_stamp};
use crate::tools::{ToolContext, ToolError, ToolOutput};

/// The lines asked for: 1-based `offset`, `limit` lines; `whole` when the model gave neither
/// (the size limit applies then).
pub(super) struct Range {
    pub offset: usize,
    pub limit: usize,
    pub whole: bool,
}

/// Read `path`'s lines in `range` from the client.
pub(super) async fn read(
    client: &dyn ClientFiles,
    path: PathBuf,
    range: Range,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let disk = disk_stamp(&path);
    let text = match client.read_text(&path).await {
        Ok(text) => text,
        Err(_) if disk.is_none() => return Err(not_found(&path, &ctx.session.cwd())),
        Err(e) => return Err(client_error("read", &path, &e)),
    };
    let loaded = client_text(&path, text)?;
    let state = &ctx.session.read_files;
    if let Some(prev) = state.get(&path)
        && prev.source == EntrySource::Read
        && !prev.stale
        && prev.hash == Some(loaded.hash)
        && prev.last_read == Some((range.offset, range.limit))
    {
        return Ok(unchanged());
    }
    let size = loaded.decoded.text.len() as u64;
    let lossy = loaded.decoded.lossy;
    if range.whole {
        limits().check_size(size)?;
    }
    let selection = select_lines(&loaded.decoded.text, range.offset, range.limit);
    let record = ReadRecord {
        shown: shown_range(&selection),
        format: loaded.decoded.format,
        content: Some(Arc::from(loaded.decoded.text)),
        // The disk's mtime with the text's size: a save of this text looks to the watcher like
        // a touch (same size, same hash), not an outside change.
        mtime: disk.map_or(SystemTime::UNIX_EPOCH, |(mtime, _)| mtime),
        size,
        hash: Some(loaded.hash),
        offset: range.offset,
        limit: range.limit,
    };
    answer(&path, &selection, record, size, lossy, ctx)
}
