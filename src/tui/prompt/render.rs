//! Drawing the prompt panel: a block between two rules, titled "Allow this?" (or "Approve the plan?")
//! with "1 of N" when more requests wait, then the title and reason, any on-disk-change notice,
//! the preview (diff view or scrolled text), the options with their keys (the focused one
//! marked), and a line of key hints. Reads state; only scroll bookkeeping is written.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::preview::text_lines;
use super::{Pending, PermissionPrompt, Preview};
use crate::protocol::RequestKind;
use crate::tui::conversation::wrap::{sanitize, wrap_spans};
use crate::tui::overlay::Overlay;

/// Rows a preview keeps at least when the panel is squeezed.
const MIN_PREVIEW_ROWS: usize = 3;

impl PermissionPrompt {
    /// Lines above the preview: title, reason, notice (wrapped to `width`).
    fn head_lines(&self, p: &Pending, width: usize) -> Vec<Line<'static>> {
        let req = &p.req;
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let mut out = Vec::new();
        // Titles usually start with the tool name already (`Bash npm test`).
        let title = if req.title.starts_with(&req.tool) {
            vec![Span::styled(sanitize(&req.title).into_owned(), bold)]
        } else {
            vec![
                Span::styled(format!("{} ", req.tool), bold.fg(Color::Yellow)),
                Span::styled(sanitize(&req.title).into_owned(), bold),
            ]
        };
        wrap_spans(&[], &[], &title, width, &mut out);
        if !req.reason.is_empty() {
            let reason = [Span::styled(
                sanitize(&req.reason).into_owned(),
                Style::default().fg(Color::DarkGray),
            )];
            wrap_spans(&[], &[], &reason, width, &mut out);
        }
        if let Some((i, n, q)) = p.question() {
            let style = Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD);
            let count = if n > 1 {
                format!(" ({} of {n})", i + 1)
            } else {
                String::new()
            };
            let text = [Span::styled(
                format!("{}{count}: {}", sanitize(&q.header), sanitize(&q.question)),
                style,
            )];
            wrap_spans(&[], &[], &text, width, &mut out);
        }
        if let Some(notice) = &p.notice {
            let style = Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD);
            let text = [Span::styled(notice.clone(), style)];
            wrap_spans(
                &[Span::styled("⚠ ", style)],
                &[Span::raw("  ")],
                &text,
                width,
                &mut out,
            );
        }
        // A blank row between what is asked and what it would do.
        out.push(Line::default());
        out
    }

    /// Lines below the preview: the options (or the feedback input) and the key hints.
    fn foot_lines(&self, p: &Pending, width: usize) -> Vec<Line<'static>> {
        let dim = Style::default().fg(Color::DarkGray);
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let plan = matches!(p.req.kind, RequestKind::PlanApproval { .. });
        let mut out = vec![Line::default()];
        if let Some(text) = &self.feedback {
            let ask = if plan {
                "Tell the model what to change in the plan:"
            } else if p.question().is_some() {
                "Your answer:"
            } else {
                "Tell the model what to do instead:"
            };
            out.push(Line::styled(ask, bold));
            let typed = [
                Span::raw(sanitize(text).into_owned()),
                Span::styled("▏", Style::default().fg(Color::Cyan)),
            ];
            wrap_spans(
                &[Span::styled("› ", Style::default().fg(Color::Cyan))],
                &[Span::raw("  ")],
                &typed,
                width,
                &mut out,
            );
            out.push(Line::styled("Enter send · Esc back", dim));
            return out;
        }
        let edit = matches!(p.preview, Preview::Diff(_));
        for (i, c) in p.options(edit).into_iter().enumerate() {
            let focused = i == p.focus;
            let (marker, style) = if focused {
                (
                    "› ",
                    Style::default()
                        .fg(Color::Cyan)
                        .add_modifier(Modifier::BOLD),
                )
            } else {
                ("  ", Style::default())
            };
            let first = [
                Span::styled(marker, style),
                Span::styled(format!("{:<4} ", c.keys), style.fg(Color::Cyan)),
            ];
            wrap_spans(
                &first,
                &[Span::raw(" ".repeat(7))],
                &[Span::styled(c.label, style)],
                width,
                &mut out,
            );
        }
        let hints = self.key_hints();
        wrap_spans(&[], &[], &[Span::styled(hints, dim)], width, &mut out);
        out
    }

    /// Preview rows wanted at inner `width`.
    fn preview_rows(&self, p: &Pending, width: usize) -> usize {
        match &p.preview {
            Preview::Diff(d) => d.rows_at(u16::try_from(width).unwrap_or(u16::MAX)) + 1,
            Preview::Text { .. } => text_lines(&p.req, width, &self.highlighter).len(),
        }
    }

    /// Rows wanted at `width`, border included, capped by `max`.
    pub fn height(&self, width: u16, max: u16) -> u16 {
        let Some(p) = self.queue.front() else {
            return 0;
        };
        let inner = usize::from(width.max(1));
        let rows = 2
            + self.head_lines(p, inner).len()
            + self.preview_rows(p, inner)
            + self.foot_lines(p, inner).len();
        u16::try_from(rows).unwrap_or(max).min(max)
    }

    /// Draw the panel into `area`.
    pub(crate) fn draw(&mut self, area: Rect, buf: &mut Buffer) {
        Clear.render(area, buf);
        let count = if self.queue.len() > 1 {
            format!("· 1 of {} ", self.queue.len())
        } else {
            String::new()
        };
        let Some(p) = self.queue.front() else {
            return;
        };
        let title = match p.req.kind {
            RequestKind::PlanApproval { .. } => " Approve the plan? ",
            RequestKind::Tool => " Allow this? ",
            RequestKind::Questions { .. } => " A question for you ",
        };
        // Rules above and below only: the diff gets the full width, so a 140-column panel
        // shows it side by side.
        let block = Block::default()
            .borders(Borders::TOP | Borders::BOTTOM)
            .border_style(Style::default().fg(Color::Yellow))
            .title(Line::from(vec![
                Span::styled(title, Style::default().add_modifier(Modifier::BOLD)),
                Span::styled(count, Style::default().fg(Color::Yellow)),
            ]));
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let head = self.head_lines(p, width);
        let foot = self.foot_lines(p, width);
        let total = usize::from(inner.height);
        // Options first, then the title and reason, then the preview with what is left; the
        // head yields rows only to keep a few preview rows.
        let foot_rows = foot.len().min(total);
        let keep = MIN_PREVIEW_ROWS.min(self.preview_rows(p, width));
        let head_rows = head.len().min(total.saturating_sub(foot_rows + keep));
        let preview_rows = total.saturating_sub(foot_rows + head_rows);
        let mut y = inner.y;
        let put = |lines: &[Line<'static>], rows: usize, buf: &mut Buffer, y: &mut u16| {
            for line in lines.iter().take(rows) {
                line.render(Rect::new(inner.x, *y, inner.width, 1), buf);
                *y += 1;
            }
        };
        put(&head, head_rows, buf, &mut y);
        let preview_area = Rect::new(
            inner.x,
            y,
            inner.width,
            u16::try_from(preview_rows).unwrap_or(0),
        );
        let text = match &p.preview {
            Preview::Text { .. } => text_lines(&p.req, width, &self.highlighter),
            Preview::Diff(_) => Vec::new(),
        };
        if let Some(p) = self.queue.front_mut() {
            match &mut p.preview {
                Preview::Diff(d) => d.render(preview_area, buf),
                Preview::Text { top, height } => {
                    *height = preview_rows;
                    *top = (*top).min(text.len().saturating_sub(preview_rows));
                    for (i, line) in text.iter().skip(*top).take(preview_rows).enumerate() {
                        let row = preview_area.y + u16::try_from(i).unwrap_or(0);
                        line.render(Rect::new(inner.x, row, inner.width, 1), buf);
                    }
                    if text.len() > preview_rows && preview_rows > 0 {
                        let last = (*top + preview_rows).min(text.len());
                        let pos = format!(" {}-{last}/{} ", *top + 1, text.len());
                        let w = u16::try_from(pos.chars().count()).unwrap_or(0);
                        let x = inner.right().saturating_sub(w);
                        Span::styled(pos, Style::default().fg(Color::DarkGray))
                            .render(Rect::new(x, preview_area.y, w, 1), buf);
                    }
                }
            }
        }
        y = preview_area.bottom();
        put(&foot, foot_rows, buf, &mut y);
    }
}
