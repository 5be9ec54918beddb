//! Drawing the App: the layout of header, conversation, queued prompts, picker, composer (or
//! the permission prompt in its place), status line, and the overlays on top. Reads state; the
//! only writes are the caches and scroll bookkeeping the conversation view keeps for itself.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::tui::app::{App, Layer};

/// Queued prompts shown at most (then "+N more").
const MAX_QUEUED_ROWS: usize = 3;

impl App {
    /// Draw the whole screen into the frame.
    pub fn render(&mut self, frame: &mut Frame) {
        let area = frame.area();
        let now = Instant::now();
        self.mark_drawn();
        if area.height < 4 || area.width < 10 {
            Line::raw("cairn: terminal too small").render(area, frame.buffer_mut());
            return;
        }
        if let Some(Layer::Transcript(scroll)) = self.layers.last_mut() {
            let [title, body] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
            Line::from(vec![
                Span::styled(
                    " Transcript ",
                    Style::default()
                        .fg(Color::Black)
                        .bg(Color::Cyan)
                        .add_modifier(Modifier::BOLD),
                ),
                Span::styled(
                    "  Esc/q close · PgUp/PgDn scroll",
                    Style::default().fg(Color::DarkGray),
                ),
            ])
            .render(title, frame.buffer_mut());
            self.conversation
                .render_transcript(body, frame.buffer_mut(), scroll);
            return;
        }

        let prompt = self.permission_prompt();
        let bottom_height = match prompt {
            Some(p) => p.height(area.width, area.height.saturating_sub(4).max(3)),
            None => self.composer.height(area.width),
        };
        let queued_rows = self.queued.len().min(MAX_QUEUED_ROWS + 1);
        let queued_rows = if self.queued.len() > MAX_QUEUED_ROWS {
            MAX_QUEUED_ROWS + 1
        } else {
            queued_rows
        };
        let [header, body, queued, bottom, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(u16::try_from(queued_rows).unwrap_or(0)),
            Constraint::Length(bottom_height),
            Constraint::Length(1),
        ])
        .areas(area);

        self.header.render(header, frame.buffer_mut());
        self.conversation
            .render(body, frame.buffer_mut(), &mut self.scroll);
        self.render_queued(queued, frame);

        let busy = self.is_turn_running();
        match self.permission_prompt() {
            Some(p) => p.render(bottom, frame.buffer_mut()),
            None => {
                if let Some(pos) = self.composer.render(bottom, frame.buffer_mut(), busy) {
                    frame.set_cursor_position(pos);
                }
                if let Some(picker) = &self.picker {
                    let h = picker.height().min(body.height);
                    let rect = Rect {
                        x: body.x,
                        y: body.y + body.height - h,
                        width: body.width.min(72),
                        height: h,
                    };
                    picker.render(rect, frame.buffer_mut());
                }
            }
        }
        self.status.render(status, frame.buffer_mut(), now);
    }

    fn render_queued(&self, area: Rect, frame: &mut Frame) {
        if area.height == 0 {
            return;
        }
        let style = Style::default().fg(Color::DarkGray);
        for (i, text) in self.queued.iter().take(MAX_QUEUED_ROWS).enumerate() {
            let first = text.lines().next().unwrap_or("");
            let line = Line::from(vec![
                Span::styled(
                    " queued ",
                    Style::default().fg(Color::Black).bg(Color::DarkGray),
                ),
                Span::styled(format!(" {first}"), style),
            ]);
            let row = Rect {
                y: area.y + u16::try_from(i).unwrap_or(0),
                height: 1,
                ..area
            };
            line.render(row, frame.buffer_mut());
        }
        if self.queued.len() > MAX_QUEUED_ROWS {
            let row = Rect {
                y: area.y + area.height - 1,
                height: 1,
                ..area
            };
            Line::styled(
                format!(" +{} more queued", self.queued.len() - MAX_QUEUED_ROWS),
                style,
            )
            .render(row, frame.buffer_mut());
        }
    }
}
