//! The event loop: one `tokio::select!` with `biased;` over, in priority order,
//!
//! 1. core events (cheap to fold in, and the person is waiting for them),
//! 2. terminal input (already converted to [`InputEvent`]; the stream is a parameter so tests
//!    inject keys),
//! 3. results of background work the app asked for (shell commands, file walks and matches),
//! 4. the frame timer.
//!
//! The `statusLine` command ([`StatusCommand`]) is asked of the session's host here, when the
//! core events it watches ask for it and its throttle allows; its line comes back as a host
//! event on the core's channel.
//!
//! Producers only mark the app dirty; drawing happens here, only when something changed, at most
//! once per [`FRAME`] (60 fps). A due frame is drawn at the top of every iteration before
//! waiting, so a flood of core events cannot starve the screen: output lags by at most a frame.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt};
use tokio::sync::mpsc;

use crate::protocol::{Event, HostEvent, HostOp};
use crate::tui::app::{App, AppAction, AppEvent};
use crate::tui::input::InputEvent;
use crate::tui::picker::files;
use crate::tui::shell;
use crate::tui::status_command::{Facts, StatusCommand};
use crate::tui::terminal::Screen;

/// The shortest time between two frames (60 fps).
pub const FRAME: Duration = Duration::from_micros(16_667);
/// How often spinners and elapsed times advance while something runs.
const ANIMATION: Duration = Duration::from_millis(100);
/// How long to sleep when nothing is due (any event wakes the loop earlier).
const IDLE: Duration = Duration::from_secs(3600);

/// Options of one run of the loop.
#[derive(Debug, Clone, Default)]
pub struct LoopOptions {
    /// Where `!command`s run and the `@` picker walks.
    pub cwd: PathBuf,
    /// When set, log the time from this instant to the first frame (CAIRN_TRACE_FIRST_FRAME).
    pub trace_first_frame: Option<Instant>,
    /// The editor command line for `e` in an edit prompt; `None`: `$VISUAL`, `$EDITOR`, `vi`.
    pub editor: Option<String>,
    /// The settings have a `statusLine` command (the host runs it).
    pub status_line: bool,
}

/// Run until the app asks to quit or the input ends.
pub async fn run_loop<S, I>(
    app: &mut App,
    screen: &mut S,
    mut input: I,
    core: &mut mpsc::UnboundedReceiver<Event>,
    opts: LoopOptions,
) -> anyhow::Result<()>
where
    S: Screen,
    I: Stream<Item = InputEvent> + Unpin,
{
    let (bg_tx, mut bg_rx) = mpsc::unbounded_channel::<AppEvent>();
    screen.draw(app)?;
    let mut last_draw = Instant::now();
    if let Some(start) = opts.trace_first_frame {
        // The wall-clock time lets a script that noted the time before exec measure the whole
        // startup, process creation included.
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        tracing::info!(
            "first frame drawn {:.1} ms after start (unix_ms={unix_ms})",
            last_draw.duration_since(start).as_secs_f64() * 1000.0
        );
    }
    let mut core_open = true;
    let mut status_command = opts.status_line.then(|| {
        // Configured: the built-in text gives way at once, not when the first run ends.
        app.session.status.command_line = Some(Default::default());
        StatusCommand::new(Instant::now())
    });
    loop {
        let now = Instant::now();
        let facts = Facts {
            status: &app.session.status,
            cwd: &app.session.cwd,
            lines_changed: app.session.changes.lines_changed(),
        };
        if let Some(input) = status_command.as_mut().and_then(|s| s.poll(&facts, now)) {
            app.send_host(HostOp::StatusLine { input });
        }
        if app.needs_redraw() && now >= last_draw + FRAME {
            screen.draw(app)?;
            last_draw = now;
        }
        let mut deadline = if app.needs_redraw() {
            last_draw + FRAME
        } else if app.is_animating() {
            last_draw + ANIMATION
        } else {
            now + IDLE
        };
        if let Some(due) = status_command.as_ref().and_then(|s| s.due_at(now)) {
            deadline = deadline.min(due);
        }
        let actions = tokio::select! {
            biased;
            event = core.recv(), if core_open => {
                match event {
                    Some(Event::Host(HostEvent::StatusLine { text })) => {
                        if let Some(s) = &mut status_command {
                            let line = s.finished(&text);
                            app.handle_app_event(AppEvent::StatusLine(Ok(line)));
                        }
                    }
                    Some(event) => {
                        if let Some(s) = &mut status_command {
                            s.observe(&event);
                        }
                        app.handle_core_event(&event);
                    }
                    None => {
                        core_open = false;
                        app.core_stopped();
                    }
                }
                app.take_actions()
            }
            input = input.next() => match input {
                Some(input) => app.handle_input(input),
                // The terminal is gone: nothing more can be typed.
                None => vec![AppAction::Quit],
            },
            Some(event) = bg_rx.recv() => app.handle_app_event(event),
            _ = tokio::time::sleep_until(deadline.into()) => {
                app.tick(Instant::now());
                Vec::new()
            }
        };
        for action in actions {
            if !perform(action, app, screen, &bg_tx, &opts)? {
                return Ok(());
            }
        }
    }
}

