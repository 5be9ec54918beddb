//! The full-screen terminal UI: a client of [`crate::protocol`] only.
//!
//! [`run`] sets the terminal up ([`terminal`]), builds the [`app::App`] state and drives it with
//! the [`event_loop`] until the person quits, then restores the terminal and returns the
//! one-line summary `main` prints on the normal screen.
//!
//! Modules: `app` (state and logic, no terminal), `render` (drawing the app), `input` (our input
//! type, converted from crossterm at the edge), `keymap` (bindings as data), `composer`,
//! `picker`, `prompt` (the permission prompt panel with its diff review), `session_diff`
//! (`/diff`), `status` (status line and header), `status_command` (when to ask the host for the
//! settings' `statusLine` text, and styling it), `shell`
//! (`!command`), `terminal`, `event_loop`, `trust_dialog` (the folder-trust question, asked
//! before the session starts). The conversation view (`conversation`, `markdown`,
//! `highlight`, `theme`) is drawn by its own modules; `untrusted` makes text from the model, a
//! file or a server safe to show as data.

pub mod app;
pub mod composer;
pub mod conversation;
pub mod event_loop;
pub mod highlight;
pub mod input;
pub mod keymap;
pub mod markdown;
pub mod overlay;
pub mod picker;
pub mod prompt;
pub mod render;
pub mod session_diff;
pub mod shell;
pub mod status;
pub mod status_command;
pub mod task_view;
pub mod tasks;
pub mod terminal;
pub mod theme;
pub mod trust_dialog;
pub mod untrusted;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use futures::{StreamExt, future};
use ratatui::crossterm::event::EventStream;

pub mod review;

use crate::protocol::Connection as AgentHandle;
use crate::protocol::Op;
use app::{App, AppConfig};
use composer::history::{History, history_path};
use event_loop::{LoopOptions, run_loop};
use highlight::Highlighter;
use terminal::{TerminalGuard, install_panic_hook};

/// Options the TUI needs beyond the agent handle.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    /// Submitted as the first prompt.
    pub initial_prompt: Option<String>,
    /// Shown in the conversation before anything else (e.g. "running the demo").
    pub notices: Vec<String>,
    /// Shown as errors before anything else (e.g. broken settings: only read-only tools run).
    pub errors: Vec<String>,
    /// The data dir: prompt history is kept per project under `<data_dir>/history/`. `None`:
    /// history lives only as long as the session.
    pub data_dir: Option<PathBuf>,
    /// The project directory (header, `!command`, `@` picker). `None`: the current directory.
    pub cwd: Option<PathBuf>,
    /// Started in bypassPermissions: Shift+Tab may cycle back into it.
    pub bypass_allowed: bool,
    /// When the process started, for `CAIRN_TRACE_FIRST_FRAME=1` (logs the time to the first
    /// frame). `None`: measured from the call to [`run`].
    pub started_at: Option<Instant>,
    /// The settings have a `statusLine` command: the event loop asks the host to run it.
    pub status_line: bool,
    /// Open the session picker first (`--resume` without an id).
    pub pick_session: bool,
}

/// Run the TUI until the person quits. Returns the one-line summary printed after exit.
pub async fn run(handle: AgentHandle, opts: TuiOptions) -> anyhow::Result<String> {
    let called_at = Instant::now();
    let AgentHandle {
        ops, mut events, ..
    } = handle;
    let cwd = opts
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let history = match &opts.data_dir {
        Some(dir) => History::load(history_path(dir, &cwd)),
        None => History::in_memory(Vec::new()),
    };
    let config = AppConfig {
        cwd: cwd.clone(),
        bypass_allowed: opts.bypass_allowed,
        highlighter: Highlighter::new(),
    };
    let mut app = App::new(config, history, ops.clone());
    app.watch_mcp();
    app.watch_lsp();
    if opts.pick_session {
        app.ask_saved_sessions();
    }
    for error in &opts.errors {
        app.push_notice(conversation::NoticeKind::Error, error);
    }
    for notice in &opts.notices {
        app.push_notice(conversation::NoticeKind::Info, notice);
    }
    if let Some(prompt) = opts.initial_prompt.filter(|p| !p.trim().is_empty()) {
        app.send_initial_prompt(prompt);
    }

    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "the full-screen UI needs a terminal (stdin or stdout is not one); use -p for \
             headless mode"
        );
    }
    install_panic_hook();
    let mut guard = TerminalGuard::enter()?;
    let input = EventStream::new()
        .take_while(|r| future::ready(r.is_ok()))
        .filter_map(|r| future::ready(r.ok().and_then(input::from_crossterm)));
    let trace = std::env::var_os("CAIRN_TRACE_FIRST_FRAME").is_some();
    let loop_opts = LoopOptions {
        cwd,
        trace_first_frame: trace.then(|| opts.started_at.unwrap_or(called_at)),
        editor: None,
        status_line: opts.status_line,
    };
    let result = tokio::select! {
        result = run_loop(&mut app, &mut guard, Box::pin(input), &mut events, loop_opts) => result,
        // Killed or the terminal hung up: still leave the terminal as it was.
        () = terminated() => Ok(()),
    };
    guard.leave();
    let _ = ops.send(Op::Shutdown);
    result?;
    Ok(app.exit_summary())
}

/// Resolves on SIGTERM or SIGHUP (never, if the handlers cannot be installed).
async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::*;

    #[tokio::test]
    async fn refuses_to_start_without_a_terminal() {
        // Under the test harness stdin/stdout are not a terminal.
        if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
            return;
        }
        let (ops, _ops_rx) = mpsc::unbounded_channel();
        let (_events_tx, events) = mpsc::unbounded_channel();
        let err = run(
            AgentHandle {
                session_id: "s".into(),
                ops,
                events,
            },
            TuiOptions::default(),
        )
        .await
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "the full-screen UI needs a terminal (stdin or stdout is not one); use -p for \
                 headless mode"
            )
        );
    }
}
