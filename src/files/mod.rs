//! Files as the tools see them: path expansion and symlink chains, the read-file state, the
//! external-edit watcher, atomic writes and their temp files, encodings and line endings.

pub mod atomic;
pub mod encoding;
pub mod paths;
pub mod state;
pub mod temp_files;
pub mod watcher;
