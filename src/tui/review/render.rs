//! Drawing a [`DiffView`] into a ratatui `Buffer`.
//!
//! Only the rows inside the area are laid out; everything is clipped to the area by display
//! width (wide characters never split, a `›` marks a clipped line), so no size of area, from
//! zero columns up, can make drawing panic or write outside it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use unicode_width::UnicodeWidthStr;

use super::diff_view::{DiffView, FileKind};
use super::rows::{self, Row};
use crate::diff::LineKind;

const GUTTER: Style = Style::new().fg(Color::DarkGray);
const ADDED_BG: Color = Color::Indexed(22);
const ADDED_EMPHASIS_BG: Color = Color::Indexed(28);
const REMOVED_BG: Color = Color::Indexed(52);
const REMOVED_EMPHASIS_BG: Color = Color::Indexed(124);
const FOCUS_BG: Color = Color::Indexed(236);
/// Line numbers of the focused hunk, so the focus shows even when its header scrolled away.
const FOCUS_GUTTER: Style = Style::new().fg(Color::Yellow);

/// Which side of a side-by-side row a half shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Old,
    New,
}

/// How a line of a given kind looks.
struct Look {
    line: Style,
    sign: Style,
    emphasis: Style,
    /// Rejected lines are drawn flat grey: highlighting would make them look live.
    flat: bool,
}

fn look(kind: LineKind, rejected: bool) -> Look {
    if rejected {
        let grey = Style::new().fg(Color::DarkGray).add_modifier(Modifier::DIM);
        // Added lines of a rejected hunk will not land: strike them through.
        let line = if kind == LineKind::Added {
            grey.add_modifier(Modifier::CROSSED_OUT)
        } else {
            grey
        };
        return Look {
            line,
            sign: grey,
            emphasis: Style::new(),
            flat: true,
        };
    }
    match kind {
        LineKind::Context => Look {
            line: Style::new(),
            sign: Style::new(),
            emphasis: Style::new(),
            flat: false,
        },
        LineKind::Removed => Look {
            line: Style::new().bg(REMOVED_BG),
            sign: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            emphasis: Style::new()
                .bg(REMOVED_EMPHASIS_BG)
                .add_modifier(Modifier::BOLD),
            flat: false,
        },
        LineKind::Added => Look {
            line: Style::new().bg(ADDED_BG),
            sign: Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            emphasis: Style::new()
                .bg(ADDED_EMPHASIS_BG)
                .add_modifier(Modifier::BOLD),
            flat: false,
        },
    }
}

fn sign(kind: LineKind) -> &'static str {
    match kind {
        LineKind::Context => "  ",
        LineKind::Removed => "- ",
        LineKind::Added => "+ ",
    }
}

