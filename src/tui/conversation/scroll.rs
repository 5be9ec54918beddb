//! Scroll position of the conversation view, and the arithmetic that resolves it each frame.
//!
//! The view either follows the bottom (the default) or is anchored at a (cell, line) position for
//! its top row. Anchoring on a cell rather than on a line number keeps the view still while new
//! output arrives below and while a resize reflows cells above. Scroll requests only record a
//! delta; [`resolve`] applies it during render, asking for the heights of just the cells it
//! walks over, so the cost is proportional to the distance scrolled plus the viewport, never to
//! the transcript length. Scrolling down past the end returns to following.

/// A position in the laid-out conversation: a row `line` of cell `cell`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub cell: usize,
    pub line: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    #[default]
    Following,
    Anchored(Position),
}

/// Where the person has scrolled to. `Default` follows the bottom.
#[derive(Debug, Clone, Default)]
pub struct ScrollState {
    mode: Mode,
    /// Rows to move at the next render; negative is up.
    pending: i64,
    /// Height of the last rendered viewport (page size).
    viewport: usize,
    /// Output version seen while the bottom was last in view.
    seen_version: u64,
    new_below: bool,
}

/// Rows scrolled by a page beyond the viewport height: one row of overlap keeps context.
const PAGE_OVERLAP: usize = 1;
/// Page size before the first render tells us the real one.
const DEFAULT_VIEWPORT: usize = 20;

impl ScrollState {
    /// Move the view up by `lines` rows (mouse wheel, arrow keys); stops following.
    pub fn scroll_up(&mut self, lines: usize) {
        self.pending = self.pending.saturating_sub(lines as i64);
    }

    /// Move the view down; reaching the end follows the bottom again.
    pub fn scroll_down(&mut self, lines: usize) {
        self.pending = self.pending.saturating_add(lines as i64);
    }

    /// Up by the last viewport height minus one row (PgUp).
    pub fn page_up(&mut self) {
        self.scroll_up(self.page());
    }

    /// Down by the last viewport height minus one row (PgDn).
    pub fn page_down(&mut self) {
        self.scroll_down(self.page());
    }

    /// The first row of the conversation (Ctrl+Home).
    pub fn to_top(&mut self) {
        self.mode = Mode::Anchored(Position::default());
        self.pending = 0;
    }

    /// Follow the bottom again (Ctrl+End).
    pub fn to_bottom(&mut self) {
        self.mode = Mode::Following;
        self.pending = 0;
        self.new_below = false;
    }

    /// True when the view sticks to the bottom (no pending scroll up).
    pub fn is_following(&self) -> bool {
        self.mode == Mode::Following && self.pending >= 0
    }

    /// True when the person scrolled up and new output arrived below since (as of the last render).
    pub fn new_output_below(&self) -> bool {
        self.new_below
    }

    /// Put the top of the view at `pos` (it still follows again if that shows the end).
    pub fn anchor(&mut self, pos: Position) {
        self.mode = Mode::Anchored(pos);
        self.pending = 0;
    }

    fn page(&self) -> usize {
        let v = if self.viewport == 0 {
            DEFAULT_VIEWPORT
        } else {
            self.viewport
        };
        v.saturating_sub(PAGE_OVERLAP).max(1)
    }

    /// Apply pending moves and return the position of the top row, given `len` cells whose
    /// heights `height(i)` returns (laying them out on demand), a viewport of `viewport` rows, and
    /// the conversation's output version (bumped whenever output is added).
    pub fn resolve(
        &mut self,
        len: usize,
        viewport: usize,
        output_version: u64,
        height: &mut dyn FnMut(usize) -> usize,
    ) -> Position {
        self.viewport = viewport;
        let pending = std::mem::take(&mut self.pending);
        let start = match self.mode {
            Mode::Anchored(pos) if pos.cell < len => Some(clamp(pos, height)),
            Mode::Anchored(_) => None,
            Mode::Following if pending < 0 => Some(bottom_top(len, viewport, height)),
            Mode::Following => None,
        };
        let anchored = start.map(|pos| {
            if pending < 0 {
                move_up(pos, pending.unsigned_abs() as usize, height)
            } else {
                move_down(pos, pending as usize, len, height)
            }
        });
        match anchored {
            Some(pos) if fills_viewport(pos, len, viewport, height) => {
                self.mode = Mode::Anchored(pos);
                self.new_below = output_version != self.seen_version;
                pos
            }
            _ => {
                self.mode = Mode::Following;
                self.seen_version = output_version;
                self.new_below = false;
                bottom_top(len, viewport, height)
            }
        }
    }
}

