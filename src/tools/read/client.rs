//! The text path of Read for a file the client serves (an editor's buffer, unsaved changes
//! included; see `files::client`): the whole text from the client, the lines selected from
//! it, and the read recorded with the hash of that text, which is what later tells an edit
//! (and a repeated Read) whether the buffer changed since. A file the client cannot give (not
//! there, not text to the editor, no answer) is read as without an editor, from disk, where
//! the usual answers apply ("File does not exist", a binary format, an image by its magic
//! number). The disk's mtime goes with the record, so the watcher takes a save of this very
//! text for no change.

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use super::text::{select_lines, shown_range};
use super::{answer, limits, unchanged};
use crate::files::client::ClientFiles;
use crate::files::state::{EntrySource, ReadRecord};
use crate::tools::file_common::{client_text, disk_stamp};
use crate::tools::{ToolContext, ToolError, ToolOutput};

/// The lines asked for: 1-based `offset`, `limit` lines; `whole` when the model gave neither
/// (the size limit applies then).
pub(super) struct Range {
    pub offset: usize,
    pub limit: usize,
    pub whole: bool,
}

/// Read `path`'s lines in `range` from the client; `Ok(None)` when the client cannot give
/// the file and Read goes on from disk.
pub(super) async fn read(
    client: &dyn ClientFiles,
    path: &Path,
    range: Range,
    ctx: &ToolContext,
) -> Result<Option<ToolOutput>, ToolError> {
    let text = match client.read_text(path).await {
        Ok(text) => text,
        Err(e) => {
            tracing::debug!(
                "the editor did not give {}: {e}; reading the disk",
                path.display()
            );
            return Ok(None);
        }
    };
    let disk = disk_stamp(path);
    let loaded = client_text(path, text)?;
    let state = &ctx.session.read_files;
    if let Some(prev) = state.get(path)
        && prev.source == EntrySource::Read
        && !prev.stale
        && prev.hash == Some(loaded.hash)
        && prev.last_read == Some((range.offset, range.limit))
    {
        return Ok(Some(unchanged()));
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
    answer(path, &selection, record, size, lossy, ctx).map(Some)
}
