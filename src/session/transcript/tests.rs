//! The transcript written and read back: messages, records, cut lines, newer formats.

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

#[test]
fn records_come_back_in_their_place_after_a_header() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut t = Transcript::at(path.clone(), "s1").with_header(dir.path(), Some("main".into()));
    t.append(&Message::user_text("hello"));
    t.record(&Record::State {
        mode: PermissionMode::Plan,
        todos: Vec::new(),
        loaded_tools: Vec::new(),
    });
    t.append(&Message::user_text("again"));
    let read = read_transcript(&path).unwrap();
    assert_eq!(read.problems, Vec::new());
    assert_eq!(read.version, Some(1));
    assert!(!read.is_newer());
    assert_eq!(read.entries.len(), 2);
    assert_eq!(
        read.records,
        vec![
            (
                0,
                Record::Session {
                    version: FORMAT_VERSION,
                    cwd: dir.path().to_path_buf(),
                    git_branch: Some("main".into())
                }
            ),
            (
                1,
                Record::State {
                    mode: PermissionMode::Plan,
                    todos: Vec::new(),
                    loaded_tools: Vec::new(),
                }
            )
        ]
    );
}

#[test]
fn a_newer_format_is_named_not_misread() {
    let text = concat!(
        r#"{"type":"session","version":7,"cwd":"/p","sessionId":"s","timestamp":"t","new":1}"#,
        "\n",
        r#"{"type":"user","sessionId":"s","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#,
        "\n"
    );
    let read = parse_transcript(text.as_bytes());
    assert!(read.is_newer());
    assert_eq!(read.version, Some(7));
    assert!(
        read.problems[0]
            .reason
            .contains("format 7, newer than this cairn reads (1)"),
        "{:?}",
        read.problems
    );
}
