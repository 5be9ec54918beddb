//! One entry of the conversation ("cell") and its per-width cache of wrapped lines.
//!
//! A [`Cell`] owns its content (a [`CellKind`]), a version bumped on every change, and two caches
//! of laid-out lines (the normal view and the all-expanded transcript view). Invariant: a cached
//! layout is reused only for the same width, version and focus, and — when a code block in it
//! was drawn plain while highlighting was pending — the same highlighter generation. Laying out
//! is the only expensive step, and it happens only for cells the scroll position walks over.

use ratatui::text::{Line, Span};

use super::assistant::AssistantCell;
use super::layout::{LayoutCtx, gutter};
use super::tool::ToolCell;
use super::wrap::{sanitize, wrap_spans, wrap_text};
use crate::tui::highlight::Highlighter;
use crate::tui::theme::Theme;

/// The kind of an inline notice; each is styled apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

pub(crate) struct ThinkingCell {
    pub text: String,
    pub streaming: bool,
}

pub(crate) enum CellKind {
    User(String),
    Assistant(AssistantCell),
    Thinking(ThinkingCell),
    Tool(Box<ToolCell>),
    Notice(NoticeKind, String),
    /// Where the conversation was compacted (live, or found in a resumed one), with the
    /// summary the model went on from (shown when expanded).
    Compacted(Compaction),
}

pub(crate) struct Compaction {
    pub summary: String,
    /// Why and of how much, when it happened in this session (`as asked; ~48k tokens`).
    pub why: Option<String>,
}

struct CellCache {
    width: usize,
    version: u64,
    focused: bool,
    /// `Some(generation)` when a code block was drawn plain, waiting for highlighting.
    pending_highlight: Option<u64>,
    lines: Vec<Line<'static>>,
}

pub(crate) struct Cell {
    pub kind: CellKind,
    pub version: u64,
    pub expanded: bool,
    cache: Option<CellCache>,
    full_cache: Option<CellCache>,
}

impl Cell {
    pub fn new(kind: CellKind) -> Cell {
        Cell {
            kind,
            version: 0,
            expanded: false,
            cache: None,
            full_cache: None,
        }
    }

    /// Mark the content changed: the next layout is recomputed.
    pub fn touch(&mut self) {
        self.version = self.version.wrapping_add(1);
    }

    /// Whether Ctrl+O does anything on this cell.
    pub fn is_expandable(&self) -> bool {
        matches!(
            self.kind,
            CellKind::Tool(_) | CellKind::Thinking(_) | CellKind::Compacted(_)
        )
    }

    #[cfg(test)]
    pub fn is_laid_out(&self) -> bool {
        self.cache.is_some() || self.full_cache.is_some()
    }

    /// Whether this cell's cached layout (if any) waits on highlighting.
    pub fn pending_highlight(&self, full: bool) -> bool {
        let cache = if full { &self.full_cache } else { &self.cache };
        cache
            .as_ref()
            .is_some_and(|c| c.pending_highlight.is_some())
    }

    /// The cell's lines at `width` (ending with one blank separator line), laid out on demand.
    pub fn lines(
        &mut self,
        width: usize,
        full: bool,
        focused: bool,
        theme: &Theme,
        highlighter: &Highlighter,
    ) -> &[Line<'static>] {
        let generation = highlighter.generation();
        let slot = if full {
            &mut self.full_cache
        } else {
            &mut self.cache
        };
        let valid = slot.as_ref().is_some_and(|c| {
            c.width == width
                && c.version == self.version
                && c.focused == focused
                && c.pending_highlight.is_none_or(|g| g == generation)
        });
        if !valid {
            let ctx = LayoutCtx {
                theme,
                highlighter,
                width,
                expanded: full || self.expanded,
                focused,
            };
            let old = slot.take();
            // A streaming message keeps the rows of its completed blocks when only its tail
            // changed; every other kind is laid out afresh.
            let reusable = old
                .as_ref()
                .is_some_and(|c| c.width == width && c.focused == focused);
            let mut lines = old.map(|c| c.lines).unwrap_or_default();
            let pending = match &mut self.kind {
                CellKind::Assistant(a) if !full => a.layout(&ctx, &mut lines, reusable),
                kind => {
                    lines.clear();
                    layout_kind(kind, &ctx, &mut lines)
                }
            };
            if width > 0 {
                lines.push(Line::default());
            }
            // A collapsed cell should not keep the room its expanded form needed.
            if lines.capacity() > 2 * lines.len() + 16 {
                lines.shrink_to_fit();
            }
            *slot = Some(CellCache {
                width,
                version: self.version,
                focused,
                pending_highlight: pending.then_some(generation),
                lines,
            });
        }
        slot.as_ref().map_or(&[], |c| c.lines.as_slice())
    }
}

