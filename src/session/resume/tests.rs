//! Rebuilding sessions from transcripts written by the real writer, including ones cut off by
//! a crash at each point a crash can come.

use super::*;
use crate::session::transcript::{Transcript, parse_transcript};
use serde_json::json;

fn tool_use(id: &str) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.into(),
        name: "Bash".into(),
        input: json!({"command": "ls"}),
    }
}

fn result(id: &str, text: &str) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.into(),
        content: ToolResultContent::from(text),
        is_error: false,
    }
}

fn text(t: &str) -> ContentBlock {
    ContentBlock::Text { text: t.into() }
}

fn assistant(content: Vec<ContentBlock>) -> Message {
    Message {
        role: Role::Assistant,
        content,
    }
}

fn user(content: Vec<ContentBlock>) -> Message {
    Message {
        role: Role::User,
        content,
    }
}

/// Write `steps` with the real writer and read them back as bytes.
fn written(steps: &[Step]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut t = Transcript::at(path.clone(), "s1").with_header(dir.path(), None);
    for s in steps {
        match s {
            Step::M(m) => t.append(m),
            Step::R(r) => t.record(r),
        }
    }
    std::fs::read(path).unwrap()
}

enum Step {
    M(Message),
    R(Record),
}

fn partial(blocks: Vec<ContentBlock>) -> Step {
    Step::R(Record::Partial { blocks })
}

#[test]
fn a_whole_session_comes_back_as_it_was() {
    let steps = [
        Step::M(Message::user_text("list files")),
        partial(vec![text("Looking.")]),
        partial(vec![text("Looking."), tool_use("t1")]),
        Step::M(assistant(vec![text("Looking."), tool_use("t1")])),
        Step::R(Record::Usage {
            model: "m1".into(),
            usage: Usage {
                input_tokens: 10,
                ..Usage::default()
            },
        }),
        Step::M(user(vec![result("t1", "a\nb")])),
        Step::R(Record::State {
            mode: PermissionMode::Plan,
            todos: Vec::new(),
            loaded_tools: Vec::new(),
        }),
        Step::M(assistant(vec![text("Two files.")])),
    ];
    let r = rebuild(&parse_transcript(&written(&steps)));
    assert_eq!(
        r.messages,
        [
            Message::user_text("list files"),
            assistant(vec![text("Looking."), tool_use("t1")]),
            user(vec![result("t1", "a\nb")]),
            assistant(vec![text("Two files.")]),
        ]
    );
    assert_eq!(r.repairs, Vec::<String>::new());
    assert_eq!(r.mode, Some(PermissionMode::Plan));
    assert_eq!(r.usage.len(), 1);
    assert_eq!(r.session_id, "s1");
}

#[test]
fn a_crash_mid_stream_keeps_the_partial_answer_marked_cut_off() {
    let steps = [
        Step::M(Message::user_text("explain")),
        partial(vec![text("The parser reads")]),
    ];
    let r = rebuild(&parse_transcript(&written(&steps)));
    assert_eq!(
        r.messages,
        [
            Message::user_text("explain"),
            assistant(vec![text("The parser reads"), text(CUT_OFF)]),
        ]
    );
}

#[test]
fn a_crash_mid_tool_answers_the_call_interrupted() {
    let steps = [
        Step::M(Message::user_text("run it")),
        partial(vec![tool_use("t1"), tool_use("t2")]),
        Step::M(assistant(vec![tool_use("t1"), tool_use("t2")])),
    ];
    let r = rebuild(&parse_transcript(&written(&steps)));
    assert_eq!(r.messages.len(), 3);
    let ContentBlock::ToolResult {
        tool_use_id,
        is_error,
        content,
    } = &r.messages[2].content[1]
    else {
        panic!("{:?}", r.messages[2])
    };
    assert_eq!(tool_use_id, "t2");
    assert!(is_error);
    assert_eq!(content.text(), INTERRUPTED);
    assert_eq!(
        r.repairs,
        ["2 tool call(s) the session stopped during were answered \"interrupted\""]
    );
    // A later prompt after such a resume: the answers go first in that message.
    let mut bytes = written(&steps);
    bytes.extend(
        format!(
            "{}\n",
            json!({"type": "user", "sessionId": "s1", "timestamp": "t",
                   "message": Message::user_text("and now?")})
        )
        .into_bytes(),
    );
    let r = rebuild(&parse_transcript(&bytes));
    let last = &r.messages[2].content;
    assert!(matches!(last[0], ContentBlock::ToolResult { .. }));
    assert!(matches!(last[1], ContentBlock::ToolResult { .. }));
    assert_eq!(last[2], text("and now?"));
}

#[test]
fn a_cut_last_line_and_orphan_results_are_repaired_and_named() {
    let mut bytes = written(&[
        Step::M(Message::user_text("one")),
        Step::M(assistant(vec![text("ok")])),
        Step::M(user(vec![result("ghost", "?"), text("two")])),
    ]);
    let line = format!(
        "{}\n",
        json!({"type": "assistant", "sessionId": "s1", "timestamp": "t",
               "message": assistant(vec![text("half")])})
    );
    bytes.extend_from_slice(&line.as_bytes()[..line.len() / 2]);
    let r = rebuild(&parse_transcript(&bytes));
    assert_eq!(
        r.messages,
        [
            Message::user_text("one"),
            assistant(vec![text("ok")]),
            Message::user_text("two"),
        ]
    );
    assert_eq!(r.repairs.len(), 2, "{:?}", r.repairs);
    assert!(r.repairs[0].contains("cut off"), "{:?}", r.repairs);
    assert!(
        r.repairs[1].contains("without their call"),
        "{:?}",
        r.repairs
    );
}

#[test]
fn sessions_are_listed_newest_first_and_found_by_plain_ids_only() {
    let dir = tempfile::tempdir().unwrap();
    let write = |id: &str, prompt: &str| {
        let mut t = Transcript::at(dir.path().join(format!("{id}.jsonl")), id)
            .with_header(dir.path(), Some("main".into()));
        t.append(&Message::user_text(prompt));
        t.append(&assistant(vec![text("done")]));
        t.append(&Message::user_text("and more"));
    };
    write("old", "first task\nwith details");
    std::thread::sleep(std::time::Duration::from_millis(20));
    write("new", "second task");
    std::fs::write(dir.path().join("empty.jsonl"), "").unwrap();
    let sessions = list(dir.path());
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["new", "old"]);
    assert_eq!(sessions[1].first_prompt, "first task");
    assert_eq!(sessions[1].prompts, 2);
    assert_eq!(sessions[1].branch.as_deref(), Some("main"));
    assert_eq!(latest(dir.path()).unwrap(), dir.path().join("new.jsonl"));
    assert!(find(dir.path(), "old").is_ok());
    assert!(matches!(
        find(dir.path(), "../old"),
        Err(ResumeError::NotFound { .. })
    ));
    let err = load(&dir.path().join("empty.jsonl")).unwrap_err();
    assert!(err.to_string().contains("holds no conversation"), "{err}");
}
