//! The real `cairn` binary in a real terminal: tmux runs it against the scripted model server on
//! 127.0.0.1; keys go in with send-keys and the screen comes back with capture-pane.
//!
//! Skipped (with a message) when tmux is not installed; CI installs it.

use serde_json::json;

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, require_tmux, server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_prompt_gets_a_streamed_answer() {
    require_tmux!();
    let s = server(
        json!({"turns": [{"text": "Hello from the scripted model. All good.",
                                     "chunk_chars": 5, "delay_ms": 10}]}),
    );
    let project = tempfile::tempdir().unwrap();
    let t = Tmux::start_with_env(&s, project.path(), (100, 30), "", &[]);
    t.submit("say hello");
    let screen = t.wait_for("All good.");
    assert!(
        screen.contains("say hello"),
        "the prompt stays visible:\n{screen}"
    );
    let body = s.requests()[0].body.to_string();
    assert!(body.contains("say hello"));
    // Ctrl+D on an empty composer quits and leaves the summary on the normal screen.
    t.send_keys(&["C-d"]);
    let screen = t.wait_for("cairn session");
    assert!(screen.contains("tokens in"), "{screen}");
    let screen = t.wait_for("cairn-exited=0");
    assert!(
        !screen.contains("Type a message"),
        "the UI is gone:\n{screen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resizing_mid_stream_reflows_and_keeps_streaming() {
    require_tmux!();
    let words: Vec<String> = (1..=40).map(|i| format!("word{i}")).collect();
    let text = format!("{} THE-END", words.join(" "));
    let s = server(json!({"turns": [{"text": text, "chunk_chars": 4, "delay_ms": 40}]}));
    let project = tempfile::tempdir().unwrap();
    let t = Tmux::start_with_env(&s, project.path(), (120, 30), "", &[]);
    t.submit("stream please");
    t.wait_for("word3");
    t.resize(60, 20);
    let screen = t.wait_for("THE-END");
    for line in screen.lines() {
        assert!(
            line.chars().count() <= 60,
            "line wider than the window: {line:?}"
        );
    }
    assert!(screen.contains("word40"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_line_command_and_output_style_from_the_settings() {
    require_tmux!();
    let s = server(json!({"turns": [{"text": "Styled answer.", "chunk_chars": 5}]}));
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(
        dir.join(".claude/settings.json"),
        r#"{"statusLine": {"type": "command", "command": "sh statusline.sh"},
            "outputStyle": "explanatory"}"#,
    )
    .unwrap();
    // Counts its runs, and shows fields of the JSON it was given.
    std::fs::write(
        dir.join("statusline.sh"),
        "input=$(cat)\nn=$(( $(cat runs 2>/dev/null || echo 0) + 1 ))\necho $n > runs\n\
         field() { printf '%s' \"$input\" | sed \"s/.*\\\"$1\\\":{\\\"[a-z_]*\\\":\\\"\\([^\\\"]*\\)\\\".*/\\1/\"; }\n\
         echo \"SL $(field model) $(field output_style) run $n\"\n",
    )
    .unwrap();
    let t = Tmux::start_with_env(&s, dir, (100, 30), "", &[]);
    let screen = t.wait_for("SL test-model Explanatory run");
    assert!(
        !screen.contains("(anthropic)"),
        "the built-in text gave way:\n{screen}"
    );
    t.submit("explain");
    t.wait_for("Styled answer.");
    // The turn's start and end ran it again.
    t.wait_until("a later run", |screen| {
        screen
            .lines()
            .any(|l| l.contains("SL test-model") && !l.contains("run 1"))
    });
    let system = s.requests()[0].body["system"].to_string();
    assert!(system.contains("# Output style: Explanatory"), "{system}");
    assert!(system.contains("# How to work"), "the built-in keeps them");
    t.send_keys(&["C-d"]);
    t.wait_for("cairn-exited=0");
}

/// Rewind in a real terminal: the model runs `sed -i` and writes a new file; Esc Esc, the
/// prompt, 3 (code only) puts both files back as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_esc_rewinds_the_code_changed_by_bash_and_write() {
    require_tmux!();
    let s = server(json!({"turns": [
        {"tool_calls": [
            {"id": "b", "name": "Bash", "input": {"command": "sed -i 's/alpha/ALPHA/' a.txt"}},
            {"id": "w", "name": "Write", "input": {"file_path": "new.txt", "content": "fresh\n"}}
        ]},
        {"text": "Changed both."}
    ]}));
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::write(dir.join("a.txt"), "alpha\n").unwrap();
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(
        dir.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash", "Write"]}}"#,
    )
    .unwrap();
    let t = Tmux::start_with_env(&s, dir, (100, 30), "", &[]);
    t.submit("change the files");
    t.wait_for("Changed both.");
    assert_eq!(
        std::fs::read_to_string(dir.join("a.txt")).unwrap(),
        "ALPHA\n"
    );
    assert!(dir.join("new.txt").exists());
    t.send_keys(&["Escape"]);
    std::thread::sleep(std::time::Duration::from_millis(150));
    t.send_keys(&["Escape"]);
    t.wait_for("rewind to before which prompt");
    t.send_keys(&["Enter"]);
    t.wait_for("3. Restore code only");
    t.send_keys(&["3"]);
    t.wait_for("1 removed");
    assert_eq!(
        std::fs::read_to_string(dir.join("a.txt")).unwrap(),
        "alpha\n"
    );
    assert!(!dir.join("new.txt").exists());
    t.send_keys(&["C-d"]);
    t.wait_for("cairn-exited=0");
}

/// The agent cell in a real terminal: the parent calls Agent; the sub-agent's Bash call waits
/// for a file the test creates, so the cell's live line is on screen for as long as the test
/// looks; then the sub-agent answers, the cell shows its done line, and Ctrl+O expands the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_cell_shows_the_live_line_then_the_done_line_and_ctrl_o_expands_it() {
    require_tmux!();
    let s = server(json!({
        "turns": [
            {"text": "Handing it to a helper.",
             "tool_calls": [{"id": "toolu_agent", "name": "Agent", "input": {
                 "description": "count the files", "prompt": "count the files here",
                 "subagent_type": "general-purpose"}}]},
            {"text": "The helper counted them. PARENT-DONE"}
        ],
        "by_system": [{"system_contains": "general-purpose agent", "turns": [
            {"tool_calls": [{"id": "toolu_sub_bash", "name": "Bash",
                             "input": {"command": "sh wait.sh", "description": "Count"}}]},
            {"text": "There are 3 files. SUB-REPORT"}
        ]}]
    }));
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    // Waits (at most 20 s, so nothing outlives a failed test) for the file `release`.
    std::fs::write(
        dir.join("wait.sh"),
        "for i in $(seq 400); do [ -f release ] && break; sleep 0.05; done\n\
         echo counted-3-files\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(
        dir.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Agent", "Bash(sh wait.sh)"]}}"#,
    )
    .unwrap();
    let t = Tmux::start_with_env(&s, dir, (100, 30), "", &[]);
    t.submit("how many files?");
    // While the sub-agent's Bash call runs: the live line names it and counts it.
    let screen = t.wait_for("⎿ Bash sh wait.sh · 1 tool use");
    assert!(
        screen.contains("general-purpose · count the files"),
        "the cell's title:\n{screen}"
    );
    assert!(!screen.contains("Done ("), "{screen}");
    std::fs::write(dir.join("release"), "").unwrap();
    let screen = t.wait_for("PARENT-DONE");
    assert!(
        screen.contains("⎿ Done (1 tool use · "),
        "the done line:\n{screen}"
    );
    assert!(screen.contains("(ctrl+o to expand)"), "{screen}");
    assert!(
        !screen.contains("Bash sh wait.sh ·"),
        "the live line is gone:\n{screen}"
    );
    // The report shows; the sub-agent's own calls and their output only expanded.
    assert!(screen.contains("There are 3 files. SUB-REPORT"), "{screen}");
    assert!(!screen.contains("counted-3-files"), "{screen}");
    t.send_keys(&["C-o"]);
    let screen = t.wait_for("counted-3-files");
    assert!(
        screen.contains("● Bash sh wait.sh"),
        "the call, done:\n{screen}"
    );
    assert!(!screen.contains("(ctrl+o to expand)"), "{screen}");
    // The sub-agent's report reached the parent as the Agent call's result.
    let last = s.requests().last().unwrap().body["messages"].to_string();
    assert!(last.contains("There are 3 files. SUB-REPORT"), "{last}");
    t.send_keys(&["C-d"]);
    t.wait_for("cairn-exited=0");
}

/// A repository in a folder the person never trusted: the trust question comes first, and
/// while it is on screen nothing of the folder's has run (no hook, no status line, no MCP
/// server, no request). After "1" its hook, status line and approved MCP server do run, and
/// the trust is recorded where Claude Code records it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trust_question_comes_before_anything_of_the_folder_runs() {
    require_tmux!();
    let s = server(json!({"turns": [{"text": "Trusted answer."}]}));
    let project = tempfile::tempdir().unwrap();
    let dir = project.path().canonicalize().unwrap();
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    let settings = json!({
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]},
        "statusLine": {"type": "command", "command": "sh status.sh"}
    });
    std::fs::write(dir.join(".claude/settings.json"), settings.to_string()).unwrap();
    std::fs::write(
        dir.join(".claude/settings.local.json"),
        r#"{"enabledMcpjsonServers": ["probe"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join(".mcp.json"),
        r#"{"mcpServers": {"probe": {"command": "sh", "args": ["-c", "touch mcp-ran; sleep 30"]}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("status.sh"),
        "touch status-ran\necho FOLDER-STATUS\n",
    )
    .unwrap();
    let t = Tmux::start_untrusted(&s, &dir);
    let screen = t.wait_for("Do you trust the files in this folder?");
    for shown in [
        "SessionStart: touch hook-ran",
        "sh status.sh",
        "probe",
        "› 2. No",
    ] {
        assert!(screen.contains(shown), "{shown} missing:\n{screen}");
    }
    for marker in ["hook-ran", "status-ran", "mcp-ran"] {
        assert!(!dir.join(marker).exists(), "{marker} ran before the answer");
    }
    assert!(s.requests().is_empty());
    t.send_keys(&["1"]);
    t.wait_for("FOLDER-STATUS");
    for marker in ["hook-ran", "mcp-ran"] {
        t.wait_for_file(&dir.join(marker), |c| c.is_some());
    }
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.home().join(".claude.json")).unwrap())
            .unwrap();
    assert_eq!(
        record["projects"][dir.to_string_lossy().as_ref()]["hasTrustDialogAccepted"],
        json!(true)
    );
    // (The folder's status line replaced the built-in one that `submit` waits for.)
    t.type_text("hello");
    t.send_keys(&["Enter"]);
    t.wait_for("Trusted answer.");
    t.send_keys(&["C-d"]);
    t.wait_for("cairn-exited=0");
}