fn layout_kind(kind: &CellKind, ctx: &LayoutCtx<'_>, out: &mut Vec<Line<'static>>) -> bool {
    let theme = ctx.theme;
    match kind {
        CellKind::User(text) => {
            let first = [gutter("› ", theme.user_prefix, ctx)];
            let rest = [Span::raw("  ")];
            let content = [Span::styled(sanitize(text).into_owned(), theme.user_text)];
            wrap_spans(&first, &rest, &content, ctx.width, out);
            false
        }
        CellKind::Notice(kind, text) => {
            let (glyph, style) = match kind {
                NoticeKind::Info => ("ℹ ", theme.notice_info),
                NoticeKind::Warning => ("⚠ ", theme.notice_warning),
                NoticeKind::Error => ("✗ ", theme.notice_error),
            };
            let first = [gutter(glyph, style, ctx)];
            let rest = [Span::raw("  ")];
            let content = [Span::styled(sanitize(text).into_owned(), style)];
            wrap_spans(&first, &rest, &content, ctx.width, out);
            false
        }
        CellKind::Thinking(t) => {
            layout_thinking(t, ctx, out);
            false
        }
        CellKind::Compacted(compaction) => {
            layout_compacted(compaction, ctx, out);
            false
        }
        CellKind::Assistant(a) => a.layout_fresh(ctx, out),
        CellKind::Tool(t) => t.layout(ctx, out),
    }
}

/// One row collapsed (`≡ Conversation compacted (why): the model went on from a summary
/// (ctrl+o to expand)`); the summary under it when expanded.
fn layout_compacted(compaction: &Compaction, ctx: &LayoutCtx<'_>, out: &mut Vec<Line<'static>>) {
    let theme = ctx.theme;
    let first = [gutter("≡ ", theme.notice_info, ctx)];
    let rest = [Span::raw("  ")];
    let why = compaction
        .why
        .as_deref()
        .map(|w| format!(" ({w})"))
        .unwrap_or_default();
    let summary = &compaction.summary;
    let mut title = vec![Span::styled(
        format!("Conversation compacted{why}: the model went on from a summary"),
        theme.notice_info,
    )];
    if !ctx.expanded {
        title.push(Span::styled(" (ctrl+o to expand)", theme.hint));
    }
    wrap_spans(&first, &rest, &title, ctx.width, out);
    if ctx.expanded {
        wrap_text(
            &[Span::raw("  ")],
            sanitize(summary).trim(),
            theme.tool_body,
            ctx.width,
            out,
        );
    }
}

fn layout_thinking(t: &ThinkingCell, ctx: &LayoutCtx<'_>, out: &mut Vec<Line<'static>>) {
    let theme = ctx.theme;
    let first = [gutter("✻ ", theme.thinking, ctx)];
    let text = sanitize(&t.text);
    if ctx.expanded {
        let title = [Span::styled("Thinking", theme.thinking)];
        wrap_spans(&first, &first, &title, ctx.width, out);
        wrap_text(
            &[Span::raw("  ")],
            text.trim(),
            theme.thinking,
            ctx.width,
            out,
        );
        return;
    }
    // Collapsed: exactly one row, the latest line of thought cut to the width.
    let label = if t.streaming {
        "Thinking…"
    } else {
        "Thought"
    };
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let mut spans = vec![Span::styled(label.to_string(), theme.thinking)];
    if t.streaming && !last.is_empty() {
        spans.push(Span::styled(format!(" {}", last.trim()), theme.dim));
    } else if !t.streaming {
        spans.push(Span::styled(" (ctrl+o to expand)", theme.hint));
    }
    let mut lines = Vec::new();
    wrap_spans(&first, &[], &spans, ctx.width, &mut lines);
    out.extend(lines.into_iter().take(1));
}
