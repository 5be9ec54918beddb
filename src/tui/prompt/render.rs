//! Drawing the prompt panel: a block between two rules, titled "Allow this?" (or "Approve the plan?")
//! with "1 of N" when more requests wait, then the title and reason, the question, any
//! on-disk-change notice, the preview (diff view or scrolled text), the options with their keys
//! (the focused one marked), and a line of key hints. When all of that does not fit with the
//! whole preview, the options fold into one line of short words ending `? more` and the hints
//! into `?` (a question's options never fold). Reads state; only scroll bookkeeping is written.
//!
//! Everything the model, a file or a server wrote is laid out as data (`data.rs`): one-line
//! fields never break a row, multi-line ones are framed by the gutter, and both are clipped so
//! the panel's own rows (the question, every option's label, the hints) always fit; a
//! question's clipped text is shown in full in the preview area, which PgUp/PgDn scroll.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::data::{framed_rows, one_line_rows};
use super::preview::text_lines;
use super::{Pending, PermissionPrompt, Preview, SHORT_LIST};
use crate::protocol::{Question, RequestKind};
use crate::tui::conversation::wrap::{sanitize, wrap_spans};
use crate::tui::overlay::Overlay;
use crate::tui::untrusted::one_line;

/// Rows a preview keeps at least when the panel is squeezed.
const MIN_PREVIEW_ROWS: usize = 3;

/// How many rows the untrusted text around the panel's own words may take before it is clipped
/// with `…`; the panel tries each in turn until its own rows fit. What is clipped of a question
/// can be read whole in the preview area (PgUp/PgDn).
#[derive(Clone, Copy)]
struct Limits {
    /// The call's title and the reason, each.
    title: usize,
    /// The question's text.
    question: usize,
    /// Each option's description.
    description: usize,
}

const LIMITS: [Limits; 4] = [
    Limits {
        title: 2,
        question: 6,
        description: 2,
    },
    Limits {
        title: 1,
        question: 3,
        description: 1,
    },
    Limits {
        title: 1,
        question: 2,
        description: 0,
    },
    Limits {
        title: 1,
        question: 1,
        description: 0,
    },
];

/// The panel's rows at one [`Limits`]: above the preview, below it, and whether any untrusted
/// text was clipped.
struct Rows {
    head: Vec<Line<'static>>,
    foot: Vec<Line<'static>>,
    clipped: bool,
}

/// Where an option's label starts: after the focus mark and the keys column.
const OPTION_INDENT: usize = 7;

impl PermissionPrompt {
    fn rows(&self, p: &Pending, width: usize, limits: Limits, compact: bool) -> Rows {
        let (head, head_clipped) = self.head_lines(p, width, limits);
        let (foot, foot_clipped) = if compact {
            (self.compact_foot(p, width), false)
        } else {
            self.foot_lines(p, width, limits)
        };
        Rows {
            head,
            foot,
            clipped: head_clipped || foot_clipped,
        }
    }

