//! An editor's files in memory, for tests of the client-files seam (`cairn::files::client`):
//! buffers by path that the tools read and write through `ClientFiles`, the file on disk when
//! no buffer is open (as an editor answers), writes kept in the buffer (unsaved, the disk left
//! alone), and the log of every request the tools made.
//! Include with `#[path = "support/client_files.rs"] mod client_files;`.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use cairn::files::client::{ClientFileError, ClientFiles};

/// One request the client got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Read(PathBuf),
    Write(PathBuf, String),
}

/// Open buffers (path → text) and the requests made of them.
#[derive(Debug, Default)]
pub struct Buffers {
    open: Mutex<HashMap<PathBuf, String>>,
    log: Mutex<Vec<Request>>,
}

impl Buffers {
    /// Open `path` with `text` in it (or change its text: the person typing).
    pub fn set(&self, path: &Path, text: &str) {
        self.open
            .lock()
            .unwrap()
            .insert(path.to_path_buf(), text.into());
    }

    /// The buffer of `path`, when open.
    pub fn get(&self, path: &Path) -> Option<String> {
        self.open.lock().unwrap().get(path).cloned()
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    /// How many writes were asked for.
    pub fn writes(&self) -> usize {
        self.requests()
            .iter()
            .filter(|r| matches!(r, Request::Write(..)))
            .count()
    }
}

#[async_trait]
impl ClientFiles for Buffers {
    async fn read_text(&self, path: &Path) -> Result<String, ClientFileError> {
        self.log
            .lock()
            .unwrap()
            .push(Request::Read(path.to_path_buf()));
        if let Some(text) = self.get(path) {
            return Ok(text);
        }
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ClientFileError::NotFound),
            Err(e) => Err(ClientFileError::Failed(e.to_string())),
        }
    }

    async fn write_text(&self, path: &Path, text: &str) -> Result<(), ClientFileError> {
        self.log
            .lock()
            .unwrap()
            .push(Request::Write(path.to_path_buf(), text.into()));
        self.set(path, text);
        Ok(())
    }
}
