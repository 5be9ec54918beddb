//! Sessions on disk: the transcript of each session, appended as it happens.

pub mod transcript;
