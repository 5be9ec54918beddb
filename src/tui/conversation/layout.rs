//! What laying out a cell needs, shared by every kind of cell: the [`LayoutCtx`] (theme,
//! highlighter, width, expanded/focused) and the focus-aware first gutter glyph. It sits below
//! `cell.rs` and the per-kind modules (`assistant.rs`, `tool.rs`), so those import it and
//! `cell.rs` imports them, with no cycle between them.

use ratatui::text::Span;

use crate::protocol::CallOutcome;
use crate::tui::highlight::Highlighter;
use crate::tui::markdown;
use crate::tui::theme::Theme;

/// Rows of a collapsed body.
pub(crate) const COLLAPSED_ROWS: usize = 5;

/// Rows of a collapsed edit (its summary and changed lines), trimmed from the middle beyond.
pub(crate) const COLLAPSED_DIFF_ROWS: usize = 12;

/// What a layout depends on besides the cell itself.
pub(crate) struct LayoutCtx<'a> {
    pub theme: &'a Theme,
    pub highlighter: &'a Highlighter,
    pub width: usize,
    /// Show everything (Ctrl+O on this cell, or the transcript view).
    pub expanded: bool,
    pub focused: bool,
}

impl<'a> LayoutCtx<'a> {
    /// What Markdown layout needs of this context.
    pub fn frame(&self) -> markdown::Frame<'a> {
        markdown::Frame {
            width: self.width,
            theme: self.theme,
            highlighter: self.highlighter,
        }
    }
}

/// The first gutter glyph of a cell; reversed when the cell has focus.
pub(crate) fn gutter(
    glyph: &'static str,
    style: ratatui::style::Style,
    ctx: &LayoutCtx<'_>,
) -> Span<'static> {
    if ctx.focused {
        Span::styled(glyph, style.patch(ctx.theme.focus))
    } else {
        Span::styled(glyph, style)
    }
}

/// Whether the permission step refused the call.
pub(crate) fn was_denied(outcome: Option<CallOutcome>) -> bool {
    matches!(
        outcome,
        Some(CallOutcome::Denied | CallOutcome::DeniedForSession)
    )
}

/// `12s`, `3m 05s`, `1h 02m`.
pub(crate) fn format_elapsed(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}