/// Do one action. Returns false to quit.
fn perform<S: Screen>(
    action: AppAction,
    app: &mut App,
    screen: &mut S,
    bg: &mpsc::UnboundedSender<AppEvent>,
    opts: &LoopOptions,
) -> anyhow::Result<bool> {
    match action {
        AppAction::Quit => return Ok(false),
        AppAction::Suspend => {
            screen.suspend()?;
            app.mark_dirty();
        }
        AppAction::Repaint => {
            screen.repaint()?;
            app.mark_dirty();
        }
        AppAction::CopyToClipboard(text) => screen.copy_to_clipboard(&text)?,
        AppAction::RunShell { command } => {
            let bg = bg.clone();
            let cwd = opts.cwd.clone();
            tokio::spawn(async move {
                let _ = bg.send(shell::run_shell(command, &cwd).await);
            });
        }
        AppAction::ListFiles { root } => {
            let bg = bg.clone();
            tokio::task::spawn_blocking(move || {
                let list = files::list_files(&root);
                let _ = bg.send(AppEvent::FilesListed(list.into()));
            });
        }
        AppAction::MatchFiles {
            request_id,
            query,
            files,
        } => {
            let bg = bg.clone();
            tokio::task::spawn_blocking(move || {
                let paths = files::match_files(&files, &query);
                let _ = bg.send(AppEvent::FilesMatched { request_id, paths });
            });
        }
        AppAction::EditInEditor {
            request_id,
            path,
            content,
        } => {
            let result = edit(screen, opts, &path, &content)?;
            app.editor_finished(request_id, result);
            app.mark_dirty();
        }
        AppAction::EditMemoryFile { path, content } => {
            let result = edit(screen, opts, &path, &content)?;
            app.memory_edited(&path, &content, result);
            app.mark_dirty();
        }
    }
    Ok(true)
}

