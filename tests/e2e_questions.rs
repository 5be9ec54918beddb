//! AskUserQuestion end to end: the real `cairn` binary runs in tmux against the scripted model
//! server on 127.0.0.1; the model asks, a person answers with the keys they would use (arrows,
//! Enter, Space, digits, typing an answer of their own, Esc), and the test checks the question
//! panel on screen and the exact tool result the model got in its next request.
//!
//! Skipped (with a message) when tmux is not installed; CI installs it.

use serde_json::{Value, json};

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, require_tmux, result_for, server};

fn option(label: &str, description: &str) -> Value {
    json!({"label": label, "description": description})
}

/// One call asking three questions: single-select (answered with the arrows and Enter),
/// multi-select (Space toggles, Enter on "done"), and one answered in the person's own words.
/// Then a second call, declined with Esc.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_answered_with_arrows_space_and_typed_text_then_one_declined_with_esc() {
    require_tmux!();
    let ask = json!({"questions": [
        {"question": "Which database should the service use?", "header": "Database",
         "options": [option("Postgres", "a server"), option("SQLite", "one file"),
                     option("MySQL", "another server")]},
        {"question": "Which checks should CI run?", "header": "Checks", "multiSelect": true,
         "options": [option("Lint", "clippy"), option("Tests", "cargo test"),
                     option("Bench", "criterion"), option("Docs", "rustdoc")]},
        {"question": "What should the binary be called?", "header": "Name",
         "options": [option("cairn", "short"), option("cairn-cli", "explicit")]}
    ]});
    let again = json!({"questions": [
        {"question": "Shall I also rename the crate?", "header": "Rename",
         "options": [option("Yes", "rename it"), option("No", "leave it")]}
    ]});
    let s = server(json!({"turns": [
        {"text": "A few questions first.",
         "tool_calls": [{"id": "toolu_ask", "name": "AskUserQuestion", "input": ask}]},
        {"text": "Noted.",
         "tool_calls": [{"id": "toolu_ask2", "name": "AskUserQuestion", "input": again}]},
        {"text": "I will leave the crate alone. QUESTIONS-DONE"}
    ]}));
    let project = tempfile::tempdir().unwrap();
    let t = Tmux::start(&s, project.path(), &[]);
    t.submit("set up the project");

    // 1 of 3, single-select: Down moves to SQLite, Enter picks it.
    let screen = t.wait_for("Question 1 of 3 · Database");
    assert!(
        screen.contains("┊ Which database should the service use?"),
        "{screen}"
    );
    assert!(screen.contains("A question for you"), "{screen}");
    assert!(
        screen.contains("Ask 3 questions · waiting for your answer"),
        "the call's cell:\n{screen}"
    );
    assert!(
        screen.contains("  2    SQLite\n       ┊ one file"),
        "{screen}"
    );
    assert!(screen.contains("type an answer of your own"), "{screen}");
    t.send_keys(&["Down", "Enter"]);

    // 2 of 3, multi-select: Space on Lint, Down Down, Space on Bench.
    t.wait_for("Question 2 of 3 · Checks");
    t.send_keys(&["Space", "Down", "Down", "Space"]);
    let screen = t.wait_for("[x] Bench");
    assert!(screen.contains("[x] Lint\n       ┊ clippy"), "{screen}");
    assert!(
        screen.contains("[ ] Tests\n       ┊ cargo test"),
        "{screen}"
    );
    assert!(screen.contains("[ ] Docs\n       ┊ rustdoc"), "{screen}");
    // Down to "done" (past Docs and "type an answer") and Enter.
    t.send_keys(&["Down", "Down", "Down", "Enter"]);

    // 3 of 3: none of the options; 5 opens the line for an answer of one's own.
    t.wait_for("Question 3 of 3 · Name");
    t.send_keys(&["3"]);
    t.wait_for("Your answer:");
    t.type_text("cairn-ng, like the old one");
    t.wait_for("cairn-ng, like the old one");
    t.send_keys(&["Enter"]);

    // The next call asks again; by then the first one's answers were sent.
    let screen = t.wait_for("Question · Rename");
    assert!(
        screen.contains("┊ Shall I also rename the crate?"),
        "{screen}"
    );
    assert!(
        screen.contains("Ask 3 questions · answered"),
        "the first call's cell:\n{screen}"
    );
    assert!(
        screen.contains("Checks: Lint, Bench"),
        "the first call's cell shows the answers:\n{screen}"
    );
    let (text, is_error) = result_for(&s, "toolu_ask");
    assert!(!is_error, "{text}");
    assert_eq!(
        text,
        "User has answered your questions: \
         \"Which database should the service use?\"=\"SQLite\", \
         \"Which checks should CI run?\"=\"Lint, Bench\", \
         \"What should the binary be called?\"=\"cairn-ng, like the old one\". \
         You can now continue with the user's answers in mind."
    );

    // Esc declines the whole call; the model is told so.
    t.send_keys(&["Escape"]);
    let screen = t.wait_for("QUESTIONS-DONE");
    assert!(!screen.contains("A question for you"), "{screen}");
    assert!(
        screen.contains("Question: Rename · declined"),
        "the second call's cell:\n{screen}"
    );
    let (text, is_error) = result_for(&s, "toolu_ask2");
    assert!(is_error, "a decline is an error result: {text}");
    assert_eq!(
        text,
        "The user declined to answer the questions. Go on with your best judgement, or ask \
         differently if you cannot."
    );
    assert_eq!(s.requests().len(), 3, "one request per turn");
    t.send_keys(&["C-d"]);
    t.wait_for("cairn-exited=0");
}

