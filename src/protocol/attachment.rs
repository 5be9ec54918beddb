//! What a prompt may carry beside its text: an image an editor pasted, a file's contents it
//! embedded. Sent with [`Op::SubmitWith`](super::Op::SubmitWith); the core puts each into the
//! user turn after the prompt's text (an image block, a text block naming its source).

use serde::{Deserialize, Serialize};

/// One part of a prompt beside its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PromptAttachment {
    /// An image, base64 `data` of `media_type` (`image/png`).
    Image { media_type: String, data: String },
    /// A text the client gave whole (a file's contents, a selection): `source` names where it
    /// came from (`file:///work/src/main.rs`), as the model is told.
    Text { source: String, text: String },
}
