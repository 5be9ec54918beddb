//! Files as the tools see them: path expansion and symlink chains, the read-file state, the
//! external-edit watcher, atomic writes, encodings and line endings.

pub mod paths;
pub mod state;
