//! Files as the client sees them: the seam through which the text file tools read and write
//! when the client (an editor over the Agent Client Protocol) offers to serve files itself, so
//! that the model reads and edits the editor's buffers, unsaved changes included, rather than
//! the bytes on disk.
//!
//! [`ClientFiles`] is the whole contract: whole-file text in, whole-file text out. It knows
//! nothing of permissions, the read-file state or encodings; the tools keep their guards
//! (the permission check before any I/O, read-before-edit, the conflict check) and only the
//! source of the text changes. Which files go through the client is the tools' decision
//! (`tools::file_common::client_for`): text files under 10 MiB; images, PDFs, notebooks and
//! larger files stay on disk.

use std::path::Path;

use async_trait::async_trait;

/// Why the client could not serve a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientFileError {
    /// The client has no such file (neither a buffer nor a file on disk).
    #[error("the editor has no such file")]
    NotFound,
    /// Anything else the client answered, in its words.
    #[error("{0}")]
    Failed(String),
}

/// The client's file service. Implementations answer from the client (an ACP connection's
/// `fs/read_text_file` / `fs/write_text_file`) or, in tests, from a map of buffers.
#[async_trait]
pub trait ClientFiles: Send + Sync + std::fmt::Debug {
    /// The whole text of `path` (absolute) as the client holds it now: the buffer when the
    /// file is open, else the file.
    async fn read_text(&self, path: &Path) -> Result<String, ClientFileError>;

    /// Replace the whole text of `path` (absolute), creating the file when it does not
    /// exist. Whether the client saves it to disk at once is the client's business.
    async fn write_text(&self, path: &Path, text: &str) -> Result<(), ClientFileError>;
}
