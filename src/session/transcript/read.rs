//! Reading a transcript back: each line an [`Entry`] (a message), a [`Record`], or a
//! [`LineProblem`]; the format version of its header; whether the writer stopped mid-line.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{FORMAT_VERSION, Record};
use crate::llm::{Message, Role};

/// One message read back from a transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub session_id: String,
    /// RFC 3339, as written.
    pub timestamp: String,
    pub message: Message,
}

/// A line that is not an entry, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// 1-based.
    pub line: usize,
    pub reason: String,
}

/// What a transcript holds: its entries in order, and the lines that could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TranscriptContents {
    pub entries: Vec<Entry>,
    /// The records, each with the number of entries before it (its place among them).
    pub records: Vec<(usize, Record)>,
    /// The format version its header names (`None`: no header, an early transcript).
    pub version: Option<u64>,
    pub problems: Vec<LineProblem>,
    /// The last line had no newline and did not parse: the writer stopped mid-line (a crash).
    /// It is also listed in `problems`.
    pub cut_last_line: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("cannot read the transcript {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl TranscriptContents {
    /// Whether a newer cairn wrote this (its header names a format this one does not know).
    pub fn is_newer(&self) -> bool {
        self.version.is_some_and(|v| v > u64::from(FORMAT_VERSION))
    }
}

/// The shape of a message line as `Transcript::append` writes it.
#[derive(Deserialize)]
struct MessageLine {
    #[serde(rename = "type")]
    kind: String,
    #[serde(rename = "sessionId")]
    session_id: String,
    timestamp: String,
    message: Message,
}

/// Read the transcript at `path` (see the module docs).
pub fn read_transcript(path: &Path) -> Result<TranscriptContents, TranscriptError> {
    let bytes = std::fs::read(path).map_err(|source| TranscriptError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(parse_transcript(&bytes))
}

/// Parse transcript bytes: every line is an entry or a problem; blank lines are skipped.
pub fn parse_transcript(bytes: &[u8]) -> TranscriptContents {
    let mut out = TranscriptContents::default();
    let ends_cleanly = bytes.is_empty() || bytes.ends_with(b"\n");
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let last = lines.len();
    for (i, raw) in lines.into_iter().enumerate() {
        let number = i + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parse_line(raw) {
            Ok(Line::Entry(entry)) => out.entries.push(entry),
            Ok(Line::Record(record)) => {
                if let Record::Session { version, .. } = &record {
                    out.version.get_or_insert(u64::from(*version));
                }
                out.records.push((out.entries.len(), record));
            }
            Err(LineError::Newer(version)) => {
                out.version.get_or_insert(version);
                out.problems.push(LineProblem {
                    line: number,
                    reason: format!(
                        "written in transcript format {version}, newer than this cairn reads \
                         ({FORMAT_VERSION})"
                    ),
                });
            }
            Err(LineError::Bad(reason)) => {
                let cut = number == last && !ends_cleanly;
                out.cut_last_line |= cut;
                out.problems.push(LineProblem {
                    line: number,
                    reason: if cut {
                        format!(
                            "the last line is cut off (the session stopped mid-write): {reason}"
                        )
                    } else {
                        reason
                    },
                });
            }
        }
    }
    out
}

enum Line {
    Entry(Entry),
    Record(Record),
}

enum LineError {
    /// A header naming a newer format.
    Newer(u64),
    Bad(String),
}

fn parse_line(raw: &[u8]) -> Result<Line, LineError> {
    let text = std::str::from_utf8(raw)
        .map_err(|e| LineError::Bad(format!("not UTF-8 text (at byte {})", e.valid_up_to())))?;
    let bad = |e: serde_json::Error| LineError::Bad(format!("not a transcript entry: {e}"));
    // The kind first, skimming the rest, then the line straight into its type: no
    // `serde_json::Value` tree in between (resuming a long session reads thousands of lines).
    let head: Head<'_> = serde_json::from_str(text).map_err(bad)?;
    match head.kind.as_deref().unwrap_or("") {
        "user" | "assistant" => parse_message(serde_json::from_str(text).map_err(bad)?)
            .map(Line::Entry)
            .map_err(LineError::Bad),
        // The header is read for its version first: a newer header is never parsed as ours.
        "session" => {
            let value: serde_json::Value = serde_json::from_str(text).map_err(bad)?;
            if let Some(version) = value.get("version").and_then(serde_json::Value::as_u64)
                && version > u64::from(FORMAT_VERSION)
            {
                return Err(LineError::Newer(version));
            }
            serde_json::from_value::<Record>(value)
                .map(Line::Record)
                .map_err(bad)
        }
        _ => serde_json::from_str::<Record>(text)
            .map(Line::Record)
            .map_err(bad),
    }
}

/// The kind of a line, read without building the rest.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

fn parse_message(line: MessageLine) -> Result<Entry, String> {
    let role = match line.message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    if line.kind != role {
        return Err(format!(
            "an entry of type `{}` holds a {role} message",
            line.kind
        ));
    }
    Ok(Entry {
        session_id: line.session_id,
        timestamp: line.timestamp,
        message: line.message,
    })
}
