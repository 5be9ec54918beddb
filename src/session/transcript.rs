//! The session transcript: one JSON line per message, appended (and flushed) as each message is
//! added, so a crash loses nothing. The file is created on the first message. A transcript that
//! cannot be written is reported once in the log and otherwise ignored: it must never stop the
//! session.
//!
//! Reading one back ([`read_transcript`], [`parse_transcript`]) is tolerant: the file may come
//! from a crashed session (its last line cut off) or have been edited by hand, so each line is
//! an entry or a [`LineProblem`] saying what is wrong with it, and one bad line never hides the
//! others. Only failing to read the file at all is an error.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::json;

use crate::llm::{Message, Role};

pub struct Transcript {
    path: Option<PathBuf>,
    session_id: String,
    file: Option<File>,
    failed: bool,
}

impl Transcript {
    /// A transcript at `path` (created on first append).
    pub fn at(path: PathBuf, session_id: &str) -> Transcript {
        Transcript {
            path: Some(path),
            session_id: session_id.to_string(),
            file: None,
            failed: false,
        }
    }

    /// A transcript that writes nothing.
    pub fn disabled() -> Transcript {
        Transcript {
            path: None,
            session_id: String::new(),
            file: None,
            failed: false,
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn append(&mut self, message: &Message) {
        if self.failed {
            return;
        }
        let Some(path) = &self.path else { return };
        if self.file.is_none() {
            let opened = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|_| OpenOptions::new().create(true).append(true).open(path));
            match opened {
                Ok(f) => self.file = Some(f),
                Err(e) => {
                    tracing::warn!("cannot write transcript {}: {e}", path.display());
                    self.failed = true;
                    return;
                }
            }
        }
        let line = json!({
            "type": match message.role { Role::User => "user", Role::Assistant => "assistant" },
            "sessionId": self.session_id,
            "timestamp": chrono::Utc::now().to_rfc3339(),
            "message": message,
        });
        if let Some(f) = &mut self.file
            && let Err(e) = writeln!(f, "{line}")
        {
            tracing::warn!("cannot append to transcript {}: {e}", path.display());
            self.failed = true;
        }
    }
}

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

/// The shape of one line as [`Transcript::append`] writes it.
#[derive(Deserialize)]
struct Line {
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
            Ok(entry) => out.entries.push(entry),
            Err(reason) => {
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

fn parse_line(raw: &[u8]) -> Result<Entry, String> {
    let text = std::str::from_utf8(raw)
        .map_err(|e| format!("not UTF-8 text (at byte {})", e.valid_up_to()))?;
    let line: Line =
        serde_json::from_str(text).map_err(|e| format!("not a transcript entry: {e}"))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_one_line_per_message() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/s.jsonl");
        let mut t = Transcript::at(path.clone(), "s1");
        t.append(&Message::user_text("hello"));
        t.append(&Message::user_text("again"));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["type"], "user");
        assert_eq!(lines[0]["sessionId"], "s1");
        assert_eq!(lines[1]["message"]["content"][0]["text"], "again");
    }

    #[test]
    fn reads_back_what_was_written_and_tolerates_a_cut_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut t = Transcript::at(path.clone(), "s1");
        t.append(&Message::user_text("hello"));
        t.append(&Message::user_text("again"));
        let read = read_transcript(&path).unwrap();
        assert_eq!(read.problems, Vec::new());
        let texts: Vec<_> = read.entries.iter().map(|e| e.message.clone()).collect();
        assert_eq!(
            texts,
            vec![Message::user_text("hello"), Message::user_text("again")]
        );
        assert_eq!(read.entries[0].session_id, "s1");

        // A crash mid-write: half a line at the end.
        let mut bytes = std::fs::read(&path).unwrap();
        let whole = bytes.len();
        bytes.extend_from_within(..whole / 3);
        let read = parse_transcript(&bytes);
        assert_eq!(read.entries.len(), 2);
        assert!(read.cut_last_line);
        assert_eq!(read.problems.len(), 1);
        assert_eq!(read.problems[0].line, 3);
        assert!(read.problems[0].reason.contains("cut off"));

        let err = read_transcript(&dir.path().join("none.jsonl")).unwrap_err();
        assert!(err.to_string().contains("none.jsonl"), "{err}");
    }

    #[test]
    fn tool_results_round_trip_as_blocks_and_older_text_entries_still_read() {
        use crate::llm::{ContentBlock, ToolResultBlock, ToolResultContent};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let message = Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "c1".into(),
                content: ToolResultContent(vec![ToolResultBlock::image("image/png", "AAAA")]),
                is_error: false,
            }],
        };
        let mut t = Transcript::at(path.clone(), "s1");
        t.append(&message);
        let line: serde_json::Value =
            serde_json::from_str(std::fs::read_to_string(&path).unwrap().trim()).unwrap();
        let back: Message = serde_json::from_value(line["message"].clone()).unwrap();
        assert_eq!(back, message);
        // An entry written before results had blocks: content is a plain string.
        let old = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"old text","is_error":true}]}"#;
        let old: Message = serde_json::from_str(old).unwrap();
        assert_eq!(
            old.content,
            vec![ContentBlock::ToolResult {
                tool_use_id: "c1".into(),
                content: ToolResultContent::from("old text"),
                is_error: true,
            }]
        );
    }

    #[test]
    fn an_unwritable_path_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let mut t = Transcript::at(file.join("sub/s.jsonl"), "s");
        t.append(&Message::user_text("hello"));
        assert!(t.failed);
    }
}