fn clamp(pos: Position, height: &mut dyn FnMut(usize) -> usize) -> Position {
    let h = height(pos.cell);
    Position {
        cell: pos.cell,
        line: pos.line.min(h.saturating_sub(1)),
    }
}

/// The top row when the last row of the last cell sits on the bottom of the viewport (or the
/// start, when everything fits).
pub fn bottom_top(len: usize, viewport: usize, height: &mut dyn FnMut(usize) -> usize) -> Position {
    let mut acc = 0;
    for cell in (0..len).rev() {
        acc += height(cell);
        if acc >= viewport {
            return Position {
                cell,
                line: acc - viewport,
            };
        }
    }
    Position::default()
}

/// Move `n` rows up, stopping at the very top.
pub fn move_up(pos: Position, n: usize, height: &mut dyn FnMut(usize) -> usize) -> Position {
    let (mut cell, mut line, mut n) = (pos.cell, pos.line, n);
    loop {
        if n <= line {
            return Position {
                cell,
                line: line - n,
            };
        }
        n -= line;
        if cell == 0 {
            return Position::default();
        }
        cell -= 1;
        line = height(cell);
    }
}

/// Move `n` rows down; past the last row it stays on the last row.
pub fn move_down(
    pos: Position,
    n: usize,
    len: usize,
    height: &mut dyn FnMut(usize) -> usize,
) -> Position {
    let (mut cell, mut line, mut n) = (pos.cell, pos.line, n);
    while cell < len {
        let h = height(cell);
        if line + n < h {
            return Position {
                cell,
                line: line + n,
            };
        }
        n -= h.saturating_sub(line).min(n);
        if cell + 1 == len {
            return Position {
                cell,
                line: h.saturating_sub(1),
            };
        }
        cell += 1;
        line = 0;
    }
    pos
}

/// Where the view's top must move so that cell `target` is fully visible (or, when taller than
/// the viewport, starts at the top); None when it already is.
pub fn reveal(
    top: Position,
    target: usize,
    len: usize,
    viewport: usize,
    height: &mut dyn FnMut(usize) -> usize,
) -> Option<Position> {
    let target_top = Position {
        cell: target,
        line: 0,
    };
    if target < top.cell || (target == top.cell && top.line > 0) {
        return Some(target_top);
    }
    // Rows from the view's top to the end of the target cell.
    let mut rows = 0usize;
    for cell in top.cell..=target.min(len.saturating_sub(1)) {
        rows += height(cell);
    }
    rows = rows.saturating_sub(top.line);
    if rows <= viewport {
        return None;
    }
    let h = height(target);
    if h >= viewport {
        return Some(target_top);
    }
    Some(move_up(
        Position {
            cell: target,
            line: h,
        },
        viewport,
        height,
    ))
}

