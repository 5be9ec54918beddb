//! The status-line command as the TUI drives it: the throttle, when runs start and what they
//! are told, and the escape-sequence filter. (The host's side, running the command, is tested
//! in `host::ops`.)

use std::path::PathBuf;

use super::*;
use crate::protocol::SessionInfo;

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
    let t0 = Instant::now();
    let mut cmd = StatusCommand::new(t0);
    let cwd = Path::new("/work/project");
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
    let input = cmd.poll(&facts(&status, cwd), t0).unwrap();
    assert_eq!(input.session_id, "sess-1");
    assert_eq!(cmd.finished(&Ok("ok".into())), Line::raw("ok"));
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
fn the_input_says_what_the_app_knows() {
    let status = configured();
    let facts = Facts {
        lines_changed: (12, 3),
        ..facts(&status, Path::new("/work/project/sub"))
    };
    assert_eq!(
        input(&facts, Duration::from_millis(1500)),
        StatusLineInput {
            session_id: "sess-1".into(),
            model: "claude-sonnet-4-5-20250929".into(),
            cwd: PathBuf::from("/work/project/sub"),
            cost_usd: 0.25,
            duration_ms: 1500,
            lines_added: 12,
            lines_removed: 3,
        }
    );
}

#[test]
fn the_hosts_text_is_styled_and_a_failure_shows_nothing() {
    let mut cmd = StatusCommand::new(Instant::now());
    let line = cmd.finished(&Ok("  \u{1b}[1;32mSonnet 4.5\u{1b}[0m in ahoy".into()));
    assert_eq!(text(&line), "  Sonnet 4.5 in ahoy");
    assert_eq!(
        line.spans[1].style,
        Style::default()
            .fg(Color::Green)
            .add_modifier(Modifier::BOLD)
    );
    assert_eq!(
        cmd.finished(&Err("failed (exit 3) oops".into())),
        Line::default()
    );
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
