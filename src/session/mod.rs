//! One session's state: what the agent loop, the tools and the permission gate share while it
//! runs (`context`: working directories, the read-file state, events, reminders), the watcher
//! that tells it about outside changes to files it read, its transcript on disk, and resuming
//! a session from that transcript, the checkpoints of its working directories, and the
//! transcript side of rewinding its conversation.
//!
//! Below `tools`, `permissions` and `agent`, above `files`, `llm` and `protocol`.

pub mod agent_tasks;
pub mod checkpoints;
pub mod context;
pub mod resume;
pub mod rewind;
pub mod search;
pub mod small_model;
pub mod store_lock;
pub mod store_report;
pub mod transcript;
pub mod watcher;