/// Whether the rows from `pos` to the end fill the viewport (else the view belongs at the bottom).
fn fills_viewport(
    pos: Position,
    len: usize,
    viewport: usize,
    height: &mut dyn FnMut(usize) -> usize,
) -> bool {
    let mut acc = 0usize;
    for cell in pos.cell..len {
        let h = height(cell);
        acc += if cell == pos.cell {
            h.saturating_sub(pos.line)
        } else {
            h
        };
        if acc > viewport {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(cell: usize, line: usize) -> Position {
        Position { cell, line }
    }

    #[test]
    fn moves_across_cells() {
        let hs = [3usize, 1, 4, 2];
        let mut h = |i: usize| hs[i];
        assert_eq!(move_up(pos(2, 1), 1, &mut h), pos(2, 0));
        assert_eq!(move_up(pos(2, 0), 1, &mut h), pos(1, 0));
        assert_eq!(move_up(pos(2, 0), 2, &mut h), pos(0, 2));
        assert_eq!(move_up(pos(2, 0), 50, &mut h), pos(0, 0));
        assert_eq!(move_down(pos(0, 2), 1, 4, &mut h), pos(1, 0));
        assert_eq!(move_down(pos(0, 0), 4, 4, &mut h), pos(2, 0));
        assert_eq!(move_down(pos(0, 0), 99, 4, &mut h), pos(3, 1));
        assert_eq!(bottom_top(4, 5, &mut h), pos(2, 1));
        assert_eq!(bottom_top(4, 50, &mut h), pos(0, 0));
    }

    #[test]
    fn scrolling_up_anchors_and_scrolling_back_down_follows_again() {
        let hs = [3usize; 10]; // 30 rows
        let mut h = |i: usize| hs[i];
        let mut s = ScrollState::default();
        assert_eq!(s.resolve(10, 10, 1, &mut h), pos(6, 2));
        assert!(s.is_following());
        s.scroll_up(5);
        assert!(!s.is_following());
        assert_eq!(s.resolve(10, 10, 1, &mut h), pos(5, 0));
        assert!(!s.new_output_below());
        // New output below does not move the view, but is reported.
        let hs2 = [3usize; 12];
        let mut h2 = |i: usize| hs2[i];
        assert_eq!(s.resolve(12, 10, 2, &mut h2), pos(5, 0));
        assert!(s.new_output_below());
        s.page_down();
        assert_eq!(s.resolve(12, 10, 2, &mut h2), pos(8, 0));
        s.scroll_down(100);
        assert_eq!(s.resolve(12, 10, 2, &mut h2), pos(8, 2));
        assert!(s.is_following());
        assert!(!s.new_output_below());
        s.to_top();
        assert_eq!(s.resolve(12, 10, 2, &mut h2), pos(0, 0));
        s.page_up();
        assert_eq!(s.resolve(12, 10, 2, &mut h2), pos(0, 0));
        s.to_bottom();
        assert!(s.is_following());
    }

    #[test]
    fn reveal_scrolls_just_enough() {
        let hs = [3usize, 3, 3, 3, 3, 3];
        let mut h = |i: usize| hs[i];
        // View rows 6..11 (cells 2 and 3, part of 4... viewport 5 from (2,0)).
        let top = pos(2, 0);
        assert_eq!(reveal(top, 2, 6, 5, &mut h), None);
        assert_eq!(reveal(top, 1, 6, 5, &mut h), Some(pos(1, 0)));
        assert_eq!(reveal(pos(2, 1), 2, 6, 5, &mut h), Some(pos(2, 0)));
        // Cell 3 ends at row 12 from the top of cell 2 = 6 rows > 5: move down by one row.
        assert_eq!(reveal(top, 3, 6, 5, &mut h), Some(pos(2, 1)));
        assert_eq!(reveal(top, 5, 6, 5, &mut h), Some(pos(4, 1)));
        let tall = [3usize, 10];
        let mut h2 = |i: usize| tall[i];
        assert_eq!(reveal(pos(0, 0), 1, 2, 5, &mut h2), Some(pos(1, 0)));
    }

    #[test]
    fn short_content_starts_at_the_top_and_cannot_scroll() {
        let mut h = |_: usize| 2usize;
        let mut s = ScrollState::default();
        s.scroll_up(3);
        assert_eq!(s.resolve(3, 10, 0, &mut h), pos(0, 0));
        assert!(s.is_following());
        assert_eq!(s.resolve(0, 10, 0, &mut h), pos(0, 0));
    }

    #[test]
    fn an_anchor_past_the_end_after_clear_follows_again() {
        let mut h = |_: usize| 5usize;
        let mut s = ScrollState::default();
        s.to_top();
        assert_eq!(s.resolve(10, 4, 0, &mut h), pos(0, 0));
        s.scroll_down(47);
        assert_eq!(s.resolve(10, 4, 0, &mut h), pos(9, 1));
        assert!(s.is_following());
        s.scroll_up(1);
        assert_eq!(s.resolve(10, 4, 0, &mut h), pos(9, 0));
        assert_eq!(s.resolve(2, 4, 0, &mut h), pos(1, 1));
        assert!(s.is_following());
    }
}
