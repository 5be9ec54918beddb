//! Files as the tools see them: path expansion and symlink chains, where a named file may
//! resolve (containment), the read-file state, atomic writes and their temp files, encodings
//! and line endings, and the client's files (an editor's buffers, when it serves them). (The watcher that marks read files stale lives in `session`, because it
//! reports to the session.)

pub mod atomic;
pub mod client;
pub mod containment;
pub mod encoding;
pub mod paths;
pub mod state;
pub mod temp_files;
