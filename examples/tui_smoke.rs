//! A stand-in core for trying the TUI by hand (and in tmux) before the real agent is wired:
//! every prompt is answered with a short streamed reply; a prompt containing "perm" first asks
//! for permission; Esc interrupts. Logs go to `$TMPDIR/cairn-tui-smoke.log`
//! (`CAIRN_TRACE_FIRST_FRAME=1` adds the time to the first frame).
//!
//! `cargo run --example tui_smoke`

use std::time::{Duration, Instant};

use cairn::agent::AgentHandle;
use cairn::protocol::{
    Decision, Display, Event, Op, PermissionMode, PermissionRequest, RequestKind, SessionInfo,
    TurnEnd, Usage,
};
use cairn::tui::{TuiOptions, run};
use serde_json::json;
use tokio::sync::mpsc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let started_at = Instant::now();
    let log = std::env::temp_dir().join("cairn-tui-smoke.log");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)?;
    tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .init();

    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    let cwd = std::env::current_dir()?;
    tokio::spawn(fake_core(ops_rx, ev_tx, cwd.clone()));
    let opts = TuiOptions {
        initial_prompt: std::env::args().nth(1),
        data_dir: Some(std::env::temp_dir().join("cairn-tui-smoke")),
        cwd: Some(cwd),
        bypass_allowed: false,
        started_at: Some(started_at),
    };
    let handle = AgentHandle {
        ops: ops_tx,
        events: ev_rx,
    };
    let summary = run(handle, opts).await?;
    println!("{summary}");
    Ok(())
}

async fn fake_core(
    mut ops: mpsc::UnboundedReceiver<Op>,
    events: mpsc::UnboundedSender<Event>,
    cwd: std::path::PathBuf,
) {
    let _ = events.send(Event::SessionConfigured(SessionInfo {
        session_id: "smoke-0001".into(),
        model: "scripted".into(),
        provider: "demo".into(),
        cwd,
        tools: vec![],
        mode: PermissionMode::Default,
        demo: true,
    }));
    let mut turn = 0;
    let mut total = Usage::default();
    while let Some(op) = ops.recv().await {
        match op {
            Op::Submit { text } => {
                turn += 1;
                let _ = events.send(Event::TurnStarted { turn_id: turn });
                if text.contains("perm") {
                    let _ = events.send(Event::PermissionRequest(PermissionRequest {
                        id: turn,
                        call_id: format!("call-{turn}"),
                        tool: "Bash".into(),
                        title: "Bash npm test".into(),
                        input: json!({"command": "npm test"}),
                        reason: "Bash commands ask before running".into(),
                        preview: Some(Display::Command {
                            command: "npm test".into(),
                            stdout: String::new(),
                            stderr: String::new(),
                            exit_code: None,
                            timed_out: false,
                        }),
                        session_scope: Some("npm test *".into()),
                        saveable_rule: Some("Bash(npm test *)".into()),
                        kind: RequestKind::Tool,
                    }));
                    match ops.recv().await {
                        Some(Op::PermissionDecision { decision, .. }) => {
                            let _ = events.send(Event::Notice {
                                message: format!("decision: {decision:?}"),
                            });
                            if matches!(decision, Decision::DenyOnce) {
                                finish(&events, turn, TurnEnd::Completed);
                                continue;
                            }
                        }
                        Some(Op::Shutdown) | None => return,
                        Some(_) => {}
                    }
                }
                let reply = format!(
                    "You said: {text}. This is a scripted answer, streamed word by word so the view can be watched."
                );
                let mut interrupted = false;
                for word in reply.split_inclusive(' ') {
                    tokio::select! {
                        op = ops.recv() => match op {
                            Some(Op::Interrupt) => { interrupted = true; break; }
                            Some(Op::Shutdown) | None => return,
                            _ => {}
                        },
                        () = tokio::time::sleep(Duration::from_millis(40)) => {
                            let _ = events.send(Event::TextDelta { text: word.into() });
                        }
                    }
                }
                let last = Usage {
                    input_tokens: 1200,
                    output_tokens: 80,
                    cache_creation_input_tokens: 0,
                    cache_read_input_tokens: 4000,
                };
                total.add(&last);
                let _ = events.send(Event::Usage {
                    last,
                    total,
                    total_cost_usd: total.output_tokens as f64 * 0.000015,
                    context_window: 200_000,
                });
                let end = if interrupted {
                    TurnEnd::Interrupted
                } else {
                    TurnEnd::Completed
                };
                finish(&events, turn, end);
            }
            Op::SetMode { mode } => {
                let _ = events.send(Event::ModeChanged { mode });
            }
            Op::Shutdown => return,
            Op::Interrupt | Op::PermissionDecision { .. } => {}
        }
    }
}

fn finish(events: &mpsc::UnboundedSender<Event>, turn: u64, end: TurnEnd) {
    let _ = events.send(Event::TurnFinished {
        turn_id: turn,
        end,
        text: String::new(),
        num_turns: 1,
    });
}
