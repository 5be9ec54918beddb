//! A change that conflicts with an outside change, as the writing tools report it and as the
//! person resolves it. When a file changed on disk since the session read it and the call's
//! change cannot be merged with that change, the refusal carries a [`Conflict`] (what is on disk
//! now, what the call would write, and what the write needs): a client that can ask shows the
//! person what overwriting would lose, and the call runs again with the answer
//! ([`Resolution`]). Overwriting is written by `edit_commit` (only while the disk still holds
//! exactly what was shown); re-reading ([`reread`]) writes nothing and gives the model the file
//! as it is now, recorded as read so its next edit is planned against it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::file_common::{line_count, load_for_edit};
use super::text_match::numbered_line;
use super::{ToolContext, ToolError, ToolOutput};
use crate::files::encoding::TextFormat;
use crate::files::state::ReadRecord;
use crate::protocol::Display;

/// The text a re-read gives the model in full: at most this many lines and bytes (Read's
/// default page, and well inside the edit tools' result limit). A longer file is recorded as
/// current, and the model is told to Read the lines it needs.
const REREAD_LINES: usize = 2000;
const REREAD_BYTES: usize = 50_000;

/// The facts of a conflicting change, computed without writing.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub path: PathBuf,
    /// Logical text on disk now.
    pub disk: String,
    /// Logical text the call would write: its change applied to what the session read (for
    /// Write, its content).
    pub ours: String,
    /// `content_hash` of the bytes `disk` was decoded from: an overwrite needs the disk to
    /// hold them still.
    pub disk_hash: u64,
    pub format: TextFormat,
    /// Lines the model knows once `ours` is written.
    pub ranges_after: Vec<(usize, usize)>,
}

/// What the person chose for a conflicting change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Write the call's version over the outside change.
    Overwrite,
    /// Write nothing; tell the model the file as it is now.
    Reread,
}

/// The person's answer to a [`Conflict`], handed back to the call.
#[derive(Debug, Clone)]
pub struct Resolution {
    pub conflict: Arc<Conflict>,
    pub choice: Choice,
}

/// The refusal when the file changed again after the conflict was shown.
pub fn changed_again(path: &Path) -> ToolError {
    ToolError::new(format!(
        "{} changed on disk again after the conflict was shown for approval, so it was not \
         overwritten: nothing was written. Read it again before editing it.",
        path.display()
    ))
}

/// The note said to the model after an overwrite.
pub fn overwritten_note(path: &Path) -> String {
    format!(
        "Note: {} had been changed outside cairn after you read it, and your edit conflicted \
         with that change. The user chose to overwrite it: your version was written and the \
         outside change is gone.",
        path.display()
    )
}

/// Re-read: nothing is written; the model gets the file as it is now (in full when it is
/// short), recorded in the read-file state as read, so its next edit is planned against it.
pub fn reread(ctx: &ToolContext, path: &Path) -> Result<ToolOutput, ToolError> {
    let head = format!(
        "{} was changed outside cairn after you read it, and your edit conflicts with that \
         change. The user chose to keep the file as it is now: nothing was written.",
        path.display()
    );
    let Some(loaded) = load_for_edit(path, true)? else {
        let text = format!("{head} The file no longer exists.");
        return Ok(error_output(text, &head));
    };
    let text = &loaded.decoded.text;
    let n = line_count(text);
    let whole = n <= REREAD_LINES && text.len() <= REREAD_BYTES;
    let (mtime, size) = loaded
        .stamp
        .unwrap_or((std::time::SystemTime::UNIX_EPOCH, text.len() as u64));
    ctx.session.read_files.record_read(
        path,
        ReadRecord {
            content: Some(Arc::from(text.as_str())),
            mtime,
            size,
            hash: Some(loaded.hash),
            format: loaded.decoded.format,
            shown: (whole && n > 0).then_some((1, n)),
            offset: 1,
            limit: REREAD_LINES,
        },
    );
    let body = if !whole {
        format!(
            "{head} It has {n} lines, too many to show here: Read the lines you need, then redo \
             your edit on the current content if it is still needed."
        )
    } else if n == 0 {
        format!("{head} It is now empty. Redo your edit on it if it is still needed.")
    } else {
        let lines: Vec<String> = text
            .lines()
            .enumerate()
            .map(|(i, l)| numbered_line(i + 1, l))
            .collect();
        format!(
            "{head} Here is its current content (you have now read it); redo your edit on it \
             if it is still needed:\n{}",
            lines.join("\n")
        )
    };
    Ok(error_output(body, &head))
}

/// An error result: `text` for the model, `shown` for people (not the file's content again).
fn error_output(text: String, shown: &str) -> ToolOutput {
    let display = Display::Text {
        text: shown.to_string(),
    };
    let mut out = ToolOutput::with_display(text, display);
    out.is_error = true;
    out
}
