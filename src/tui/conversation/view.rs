//! What the person sees of the conversation and where their eye is: the focused cell (moved
//! with the arrow keys, dropped with Esc), expanding and collapsing it or (nothing focused) the
//! tool cells of the turn in view, whether a redraw is due,
//! and drawing the visible cells (or the whole transcript) into a buffer through the scroll
//! position, so a frame lays out only the cells it walks over.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use super::cell::CellKind;
use super::{Conversation, ScrollState, scroll, wrap};

impl Conversation {
    /// The cell of tool call `call_id` laid out whole at `width` (`/tasks`' view of a
    /// background agent: its calls and report as they come); None when no cell shows it.
    pub fn call_lines(
        &mut self,
        call_id: &str,
        width: usize,
    ) -> Option<Vec<ratatui::text::Line<'static>>> {
        let idx = *self.calls.get(call_id)?;
        let (theme, hl) = (&self.theme, &self.highlighter);
        let cell = self.cells.get_mut(idx)?;
        Some(cell.lines(width, true, false, theme, hl).to_vec())
    }

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

    /// Ctrl+O: expand or collapse the focused cell, or (nothing focused) every tool and
    /// thinking cell of the turn at the bottom of the view — all expanded when any was
    /// collapsed, all collapsed otherwise.
    pub fn toggle_expanded(&mut self) {
        let targets: Vec<usize> = match self.focus {
            Some(f) => vec![f],
            None => {
                let (first, last) = self.drawn;
                let last = last.min(self.cells.len().saturating_sub(1));
                let at = (first.min(last)..=last)
                    .rev()
                    .find(|&i| self.cells.get(i).is_some_and(|c| c.is_expandable()))
                    .unwrap_or(last);
                let (start, end) = self.turn_around(at);
                (start..end)
                    .filter(|&i| self.cells[i].is_expandable())
                    .collect()
            }
        };
        let expand = targets
            .iter()
            .any(|&i| self.cells.get(i).is_some_and(|c| !c.expanded));
        for i in targets {
            if let Some(cell) = self.cells.get_mut(i) {
                cell.expanded = expand;
                cell.touch();
                self.dirty = true;
            }
        }
    }

    /// The cells of the turn holding cell `at` (or the last turn past the end): from its
    /// prompt up to the next prompt.
    fn turn_around(&self, at: usize) -> (usize, usize) {
        if self.cells.is_empty() {
            return (0, 0);
        }
        let is_prompt = |i: &usize| matches!(self.cells[*i].kind, CellKind::User(_));
        let at = at.min(self.cells.len() - 1);
        let start = (0..=at).rev().find(is_prompt).unwrap_or(0);
        let end = (at + 1..self.cells.len())
            .find(is_prompt)
            .unwrap_or(self.cells.len());
        (start, end)
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
        let mut last = top.cell;
        while y < area.bottom() && cell < len {
            last = cell;
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
        if !full {
            self.drawn = (top.cell, last);
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
