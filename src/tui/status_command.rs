//! The settings' `statusLine` command (Claude Code's custom status line): when the session is
//! configured and whenever the conversation moves (a turn starts or finishes, usage or the
//! mode changes), the command runs under `sh -c` in the project directory with Claude Code's
//! `Status` JSON on stdin, and the first line of its stdout replaces the built-in status text.
//!
//! [`StatusCommand`] decides when: requests coalesce, a run starts at most once per
//! [`MIN_GAP`] and never while another runs ([`Throttle`]). [`StatusJob::run`] does the run on
//! a tokio task (the hook runner's process handling: its own process group, killed at the
//! timeout) and turns the output into a styled line: SGR colours are kept as styles, every
//! other escape sequence and control character is dropped. Only the event loop touches the
//! app; a failing command shows nothing and is logged once until it works again.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::{Value, json};

use crate::config::hooks::HookCommand;
use crate::protocol::{Event, PermissionMode};
use crate::tui::status::StatusState;

/// The shortest time between the starts of two runs.
pub const MIN_GAP: Duration = Duration::from_millis(300);
/// How long a run may take before it is killed.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// Characters of the command's line kept at most.
const MAX_CHARS: usize = 1_000;

/// What the TUI needs to run the command.
#[derive(Debug, Clone)]
pub struct StatusCommandOptions {
    pub command: String,
    /// Blank columns before the command's text.
    pub padding: u16,
    /// Where the command runs (`workspace.project_dir`).
    pub project_dir: PathBuf,
    pub transcript_path: PathBuf,
    /// The output style in use (`default` when none).
    pub output_style: String,
    /// The settings' `env`.
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

/// Coalesces requests into runs: at most one at a time, starts at least `gap` apart.
#[derive(Debug, Clone)]
pub struct Throttle {
    gap: Duration,
    last_start: Option<Instant>,
    running: bool,
    wanted: bool,
}

impl Throttle {
    pub fn new(gap: Duration) -> Throttle {
        Throttle {
            gap,
            last_start: None,
            running: false,
            wanted: false,
        }
    }

    /// Something changed: run again when allowed.
    pub fn request(&mut self) {
        self.wanted = true;
    }

    /// When the wanted run may start; `None` when nothing is wanted or one is running.
    pub fn due_at(&self, now: Instant) -> Option<Instant> {
        if !self.wanted || self.running {
            return None;
        }
        Some(self.last_start.map_or(now, |t| (t + self.gap).max(now)))
    }

    /// Start the wanted run if it is due; true when the caller must run it now.
    pub fn start(&mut self, now: Instant) -> bool {
        if self.due_at(now).is_none_or(|due| due > now) {
            return false;
        }
        self.wanted = false;
        self.running = true;
        self.last_start = Some(now);
        true
    }

    /// The run ended (whatever its outcome).
    pub fn finished(&mut self) {
        self.running = false;
    }
}

/// The command's state in the event loop.
#[derive(Debug)]
pub struct StatusCommand {
    opts: StatusCommandOptions,
    throttle: Throttle,
    started_at: Instant,
    /// The mode the last run saw (the person may change it without a core event).
    last_mode: Option<PermissionMode>,
    /// The last failure logged, so a broken command logs once, not on every run.
    last_failure: Option<String>,
}

impl StatusCommand {
    pub fn new(opts: StatusCommandOptions, now: Instant) -> StatusCommand {
        StatusCommand {
            opts,
            throttle: Throttle::new(MIN_GAP),
            started_at: now,
            last_mode: None,
            last_failure: None,
        }
    }

    /// A core event: request a run when it changes what the status line may show.
    pub fn observe(&mut self, event: &Event) {
        if matches!(
            event,
            Event::SessionConfigured(_)
                | Event::TurnStarted { .. }
                | Event::TurnFinished { .. }
                | Event::Usage { .. }
                | Event::ModeChanged { .. }
        ) {
            self.throttle.request();
        }
    }

    /// When the loop must wake to start a wanted run.
    pub fn due_at(&self, now: Instant) -> Option<Instant> {
        self.throttle.due_at(now)
    }