/// Run the editor on `content` (file name from `path`) with the terminal released; the text
/// it left, or why it failed. Core events wait in their channel meanwhile.
fn edit<S: Screen>(
    screen: &mut S,
    opts: &LoopOptions,
    path: &std::path::Path,
    content: &str,
) -> anyhow::Result<Result<String, String>> {
    let mut result = Err("the editor did not start".to_string());
    screen.release_for(&mut || {
        let edited = match &opts.editor {
            Some(editor) => crate::tui::prompt::editor::edit_with(editor, path, content),
            None => crate::tui::prompt::editor::edit_in_editor(path, content),
        };
        result = edited.map_err(|e| e.to_string());
    })?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use futures::channel::mpsc as fmpsc;

    use super::*;
    use crate::protocol::{Op, PermissionMode};
    use crate::tui::app::AppConfig;
    use crate::tui::app::tests::{finished, session};
    use crate::tui::composer::history::History;
    use crate::tui::highlight::Highlighter;
    use crate::tui::input::{Key, KeyInput};
    use crate::tui::terminal::{TestScreen, osc52};

    fn app(ops: mpsc::UnboundedSender<Op>) -> App {
        let config = AppConfig {
            cwd: PathBuf::from("/work/project"),
            bypass_allowed: false,
            highlighter: Highlighter::plain(),
        };
        App::new(config, History::in_memory(Vec::new()), ops)
    }

    /// The loop with the default options, to the end of input.
    async fn run_default(
        app: &mut App,
        screen: &mut TestScreen,
        input: fmpsc::UnboundedReceiver<InputEvent>,
        core: &mut mpsc::UnboundedReceiver<Event>,
    ) {
        let looped = run_loop(app, screen, input, core, LoopOptions::default());
        looped.await.unwrap();
    }

    fn keys(tx: &fmpsc::UnboundedSender<InputEvent>, text: &str) {
        for c in text.chars() {
            let code = if c == '\n' { Key::Enter } else { Key::Char(c) };
            tx.unbounded_send(InputEvent::Key(KeyInput::plain(code)))
                .unwrap();
        }
    }

    #[tokio::test]
    async fn keys_in_ops_out_and_copy_reaches_the_clipboard() {
        let (ops_tx, mut ops_rx) = mpsc::unbounded_channel();
        let (core_tx, mut core_rx) = mpsc::unbounded_channel();
        let (in_tx, in_rx) = fmpsc::unbounded();
        let mut app = app(ops_tx);
        let mut screen = TestScreen::new(60, 12);
        core_tx.send(session(PermissionMode::Default)).unwrap();
        let driver = async {
            keys(&in_tx, "hi\n");
            assert_eq!(ops_rx.recv().await, Some(Op::Submit { text: "hi".into() }));
            core_tx
                .send(Event::TextDelta {
                    text: "hello back".into(),
                })
                .unwrap();
            core_tx.send(finished(1)).unwrap();
            keys(&in_tx, "/copy\n");
            in_tx
                .unbounded_send(InputEvent::Key(KeyInput::ctrl('d')))
                .unwrap();
        };
        let looped = run_loop(
            &mut app,
            &mut screen,
            in_rx,
            &mut core_rx,
            LoopOptions::default(),
        );
        let (result, ()) = tokio::join!(looped, driver);
        result.unwrap();
        assert_eq!(screen.clipboard, [osc52("hello back")]);
        assert!(screen.text().starts_with(" cairn /work/project\n"));
        assert!(!app.is_turn_running());
    }

    #[tokio::test]
    async fn a_flood_of_deltas_is_drawn_in_few_frames_and_input_end_quits() {
        let (ops_tx, _ops_rx) = mpsc::unbounded_channel();
        let (core_tx, mut core_rx) = mpsc::unbounded_channel();
        let (in_tx, in_rx) = fmpsc::unbounded();
        let mut app = app(ops_tx);
        let mut screen = TestScreen::new(60, 12);
        for i in 0..2000 {
            core_tx
                .send(Event::TextDelta {
                    text: format!("w{i} "),
                })
                .unwrap();
        }
        drop(core_tx);
        drop(in_tx);
        run_default(&mut app, &mut screen, in_rx, &mut core_rx).await;
        // Generous bound: frames are capped at 60 fps, never one per delta.
        assert!(screen.draws < 200, "{} draws", screen.draws);
        assert_eq!(
            app.conversation().len(),
            2,
            "the answer and the stop notice"
        );
    }

    #[tokio::test]
    async fn ctrl_z_suspends_through_the_screen_and_the_loop_goes_on() {
        let (ops_tx, _ops_rx) = mpsc::unbounded_channel();
        let (_core_tx, mut core_rx) = mpsc::unbounded_channel();
        let (in_tx, in_rx) = fmpsc::unbounded();
        let mut app = app(ops_tx);
        let mut screen = TestScreen::new(40, 10);
        in_tx
            .unbounded_send(InputEvent::Key(KeyInput::ctrl('z')))
            .unwrap();
        in_tx
            .unbounded_send(InputEvent::Key(KeyInput::ctrl('l')))
            .unwrap();
        keys(&in_tx, "after");
        drop(in_tx);
        run_default(&mut app, &mut screen, in_rx, &mut core_rx).await;
        assert_eq!(screen.suspended, 1);
        assert_eq!(screen.repaints, 1);
        assert_eq!(app.composer_text(), "after");
    }

    #[tokio::test]
    async fn e_runs_the_editor_with_the_terminal_released_and_its_text_is_approved() {
        use crate::protocol::{Decision, Display, PermissionRequest, RequestKind};
        let (ops_tx, mut ops_rx) = mpsc::unbounded_channel();
        let (core_tx, mut core_rx) = mpsc::unbounded_channel();
        let (in_tx, in_rx) = fmpsc::unbounded();
        let mut app = app(ops_tx);
        let mut screen = TestScreen::new(80, 30);
        core_tx
            .send(Event::PermissionRequest(PermissionRequest {
                id: 7,
                call_id: "call-7".into(),
                tool: "Write".into(),
                title: "Write notes.txt".into(),
                input: serde_json::json!({"file_path": "/work/project/notes.txt"}),
                reason: String::new(),
                preview: Some(Display::Diff {
                    path: PathBuf::from("/work/project/notes.txt"),
                    before: "one\n".into(),
                    after: "one\ntwo\n".into(),
                }),
                session_scope: None,
                saveable_rule: None,
                background_task: None,
                kind: RequestKind::Tool,
            }))
            .unwrap();
        keys(&in_tx, "e1");
        drop(in_tx);
        let opts = LoopOptions {
            // A real program edits the file the way a person would.
            editor: Some("sed -i s/two/TWO/".into()),
            ..LoopOptions::default()
        };
        run_loop(&mut app, &mut screen, in_rx, &mut core_rx, opts)
            .await
            .unwrap();
        assert_eq!(screen.released, 1);
        let op = ops_rx.try_recv().unwrap();
        let Op::PermissionDecision {
            request_id: 7,
            decision: Decision::AllowEdited { content, note, .. },
        } = op
        else {
            panic!("expected AllowEdited for request 7, got {op:?}");
        };
        assert_eq!(content, "one\nTWO\n");
        assert!(note.contains("TWO"), "{note}");
        drop(core_tx);
    }

    #[tokio::test]
    async fn slash_memory_edits_the_file_the_host_read_and_gives_the_host_the_new_text() {
        use crate::protocol::{HostEvent, HostOp};
        let dir = tempfile::tempdir().unwrap();
        let (ops_tx, mut ops_rx) = mpsc::unbounded_channel();
        let (core_tx, mut core_rx) = mpsc::unbounded_channel();
        let (in_tx, in_rx) = fmpsc::unbounded();
        let mut app = app(ops_tx);
        let mut screen = TestScreen::new(80, 20);
        let Event::SessionConfigured(mut info) = session(PermissionMode::Default) else {
            panic!()
        };
        info.cwd = dir.path().to_path_buf();
        core_tx.send(Event::SessionConfigured(info)).unwrap();
        let path = dir.path().join("CLAUDE.md");
        let host = async {
            keys(&in_tx, "/memory\n\n");
            assert_eq!(
                ops_rx.recv().await,
                Some(Op::Host(HostOp::ReadMemoryFile { path: path.clone() }))
            );
            core_tx
                .send(Event::Host(HostEvent::MemoryFile {
                    path: path.clone(),
                    content: Ok("use spaces\n".into()),
                }))
                .unwrap();
            let written = ops_rx.recv().await;
            drop(in_tx);
            written
        };
        let opts = LoopOptions {
            // A real program edits the file the way a person would.
            editor: Some("sed -i s/spaces/tabs/".into()),
            ..LoopOptions::default()
        };
        let looped = run_loop(&mut app, &mut screen, in_rx, &mut core_rx, opts);
        let (result, written) = tokio::join!(looped, host);
        result.unwrap();
        assert_eq!(screen.released, 1);
        assert_eq!(
            written,
            Some(Op::Host(HostOp::WriteMemoryFile {
                path: path.clone(),
                content: "use tabs\n".into()
            }))
        );
        assert!(!path.exists(), "the host writes it, not the TUI");
    }

    #[tokio::test]
    async fn the_status_line_is_asked_of_the_host_and_its_text_shown() {
        use crate::protocol::{HostEvent, HostOp};
        let (ops_tx, mut ops_rx) = mpsc::unbounded_channel();
        let (core_tx, mut core_rx) = mpsc::unbounded_channel();
        let (in_tx, in_rx) = fmpsc::unbounded();
        let mut app = app(ops_tx);
        let mut screen = TestScreen::new(60, 8);
        core_tx.send(session(PermissionMode::Default)).unwrap();
        let host = async {
            let Some(Op::Host(HostOp::StatusLine { input })) = ops_rx.recv().await else {
                panic!("expected a status-line request");
            };
            assert_eq!(input.session_id, "sess-1234");
            core_tx
                .send(Event::Host(HostEvent::StatusLine {
                    text: Ok("\u{1b}[1mfrom the host\u{1b}[0m".into()),
                }))
                .unwrap();
            // A key after it, so the loop has folded the line in before the input ends.
            keys(&in_tx, "x");
            drop(in_tx);
        };
        let opts = LoopOptions {
            status_line: true,
            ..LoopOptions::default()
        };
        let looped = run_loop(&mut app, &mut screen, in_rx, &mut core_rx, opts);
        let (result, ()) = tokio::join!(looped, host);
        result.unwrap();
        screen.draw(&mut app).unwrap();
        let last = screen.text().lines().last().unwrap_or_default().to_string();
        assert_eq!(last.trim_end(), " default   from the host");
    }
}
