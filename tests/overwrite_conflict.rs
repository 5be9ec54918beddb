//! An outside change that cannot be merged (#25): the real core with the scripted model server
//! on real temp files. The session reads `f.txt`, someone else changes the line the model then
//! edits, and the person answers the conflict question: overwrite, re-read or abort; the disk
//! changing again before the answer; and `-p`, which refuses as before.

use std::path::{Path, PathBuf};

use cairn::cli::OutputFormat;
use cairn::config::LoadedSettings;
use cairn::llm::Provider;
use cairn::permissions::{GateConfig, PermissionGate};
use cairn::protocol::{Decision, Display, Event, PermissionMode, PermissionRequest, RequestKind};
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;

use agent::{Agent, Setup, finished, tool_results};

const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
const ORIGINAL: &str = "a\nb\nc\n";
const OUTSIDE: &str = "a\nB changed outside\nc\n";
const OURS: &str = "a\nX\nc\n";

/// The legacy refusal of this conflict, word for word.
fn refusal() -> String {
    format!(
        "{MODIFIED}\nThe outside change overlaps your edit:\n@@ -1,3 +1,3 @@\n      1 a\n-     2 b\n+     2 B changed outside\n      3 c"
    )
}

fn edit_b(id: &str) -> Value {
    json!({"id": id, "name": "Edit", "input":
        {"file_path": "f.txt", "old_string": "b\n", "new_string": "X\n"}})
}

/// A TUI-like session over a temp project holding `f.txt`, playing `later` after a first
/// turn that reads the file.
fn session(later: Vec<Value>) -> (tempfile::TempDir, PathBuf, Agent) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.txt");
    std::fs::write(&file, ORIGINAL).unwrap();
    let mut turns = vec![
        json!({"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "f.txt"}}]}),
        json!({"text": "read it"}),
    ];
    turns.extend(later);
    let mut setup = Setup::in_dir(dir.path(), Provider::Anthropic);
    setup.offers_overwrite = true;
    let agent = Agent::start(&json!({ "turns": turns }), setup);
    (dir, file, agent)
}

/// Read, then the outside change, then the edit: the turn's events, answering the conflict
/// question with `answer` (after `before_answer` ran) and anything else with "yes".
async fn edit_after_outside_change(
    agent: &mut Agent,
    file: &Path,
    mut before_answer: impl FnMut(),
    answer: Decision,
) -> (Vec<Event>, Vec<PermissionRequest>) {
    agent.prompt("read f.txt").await;
    std::fs::write(file, OUTSIDE).unwrap();
    agent.submit("now edit it");
    let mut asked = Vec::new();
    let events = agent
        .run_turn_answering(|req| {
            asked.push(req.clone());
            if matches!(req.kind, RequestKind::Conflict { .. }) {
                before_answer();
                answer.clone()
            } else {
                Decision::AllowOnce
            }
        })
        .await;
    (events, asked)
}

/// The question asked, which shows what overwriting does to the file as it is now.
fn assert_conflict_question(asked: &[PermissionRequest], file: &Path) {
    let req = asked
        .iter()
        .find(|r| matches!(r.kind, RequestKind::Conflict { .. }))
        .expect("no conflict question was asked");
    assert_eq!(
        req.kind,
        RequestKind::Conflict {
            path: file.to_path_buf()
        }
    );
    let Some(Display::Diff { before, after, .. }) = &req.preview else {
        panic!("{:?}", req.preview)
    };
    assert_eq!((before.as_str(), after.as_str()), (OUTSIDE, OURS));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overwrite_writes_the_sessions_version_and_says_the_outside_change_is_gone() {
    let (_dir, file, mut agent) = session(vec![
        json!({"tool_calls": [edit_b("e")]}),
        json!({"text": "done"}),
    ]);
    let (events, asked) =
        edit_after_outside_change(&mut agent, &file, || {}, Decision::Overwrite).await;
    assert_conflict_question(&asked, &file);
    assert_eq!(finished(&events).1, "done");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), OURS);
    let results = tool_results(&agent.request_body(3));
    let (text, is_error) = results.last().unwrap();
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with(&format!(
            "The file {} has been updated successfully.",
            file.display()
        )),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "Note: {} had been changed outside cairn after you read it, and your edit conflicted \
             with that change. The user chose to overwrite it: your version was written and the \
             outside change is gone.",
            file.display()
        )),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reread_keeps_the_outside_text_and_tells_the_model_which_may_then_edit_it() {
    let (_dir, file, mut agent) = session(vec![
        json!({"tool_calls": [edit_b("e")]}),
        // Redone on the current content: allowed at once, no Read needed.
        json!({"tool_calls": [{"id": "e2", "name": "Edit", "input":
            {"file_path": "f.txt", "old_string": "B changed outside", "new_string": "Y"}}]}),
        json!({"text": "done"}),
    ]);
    let mut kept = None;
    let (events, asked) = edit_after_outside_change(
        &mut agent,
        &file,
        || kept = Some(std::fs::read_to_string(&file).unwrap()),
        Decision::Reread,
    )
    .await;
    assert_conflict_question(&asked, &file);
    assert_eq!(kept.as_deref(), Some(OUTSIDE));
    assert_eq!(finished(&events).1, "done");
    let results = tool_results(&agent.request_body(3));
    let (text, is_error) = results.last().unwrap();
    assert!(is_error, "{text}");
    assert_eq!(
        text,
        &format!(
            "{} was changed outside cairn after you read it, and your edit conflicts with that \
             change. The user chose to keep the file as it is now: nothing was written. Here is \
             its current content (you have now read it); redo your edit on it if it is still \
             needed:\n     1\ta\n     2\tB changed outside\n     3\tc",
            file.display()
        )
    );
    let results = tool_results(&agent.request_body(4));
    let (text, is_error) = results.last().unwrap();
    assert!(!is_error, "{text}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nY\nc\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_writes_nothing_and_the_model_is_told_as_after_a_denial() {
    let (_dir, file, mut agent) = session(vec![
        json!({"tool_calls": [edit_b("e")]}),
        json!({"text": "stopped"}),
    ]);
    let (events, asked) =
        edit_after_outside_change(&mut agent, &file, || {}, Decision::DenyOnce).await;
    assert_conflict_question(&asked, &file);
    assert_eq!(finished(&events).1, "stopped");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), OUTSIDE);
    let denied = events.iter().any(|e| {
        matches!(
            e,
            Event::ToolCallFinished {
                outcome: Some(cairn::protocol::CallOutcome::Denied),
                ..
            }
        )
    });
    assert!(denied);
    let results = tool_results(&agent.request_body(3));
    assert_eq!(
        results.last().unwrap(),
        &(
            format!(
                "The user aborted this edit: {} was changed outside cairn since you read it, and \
                 your edit conflicts with that change. Nothing was written. STOP what you are \
                 doing and wait for the user to tell you how to proceed.",
                file.display()
            ),
            true
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overwrite_refuses_when_the_disk_changed_again_after_the_question() {
    let (_dir, file, mut agent) = session(vec![
        json!({"tool_calls": [edit_b("e")]}),
        json!({"text": "done"}),
    ]);
    let again = "a\nchanged again\nc\n";
    let (events, asked) = edit_after_outside_change(
        &mut agent,
        &file,
        || std::fs::write(&file, again).unwrap(),
        Decision::Overwrite,
    )
    .await;
    assert_conflict_question(&asked, &file);
    assert_eq!(finished(&events).1, "done");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), again);
    let results = tool_results(&agent.request_body(3));
    assert_eq!(
        results.last().unwrap(),
        &(
            format!(
                "{} changed on disk again after the conflict was shown for approval, so it was \
                 not overwritten: nothing was written. Read it again before editing it.",
                file.display()
            ),
            true
        )
    );
}