    /// The run to start now, if one is wanted, due, and the session is configured.
    pub fn poll(&mut self, facts: &Facts, now: Instant) -> Option<StatusJob> {
        let status = facts.status;
        if self.last_mode.is_some_and(|m| m != status.mode) {
            self.throttle.request();
        }
        if status.session.is_none() || !self.throttle.start(now) {
            return None;
        }
        self.last_mode = Some(status.mode);
        let elapsed = now.saturating_duration_since(self.started_at);
        Some(StatusJob {
            hook: HookCommand {
                command: self.opts.command.clone(),
                timeout: self.opts.timeout,
            },
            project_dir: self.opts.project_dir.clone(),
            env: self.opts.env.clone(),
            stdin: input_json(&self.opts, facts, elapsed).to_string(),
            padding: self.opts.padding,
        })
    }

    /// A run ended: what to show. A failure shows nothing and is logged when it is new.
    pub fn finished(&mut self, result: &Result<Line<'static>, String>) -> Line<'static> {
        self.throttle.finished();
        match result {
            Ok(line) => {
                self.last_failure = None;
                line.clone()
            }
            Err(why) => {
                if self.last_failure.as_ref() != Some(why) {
                    tracing::warn!("statusLine command `{}`: {why}", self.opts.command);
                    self.last_failure = Some(why.clone());
                }
                Line::default()
            }
        }
    }
}

/// What the app knows that the command is told.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub status: &'a StatusState,
    /// The current directory.
    pub cwd: &'a Path,
    /// Lines added and removed by the session's edits.
    pub lines_changed: (usize, usize),
}

/// Claude Code's `Status` input, with what cairn knows.
pub fn input_json(opts: &StatusCommandOptions, facts: &Facts, elapsed: Duration) -> Value {
    let Facts {
        status,
        cwd,
        lines_changed: (added, removed),
    } = *facts;
    let (session_id, model) = status
        .session
        .as_ref()
        .map_or(("", ""), |s| (s.session_id.as_str(), s.model.as_str()));
    json!({
        "hook_event_name": "Status",
        "session_id": session_id,
        "transcript_path": opts.transcript_path,
        "cwd": cwd,
        "model": {"id": model, "display_name": display_name(model)},
        "workspace": {"current_dir": cwd, "project_dir": opts.project_dir},
        "version": env!("CARGO_PKG_VERSION"),
        "output_style": {"name": opts.output_style},
        "cost": {
            "total_cost_usd": status.cost_usd,
            "total_duration_ms": u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            "total_lines_added": added,
            "total_lines_removed": removed,
        },
    })
}

/// A short name for a model: `claude-sonnet-4-5-20250929` is `Sonnet 4.5`, `claude-3-5-haiku`
/// is `Haiku 3.5`; other ids are shown as they are.
pub fn display_name(model: &str) -> String {
    let Some(rest) = model.strip_prefix("claude-") else {
        return model.to_string();
    };
    let parts: Vec<&str> = rest.split('-').collect();
    let family = parts
        .iter()
        .find(|p| matches!(**p, "opus" | "sonnet" | "haiku"));
    let version: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    match family {
        Some(f) if !version.is_empty() => {
            let mut name = f.to_string();
            name[..1].make_ascii_uppercase();
            format!("{name} {}", version.join("."))
        }
        _ => model.to_string(),
    }
}

/// One run of the command, owning everything it needs (it runs on a tokio task).
#[derive(Debug, Clone)]
pub struct StatusJob {
    hook: HookCommand,
    project_dir: PathBuf,
    env: Vec<(String, String)>,
    stdin: String,
    padding: u16,
}

impl StatusJob {
    /// Run it: the first line of stdout, styled and padded, or why there is none.
    pub async fn run(self) -> Result<Line<'static>, String> {
        let run =
            crate::hooks::runner::run_one(&self.hook, &self.project_dir, &self.env, self.stdin)
                .await;
        if run.timed_out {
            return Err(format!(
                "timed out after {} ms and was killed",
                self.hook.timeout.as_millis()
            ));
        }
        if run.overflowed {
            return Err("printed too much and was killed".into());
        }
        if run.exit_code != Some(0) {
            let code = run
                .exit_code
                .map_or("no exit code".to_string(), |c| format!("exit {c}"));
            let stderr = run.stderr.lines().next().unwrap_or_default().to_string();
            return Err(format!("failed ({code}) {stderr}").trim_end().to_string());
        }
        let first = run.stdout.lines().next().unwrap_or_default();
        let mut line = styled_line(first);
        if self.padding > 0 && !line.spans.is_empty() {
            line.spans
                .insert(0, Span::raw(" ".repeat(usize::from(self.padding))));
        }
        Ok(line)
    }
}