    /// Lines above the preview: title, reason, the question, notice (wrapped to `width`).
    fn head_lines(&self, p: &Pending, width: usize, limits: Limits) -> (Vec<Line<'static>>, bool) {
        let req = &p.req;
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let indent = [Span::raw("  ")];
        let mut out = Vec::new();
        // Titles usually start with the tool name already (`Bash npm test`); the tool name
        // itself is a registry name (MCP names are normalised), the rest is the call's. A plan
        // or a question is named by the panel's title, not by a tool name.
        let own_words = matches!(
            req.kind,
            RequestKind::PlanApproval { .. } | RequestKind::Questions { .. }
        );
        let tool = if req.title.starts_with(&req.tool) || own_words {
            Vec::new()
        } else {
            vec![Span::styled(
                format!("{} ", one_line(&req.tool)),
                bold.fg(Color::Yellow),
            )]
        };
        // A question's or a plan's title only repeats what the panel's title and the text
        // below say.
        if !own_words {
            one_line_rows(
                &tool,
                &indent,
                &req.title,
                bold,
                width,
                limits.title,
                &mut out,
            );
        }
        if !req.reason.is_empty() {
            let dim = Style::default().fg(Color::DarkGray);
            one_line_rows(
                &[],
                &indent,
                &req.reason,
                dim,
                width,
                limits.title,
                &mut out,
            );
        }
        let mut clipped = false;
        if let Some((i, n, q)) = p.question() {
            let style = Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD);
            let count = if n > 1 {
                format!("Question {} of {n} · ", i + 1)
            } else {
                "Question · ".to_string()
            };
            let first = [Span::styled(count, style)];
            clipped |= one_line_rows(&first, &indent, &q.header, style, width, 1, &mut out);
            clipped |= framed_rows("", &q.question, bold, width, limits.question, &mut out);
        }
        if let Some(notice) = &p.notice {
            let style = Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD);
            let text = [Span::styled(one_line(notice).into_owned(), style)];
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
        (out, clipped)
    }

    /// Lines below the preview: the options (or the feedback input) and the key hints.
    fn foot_lines(&self, p: &Pending, width: usize, limits: Limits) -> (Vec<Line<'static>>, bool) {
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
            return (out, false);
        }
        let edit = matches!(p.preview, Preview::Diff(_));
        let question = p.question().map(|(_, _, q)| q);
        let mut clipped = false;
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
                Span::styled(format!("{:<4} ", c.keys(i)), style.fg(Color::Cyan)),
            ];
            let rest = [Span::raw(" ".repeat(OPTION_INDENT))];
            // A question's own options are the model's words: one row each, the description
            // framed under it.
            let option = question.and_then(|q| q.options.get(i));
            if option.is_none() {
                // cairn's words, but a session scope or a rule may quote the command.
                let label = [Span::styled(one_line(&c.label).into_owned(), style)];
                wrap_spans(&first, &rest, &label, width, &mut out);
                continue;
            }
            clipped |= one_line_rows(&first, &rest, &c.label, style, width, 1, &mut out);
            if let Some(o) = option.filter(|o| !o.description.trim().is_empty()) {
                let indent = " ".repeat(OPTION_INDENT);
                let max = limits.description;
                clipped |= framed_rows(&indent, &o.description, dim, width, max, &mut out);
            }
        }
        let hints = self.hints(p);
        wrap_spans(&[], &[], &[Span::styled(hints, dim)], width, &mut out);
        (out, clipped)
    }

    /// The key hints under the options: a question's name its own numbers, and the multi-select
    /// keys only when several may be chosen.
    fn hints(&self, p: &Pending) -> String {
        let Some((_, _, q)) = p.question() else {
            return self.key_hints().to_string();
        };
        let n = q.options.len();
        let own = n + 1;
        if q.multi_select {
            format!(
                "↑↓ Enter · 1-{n} or Space toggle · {own} type an answer · {} done · Esc decline",
                n + 2
            )
        } else {
            format!("↑↓ Enter or 1-{n} choose · {own} type an answer · Esc decline")
        }
    }

    /// The options on one line (`1 yes · 2 session · 3 no · 4 tell the model… · ? more`) for a
    /// small window: the first few by their short words, the focused one marked; `?` lists
    /// every option and the key hints.
    fn compact_foot(&self, p: &Pending, width: usize) -> Vec<Line<'static>> {
        let dim = Style::default().fg(Color::DarkGray);
        let mut out = vec![Line::default()];
        let edit = matches!(p.preview, Preview::Diff(_));
        let options = p.options(edit);
        // The focused option is always listed, even past the first few.
        let mut shown: Vec<usize> = (0..options.len().min(SHORT_LIST)).collect();
        if p.focus >= SHORT_LIST && p.focus < options.len() {
            shown.push(p.focus);
        }
        let mut spans = Vec::new();
        for (n, i) in shown.iter().enumerate() {
            let Some(c) = options.get(*i) else { continue };
            if n > 0 {
                spans.push(Span::styled(" · ", dim));
            }
            let style = if *i == p.focus {
                Style::default()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED)
            } else {
                Style::default()
            };
            spans.push(Span::styled(format!("{} ", i + 1), style.fg(Color::Cyan)));
            spans.push(Span::styled(one_line(&c.short).into_owned(), style));
        }
        spans.push(Span::styled(" · ", dim));
        spans.push(Span::styled("? more", dim));
        let marker = Span::styled("› ", Style::default().fg(Color::Cyan));
        wrap_spans(&[marker], &[Span::raw("  ")], &spans, width, &mut out);
        out
    }

    /// Whether the options go on one line: the window cannot show the panel's full lists with
    /// all the preview wants in `max` rows (border included), and `?` was not pressed.
    fn is_compact(&self, p: &Pending, width: usize, max: usize) -> bool {
        // A question's options are what is asked: they are never folded.
        if p.more || self.feedback.is_some() || p.question().is_some() {
            return false;
        }
        let rows = self.rows(p, width, LIMITS[0], false);
        let total =
            2 + rows.head.len() + self.preview_rows(p, width, rows.clipped) + rows.foot.len();
        total > max
    }

    /// The text the preview area shows: the tool's preview, or for a question whose words were
    /// clipped above and below, all of them in full.
    fn text(&self, p: &Pending, width: usize, clipped: bool) -> Vec<Line<'static>> {
        match p.question() {
            Some((_, _, q)) if clipped => question_in_full(q, width),
            Some(_) => Vec::new(),
            None => text_lines(&p.req, width, &self.highlighter),
        }
    }

    /// Preview rows wanted at inner `width`.
    fn preview_rows(&self, p: &Pending, width: usize, clipped: bool) -> usize {
        match &p.preview {
            Preview::Diff(d) => d.rows_at(u16::try_from(width).unwrap_or(u16::MAX)) + 1,
            Preview::Text { .. } => self.text(p, width, clipped).len(),
        }
    }

    /// Rows wanted at `width`, border included, capped by `max`.
    pub fn height(&self, width: u16, max: u16) -> u16 {
        let Some(p) = self.queue.front() else {
            return 0;
        };
        let inner = usize::from(width.max(1));
        let compact = self.is_compact(p, inner, usize::from(max));
        let rows = self.rows(p, inner, LIMITS[0], compact);
        let total =
            2 + rows.head.len() + self.preview_rows(p, inner, rows.clipped) + rows.foot.len();
        u16::try_from(total).unwrap_or(max).min(max)
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
            RequestKind::Conflict { .. } => " Changed outside cairn: overwrite? ",
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
        let total = usize::from(inner.height);
        let compact = self.is_compact(p, width, usize::from(area.height));
        // The panel's own words first: the untrusted text around them is clipped harder until
        // the title, the question, every option and the hints fit with a few preview rows.
        let mut fitted = None;
        for limits in LIMITS {
            let rows = self.rows(p, width, limits, compact);
            let text = self.text(p, width, rows.clipped);
            let wanted = match &p.preview {
                Preview::Diff(_) => self.preview_rows(p, width, rows.clipped),
                Preview::Text { .. } => text.len(),
            };
            let keep = MIN_PREVIEW_ROWS.min(wanted);
            let fits = rows.head.len() + rows.foot.len() + keep <= total;
            fitted = Some((rows, text, keep));
            if fits {
                break;
            }
        }
        let Some((Rows { head, foot, .. }, text, keep)) = fitted else {
            return;
        };
        // Options first, then the title and the question, then the preview with what is left;
        // the head yields rows only to keep a few rows of a tool's preview (a question's text
        // in full is only a copy of what the head shows).
        let keep = if p.question().is_some() { 0 } else { keep };
        let foot_rows = foot.len().min(total);
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

/// A question and its options with nothing clipped, framed, under a line saying how to scroll.
fn question_in_full(q: &Question, width: usize) -> Vec<Line<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut out = vec![Line::styled(
        "In full (PgUp/PgDn or j/k to scroll):",
        dim.add_modifier(Modifier::ITALIC),
    )];
    framed_rows("", &q.question, bold, width, usize::MAX, &mut out);
    for (i, o) in q.options.iter().enumerate() {
        let first = [Span::styled(format!("Option {}: ", i + 1), dim)];
        let rest = [Span::raw(" ".repeat(5))];
        one_line_rows(
            &first,
            &rest,
            &o.label,
            Style::default(),
            width,
            usize::MAX,
            &mut out,
        );
        if !o.description.trim().is_empty() {
            framed_rows("     ", &o.description, dim, width, usize::MAX, &mut out);
        }
    }
    out
}
