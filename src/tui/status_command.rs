//! The settings' `statusLine` command (Claude Code's custom status line), as the TUI drives
//! it: when the session is configured and whenever the conversation moves (a turn starts or
//! finishes, usage or the mode changes), the TUI asks the session's host to run it with what
//! the TUI knows ([`StatusLineInput`]); the host runs it and answers with the first line of
//! its output, which replaces the built-in status text.
//!
//! [`StatusCommand`] decides when: requests coalesce, a run starts at most once per
//! [`MIN_GAP`] and never while another runs ([`Throttle`]). [`styled_line`] turns the host's
//! text into a styled line: SGR colours are kept as styles, every other escape sequence and
//! control character is dropped. Only the event loop touches the app; a failing command shows
//! nothing and is logged once until it works again.

use std::path::Path;
use std::time::{Duration, Instant};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::protocol::{Event, PermissionMode, StatusLineInput};
use crate::tui::status::StatusState;

/// The shortest time between the starts of two runs.
pub const MIN_GAP: Duration = Duration::from_millis(300);
/// Characters of the command's line kept at most.
const MAX_CHARS: usize = 1_000;

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
    throttle: Throttle,
    started_at: Instant,
    /// The mode the last run saw (the person may change it without a core event).
    last_mode: Option<PermissionMode>,
    /// The last failure logged, so a broken command logs once, not on every run.
    last_failure: Option<String>,
}

impl StatusCommand {
    pub fn new(now: Instant) -> StatusCommand {
        StatusCommand {
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

    /// The input of the run to start now, if one is wanted, due, and the session is
    /// configured.
    pub fn poll(&mut self, facts: &Facts, now: Instant) -> Option<StatusLineInput> {
        let status = facts.status;
        if self.last_mode.is_some_and(|m| m != status.mode) {
            self.throttle.request();
        }
        if status.session.is_none() || !self.throttle.start(now) {
            return None;
        }
        self.last_mode = Some(status.mode);
        let elapsed = now.saturating_duration_since(self.started_at);
        Some(input(facts, elapsed))
    }

    /// A run ended: what to show. A failure shows nothing and is logged when it is new.
    pub fn finished(&mut self, result: &Result<String, String>) -> Line<'static> {
        self.throttle.finished();
        match result {
            Ok(text) => {
                self.last_failure = None;
                styled_line(text)
            }
            Err(why) => {
                if self.last_failure.as_ref() != Some(why) {
                    tracing::warn!("statusLine command: {why}");
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

/// What the command is told of the app: the session, the model, the cost, the time since
/// the TUI started and the lines the session's edits changed.
pub fn input(facts: &Facts, elapsed: Duration) -> StatusLineInput {
    let Facts {
        status,
        cwd,
        lines_changed: (lines_added, lines_removed),
    } = *facts;
    let (session_id, model) = status
        .session
        .as_ref()
        .map_or(("", ""), |s| (s.session_id.as_str(), s.model.as_str()));
    StatusLineInput {
        session_id: session_id.to_string(),
        model: model.to_string(),
        cwd: cwd.to_path_buf(),
        cost_usd: status.cost_usd,
        duration_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        lines_added,
        lines_removed,
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