/// `text` as a line: SGR colours and attributes become styles; other escape sequences and
/// control characters are dropped (tabs become spaces), so nothing can move the cursor or
/// change the terminal.
pub fn styled_line(text: &str) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut style = Style::default();
    let mut current = String::new();
    let mut kept = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            let before = style;
            if chars.peek() == Some(&'[') {
                chars.next();
                let mut params = String::new();
                for p in chars.by_ref() {
                    if ('@'..='~').contains(&p) {
                        if p == 'm' {
                            style = apply_sgr(style, &params);
                        }
                        break;
                    }
                    params.push(p);
                }
            } else {
                crate::media::ansi::skip_escape(&mut chars);
            }
            if style != before && !current.is_empty() {
                spans.push(Span::styled(std::mem::take(&mut current), before));
            }
            continue;
        }
        if kept >= MAX_CHARS {
            break;
        }
        match c {
            '\t' => current.push(' '),
            c if c.is_control() => continue,
            c => current.push(c),
        }
        kept += 1;
    }
    if !current.is_empty() {
        spans.push(Span::styled(current, style));
    }
    Line::from(spans)
}

/// `style` after the SGR sequence with parameters `params` (`1;31`, `38;5;208`, empty = reset).
fn apply_sgr(mut style: Style, params: &str) -> Style {
    let nums: Vec<u16> = params
        .split([';', ':'])
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    let mut i = 0;
    while i < nums.len() {
        let n = nums[i];
        match n {
            0 => style = Style::default(),
            1 => style = style.add_modifier(Modifier::BOLD),
            2 => style = style.add_modifier(Modifier::DIM),
            3 => style = style.add_modifier(Modifier::ITALIC),
            4 => style = style.add_modifier(Modifier::UNDERLINED),
            7 => style = style.add_modifier(Modifier::REVERSED),
            9 => style = style.add_modifier(Modifier::CROSSED_OUT),
            22 => style = style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            23 => style = style.remove_modifier(Modifier::ITALIC),
            24 => style = style.remove_modifier(Modifier::UNDERLINED),
            27 => style = style.remove_modifier(Modifier::REVERSED),
            29 => style = style.remove_modifier(Modifier::CROSSED_OUT),
            30..=37 => style.fg = Some(basic_color(n - 30)),
            39 => style.fg = None,
            40..=47 => style.bg = Some(basic_color(n - 40)),
            49 => style.bg = None,
            90..=97 => style.fg = Some(basic_color(n - 90 + 8)),
            100..=107 => style.bg = Some(basic_color(n - 100 + 8)),
            38 | 48 => {
                let (color, used) = extended_color(&nums[i + 1..]);
                if let Some(color) = color {
                    if n == 38 {
                        style.fg = Some(color);
                    } else {
                        style.bg = Some(color);
                    }
                }
                i += used;
            }
            _ => {}
        }
        i += 1;
    }
    style
}

/// `5;n` (256 colours) or `2;r;g;b` after a 38/48, and how many numbers it took.
fn extended_color(rest: &[u16]) -> (Option<Color>, usize) {
    let byte = |i: usize| rest.get(i).and_then(|v| u8::try_from(*v).ok());
    match rest.first() {
        Some(5) => (byte(1).map(Color::Indexed), 2),
        Some(2) => match (byte(1), byte(2), byte(3)) {
            (Some(r), Some(g), Some(b)) => (Some(Color::Rgb(r, g, b)), 4),
            _ => (None, rest.len()),
        },
        _ => (None, rest.len()),
    }
}

/// The 16 terminal colours by their SGR number (0-7, then the bright 8-15).
fn basic_color(n: u16) -> Color {
    const COLORS: [Color; 16] = [
        Color::Black,
        Color::Red,
        Color::Green,
        Color::Yellow,
        Color::Blue,
        Color::Magenta,
        Color::Cyan,
        Color::Gray,
        Color::DarkGray,
        Color::LightRed,
        Color::LightGreen,
        Color::LightYellow,
        Color::LightBlue,
        Color::LightMagenta,
        Color::LightCyan,
        Color::White,
    ];
    COLORS[usize::from(n) % COLORS.len()]
}

#[cfg(test)]
mod tests;
