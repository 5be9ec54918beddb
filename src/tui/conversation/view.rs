//! What the person sees of the conversation and where their eye is: the focused cell (moved
//! with the arrow keys, dropped with Esc), expanding and collapsing it, whether a redraw is due,
//! and drawing the visible cells (or the whole transcript) into a buffer through the scroll
//! position, so a frame lays out only the cells it walks over.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use super::{Conversation, ScrollState, scroll, wrap};

impl Conversation {
    /// Whether a redraw is needed since the last render.
    pub fn is_dirty(&self) -> bool {
        self.dirty
            || (self.pending_visible && self.highlighter.generation() != self.rendered_generation)
    }

    pub fn focus_prev(&mut self) {
        let end = self.focus.unwrap_or(self.cells.len());
        let next = (0..end).rev().find(|&i| self.cells[i].is_expandable());
        if next.is_some() {
            self.focus = next;
            self.reveal_focus = true;
            self.dirty = true;
        }
    }

    /// Drop the focus (Esc): Ctrl+O goes back to acting on the last cell.
    pub fn clear_focus(&mut self) {
        self.focus = None;
        self.dirty = true;
    }

    pub fn focus_next(&mut self) {
        let Some(cur) = self.focus else {
            return;
        };
        self.focus = (cur + 1..self.cells.len()).find(|&i| self.cells[i].is_expandable());
        self.reveal_focus = self.focus.is_some();
        self.dirty = true;
    }

    /// The focused cell, if focus was moved (None means "the last one").
    pub fn focused(&self) -> Option<usize> {
        self.focus
    }

    /// Expand or collapse the focused (default: last) tool or thinking cell.
    pub fn toggle_expanded(&mut self) {
        let target = self.focus.or_else(|| {
            (0..self.cells.len())
                .rev()
                .find(|&i| self.cells[i].is_expandable())
        });
        if let Some(cell) = target.and_then(|i| self.cells.get_mut(i)) {
            cell.expanded = !cell.expanded;
            cell.touch();
            self.dirty = true;
        }
    }

    /// Draw the visible part of the conversation into `area`.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, scroll: &mut ScrollState) {
        self.draw(area, buf, scroll, false);
    }

    /// The full transcript view (Ctrl+T): every cell expanded.
    pub fn render_transcript(&mut self, area: Rect, buf: &mut Buffer, scroll: &mut ScrollState) {
        self.draw(area, buf, scroll, true);
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, scroll: &mut ScrollState, full: bool) {
        let area = area.intersection(buf.area);
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                if let Some(c) = buf.cell_mut((x, y)) {
                    c.reset();
                }
            }
        }
        self.dirty = false;
        self.rendered_generation = self.highlighter.generation();
        self.pending_visible = false;
        if area.is_empty() {
            return;
        }
        let width = usize::from(area.width);
        let viewport = usize::from(area.height);
        let (cells, theme, hl, focus) =
            (&mut self.cells, &self.theme, &self.highlighter, self.focus);
        let len = cells.len();
        let mut height = |i: usize| {
            cells[i]
                .lines(width, full, focus == Some(i), theme, hl)
                .len()
        };
        let mut top = scroll.resolve(len, viewport, self.output_version, &mut height);
        if std::mem::take(&mut self.reveal_focus)
            && let Some(f) = focus.filter(|&f| f < len)
            && let Some(pos) = scroll::reveal(top, f, len, viewport, &mut height)
        {
            scroll.anchor(pos);
            top = scroll.resolve(len, viewport, self.output_version, &mut height);
        }
        let mut y = area.top();
        let mut cell = top.cell;
        let mut skip = top.line;
        while y < area.bottom() && cell < len {
            let lines = cells[cell].lines(width, full, focus == Some(cell), theme, hl);
            for line in lines.iter().skip(skip) {
                if y >= area.bottom() {
                    break;
                }
                buf.set_line(area.left(), y, line, area.width);
                y += 1;
            }
            self.pending_visible |= cells[cell].pending_highlight(full);
            skip = 0;
            cell += 1;
        }
        if scroll.new_output_below() {
            let text = " ↓ new output below ";
            let w = wrap::str_width(text) as u16;
            let x = area.left() + area.width.saturating_sub(w) / 2;
            let span = Span::styled(text, self.theme.new_output_marker);
            buf.set_span(x, area.bottom() - 1, &span, area.width);
        }
    }
}
