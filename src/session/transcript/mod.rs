//! The session transcript: one JSON line per message, appended as each message is added, so a
//! crash loses nothing. Besides messages it holds [`Record`]s — a header with the format
//! version, the mode and todo list as they change, each request's usage, and the blocks of an
//! answer still streaming — which is everything a resumed session needs: the transcript is the
//! only source `--resume` reads. The file is created on the first line. A transcript that cannot
//! be written is reported once in the log and otherwise ignored: it must never stop the session.
//!
//! Reading one back ([`read_transcript`], [`parse_transcript`], in `read.rs`) is tolerant: the
//! file may come from a crashed session (its last line cut off) or have been edited by hand, so
//! each line is an entry, a record or a [`LineProblem`] saying what is wrong with it, and one bad
//! line never hides the others. Only failing to read the file at all is an error.

mod read;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::llm::{ContentBlock, Message, Role};
use crate::protocol::{CallOutcome, Display, PermissionMode, Todo, Usage};

pub use read::{
    Entry, LineProblem, TranscriptContents, TranscriptError, parse_transcript, read_transcript,
};

/// The transcript format this build writes and reads. A transcript whose header names a newer
/// one is refused, never misread.
pub const FORMAT_VERSION: u32 = 1;

/// A line that is not a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line: the format, and where the session ran.
    Session {
        version: u32,
        cwd: PathBuf,
        #[serde(default, rename = "gitBranch", skip_serializing_if = "Option::is_none")]
        git_branch: Option<String>,
    },
    /// The permission mode, todo list and loaded deferred tools from here on.
    State {
        mode: PermissionMode,
        todos: Vec<Todo>,
        /// Deferred tools ToolSearch loaded, in load order (absent in older transcripts).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        loaded_tools: Vec<String>,
    },
    /// One request's usage, and the model that served it.
    Usage { model: String, usage: Usage },
    /// The blocks an answer has so far, while it streams (superseded by the answer's message).
    Partial { blocks: Vec<ContentBlock> },
    /// The conversation was compacted here: what follows starts from its summary.
    CompactBoundary { trigger: String, pre_tokens: u64 },
    /// The next user line is a prompt the person sent (`text`, as typed), identified by `id`
    /// (the checkpoint taken before it is labelled with it): a point `/rewind` can go back to.
    Prompt { id: String, text: String },
    /// The conversation was rewound here: what follows (a copy of the lines of the
    /// conversation kept) replaces everything before. `to`: the prompt rewound to (none for
    /// the undo of a rewind).
    Rewind {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
    },
    /// What a finished tool call showed the person (its diff, output, the permission step's
    /// outcome): a resume redraws the call's cell from it. Absent in older transcripts, whose
    /// cells are redrawn from the tool results.
    ToolShown {
        #[serde(rename = "toolUseId")]
        tool_use_id: String,
        display: Display,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<CallOutcome>,
    },
    /// Problems a language server found in `path` after tool call `toolUseId` wrote it, as the
    /// person was shown them (`new`: only those the edit brought).
    ToolDiagnostics {
        #[serde(rename = "toolUseId")]
        tool_use_id: String,
        path: PathBuf,
        problems: Vec<String>,
        new: bool,
    },
}

pub struct Transcript {
    path: Option<PathBuf>,
    session_id: String,
    file: Option<File>,
    failed: bool,
    /// Written before the first line.
    header: Option<Record>,
}

impl Transcript {
    /// A transcript at `path` (created on first append).
    pub fn at(path: PathBuf, session_id: &str) -> Transcript {
        Transcript {
            path: Some(path),
            session_id: session_id.to_string(),
            file: None,
            failed: false,
            header: None,
        }
    }

    /// A transcript that writes nothing.
    pub fn disabled() -> Transcript {
        Transcript {
            path: None,
            session_id: String::new(),
            file: None,
            failed: false,
            header: None,
        }
    }

    /// Start a new file with a [`Record::Session`] header for a session in `cwd`. (A resumed
    /// session appends to its file as it is.)
    pub fn with_header(mut self, cwd: &Path, git_branch: Option<String>) -> Transcript {
        self.header = Some(Record::Session {
            version: FORMAT_VERSION,
            cwd: cwd.to_path_buf(),
            git_branch,
        });
        self
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn append(&mut self, message: &Message) {
        let line = json!({
            "type": match message.role { Role::User => "user", Role::Assistant => "assistant" },
            "sessionId": self.session_id,
            "timestamp": chrono::Utc::now().to_rfc3339(),
            "message": message,
        });
        self.write(&line);
    }

    pub fn record(&mut self, record: &Record) {
        let mut line = serde_json::to_value(record).unwrap_or_default();
        if let Some(obj) = line.as_object_mut() {
            obj.insert("sessionId".into(), self.session_id.clone().into());
            obj.insert("timestamp".into(), chrono::Utc::now().to_rfc3339().into());
        }
        self.write(&line);
    }

    /// Append whole lines as they are (the copy of a conversation a rewind keeps); `lines`
    /// ends with a newline. One write, so a crash cuts at most the last line.
    pub fn append_lines(&mut self, lines: &[u8]) {
        if !lines.is_empty() {
            self.write_bytes(lines);
        }
    }

    fn write(&mut self, line: &serde_json::Value) {
        // One write per line, so a crash cuts at most the last line.
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        self.write_bytes(&bytes);
    }

    fn write_bytes(&mut self, bytes: &[u8]) {
        if self.failed || self.path.is_none() {
            return;
        }
        if self.file.is_none() && !self.open() {
            return;
        }
        if let Some(f) = &mut self.file
            && let Err(e) = f.write_all(bytes)
        {
            let shown = self.path.as_deref().unwrap_or(Path::new("")).display();
            tracing::warn!("cannot append to transcript {shown}: {e}");
            self.failed = true;
        }
    }

    /// Open (create) the file and write the header; false when that failed.
    fn open(&mut self) -> bool {
        let Some(path) = &self.path else { return false };
        let opened = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| OpenOptions::new().create(true).append(true).open(path));
        match opened {
            Ok(f) => self.file = Some(f),
            Err(e) => {
                tracing::warn!("cannot write transcript {}: {e}", path.display());
                self.failed = true;
                return false;
            }
        }
        if let Some(header) = self.header.take() {
            self.record(&header);
        }
        true
    }
}

#[cfg(test)]
mod tests;
