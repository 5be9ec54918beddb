//! The assistant's streaming Markdown message.
//!
//! Deltas are appended to the raw text; a scanner walks each newly completed line once and finds
//! block boundaries (a blank line outside a code fence, followed by a line that is not indented,
//! so list continuations and indented code stay with their block). Text before the last boundary
//! is parsed once into [`MdItem`]s and kept; only the tail after it — the block still streaming,
//! including the unfinished last line — is parsed again when the cell is laid out. Invariant:
//! `done_upto <= scan_pos <= text.len()`, both on char boundaries (they follow a `'\n'`).

use ratatui::text::{Line, Span};

use super::layout::{LayoutCtx, gutter};
use crate::tui::markdown::{self, MdItem};
use crate::tui::theme::Theme;

#[derive(Default)]
pub(crate) struct AssistantCell {
    text: String,
    /// End of the text already parsed into `done`.
    done_upto: usize,
    done: Vec<MdItem>,
    /// Start of the first line not yet scanned.
    scan_pos: usize,
    /// The open code fence: its character and length.
    fence: Option<(char, usize)>,
    /// End of the last blank line seen outside a fence, waiting for the next line to confirm it.
    candidate: Option<usize>,
    complete: bool,
    /// What the rows at the start of the last layout hold: the completed blocks laid out.
    done_rows: Option<DoneRows>,
}

/// The laid-out rows of `done[..items]`, valid for `width` (and, when a code block among them
/// waited for highlighting, for highlighter generation `pending`).
#[derive(Clone, Copy)]
struct DoneRows {
    width: usize,
    items: usize,
    rows: usize,
    pending: Option<u64>,
}

