//! Fuzz target for reading transcripts (`session::transcript`): whatever a file holds — entries
//! as written, lines cut short, garbage, invalid UTF-8, very long lines — reading never panics,
//! every non-blank line is either an entry or a problem naming its line, and entries that were
//! written come back equal.

#[path = "support/fuzz.rs"]
mod fuzz;

use cairn::llm::{ContentBlock, Message, Role};
use cairn::session::transcript::{Transcript, parse_transcript, read_transcript};
use proptest::prelude::*;
use serde_json::{Value, json};

fn short_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z \\n\"\\\\{}]{0,12}",
        any::<String>().prop_map(|s| s.chars().take(12).collect()),
    ]
}

/// Tool inputs: nested JSON without floats (serde_json parses floats best-effort by default,
/// which is a property of the JSON library, not of transcripts).
fn input_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        short_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(short_text(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn block() -> impl Strategy<Value = ContentBlock> {
    prop_oneof![
        short_text().prop_map(|text| ContentBlock::Text { text }),
        (short_text(), proptest::option::of(short_text())).prop_map(|(thinking, signature)| {
            ContentBlock::Thinking {
                thinking,
                signature,
            }
        }),
        (short_text(), short_text(), input_value())
            .prop_map(|(id, name, input)| ContentBlock::ToolUse { id, name, input }),
        (short_text(), short_text(), any::<bool>()).prop_map(|(tool_use_id, content, is_error)| {
            ContentBlock::ToolResult {
                tool_use_id,
                content: content.into(),
                is_error,
            }
        }),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    (any::<bool>(), proptest::collection::vec(block(), 0..4)).prop_map(|(user, content)| Message {
        role: if user { Role::User } else { Role::Assistant },
        content,
    })
}

/// One line of a damaged transcript file.
#[derive(Debug, Clone)]
enum Piece {
    /// A well-formed entry line (from a real write).
    Entry(Message),
    /// A well-formed entry line cut at some byte.
    Cut(Message, usize),
    /// Arbitrary bytes (may hold newlines and invalid UTF-8).
    Garbage(Vec<u8>),
    /// Valid JSON that is not an entry.
    Json(Value),
    /// A long line: an entry with a large text.
    Huge(usize),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        4 => message().prop_map(Piece::Entry),
        2 => (message(), any::<usize>()).prop_map(|(m, at)| Piece::Cut(m, at)),
        2 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Piece::Garbage),
        1 => input_value().prop_map(Piece::Json),
        1 => (10_000usize..200_000).prop_map(Piece::Huge),
    ]
}

/// The line [`Transcript::append`] writes for `m`, without its newline.
fn written_line(m: &Message) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    Transcript::at(path.clone(), "sess").append(m);
    let mut bytes = std::fs::read(path).unwrap();
    assert_eq!(bytes.pop(), Some(b'\n'));
    bytes
}

#[test]
fn fuzz_transcript_lines_are_entries_or_named_problems() {
    let strategy = (proptest::collection::vec(piece(), 0..6), any::<bool>());
    fuzz::fuzz("transcript_read", strategy, |(pieces, final_newline)| {
        let mut bytes = Vec::new();
        // What a correct reader must return for the lines it can know about.
        let mut expected = Vec::new();
        for p in &pieces {
            match p {
                Piece::Entry(m) => {
                    bytes.extend(written_line(m));
                    expected.push(Some(m.clone()));
                }
                Piece::Cut(m, at) => {
                    let line = written_line(m);
                    bytes.extend_from_slice(&line[..at % line.len()]);
                    expected.push(None);
                }
                Piece::Garbage(g) => {
                    bytes.extend(g);
                    expected.push(None);
                }
                Piece::Json(v) => {
                    bytes.extend(v.to_string().into_bytes());
                    expected.push(None);
                }
                Piece::Huge(n) => {
                    let m = Message::user_text("x".repeat(*n));
                    bytes.extend(written_line(&m));
                    expected.push(Some(m));
                }
            }
            bytes.push(b'\n');
        }
        if !final_newline {
            bytes.pop();
        }
        let read = parse_transcript(&bytes);
        // Every non-blank line is accounted for exactly once.
        let non_blank = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .count();
        prop_assert_eq!(
            read.entries.len() + read.records.len() + read.problems.len(),
            non_blank
        );
        let total_lines = bytes.split(|&b| b == b'\n').count();
        for p in &read.problems {
            prop_assert!(p.line >= 1 && p.line <= total_lines, "{p:?}");
            prop_assert!(!p.reason.is_empty());
        }
        // Garbage may hold newlines, so lines only map to pieces when none of it does; the
        // written entries must then come back, equal and in order.
        let clean = pieces.iter().all(|p| match p {
            Piece::Garbage(g) => !g.contains(&b'\n'),
            _ => true,
        });
        if clean {
            let written: Vec<Message> = expected.iter().flatten().cloned().collect();
            let got: Vec<Message> = read.entries.iter().map(|e| e.message.clone()).collect();
            // Garbage can happen to be a valid entry only by writing one: it never is here.
            prop_assert_eq!(got, written);
            for e in &read.entries {
                prop_assert_eq!(e.session_id.as_str(), "sess");
            }
        }
        Ok(())
    });
}

#[test]
fn a_transcript_file_that_cannot_be_read_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = read_transcript(&dir.path().join("missing.jsonl")).unwrap_err();
    assert!(err.to_string().contains("missing.jsonl"), "{err}");
    let err = read_transcript(dir.path()).unwrap_err();
    assert!(
        err.to_string().starts_with("cannot read the transcript"),
        "{err}"
    );
}
