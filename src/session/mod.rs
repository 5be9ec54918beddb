//! One session's state: what the agent loop, the tools and the permission gate share while it
//! runs (`context`: working directories, the read-file state, events, reminders), the watcher
//! that tells it about outside changes to files it read, and its transcript on disk.
//!
//! Below `tools`, `permissions` and `agent`, above `files`, `llm` and `protocol`.

pub mod context;
pub mod transcript;
pub mod watcher;