impl DiffView {
    /// Draw into `area`: a title row (path, kind, summary, scroll position), then the visible
    /// rows of the diff. Only the visible lines are laid out.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                if let Some(cell) = buf.cell_mut((x, y)) {
                    cell.reset();
                }
            }
        }
        self.set_layout(self.layout_for(area.width));
        let body = Rect {
            y: area.y + 1,
            height: area.height - 1,
            ..area
        };
        self.height = usize::from(body.height);
        if self.reveal_pending && self.height > 0 {
            self.reveal_focus();
            self.reveal_pending = false;
        }
        self.top = self
            .top
            .min(rows::max_top(self.rows.len(), self.page_height()));
        self.draw_title(Rect { height: 1, ..area }, buf);
        if body.height == 0 {
            return;
        }
        if self.rows.is_empty() {
            put(buf, body.x, body.y, body.right(), "(no changes)", GUTTER);
            return;
        }
        let visible: Vec<Row> = self
            .rows
            .iter()
            .skip(self.top)
            .take(self.height)
            .copied()
            .collect();
        for (i, row) in visible.into_iter().enumerate() {
            // i < body.height, which is a u16.
            let y = body.y + i as u16;
            let line = Rect {
                y,
                height: 1,
                ..body
            };
            match row {
                Row::Header { hunk } => self.draw_header(line, buf, hunk),
                Row::Line { hunk, line: l } => self.draw_unified(line, buf, hunk, l),
                Row::Pair { hunk, old, new } => {
                    let left_w = (line.width.saturating_sub(1)) / 2;
                    let left = Rect {
                        width: left_w,
                        ..line
                    };
                    let right = Rect {
                        x: line.x + left_w + 1,
                        width: line.width.saturating_sub(left_w + 1),
                        ..line
                    };
                    self.draw_half(left, buf, hunk, old, Side::Old);
                    if left_w < line.width {
                        put(buf, line.x + left_w, y, line.right(), "│", GUTTER);
                    }
                    self.draw_half(right, buf, hunk, new, Side::New);
                }
            }
        }
    }

    /// `path  new file  +N -M, k of n hunks accepted  edited` and, when the diff scrolls, the
    /// visible row range on the right.
    fn draw_title(&self, row: Rect, buf: &mut Buffer) {
        let mut parts: Vec<(Style, String)> = vec![(
            Style::new().add_modifier(Modifier::BOLD),
            self.path.display().to_string(),
        )];
        let tag = match self.kind {
            FileKind::New => Some("new file"),
            FileKind::Deleted => Some("deleted file"),
            FileKind::Unchanged => Some("no changes"),
            FileKind::Modified => None,
        };
        if let Some(tag) = tag {
            parts.push((Style::new().fg(Color::Yellow), format!("  {tag}")));
        }
        if !self.diff.hunks.is_empty() {
            let n = self.diff.hunks.len();
            let k = self.accepted.iter().filter(|a| **a).count();
            parts.push((Style::new(), "  ".into()));
            parts.push((
                Style::new().fg(Color::Green),
                format!("+{}", self.diff.added),
            ));
            parts.push((Style::new(), " ".into()));
            parts.push((
                Style::new().fg(Color::Red),
                format!("-{}", self.diff.removed),
            ));
            let hunks = if n == 1 { "hunk" } else { "hunks" };
            let style = if k == n {
                Style::new()
            } else {
                Style::new().fg(Color::Yellow)
            };
            if !self.fixed {
                parts.push((style, format!(", {k} of {n} {hunks} accepted")));
            }
        }
        if self.edited() {
            parts.push((Style::new().fg(Color::Magenta), "  edited by you".into()));
        }
        let used = draw_pieces(buf, row.x, row.y, row.width, &parts);
        if self.rows.len() > self.height && self.height > 0 {
            let end = (self.top + self.height).min(self.rows.len());
            let pos = format!("{}-{}/{}", self.top + 1, end, self.rows.len());
            let w = pos.width();
            if usize::from(used) + 2 + w <= usize::from(row.width) {
                // w < row.width here, so it fits a u16.
                put(
                    buf,
                    row.right() - w as u16,
                    row.y,
                    row.right(),
                    &pos,
                    GUTTER,
                );
            }
        }
    }

    fn draw_header(&self, row: Rect, buf: &mut Buffer, hunk: usize) {
        let Some(h) = self.diff.hunks.get(hunk) else {
            return;
        };
        let focused = hunk == self.focus;
        let rejected = !self.accepted.get(hunk).copied().unwrap_or(true);
        let mut header = Style::new().fg(Color::Cyan);
        if focused {
            buf.set_style(row, Style::new().bg(FOCUS_BG));
            header = header.add_modifier(Modifier::BOLD);
        }
        if rejected {
            header = header.fg(Color::DarkGray);
        }
        let n = self.diff.hunks.len();
        let mut parts = vec![
            (
                Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
                if focused { "▶ " } else { "  " }.to_string(),
            ),
            (header, h.header()),
        ];
        if n > 1 {
            parts.push((GUTTER, format!("  hunk {} of {n}", hunk + 1)));
        }
        if rejected {
            parts.push((
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
                "  ✗ rejected".into(),
            ));
        }
        draw_pieces(buf, row.x, row.y, row.width, &parts);
    }

    fn draw_unified(&mut self, row: Rect, buf: &mut Buffer, hunk: usize, line: usize) {
        let Some(hl) = self.diff.hunks.get(hunk).and_then(|h| h.lines.get(line)) else {
            return;
        };
        let (kind, old_no, new_no) = (hl.kind, hl.old_no, hl.new_no);
        let w = self.number_width;
        let numbers = match self.kind {
            FileKind::New => format!("{} ", number(new_no, w)),
            FileKind::Deleted => format!("{} ", number(old_no, w)),
            _ => format!("{} {} ", number(old_no, w), number(new_no, w)),
        };
        let x = put(buf, row.x, row.y, row.right(), &numbers, self.gutter(hunk));
        let rest = Rect {
            x,
            width: row.right().saturating_sub(x),
            ..row
        };
        self.draw_line(rest, buf, hunk, line, kind);
    }

    fn draw_half(
        &mut self,
        half: Rect,
        buf: &mut Buffer,
        hunk: usize,
        line: Option<usize>,
        side: Side,
    ) {
        let Some(line) = line else {
            return;
        };
        let Some(hl) = self.diff.hunks.get(hunk).and_then(|h| h.lines.get(line)) else {
            return;
        };
        let kind = hl.kind;
        let no = if side == Side::Old {
            hl.old_no
        } else {
            hl.new_no
        };
        let x = put(
            buf,
            half.x,
            half.y,
            half.right(),
            &format!("{} ", number(no, self.number_width)),
            self.gutter(hunk),
        );
        let rest = Rect {
            x,
            width: half.right().saturating_sub(x),
            ..half
        };
        self.draw_line(rest, buf, hunk, line, kind);
    }

    fn gutter(&self, hunk: usize) -> Style {
        if hunk == self.focus {
            FOCUS_GUTTER
        } else {
            GUTTER
        }
    }

    /// The sign column and the text of one line, tinted to the end of `area`.
    fn draw_line(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        hunk: usize,
        line: usize,
        kind: LineKind,
    ) {
        if area.width == 0 {
            return;
        }
        let rejected = !self.accepted.get(hunk).copied().unwrap_or(true);
        let look = look(kind, rejected);
        buf.set_style(area, look.line);
        let x = put(buf, area.x, area.y, area.right(), sign(kind), look.sign);
        let pieces = self.line_pieces(hunk, line);
        let styled: Vec<(Style, &str)> = pieces
            .iter()
            .map(|p| {
                if look.flat {
                    return (look.line, p.text.as_str());
                }
                let mut s = look.line.patch(Style {
                    bg: None,
                    ..p.style
                });
                if p.emphasized {
                    s = s.patch(look.emphasis);
                }
                (s, p.text.as_str())
            })
            .collect();
        draw_pieces(buf, x, area.y, area.right().saturating_sub(x), &styled);
    }
}

