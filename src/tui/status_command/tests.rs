//! The status-line command: the throttle, when runs start, the input JSON, real `sh` runs and
//! the escape-sequence filter.

use std::path::PathBuf;

use super::*;
use crate::protocol::SessionInfo;

fn options(command: &str, dir: &Path, timeout: Duration) -> StatusCommandOptions {
    StatusCommandOptions {
        command: command.into(),
        padding: 0,
        project_dir: dir.to_path_buf(),
        transcript_path: dir.join("sess-1.jsonl"),
        output_style: "Explanatory".into(),
        env: vec![("STATUS_GREETING".into(), "ahoy".into())],
        timeout,
    }
}

fn configured() -> StatusState {
    StatusState {
        session: Some(SessionInfo {
            session_id: "sess-1".into(),
            model: "claude-sonnet-4-5-20250929".into(),
            model_label: String::new(),
            provider: "anthropic".into(),
            cwd: PathBuf::from("/work/project"),
            tools: Vec::new(),
            mode: PermissionMode::Default,
            demo: false,
            commands: Vec::new(),
            memory_files: Vec::new(),
            model_choices: Vec::new(),
            auto_compact_pct: 85,
            agents: Vec::new(),
        }),
        cost_usd: 0.25,
        ..StatusState::default()
    }
}

fn facts<'a>(status: &'a StatusState, cwd: &'a Path) -> Facts<'a> {
    Facts {
        status,
        cwd,
        lines_changed: (0, 0),
    }
}

fn text(line: &Line) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

#[test]
fn the_throttle_runs_one_at_a_time_and_coalesces_requests() {
    let t0 = Instant::now();
    let mut t = Throttle::new(Duration::from_millis(300));
    assert!(!t.start(t0), "nothing wanted yet");
    t.request();
    assert_eq!(t.due_at(t0), Some(t0));
    assert!(t.start(t0));
    t.request();
    t.request();
    assert_eq!(t.due_at(t0), None, "one runs: the next waits for it");
    assert!(!t.start(t0 + Duration::from_secs(1)));
    t.finished();
    let later = t0 + Duration::from_millis(100);
    assert_eq!(t.due_at(later), Some(t0 + Duration::from_millis(300)));
    assert!(!t.start(later), "too soon after the last start");
    assert!(t.start(t0 + Duration::from_millis(300)));
    t.finished();
    assert!(
        !t.start(t0 + Duration::from_secs(2)),
        "both requests made one run"
    );
}

#[test]
fn runs_start_once_the_session_is_configured_and_again_on_updates() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let mut cmd = StatusCommand::new(options("true", dir.path(), TIMEOUT), t0);
    let cwd = dir.path();
    let mut status = StatusState::default();
    cmd.observe(&Event::TextDelta { text: "x".into() });
    assert!(
        cmd.poll(&facts(&configured(), cwd), t0).is_none(),
        "text is no update"
    );
    cmd.observe(&Event::TurnStarted { turn_id: 1 });
    assert!(
        cmd.poll(&facts(&status, cwd), t0).is_none(),
        "not configured yet"
    );
    status = configured();
    let job = cmd.poll(&facts(&status, cwd), t0).unwrap();
    assert!(job.stdin.contains("\"session_id\":\"sess-1\""));
    assert_eq!(cmd.finished(&Ok(Line::raw("ok"))), Line::raw("ok"));
    // The person changed the mode (no core event): that is an update too.
    status.mode = PermissionMode::Plan;
    let later = t0 + MIN_GAP;
    assert!(cmd.poll(&facts(&status, cwd), later).is_some());
    assert_eq!(
        cmd.finished(&Err("failed (exit 1)".into())),
        Line::default()
    );
    assert!(cmd.poll(&facts(&status, cwd), later + MIN_GAP).is_none());
}

