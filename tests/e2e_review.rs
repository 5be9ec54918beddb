//! Reviewing before approving, end to end: the real `cairn` binary runs in tmux against the
//! scripted model server on 127.0.0.1, a person's keys go in with send-keys, and the test checks
//! what matters afterwards: the bytes of the files on disk, the tool results the model was sent
//! (`ScriptedServer::requests`) and what the screen showed.
//!
//! Each test owns its tmux server (own socket), its temp project and its temp home, so they run
//! in parallel. Skipped (with a message) when tmux is not installed; CI installs it.

use std::path::PathBuf;

use serde_json::json;

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, require_tmux, result_for, server, tool_results};

/// Text every tool prompt shows among its choices (and nothing else on screen does).
const TOOL_PROMPT: &str = "no, for this session";

/// Text the plan approval shows among its choices.
const PLAN_PROMPT: &str = "keep planning";

/// A temp project holding `name` with `content`; returns the dir and the file's absolute path.
fn project_with(name: &str, content: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    // The binary resolves paths canonically; give the model the same spelling.
    let root = dir.path().canonicalize().unwrap();
    let path = root.join(name);
    std::fs::write(&path, content).unwrap();
    (dir, path)
}

/// The bottom row of the window: the status line.
fn status_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_approved_with_1_changes_the_file() {
    require_tmux!();
    let (project, file) = project_with("greet.py", "def greet():\n    print('hello')\n");
    let path = file.to_string_lossy().into_owned();
    let s = server(json!({"turns": [
        {"text": "Reading it first.",
         "tool_calls": [{"id": "toolu_read", "name": "Read", "input": {"file_path": path}}]},
        {"text": "Now the edit.",
         "tool_calls": [{"id": "toolu_edit", "name": "Edit", "input": {
             "file_path": path, "old_string": "print('hello')",
             "new_string": "print('hello, world')"}}]},
        {"text": "Edit applied. REVIEW-DONE"}
    ]}));
    let t = Tmux::start(&s, project.path(), &[]);
    t.submit("make it greet the world");
    let screen = t.wait_for(TOOL_PROMPT);
    assert!(
        screen.contains("greet.py"),
        "the prompt names the file:\n{screen}"
    );
    assert!(
        screen.contains("print('hello, world')"),
        "the prompt shows the proposed line:\n{screen}"
    );
    // Nothing is written while the prompt is open.
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "def greet():\n    print('hello')\n"
    );
    t.send_keys(&["1"]);
    let screen = t.wait_for("REVIEW-DONE");
    assert!(
        screen.contains("allowed once"),
        "the tool cell shows the answer:\n{screen}"
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"def greet():\n    print('hello, world')\n"
    );
    let (text, is_error) = result_for(&s, "toolu_edit");
    assert!(!is_error, "the edit succeeded: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_for_session_on_bash_refuses_the_same_call_again_without_asking() {
    require_tmux!();
    let (project, _) = project_with("README.md", "demo\n");
    let marker = project.path().join("marker.txt");
    let command = "touch marker.txt";
    let bash = |id: &str| {
        json!({"id": id, "name": "Bash",
               "input": {"command": command, "description": "Create a marker file"}})
    };
    let s = server(json!({"turns": [
        {"text": "Running it.", "tool_calls": [bash("toolu_bash_1")]},
        {"text": "Trying once more.", "tool_calls": [bash("toolu_bash_2")]},
        {"text": "Understood, I will stop. BASH-DONE"}
    ]}));
    let t = Tmux::start(&s, project.path(), &[]);
    t.submit("make a marker");
    let screen = t.wait_for(TOOL_PROMPT);
    assert!(
        screen.contains(command),
        "the prompt shows the command:\n{screen}"
    );
    t.send_keys(&["5"]);
    // From the key press to the end of the turn, the prompt never shows again.
    let screens = t.wait_for_all("BASH-DONE");
    // The first poll may still show the first prompt, before the key was handled.
    for screen in screens.iter().skip_while(|s| s.contains(TOOL_PROMPT)) {
        assert!(
            !screen.contains(TOOL_PROMPT),
            "the second call asked again:\n{screen}"
        );
    }
    assert!(!marker.exists(), "the command never ran");
    let screen = screens.last().unwrap();
    assert!(
        screen.contains("denied for this session"),
        "the first tool cell shows the answer:\n{screen}"
    );

    let requests = s.requests();
    assert_eq!(requests.len(), 3, "one request per turn");
    let first = tool_results(&requests[1].body);
    let (id, text, is_error) = first.last().unwrap();
    assert_eq!(id, "toolu_bash_1");
    assert!(is_error);
    assert!(
        text.starts_with("The user denied this for the rest of the session"),
        "{text}"
    );
    let second = tool_results(&requests[2].body);
    let (id, text, is_error) = second.last().unwrap();
    assert_eq!(id, "toolu_bash_2");
    assert!(is_error);
    assert!(
        text.starts_with("The user denied this for the rest of the session"),
        "{text}"
    );
    assert!(text.contains("Do not retry it"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejecting_one_of_two_hunks_applies_exactly_the_other() {
    require_tmux!();
    // Two changes far enough apart (more than twice the context) to be two hunks.
    let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let (project, file) = project_with("notes.txt", &before);
    let path = file.to_string_lossy().into_owned();
    let old: String = (2..=19).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "line two\n")
        .replace("line 19\n", "line nineteen\n");
    let s = server(json!({"turns": [
        {"tool_calls": [{"id": "toolu_read", "name": "Read", "input": {"file_path": path}}]},
        {"text": "Two changes.",
         "tool_calls": [{"id": "toolu_edit", "name": "Edit", "input": {
             "file_path": path, "old_string": old, "new_string": new}}]},
        {"text": "Noted. HUNKS-DONE"}
    ]}));
    let t = Tmux::start(&s, project.path(), &[]);
    t.submit("spell out two numbers");
    let screen = t.wait_for(TOOL_PROMPT);
    assert!(screen.contains("hunk 1 of 2"), "two hunks:\n{screen}");
    // The first hunk has the focus: Tab moves to the second, Space rejects it, 1 approves.
    t.send_keys(&["Tab"]);
    t.send_keys(&["Space"]);
    let screen = t.wait_for("rejected");
    assert!(screen.contains(TOOL_PROMPT), "still asking:\n{screen}");
    t.send_keys(&["1"]);
    let screen = t.wait_for("HUNKS-DONE");
    assert!(
        screen.contains("allowed with your changes"),
        "the tool cell says the person trimmed the edit:\n{screen}"
    );
    let expected = before.replace("line 2\n", "line two\n");
    assert_eq!(
        String::from_utf8(std::fs::read(&file).unwrap()).unwrap(),
        expected
    );
    let (text, is_error) = result_for(&s, "toolu_edit");
    assert!(!is_error, "the partial edit succeeded: {text}");
    assert!(
        text.contains("line nineteen"),
        "the model is shown the rejected hunk: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_a_plan_with_1_switches_to_accept_edits() {
    require_tmux!();
    let (project, _) = project_with("README.md", "demo\n");
    let root = project.path().canonicalize().unwrap();
    let new_file = root.join("PLAN_DONE.md");
    let plan = "# Plan\n\n1. Write PLAN_DONE.md\n2. Stop";
    let s = server(json!({"turns": [
        {"text": "Here is my plan.",
         "tool_calls": [{"id": "toolu_plan", "name": "ExitPlanMode", "input": {"plan": plan}}]},
        {"text": "Writing it.",
         "tool_calls": [{"id": "toolu_write", "name": "Write", "input": {
             "file_path": new_file.to_string_lossy(), "content": "planned\n"}}]},
        {"text": "Wrote it. PLAN-DONE"}
    ]}));
    let t = Tmux::start(&s, project.path(), &["--permission-mode", "plan"]);
    let screen = t.wait_for("test-model");
    assert!(
        status_line(&screen).trim_start().starts_with("plan"),
        "starts in plan mode:\n{screen}"
    );
    t.submit("plan a file");
    let screen = t.wait_for(PLAN_PROMPT);
    assert!(
        screen.contains("Write PLAN_DONE.md"),
        "the plan is shown:\n{screen}"
    );
    t.send_keys(&["1"]);
    let screens = t.wait_for_all("PLAN-DONE");
    // The Write needed no prompt: accept edits covers it.
    for screen in screens.iter().skip_while(|s| s.contains(PLAN_PROMPT)) {
        assert!(!screen.contains(TOOL_PROMPT), "the Write asked:\n{screen}");
    }
    let screen = screens.last().unwrap();
    assert!(
        status_line(screen).contains("accept edits"),
        "the status line shows the new mode:\n{screen}"
    );
    t.wait_for_file(&new_file, |b| b == Some(b"planned\n".as_slice()));
    let (text, is_error) = result_for(&s, "toolu_write");
    assert!(!is_error, "the write succeeded: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_sends_the_persons_words_to_the_model_and_leaves_the_file() {
    require_tmux!();
    let original = "fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n";
    let (project, file) = project_with("add.rs", original);
    let path = file.to_string_lossy().into_owned();
    let s = server(json!({"turns": [
        {"tool_calls": [{"id": "toolu_read", "name": "Read", "input": {"file_path": path}}]},
        {"text": "Switching to wrapping.",
         "tool_calls": [{"id": "toolu_edit", "name": "Edit", "input": {
             "file_path": path, "old_string": "a + b", "new_string": "a.wrapping_add(b)"}}]},
        {"text": "Will do. FEEDBACK-DONE"}
    ]}));
    let t = Tmux::start(&s, project.path(), &[]);
    t.submit("stop add from panicking");
    t.wait_for(TOOL_PROMPT);
    t.send_keys(&["4"]);
    t.type_text("use saturating_add, 1 and 4 are text here");
    t.send_keys(&["Enter"]);
    let screen = t.wait_for("FEEDBACK-DONE");
    assert!(
        screen.contains("denied"),
        "the tool cell shows the answer:\n{screen}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    let (text, is_error) = result_for(&s, "toolu_edit");
    assert!(is_error);
    assert!(
        text.contains("use saturating_add, 1 and 4 are text here"),
        "the model gets the words: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_on_disk_under_an_open_prompt_gets_the_edit_reapplied() {
    require_tmux!();
    let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let (project, file) = project_with("notes.txt", &before);
    let path = file.to_string_lossy().into_owned();
    let s = server(json!({"turns": [
        {"tool_calls": [{"id": "toolu_read", "name": "Read", "input": {"file_path": path}}]},
        {"tool_calls": [{"id": "toolu_edit", "name": "Edit", "input": {
             "file_path": path, "old_string": "line 3\n", "new_string": "line three\n"}}]},
        {"text": "EXTERNAL-DONE"}
    ]}));
    let t = Tmux::start(&s, project.path(), &[]);
    t.submit("spell out three");
    t.wait_for(TOOL_PROMPT);
    // Someone else changes another part of the file while the prompt is open.
    let theirs = before.replace("line 18\n", "line eighteen\n");
    std::fs::write(&file, &theirs).unwrap();
    let screen = t.wait_for("changed on disk");
    assert!(screen.contains(TOOL_PROMPT), "still asking:\n{screen}");
    t.send_keys(&["1"]);
    t.wait_for("EXTERNAL-DONE");
    // Both changes are kept: the edit was applied to the new content, not the old.
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        theirs.replace("line 3\n", "line three\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_for_session_runs_the_same_command_again_without_asking() {
    require_tmux!();
    let (project, _) = project_with("README.md", "demo\n");
    let log = project.path().join("log.txt");
    let command = "echo run >> log.txt";
    let bash = |id: &str| {
        json!({"id": id, "name": "Bash",
               "input": {"command": command, "description": "Append to the log"}})
    };
    let s = server(json!({"turns": [
        {"tool_calls": [bash("toolu_bash_1")]},
        {"tool_calls": [bash("toolu_bash_2")]},
        {"text": "Logged twice. ALLOW-DONE"}
    ]}));
    let t = Tmux::start(&s, project.path(), &[]);
    t.submit("log twice");
    t.wait_for(TOOL_PROMPT);
    t.send_keys(&["2"]);
    let screens = t.wait_for_all("ALLOW-DONE");
    for screen in screens.iter().skip_while(|s| s.contains(TOOL_PROMPT)) {
        assert!(
            !screen.contains(TOOL_PROMPT),
            "the second call asked again:\n{screen}"
        );
    }
    assert!(
        screens.last().unwrap().contains("allowed for this session"),
        "{}",
        screens.last().unwrap()
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "run\nrun\n");
    for id in ["toolu_bash_1", "toolu_bash_2"] {
        let (text, is_error) = result_for(&s, id);
        assert!(!is_error, "{id}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e_opens_the_editor_and_approving_writes_the_persons_version() {
    require_tmux!();
    let original = "fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n";
    let (project, file) = project_with("add.rs", original);
    let path = file.to_string_lossy().into_owned();
    let s = server(json!({"turns": [
        {"tool_calls": [{"id": "toolu_read", "name": "Read", "input": {"file_path": path}}]},
        {"tool_calls": [{"id": "toolu_edit", "name": "Edit", "input": {
             "file_path": path, "old_string": "a + b", "new_string": "a.wrapping_add(b)"}}]},
        {"text": "Noted. EDITOR-DONE"}
    ]}));
    // The "editor" rewrites the proposal in place, as a person would, and exits 0.
    let t = Tmux::start_with_env(
        &s,
        project.path(),
        (120, 40),
        "EDITOR='sed -i s/wrapping_add/saturating_add/'",
        &[],
    );
    t.submit("stop add from overflowing");
    t.wait_for(TOOL_PROMPT);
    t.send_keys(&["e"]);
    let screen = t.wait_for("edited by you");
    assert!(
        screen.contains("a.saturating_add(b)"),
        "the diff shows the person's version:\n{screen}"
    );
    // Nothing is written before the answer.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    t.send_keys(&["1"]);
    t.wait_for("EDITOR-DONE");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "fn add(a: u32, b: u32) -> u32 {\n    a.saturating_add(b)\n}\n"
    );
    let (text, is_error) = result_for(&s, "toolu_edit");
    assert!(!is_error, "{text}");
    assert!(
        text.contains("saturating_add"),
        "the model is shown what the person changed: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_tab_accepts_edits_without_asking_and_slash_plan_enters_plan_mode() {
    require_tmux!();
    let (project, file) = project_with("greet.py", "print('hello')\n");
    let path = file.to_string_lossy().into_owned();
    let s = server(json!({"turns": [
        {"tool_calls": [{"id": "toolu_read", "name": "Read", "input": {"file_path": path}}]},
        {"tool_calls": [{"id": "toolu_edit", "name": "Edit", "input": {
             "file_path": path, "old_string": "hello", "new_string": "hi"}}]},
        {"text": "MODE-DONE"}
    ]}));
    let t = Tmux::start(&s, project.path(), &[]);
    let screen = t.wait_for("test-model");
    assert!(
        status_line(&screen).trim_start().starts_with("default"),
        "{screen}"
    );
    t.send_keys(&["BTab"]);
    let screen = t.wait_for("accept edits");
    assert!(status_line(&screen).contains("accept edits"), "{screen}");
    t.submit("say hi");
    let screens = t.wait_for_all("MODE-DONE");
    for screen in &screens {
        assert!(!screen.contains(TOOL_PROMPT), "the edit asked:\n{screen}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "print('hi')\n");

    // /diff shows what the session changed, in its own overlay.
    t.type_text("/diff");
    t.send_keys(&["Enter"]);
    let screen = t.wait_for("Session diff");
    assert!(screen.contains("1 file changed"), "{screen}");
    assert!(screen.contains("print('hi')"), "{screen}");
    t.send_keys(&["Escape"]);
    // Wait for the overlay to close: a key sent right after Esc would arrive as Alt+key.
    t.wait_until_gone("Session diff");

    t.type_text("/plan");
    t.send_keys(&["Enter"]);
    t.wait_until("plan mode in the status line", |s| {
        status_line(s).trim_start().starts_with("plan")
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_planning_sends_the_feedback_and_a_second_plan_can_be_approved_asking_for_edits() {
    require_tmux!();
    let (project, _) = project_with("README.md", "demo\n");
    let root = project.path().canonicalize().unwrap();
    let new_file = root.join("NOTES.md");
    let exit_plan =
        |id: &str, plan: &str| json!({"id": id, "name": "ExitPlanMode", "input": {"plan": plan}});
    let s = server(json!({"turns": [
        {"tool_calls": [exit_plan("toolu_plan_1", "1. Write NOTES.md in French")]},
        {"tool_calls": [exit_plan("toolu_plan_2", "1. Write NOTES.md in English")]},
        {"tool_calls": [{"id": "toolu_write", "name": "Write", "input": {
             "file_path": new_file.to_string_lossy(), "content": "notes\n"}}]},
        {"text": "REPLAN-DONE"}
    ]}));
    let t = Tmux::start(&s, project.path(), &["--permission-mode", "plan"]);
    t.submit("plan some notes");
    t.wait_for("in French");
    t.wait_for(PLAN_PROMPT);
    t.send_keys(&["3"]);
    t.type_text("in English please");
    t.send_keys(&["Enter"]);

    // The model revises; the mode is still plan. (The typed feedback also says "in English".)
    let screen = t.wait_until("the second plan's prompt", |s| {
        s.contains("NOTES.md in English") && s.contains(PLAN_PROMPT)
    });
    assert!(
        status_line(&screen).trim_start().starts_with("plan"),
        "{screen}"
    );
    let (text, is_error) = result_for(&s, "toolu_plan_1");
    assert!(is_error);
    assert!(text.contains("in English please"), "{text}");

    // 2: approve, but keep asking before edits: the Write gets a prompt.
    t.send_keys(&["2"]);
    let screen = t.wait_for(TOOL_PROMPT);
    assert!(
        status_line(&screen).trim_start().starts_with("default"),
        "{screen}"
    );
    assert!(screen.contains("NOTES.md"), "{screen}");
    assert!(!new_file.exists());
    t.send_keys(&["1"]);
    t.wait_for("REPLAN-DONE");
    assert_eq!(std::fs::read_to_string(&new_file).unwrap(), "notes\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wide_terminal_shows_the_diff_side_by_side_and_v_switches_back() {
    require_tmux!();
    let (project, file) = project_with("greet.py", "def greet():\n    print('hello')\n");
    let path = file.to_string_lossy().into_owned();
    let s = server(json!({"turns": [
        {"tool_calls": [{"id": "toolu_read", "name": "Read", "input": {"file_path": path}}]},
        {"tool_calls": [{"id": "toolu_edit", "name": "Edit", "input": {
             "file_path": path, "old_string": "print('hello')",
             "new_string": "print('hello, world')"}}]}
    ]}));
    let t = Tmux::start_with_env(&s, project.path(), (160, 40), "", &[]);
    t.submit("greet the world");
    let screen = t.wait_for(TOOL_PROMPT);
    // Side by side: the old line and the new one share a row.
    let row = |screen: &str| {
        screen
            .lines()
            .any(|l| l.contains("print('hello')") && l.contains("print('hello, world')"))
    };
    assert!(row(&screen), "side by side at 160 columns:\n{screen}");
    t.send_keys(&["v"]);
    t.wait_until("the unified layout after v", |s| {
        !row(s) && s.contains("print('hello, world')")
    });
}
