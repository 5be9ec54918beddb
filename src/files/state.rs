//! The read-file state: per absolute path, what the model last saw (content, mtime, ranges).
//!
//! Placeholder; filled in by the file-tools work.

/// Shared by every file tool; see the module docs.
#[derive(Debug, Default)]
pub struct ReadFileState {}
