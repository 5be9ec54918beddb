//! The live view of one background task (`/tasks`, Enter on a task): the whole screen
//! follows what it does — a background agent's cell whole (its calls as they happen, then its
//! report), a background shell's output so far (its last lines, asked of the core with
//! [`Op::ReadTask`] while it runs) and how it ended. `k` or `x` stops a running one, the
//! arrows and PgUp/PgDn scroll back, Esc or `q` returns; nothing is written into the
//! conversation.
//!
//! [`Op::ReadTask`]: crate::protocol::Op::ReadTask

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::protocol::{BackgroundTask, TaskKind, TaskStatus};
use crate::tui::conversation::wrap::sanitize;
use crate::tui::input::Key;
use crate::tui::keymap::Keys;
use crate::tui::overlay::{Message, Outcome, Overlay, RenderCtx, passes_through};

/// How often a running task's output is asked for while the view is open.
pub const POLL: Duration = Duration::from_millis(500);

pub struct TaskView {
    pub task: BackgroundTask,
    /// What the core last said it put out (a shell's output; an agent's report).
    output: String,
    /// Rows scrolled back from the end (0: following the end).
    back: usize,
    /// When its output was last asked for.
    asked: Option<Instant>,
}

impl TaskView {
    pub fn new(task: BackgroundTask) -> TaskView {
        TaskView {
            task,
            output: String::new(),
            back: 0,
            asked: None,
        }
    }

    /// The core's answer to an [`Op::ReadTask`](crate::protocol::Op::ReadTask).
    pub fn set_output(&mut self, output: &str, status: TaskStatus) {
        self.output = output.to_string();
        if self.task.status == TaskStatus::Running {
            self.task.status = status;
        }
    }

    /// Whether to ask for its output now: once at the start, then every [`POLL`] while it
    /// runs.
    pub fn should_ask(&mut self, now: Instant) -> bool {
        let due = match self.asked {
            None => true,
            Some(at) => self.task.status == TaskStatus::Running && now.duration_since(at) >= POLL,
        };
        if due {
            self.asked = Some(now);
        }
        due
    }

    /// Ask again after its end (the final output).
    pub fn ended(&mut self, task: &BackgroundTask) {
        self.task = task.clone();
        self.asked = None;
    }

    /// The rows of its body at `width`.
    fn rows(&self, width: usize, ctx: &mut RenderCtx<'_>) -> Vec<Line<'static>> {
        let dim = Style::default().fg(Color::DarkGray);
        if self.task.kind == TaskKind::Agent
            && let Some(call) = &self.task.call_id
            && let Some(lines) = ctx.conversation.call_lines(call, width)
        {
            return lines;
        }
        let mut rows: Vec<Line<'static>> = sanitize(&self.output)
            .lines()
            .map(|l| Line::raw(l.to_string()))
            .collect();
        if rows.is_empty() {
            rows.push(Line::styled("(no output yet)", dim));
        }
        if let Some(how) = self
            .task
            .report
            .as_ref()
            .filter(|_| self.task.kind == TaskKind::Shell)
        {
            rows.push(Line::styled(format!("── {how}"), dim));
        }
        rows
    }
}

impl Overlay for TaskView {
    fn handle_key(&mut self, keys: &Keys) -> Outcome {
        match keys.key.code {
            Key::Esc | Key::Char('q') => Outcome::Close,
            Key::Char('k' | 'x') if self.task.status == TaskStatus::Running => {
                Outcome::Message(Message::StopTask {
                    id: self.task.id.clone(),
                })
            }
            Key::Up => {
                self.back += 1;
                Outcome::Consumed
            }
            Key::Down => {
                self.back = self.back.saturating_sub(1);
                Outcome::Consumed
            }
            Key::PageUp => {
                self.back += 10;
                Outcome::Consumed
            }
            Key::PageDown => {
                self.back = self.back.saturating_sub(10);
                Outcome::Consumed
            }
            Key::End => {
                self.back = 0;
                Outcome::Consumed
            }
            _ if passes_through(keys) => Outcome::Ignored,
            _ => Outcome::Consumed,
        }
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &mut RenderCtx<'_>) {
        let [title, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                if let Some(c) = buf.cell_mut((x, y)) {
                    c.reset();
                }
            }
        }
        let t = &self.task;
        Line::from(vec![
            Span::styled(
                format!(" {} ", t.id),
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!(
                " {} · {} · {}",
                t.agent,
                crate::tui::untrusted::one_line(&t.description),
                t.status.as_str()
            )),
            Span::styled(
                format!("  {}", self.key_hints()),
                Style::default().fg(Color::DarkGray),
            ),
        ])
        .render(title, buf);
        let rows = self.rows(usize::from(body.width), ctx);
        let height = usize::from(body.height);
        let last = rows
            .len()
            .saturating_sub(self.back.min(rows.len().saturating_sub(height)));
        let first = last.saturating_sub(height);
        for (i, row) in rows[first..last].iter().enumerate() {
            let y = body.y + u16::try_from(i).unwrap_or(u16::MAX);
            row.clone().render(Rect::new(body.x, y, body.width, 1), buf);
        }
    }

    fn key_hints(&self) -> &'static str {
        if self.task.status == TaskStatus::Running {
            "k stop · ↑↓ PgUp/PgDn scroll · Esc back"
        } else {
            "↑↓ PgUp/PgDn scroll · Esc back"
        }
    }
}
