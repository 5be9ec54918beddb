//! The session transcript: one JSON line per message, appended (and flushed) as each message is
//! added, so a crash loses nothing. The file is created on the first message. A transcript that
//! cannot be written is reported once in the log and otherwise ignored: it must never stop the
//! session.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

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
