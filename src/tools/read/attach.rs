//! A file or directory a person attaches to a prompt (`@path`): read as Read reads it — text
//! with line numbers within the Read limits (and recorded as read, so the model may edit it
//! without reading again), images within the token budget, PDFs and notebooks — or, for a
//! directory, its listing.

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{ReadInput, ReadTool};
use crate::protocol::Display;
use crate::session::context::SessionContext;
use crate::tools::{ProgressSender, Tool, ToolContext, ToolResultBlock};

/// At most this many entries of an attached directory are listed.
const MAX_LISTED: usize = 200;

/// What attaching a path gave: the blocks for the model, and a few words for the person.
pub struct Attached {
    pub blocks: Vec<ToolResultBlock>,
    /// `2 lines`, `image 640x480`, `directory listing`.
    pub summary: String,
}

/// The blocks of `path` for the model, or why it cannot be attached.
pub async fn attach(path: &Path, session: &Arc<SessionContext>) -> Result<Attached, String> {
    if path.is_dir() {
        return list_dir(path).map(|text| Attached {
            blocks: vec![ToolResultBlock::Text { text }],
            summary: "directory listing".into(),
        });
    }
    let call_id = format!("attach-{}", path.display());
    let ctx = ToolContext {
        called_as: None,
        session: Arc::clone(session),
        call_id: call_id.clone(),
        cancel: CancellationToken::new(),
        progress: ProgressSender::new(call_id, session.events.clone()),
        preview: None,
        content_override: None,
        answers: None,
        deferred: Default::default(),
        conflict: None,
    };
    let input = ReadInput {
        file_path: path.display().to_string(),
        offset: None,
        limit: None,
        pages: None,
    };
    let out = ReadTool.call(input, &ctx).await.map_err(|e| e.message)?;
    let summary = match &out.display {
        Display::Text { text } => text.clone(),
        Display::Attachment {
            width: Some(w),
            height: Some(h),
            ..
        } => format!("image {w}x{h}"),
        _ => String::new(),
    };
    Ok(Attached {
        blocks: out.content.0,
        summary,
    })
}

/// Names in `dir`, directories marked with a trailing `/`, sorted, at most [`MAX_LISTED`].
fn list_dir(dir: &Path) -> Result<String, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list it: {e}"))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            match e.file_type() {
                Ok(t) if t.is_dir() => format!("{name}/"),
                _ => name,
            }
        })
        .collect();
    names.sort();
    let more = names.len().saturating_sub(MAX_LISTED);
    names.truncate(MAX_LISTED);
    let mut text = names.join("\n");
    if more > 0 {
        text.push_str(&format!("\n… and {more} more"));
    }
    if text.is_empty() {
        text.push_str("(empty directory)");
    }
    Ok(text)
}