/// A session without the question (`-p`, an editor) refuses as before, and asks nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_cannot_ask_refuses_as_before() {
    let (_dir, file, mut agent) = {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, ORIGINAL).unwrap();
        let script = json!({"turns": [
            {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "f.txt"}}]},
            {"text": "read it"},
            {"tool_calls": [edit_b("e")]},
            {"text": "done"}]});
        let agent = Agent::start(&script, Setup::in_dir(dir.path(), Provider::Anthropic));
        (dir, file, agent)
    };
    let (events, asked) =
        edit_after_outside_change(&mut agent, &file, || {}, Decision::Overwrite).await;
    assert!(
        asked
            .iter()
            .all(|r| !matches!(r.kind, RequestKind::Conflict { .. })),
        "{asked:?}"
    );
    assert_eq!(finished(&events).1, "done");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), OUTSIDE);
    let results = tool_results(&agent.request_body(3));
    assert_eq!(results.last().unwrap(), &(refusal(), true));
}

/// `-p` itself: Bash changes the file between the Read and the Edit (both allowed by flags),
/// and the Edit is refused with the same text as before the question existed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_refuses_with_the_same_text() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.txt");
    std::fs::write(&file, ORIGINAL).unwrap();
    let settings = LoadedSettings {
        project_root: dir.path().to_path_buf(),
        project_dir: dir.path().to_path_buf(),
        ..LoadedSettings::default()
    };
    let gate = PermissionGate::new(GateConfig {
        settings: &settings,
        cli_allow: vec!["Bash".into(), "Edit".into()],
        cli_deny: Vec::new(),
        mode: PermissionMode::Default,
        interactive: false,
        project_dir: dir.path().to_path_buf(),
        additional_dirs: Vec::new(),
        session_data_dir: dir.path().join(".data"),
        running_as_root: false,
        sandboxed: false,
    })
    .unwrap();
    let script = json!({"turns": [
        {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "f.txt"}}]},
        {"tool_calls": [{"id": "w", "name": "Bash", "input":
            {"command": "printf 'a\\nB changed outside\\nc\\n' > f.txt"}}]},
        {"tool_calls": [edit_b("e")]},
        {"text": "done"}]});
    let mut setup = Setup::in_dir(dir.path(), Provider::Anthropic);
    setup.gate = gate;
    let agent = Agent::start(&script, setup);
    let (_, out) = agent.headless("edit f.txt", OutputFormat::StreamJson).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), OUTSIDE);
    let results: Vec<(String, bool)> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "user")
        .flat_map(|l| tool_results(&json!({"messages": [l["message"].clone()]})))
        .collect();
    assert_eq!(results.last(), Some(&(refusal(), true)), "{out}");
}

/// Write over a file changed since it was read: nothing to merge, the same question.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_over_an_outside_change_is_asked_too() {
    let (_dir, file, mut agent) = session(vec![
        json!({"tool_calls": [{"id": "w", "name": "Write", "input":
            {"file_path": "f.txt", "content": "whole\nnew\n"}}]}),
        json!({"text": "done"}),
    ]);
    let (events, asked) =
        edit_after_outside_change(&mut agent, &file, || {}, Decision::Overwrite).await;
    let req = asked
        .iter()
        .find(|r| matches!(r.kind, RequestKind::Conflict { .. }))
        .expect("no conflict question was asked");
    let Some(Display::Diff { before, after, .. }) = &req.preview else {
        panic!("{:?}", req.preview)
    };
    assert_eq!((before.as_str(), after.as_str()), (OUTSIDE, "whole\nnew\n"));
    assert_eq!(finished(&events).1, "done");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "whole\nnew\n");
}
