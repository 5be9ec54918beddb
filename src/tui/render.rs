//! Drawing the App: the layout of header, conversation, the todo list, queued prompts, picker,
//! composer (or
//! the permission prompt in its place), status line, and the overlays on top. Reads state; the
//! only writes are the caches and scroll bookkeeping the conversation view keeps for itself.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::tui::app::{App, Layer};
use crate::tui::overlay::{Overlay, RenderCtx};

/// Queued prompts shown at most (then "+N more").
const MAX_QUEUED_ROWS: usize = 3;
/// What the empty start screen says.
const START_HINT: &str =
    "  ? keys and commands · / commands · Shift+Tab switches the mode (plan, accept edits)";
/// Rows of the conversation kept visible above a permission prompt.
const CONVERSATION_ROWS: u16 = 6;
/// Todo items shown at most (then "+N more").
const MAX_TODO_ROWS: usize = 8;

impl App {
    /// Draw the whole screen into the frame.
    pub fn render(&mut self, frame: &mut Frame) {
        self.render_at(frame, Instant::now());
    }

    /// Draw as of `now` (elapsed times and spinners; tests pass a fixed instant).
    pub fn render_at(&mut self, frame: &mut Frame, now: Instant) {
        let area = frame.area();
        self.mark_drawn();
        if area.height < 4 || area.width < 10 {
            Line::raw("cairn: terminal too small").render(area, frame.buffer_mut());
            return;
        }
        // `/diff` and the transcript take the whole screen.
        if let Some(layer @ (Layer::Transcript(_) | Layer::SessionDiff(_) | Layer::TaskView(_))) =
            self.layers.top_mut()
        {
            let mut ctx = RenderCtx {
                conversation: &mut self.conversation,
            };
            layer.overlay().render(area, frame.buffer_mut(), &mut ctx);
            return;
        }

        let prompt = self.permission_prompt();
        // The prompt may take most of the screen (long diffs), but the end of the conversation
        // (the model's sentence about the call) stays visible above it.
        let bottom_height = match prompt {
            Some(p) => p.height(
                area.width,
                area.height.saturating_sub(2 + CONVERSATION_ROWS).max(3),
            ),
            None => self.input.composer.height(area.width),
        };
        // Up to MAX_QUEUED_ROWS prompts, then one "+N more" row.
        let queued_rows = self.turn.queued().len().min(MAX_QUEUED_ROWS + 1);
        let todo_rows = self.turn.shown_todos().len().min(MAX_TODO_ROWS + 1);
        let [header, body, todos, queued, bottom, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(u16::try_from(todo_rows).unwrap_or(0)),
            Constraint::Length(u16::try_from(queued_rows).unwrap_or(0)),
            Constraint::Length(bottom_height),
            Constraint::Length(1),
        ])
        .areas(area);

        self.session.header.render(header, frame.buffer_mut());
        self.conversation
            .render(body, frame.buffer_mut(), &mut self.scroll);
        if self.conversation.is_empty() && body.height > 2 {
            // The start screen says where to begin.
            let hint = Line::styled(START_HINT, Style::default().fg(Color::DarkGray));
            hint.render(
                Rect {
                    y: body.y + 1,
                    height: 1,
                    ..body
                },
                frame.buffer_mut(),
            );
        }
        self.render_todos(todos, frame);
        self.render_queued(queued, frame);

        let busy = self.is_turn_running();
        let mut ctx = RenderCtx {
            conversation: &mut self.conversation,
        };
        match self.layers.permission_prompt_mut() {
            Some(p) => p.render(bottom, frame.buffer_mut(), &mut ctx),
            None => {
                let input = &mut self.input;
                if let Some(pos) = input.composer.render(bottom, frame.buffer_mut(), busy) {
                    frame.set_cursor_position(pos);
                }
                if let Some(picker) = input.picker_mut() {
                    let h = picker.height().min(body.height);
                    let rect = Rect {
                        x: body.x,
                        y: body.y + body.height - h,
                        width: body.width.min(100),
                        height: h,
                    };
                    picker.render(rect, frame.buffer_mut(), &mut ctx);
                }
            }
        }
        self.session.status.render(status, frame.buffer_mut(), now);
    }

    /// The todo list as a checklist: the item in progress by its active form, done items dim.
    fn render_todos(&self, area: Rect, frame: &mut Frame) {
        use crate::protocol::TodoStatus;
        let todos = self.turn.shown_todos();
        for (i, todo) in todos.iter().take(MAX_TODO_ROWS).enumerate() {
            let (mark, text, style) = match todo.status {
                TodoStatus::Pending => ("☐", &todo.content, Style::default()),
                TodoStatus::InProgress => {
                    ("◐", &todo.active_form, Style::default().fg(Color::Yellow))
                }
                TodoStatus::Completed => ("☑", &todo.content, Style::default().fg(Color::DarkGray)),
            };
            let text = crate::tui::conversation::wrap::sanitize(text);
            let line = Line::from(vec![
                Span::styled(format!(" {mark} "), style),
                Span::styled(text.into_owned(), style),
            ]);
            let row = Rect {
                y: area.y + u16::try_from(i).unwrap_or(0),
                height: 1,
                ..area
            };
            line.render(row, frame.buffer_mut());
        }
        if todos.len() > MAX_TODO_ROWS && area.height > 0 {
            let row = Rect {
                y: area.y + area.height - 1,
                height: 1,
                ..area
            };
            let more = todos.len() - MAX_TODO_ROWS;
            Line::styled(
                format!("   +{more} more (Ctrl+G hides the list)"),
                Style::default().fg(Color::DarkGray),
            )
            .render(row, frame.buffer_mut());
        }
    }

    fn render_queued(&self, area: Rect, frame: &mut Frame) {
        if area.height == 0 {
            return;
        }
        let style = Style::default().fg(Color::DarkGray);
        let queued = self.turn.queued();
        let total = queued.len();
        for (i, text) in queued.take(MAX_QUEUED_ROWS).enumerate() {
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
        if total > MAX_QUEUED_ROWS {
            let row = Rect {
                y: area.y + area.height - 1,
                height: 1,
                ..area
            };
            Line::styled(format!(" +{} more queued", total - MAX_QUEUED_ROWS), style)
                .render(row, frame.buffer_mut());
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