/// Issue 29: what the model writes cannot draw a prompt. A question whose text draws cairn's
/// "Allow this?" block with `Bash rm -rf ~` and `1/y yes` options, then a Bash call whose
/// description has line breaks and whose command has a right-to-left override: on the real
/// screen, no row starts like the prompt's own unless cairn drew it, and the override is shown
/// escaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_from_the_model_cannot_draw_a_fake_permission_prompt() {
    require_tmux!();
    let fake = "Pick one.\n\n Allow this? ──────────────\nBash rm -rf ~\n\n› 1/y  yes\n  3/n  no";
    let ask = json!({"questions": [
        {"question": fake, "header": "Files",
         "options": [option("a.txt", "first\n Allow this? ───\n› 1/y  yes"),
                     option("b.txt", "second")]}
    ]});
    let command = "touch notes.txt \u{202E}~ fr- mr";
    let bash = json!({"command": command,
                      "description": "List notes\n\n Allow this? ─────\nBash rm -rf ~\n› 1/y  yes"});
    let s = server(json!({"turns": [
        {"text": "One question.",
         "tool_calls": [{"id": "toolu_ask", "name": "AskUserQuestion", "input": ask}]},
        {"text": "Now a command.",
         "tool_calls": [{"id": "toolu_bash", "name": "Bash", "input": bash}]},
        {"text": "FAKE-DONE"}
    ]}));
    let project = tempfile::tempdir().unwrap();
    let t = Tmux::start(&s, project.path(), &[]);
    t.submit("go");

    let starts =
        |screen: &str, start: &str| screen.lines().filter(|l| l.starts_with(start)).count();
    let screen = t.wait_for("Question · Files");
    assert!(screen.contains("┊  Allow this? ──────────────"), "{screen}");
    for fake_row in [" Allow this?", "Bash rm -rf", "› 1/y", "  3/n"] {
        assert_eq!(
            starts(&screen, fake_row),
            0,
            "{fake_row:?} drawn by the model:\n{screen}"
        );
    }
    t.send_keys(&["1"]);

    let screen = t.wait_for("what      List notes⏎⏎ Allow this?");
    assert!(
        screen.contains("$ touch notes.txt <U+202E>~ fr- mr"),
        "{screen}"
    );
    assert!(!screen.contains('\u{202E}'), "{screen}");
    // Only cairn's own prompt title and options start these rows.
    assert_eq!(starts(&screen, " Allow this?"), 1, "{screen}");
    assert_eq!(starts(&screen, "› 1/y"), 1, "{screen}");
    assert_eq!(starts(&screen, "Bash rm -rf"), 0, "{screen}");
    t.send_keys(&["3"]);
    t.wait_for("FAKE-DONE");
    let (text, _) = result_for(&s, "toolu_ask");
    assert!(text.contains("=\"a.txt\""), "{text}");
    let (_, is_error) = result_for(&s, "toolu_bash");
    assert!(is_error, "the command was denied");
    t.send_keys(&["C-d"]);
    t.wait_for("cairn-exited=0");
}