/// A right-aligned line number, or blanks.
fn number(n: Option<usize>, width: usize) -> String {
    match n {
        Some(n) => format!("{n:>width$}"),
        None => " ".repeat(width),
    }
}

/// Write `text` from `x` without passing `right`; returns the column after it.
fn put(buf: &mut Buffer, x: u16, y: u16, right: u16, text: &str, style: Style) -> u16 {
    if x >= right {
        return x;
    }
    buf.set_stringn(x, y, text, usize::from(right - x), style).0
}

/// Write styled pieces into `width` columns from `x`. When they do not fit, the last column gets
/// a `›` instead (the text stops one column earlier, so no wide character is split). Returns the
/// columns used.
fn draw_pieces<S: AsRef<str>>(
    buf: &mut Buffer,
    x: u16,
    y: u16,
    width: u16,
    pieces: &[(Style, S)],
) -> u16 {
    if width == 0 {
        return 0;
    }
    let total: usize = pieces.iter().map(|(_, t)| t.as_ref().width()).sum();
    let clipped = total > usize::from(width);
    let right = x + if clipped { width - 1 } else { width };
    let mut cx = x;
    for (style, text) in pieces {
        cx = put(buf, cx, y, right, text.as_ref(), *style);
        if cx >= right {
            break;
        }
    }
    if clipped {
        put(buf, x + width - 1, y, x + width, "›", GUTTER);
        return width;
    }
    cx - x
}