impl AssistantCell {
    pub fn new() -> AssistantCell {
        AssistantCell::default()
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Append a delta, parsing any blocks it completes.
    pub fn push(&mut self, delta: &str, theme: &Theme) {
        self.text.push_str(delta);
        if let Some(boundary) = self.scan()
            && boundary > self.done_upto
        {
            let chunk = &self.text[self.done_upto..boundary];
            let items = markdown::parse(chunk, theme, self.done_upto > 0, true);
            self.done.extend(items);
            self.done_upto = boundary;
        }
    }

    /// The message is whole: parse the tail for good (and allow highlighting its code).
    pub fn finish(&mut self, theme: &Theme) {
        if self.complete {
            return;
        }
        self.complete = true;
        let chunk = &self.text[self.done_upto..];
        if !chunk.trim().is_empty() {
            let items = markdown::parse(chunk, theme, self.done_upto > 0, true);
            self.done.extend(items);
        }
        self.done_upto = self.text.len();
        self.scan_pos = self.text.len();
    }

    /// Scan newly completed lines; returns the latest confirmed block boundary.
    fn scan(&mut self) -> Option<usize> {
        let mut boundary = None;
        while let Some(nl) = self.text[self.scan_pos..].find('\n') {
            let start = self.scan_pos;
            let end = start + nl + 1;
            let line = &self.text[start..end - 1];
            let blank = line.trim().is_empty();
            if let Some(c) = self.candidate
                && !blank
            {
                if !line.starts_with([' ', '\t']) {
                    boundary = Some(c);
                }
                self.candidate = None;
            }
            match self.fence {
                Some((ch, n)) => {
                    if fence_of(line).is_some_and(|(c, m)| c == ch && m >= n)
                        && line.trim().chars().all(|c| c == ch)
                    {
                        self.fence = None;
                    }
                }
                None => {
                    if let Some(f) = fence_of(line) {
                        self.fence = Some(f);
                    } else if blank {
                        self.candidate = Some(end);
                    }
                }
            }
            self.scan_pos = end;
        }
        boundary
    }

    /// Lay out into `out`, which holds this cell's previous rows. With `reuse`, rows of
    /// completed blocks laid out before at this width are kept and only what follows them is
    /// laid out again, so a streaming message costs one block per frame, not its whole length.
    pub fn layout(
        &mut self,
        ctx: &LayoutCtx<'_>,
        out: &mut Vec<Line<'static>>,
        reuse: bool,
    ) -> bool {
        let generation = ctx.highlighter.generation();
        let kept = self.done_rows.filter(|d| {
            reuse
                && d.width == ctx.width
                && d.items <= self.done.len()
                && d.rows <= out.len()
                && d.pending.is_none_or(|g| g == generation)
        });
        let pad = [Span::raw("  ")];
        let (from, mut pending) = match kept {
            Some(d) => {
                out.truncate(d.rows);
                (d.items, d.pending.is_some())
            }
            None => {
                out.clear();
                (0, false)
            }
        };
        pending |= markdown::layout(&self.done[from..], &pad, ctx.frame(), out);
        if from == 0
            && ctx.width >= 2
            && let Some(first) = out.first_mut().and_then(|l| l.spans.first_mut())
        {
            *first = gutter("● ", ctx.theme.assistant_bullet, ctx);
        }
        self.done_rows = Some(DoneRows {
            width: ctx.width,
            items: self.done.len(),
            rows: out.len(),
            pending: pending.then_some(generation),
        });
        pending |= self.layout_tail(&pad, ctx, out);
        self.patch_bullet(ctx, out);
        pending
    }

    /// Lay out from scratch without touching the reuse bookkeeping (the transcript view).
    pub fn layout_fresh(&self, ctx: &LayoutCtx<'_>, out: &mut Vec<Line<'static>>) -> bool {
        let pad = [Span::raw("  ")];
        let mut pending = markdown::layout(&self.done, &pad, ctx.frame(), out);
        pending |= self.layout_tail(&pad, ctx, out);
        self.patch_bullet(ctx, out);
        pending
    }

    /// The text still streaming (not yet parsed into whole items), laid out afresh.
    fn layout_tail(
        &self,
        pad: &[Span<'static>],
        ctx: &LayoutCtx<'_>,
        out: &mut Vec<Line<'static>>,
    ) -> bool {
        let tail = &self.text[self.done_upto..];
        if self.complete || tail.is_empty() {
            return false;
        }
        let items = markdown::parse(tail, ctx.theme, self.done_upto > 0, false);
        markdown::layout(&items, pad, ctx.frame(), out)
    }

    /// The first row carries the message bullet in place of its two-column pad.
    fn patch_bullet(&self, ctx: &LayoutCtx<'_>, out: &mut Vec<Line<'static>>) {
        if ctx.width < 2 {
            return;
        }
        let bullet = gutter("● ", ctx.theme.assistant_bullet, ctx);
        match out.first_mut() {
            Some(line) => {
                if let Some(first) = line.spans.first_mut() {
                    *first = bullet;
                }
            }
            None => out.push(Line::from(vec![bullet])),
        }
    }
}

/// The fence character and run length when `line` opens or closes a code fence.
fn fence_of(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start();
    let ch = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|c| *c == ch).count();
    (n >= 3).then_some((ch, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(parts: &[&str]) -> AssistantCell {
        let theme = Theme::default();
        let mut cell = AssistantCell::new();
        for p in parts {
            cell.push(p, &theme);
        }
        cell
    }

    #[test]
    fn completed_blocks_are_parsed_once_and_the_tail_stays_open() {
        let cell = feed(&["# Title\n", "\nFirst para", "graph.\n\nSecond", " one"]);
        // "# Title\n\n" was confirmed by the next line; "First paragraph.\n\n" by "Second one"
        // only once that line is complete, so it is still in the tail.
        assert_eq!(cell.done_upto, "# Title\n\n".len());
        let cell = feed(&["# Title\n\nFirst.\n\nSecond\n"]);
        assert_eq!(cell.done_upto, "# Title\n\nFirst.\n\n".len());
    }

    #[test]
    fn blank_lines_inside_fences_and_before_indented_lines_are_not_boundaries() {
        let cell = feed(&["```\ncode\n\nmore\n```\n", "- item\n\n  continued\n"]);
        assert_eq!(cell.done_upto, 0);
        let cell = feed(&["```\ncode\n\nmore\n```\n\nafter\n"]);
        assert_eq!(cell.done_upto, "```\ncode\n\nmore\n```\n\n".len());
    }

    fn rows(
        cell: &mut AssistantCell,
        width: usize,
        reuse: bool,
        out: &mut Vec<Line<'static>>,
    ) -> Vec<String> {
        let theme = Theme::default();
        let hl = crate::tui::highlight::Highlighter::plain();
        let ctx = LayoutCtx {
            theme: &theme,
            highlighter: &hl,
            width,
            expanded: false,
            focused: false,
        };
        cell.layout(&ctx, out, reuse);
        out.iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn incremental_layout_matches_a_fresh_one() {
        let theme = Theme::default();
        let text =
            "Intro line.\n\n- a\n- b\n\n```\ncode\n```\n\nA long closing paragraph that wraps.";
        let mut cell = AssistantCell::new();
        let mut out = Vec::new();
        let mut last = Vec::new();
        for ch in text.chars() {
            cell.push(&ch.to_string(), &theme);
            last = rows(&mut cell, 20, true, &mut out);
        }
        let mut fresh = Vec::new();
        assert_eq!(last, rows(&mut cell, 20, false, &mut fresh));
        assert_eq!(last[0], "● Intro line.");
        assert!(cell.done_upto > 0);
        cell.finish(&theme);
        let finished = rows(&mut cell, 20, true, &mut out);
        assert_eq!(finished, last);
        // A new width lays everything out again.
        let narrow = rows(&mut cell, 12, true, &mut out);
        assert_eq!(narrow, rows(&mut cell, 12, false, &mut Vec::new()));
        assert_eq!(narrow[0], "● Intro");
    }

    #[test]
    fn fence_detection() {
        assert_eq!(fence_of("```rust"), Some(('`', 3)));
        assert_eq!(fence_of("  ~~~~"), Some(('~', 4)));
        assert_eq!(fence_of("``"), None);
        assert_eq!(fence_of("text"), None);
    }
}
