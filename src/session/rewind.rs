//! The transcript side of rewinding a conversation. The transcript stays append-only: a
//! rewind writes a `rewind` record and then a copy of the lines of the conversation it keeps,
//! so a reader (resume) needs only to start afresh at a `rewind` record, as it does at a
//! compaction boundary. The lines since the last `rewind` record are the current
//! conversation's *segment*; its `prompt` records are the points a rewind can go back to.
//!
//! The copy leaves out usage lines (their cost was spent and is counted once), state lines
//! (the mode and todo list stay as they are now) and lines that do not parse (a line cut by a
//! crash), so replaying the copy gives the conversation as it was, and nothing else.

use serde::Deserialize;

use super::transcript::Record;
use crate::checkpoint::CheckpointId;

/// What undoing the last rewind puts back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindUndo {
    /// The checkpoint of the files as they were before the rewind.
    pub code: Option<CheckpointId>,
    /// The conversation's lines in the transcript before the rewind (byte range).
    pub conversation: Option<(usize, usize)>,
    /// What the rewind was, for the list.
    pub what: String,
}

/// A prompt of the current conversation that a rewind can go back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptPoint {
    pub id: String,
    /// As the person typed it.
    pub text: String,
    /// Byte offset of its `prompt` record: the conversation before it ends there.
    pub at: usize,
}

/// The current conversation's lines in a transcript: `start..end` (byte offsets).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    /// Oldest first.
    pub prompts: Vec<PromptPoint>,
}

#[derive(Deserialize)]
struct Kind<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
}

/// Each line of `bytes` with its byte offset (the newline kept); a last line without one too.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= bytes.len() {
            return None;
        }
        let len = bytes[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len() - at, |p| p + 1);
        let line = (at, &bytes[at..at + len]);
        at += len;
        Some(line)
    })
}

fn kind_of(line: &[u8]) -> Option<String> {
    serde_json::from_slice::<Kind<'_>>(line)
        .ok()
        .map(|k| k.kind.into_owned())
}

/// The current conversation's segment of a transcript's bytes.
pub fn segment(bytes: &[u8]) -> Segment {
    let mut seg = Segment {
        start: 0,
        end: bytes.len(),
        prompts: Vec::new(),
    };
    for (at, line) in lines(bytes) {
        match kind_of(line).as_deref() {
            Some("rewind") => {
                seg.start = at + line.len();
                seg.prompts.clear();
            }
            Some("prompt") => {
                if let Ok(Record::Prompt { id, text }) = serde_json::from_slice(line) {
                    seg.prompts.push(PromptPoint { id, text, at });
                }
            }
            _ => {}
        }
    }
    seg
}

/// The lines of a conversation (`bytes` is a range of a transcript: a segment or the part of
/// one before a prompt) that a rewind copies: messages, prompt marks, partial answers and
/// compaction boundaries, each ending with a newline.
pub fn kept_lines(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for (_, line) in lines(bytes) {
        let keep = matches!(
            kind_of(line).as_deref(),
            Some("user" | "assistant" | "prompt" | "partial" | "compact_boundary")
        );
        if keep {
            out.extend_from_slice(line);
            if !line.ends_with(b"\n") {
                out.push(b'\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: serde_json::Value) -> String {
        format!("{v}\n")
    }

    #[test]
    fn the_segment_starts_after_the_last_rewind_and_lists_its_prompts() {
        let user = |t: &str| {
            line(
                serde_json::json!({"type": "user", "sessionId": "s", "timestamp": "t",
                "message": {"role": "user", "content": [{"type": "text", "text": t}]}}),
            )
        };
        let prompt = |id: &str| line(serde_json::json!({"type": "prompt", "id": id, "text": id}));
        let usage = line(serde_json::json!({"type": "usage", "model": "m", "usage": {
            "input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0}}));
        let mut text = String::new();
        text += &prompt("a");
        text += &user("a");
        text += &usage;
        text += &line(serde_json::json!({"type": "rewind"}));
        let start = text.len();
        text += &prompt("b");
        text += &user("b");
        text += &usage;
        let at_c = text.len();
        text += &prompt("c");
        text += &user("c");
        text += "{\"type\":\"user\",\"cut";
        let seg = segment(text.as_bytes());
        assert_eq!(seg.start, start);
        assert_eq!(seg.end, text.len());
        let ids: Vec<&str> = seg.prompts.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["b", "c"]);
        assert_eq!(seg.prompts[1].at, at_c);
        // Before c: b's prompt mark and message, no usage.
        let kept = kept_lines(&text.as_bytes()[seg.start..at_c]);
        assert_eq!(String::from_utf8_lossy(&kept), prompt("b") + &user("b"));
        // The whole segment: the cut line is left out.
        let kept = kept_lines(&text.as_bytes()[seg.start..]);
        assert_eq!(
            String::from_utf8_lossy(&kept),
            prompt("b") + &user("b") + &prompt("c") + &user("c")
        );
    }
}