#[test]
fn the_input_json_has_claude_codes_shape() {
    let opts = options("x", Path::new("/work/project"), TIMEOUT);
    let status = configured();
    let facts = Facts {
        lines_changed: (12, 3),
        ..facts(&status, Path::new("/work/project/sub"))
    };
    let v = input_json(&opts, &facts, Duration::from_millis(1500));
    assert_eq!(v["hook_event_name"], "Status");
    assert_eq!(v["session_id"], "sess-1");
    assert_eq!(v["transcript_path"], "/work/project/sess-1.jsonl");
    assert_eq!(v["cwd"], "/work/project/sub");
    assert_eq!(v["model"]["id"], "claude-sonnet-4-5-20250929");
    assert_eq!(v["model"]["display_name"], "Sonnet 4.5");
    assert_eq!(v["workspace"]["current_dir"], "/work/project/sub");
    assert_eq!(v["workspace"]["project_dir"], "/work/project");
    assert_eq!(v["output_style"]["name"], "Explanatory");
    assert_eq!(v["cost"]["total_cost_usd"], 0.25);
    assert_eq!(v["cost"]["total_duration_ms"], 1500);
    assert_eq!(v["cost"]["total_lines_added"], 12);
    assert_eq!(v["cost"]["total_lines_removed"], 3);
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn display_names_of_models() {
    assert_eq!(display_name("claude-opus-4-1-20250805"), "Opus 4.1");
    assert_eq!(display_name("claude-3-5-haiku-20241022"), "Haiku 3.5");
    assert_eq!(display_name("claude-sonnet-4"), "Sonnet 4");
    assert_eq!(display_name("gpt-4o"), "gpt-4o");
    assert_eq!(display_name("claude-instant"), "claude-instant");
}

#[tokio::test]
async fn a_real_script_reads_the_json_and_its_first_line_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("statusline.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ninput=$(cat)\nprintf '%s' \"$input\" > seen.json\n\
         name=$(printf '%s' \"$input\" | sed 's/.*\"display_name\":\"\\([^\"]*\\)\".*/\\1/')\n\
         printf '\\033[1;32m%s\\033[0m in %s\\nsecond line\\n' \"$name\" \"$STATUS_GREETING\"\n",
    )
    .unwrap();
    let command = format!("sh {}", script.display());
    let mut opts = options(&command, dir.path(), TIMEOUT);
    opts.padding = 2;
    let mut cmd = StatusCommand::new(opts, Instant::now());
    cmd.observe(&crate::tui::app::tests::finished(1));
    let job = cmd
        .poll(&facts(&configured(), dir.path()), Instant::now())
        .unwrap();
    let line = job.run().await.unwrap();
    assert_eq!(text(&line), "  Sonnet 4.5 in ahoy");
    assert_eq!(
        line.spans[1].style,
        Style::default()
            .fg(Color::Green)
            .add_modifier(Modifier::BOLD)
    );
    // It ran in the project directory and was given the session's facts.
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(seen["session_id"], "sess-1");
    assert_eq!(seen["model"]["id"], "claude-sonnet-4-5-20250929");
}

#[tokio::test]
async fn a_hanging_script_is_killed_at_the_timeout_and_a_failing_one_shows_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = |command: &str| {
        let mut cmd = StatusCommand::new(
            options(command, dir.path(), Duration::from_millis(200)),
            Instant::now(),
        );
        cmd.observe(&Event::ModeChanged {
            mode: PermissionMode::Plan,
        });
        cmd.poll(&facts(&configured(), dir.path()), Instant::now())
            .unwrap()
    };
    let hung = run("echo early; sleep 30").run().await;
    assert!(
        hung.as_ref().is_err_and(|e| e.contains("timed out")),
        "{hung:?}"
    );
    let failed = run("echo partial; echo oops >&2; exit 3").run().await;
    assert_eq!(failed, Err("failed (exit 3) oops".into()));
    let empty = run("true").run().await;
    assert_eq!(empty, Ok(Line::default()));
}

#[test]
fn escape_sequences_are_dropped_and_sgr_kept_as_style() {
    let line = styled_line(
        "\u{1b}]0;title\u{7}\u{1b}[2J\u{1b}[38;5;208mor\u{1b}[39mange\tx\u{7}\u{1b}[48;2;1;2;3my\u{1b}[0m",
    );
    assert_eq!(text(&line), "orange xy");
    assert_eq!(line.spans[0].style.fg, Some(Color::Indexed(208)));
    assert_eq!(line.spans[1].style, Style::default());
    assert_eq!(line.spans[2].style.bg, Some(Color::Rgb(1, 2, 3)));
    assert_eq!(text(&styled_line(&"x".repeat(5000))).len(), MAX_CHARS);
}
