//! Markdown to styled terminal lines, in two steps: [`parse`] turns text into width-independent
//! [`MdItem`]s (paragraphs with their list/quote prefixes, code blocks, tables, rules), and
//! [`layout`] wraps those to a width, highlighting code through the [`Highlighter`].
//!
//! The split lets a streaming message parse each completed block once and re-wrap it cheaply on
//! resize. Invariants: parsing never fails (any text is some markdown); layout never produces a
//! line wider than its width; code is only highlighted when the caller says the block is
//! complete (so a fence still streaming is not sent to the highlighter on every delta).

use pulldown_cmark::{Alignment, CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::conversation::wrap::{sanitize, str_width, wrap_spans};
use crate::tui::highlight::{Highlighter, Lookup};
use crate::tui::theme::Theme;

/// A paragraph-like run of inline text with the prefixes of its first and following lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Para {
    pub first: Vec<Span<'static>>,
    pub rest: Vec<Span<'static>>,
    pub spans: Vec<Span<'static>>,
}

/// One block of parsed markdown, independent of the width it will be drawn at.
#[derive(Debug, Clone, PartialEq)]
pub enum MdItem {
    Para(Para),
    Blank,
    Code {
        prefix: Vec<Span<'static>>,
        lang: String,
        code: String,
        /// False while the block may still grow (streaming): drawn plain, never queued.
        highlight: bool,
    },
    Table {
        prefix: Vec<Span<'static>>,
        aligns: Vec<Alignment>,
        /// The first row is the header.
        rows: Vec<Vec<Vec<Span<'static>>>>,
    },
    Rule {
        prefix: Vec<Span<'static>>,
    },
}

enum Container {
    Quote,
    Item { bullet: String, used: bool },
}

#[derive(Default)]
struct TableBuild {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    row: Vec<Vec<Span<'static>>>,
    cell: Vec<Span<'static>>,
}

struct Builder<'a> {
    theme: &'a Theme,
    complete: bool,
    items: Vec<MdItem>,
    containers: Vec<Container>,
    styles: Vec<Style>,
    spans: Vec<Span<'static>>,
    need_blank: bool,
    code: Option<(String, String)>,
    table: Option<TableBuild>,
    /// Open links: (url, index of their first span in the current target).
    links: Vec<(String, usize)>,
    lists: Vec<Option<u64>>,
}

/// Parse `text` into items. `continuation` is true when this text follows earlier blocks of the
/// same message (a blank line separates them); `complete` is false while the text may still grow.
pub fn parse(text: &str, theme: &Theme, continuation: bool, complete: bool) -> Vec<MdItem> {
    let text = sanitize(text);
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut b = Builder {
        theme,
        complete,
        items: Vec::new(),
        containers: Vec::new(),
        styles: vec![theme.text],
        spans: Vec::new(),
        need_blank: continuation,
        code: None,
        table: None,
        links: Vec::new(),
        lists: Vec::new(),
    };
    for event in Parser::new_ext(&text, options) {
        b.event(event);
    }
    b.flush();
    if let Some((lang, code)) = b.code.take() {
        b.push_code(lang, code);
    }
    b.items
}

impl Builder<'_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, patch: Style) {
        let s = self.style().patch(patch);
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn target(&mut self) -> &mut Vec<Span<'static>> {
        match &mut self.table {
            Some(t) => &mut t.cell,
            None => &mut self.spans,
        }
    }

    fn push_text(&mut self, text: &str, style: Style) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        self.target().push(Span::styled(text.to_string(), style));
    }

    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let quote = Span::styled("│ ", self.theme.quote);
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    first.push(quote.clone());
                    rest.push(quote.clone());
                }
                Container::Item { bullet, used } => {
                    let pad = " ".repeat(str_width(bullet));
                    if *used {
                        first.push(Span::raw(pad.clone()));
                    } else {
                        first.push(Span::styled(bullet.clone(), self.theme.dim));
                        *used = true;
                    }
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn flush(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let mut spans = std::mem::take(&mut self.spans);
        if let Some(last) = spans.last_mut()
            && last.content.ends_with('\n')
        {
            let trimmed = last.content.trim_end_matches('\n').to_string();
            last.content = trimmed.into();
        }
        let (first, rest) = self.prefixes();
        self.items.push(MdItem::Para(Para { first, rest, spans }));
    }

    fn block_start(&mut self) {
        self.flush();
        if self.need_blank {
            self.items.push(MdItem::Blank);
        }
        self.need_blank = false;
    }

    fn in_item(&self) -> bool {
        self.containers
            .iter()
            .any(|c| matches!(c, Container::Item { .. }))
    }

    fn push_code(&mut self, lang: String, mut code: String) {
        if code.ends_with('\n') {
            code.pop();
        }
        let (_, prefix) = self.prefixes();
        self.items.push(MdItem::Code {
            prefix,
            lang,
            code,
            highlight: self.complete,
        });
    }

    fn event(&mut self, event: Event<'_>) {
        let theme = self.theme;
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                let style = self.style();
                self.push_text(&t, style);
            }
            Event::Code(t) => {
                let style = self.style().patch(theme.inline_code);
                self.push_text(&t, style);
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => {
                let style = self.style().patch(theme.inline_code);
                self.push_text(&t, style);
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                // HTML blocks arrive line by line, newlines included; `flush` drops the last one.
                let style = self.style().patch(theme.dim);
                self.push_text(&t, style);
            }
            Event::FootnoteReference(name) => {
                let style = self.style().patch(theme.dim);
                self.push_text(&format!("[^{name}]"), style);
            }
            Event::SoftBreak => {
                let style = self.style();
                self.push_text(" ", style);
            }
            Event::HardBreak => {
                let style = self.style();
                self.push_text("\n", style);
            }
            Event::Rule => {
                self.block_start();
                let (_, prefix) = self.prefixes();
                self.items.push(MdItem::Rule { prefix });
                self.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                let style = self.style().patch(theme.dim);
                self.push_text(if done { "[x] " } else { "[ ] " }, style);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let theme = self.theme;
        match tag {
            Tag::Paragraph | Tag::HtmlBlock => self.block_start(),
            Tag::Heading { level, .. } => {
                self.block_start();
                let idx = (level as usize).saturating_sub(1).min(2);
                self.push_style(theme.heading[idx]);
            }
            Tag::BlockQuote(_) => {
                self.block_start();
                self.containers.push(Container::Quote);
                self.push_style(theme.quote);
            }
            Tag::CodeBlock(kind) => {
                self.block_start();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                if self.in_item() {
                    self.flush();
                    self.need_blank = false;
                } else {
                    self.block_start();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                self.need_blank = false;
                let depth = self.lists.len().saturating_sub(1);
                let bullet = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let b = format!("{n}. ");
                        *n += 1;
                        b
                    }
                    _ => ["• ", "◦ ", "▪ "][depth % 3].to_string(),
                };
                self.containers.push(Container::Item {
                    bullet,
                    used: false,
                });
            }
            Tag::Table(aligns) => {
                self.block_start();
                self.table = Some(TableBuild {
                    aligns,
                    ..TableBuild::default()
                });
            }
            Tag::TableHead => self.push_style(theme.table_header),
            Tag::TableRow | Tag::TableCell => {}
            Tag::Emphasis => self.push_style(theme.emphasis),
            Tag::Strong => self.push_style(theme.strong),
            Tag::Strikethrough => self.push_style(theme.strikethrough),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.push_style(theme.link);
                let start = self.target().len();
                self.links.push((dest_url.to_string(), start));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => {
                self.flush();
                self.need_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.pop_style();
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.pop_style();
                self.need_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.push_code(lang, code);
                }
                self.need_blank = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                self.need_blank = !self.in_item();
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
                self.need_blank = false;
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    let (_, prefix) = self.prefixes();
                    self.items.push(MdItem::Table {
                        prefix,
                        aligns: t.aligns,
                        rows: t.rows,
                    });
                }
                self.need_blank = true;
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if matches!(tag, TagEnd::TableHead) {
                    self.pop_style();
                }
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                }
            }
            TagEnd::TableCell => {
                if let Some(t) = &mut self.table {
                    let cell = std::mem::take(&mut t.cell);
                    t.row.push(cell);
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if let Some((url, start)) = self.links.pop() {
                    let dim = self.theme.dim;
                    let target = self.target();
                    let start = start.min(target.len());
                    let text: String = target[start..].iter().map(|s| s.content.as_ref()).collect();
                    if !url.is_empty() && text != url && !url.starts_with('#') {
                        target.push(Span::styled(format!(" ({url})"), dim));
                    }
                }
            }
            _ => {}
        }
    }
}

/// What laying out needs besides the items: the width, the colours and code highlighting.
#[derive(Clone, Copy)]
pub struct Frame<'a> {
    pub width: usize,
    pub theme: &'a Theme,
    pub highlighter: &'a Highlighter,
}

/// Wrap `items` to the frame's width, each line starting with `gutter`. Returns true when some
/// code block was drawn plain while its highlighting is still pending (redraw when the
/// highlighter's generation changes).
pub fn layout(
    items: &[MdItem],
    gutter: &[Span<'static>],
    frame: Frame<'_>,
    out: &mut Vec<Line<'static>>,
) -> bool {
    let Frame {
        width,
        theme,
        highlighter,
    } = frame;
    let mut pending = false;
    let with_gutter = |p: &[Span<'static>]| -> Vec<Span<'static>> {
        gutter.iter().chain(p.iter()).cloned().collect()
    };
    for item in items {
        match item {
            MdItem::Para(p) => {
                wrap_spans(
                    &with_gutter(&p.first),
                    &with_gutter(&p.rest),
                    &p.spans,
                    width,
                    out,
                );
            }
            MdItem::Blank => out.push(Line::from(gutter.to_vec())),
            MdItem::Rule { prefix } => {
                let prefix = with_gutter(prefix);
                let used: usize = prefix.iter().map(|s| str_width(&s.content)).sum();
                let rule = "─".repeat(width.saturating_sub(used).min(60));
                let spans = [Span::styled(rule, theme.rule)];
                wrap_spans(&prefix, &prefix, &spans, width, out);
            }
            MdItem::Code {
                prefix,
                lang,
                code,
                highlight,
            } => {
                let prefix = with_gutter(prefix);
                let lookup = if *highlight {
                    highlighter.get(lang, code)
                } else {
                    Lookup::Plain
                };
                match lookup {
                    Lookup::Ready(lines) => {
                        for spans in lines.iter() {
                            wrap_spans(&prefix, &prefix, spans, width, out);
                        }
                    }
                    other => {
                        pending |= matches!(other, Lookup::Pending);
                        for line in code.split('\n') {
                            let spans = [Span::styled(line.to_string(), theme.code_block)];
                            wrap_spans(&prefix, &prefix, &spans, width, out);
                        }
                    }
                }
            }
            MdItem::Table {
                prefix,
                aligns,
                rows,
            } => layout_table(&with_gutter(prefix), aligns, rows, width, theme, out),
        }
    }
    pending
}

/// Column widths that fit `avail`: natural widths when they fit, otherwise the widest columns
/// are capped at a common width (water filling) so narrow columns keep their natural width.
pub fn fit_columns(natural: &[usize], avail: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= avail {
        return natural.to_vec();
    }
    let mut cap = avail / natural.len().max(1);
    while natural.iter().map(|&n| n.min(cap + 1)).sum::<usize>() <= avail {
        cap += 1;
    }
    let mut widths: Vec<usize> = natural.iter().map(|&n| n.min(cap).max(1)).collect();
    let mut left = avail.saturating_sub(widths.iter().sum());
    for (w, &n) in widths.iter_mut().zip(natural) {
        if left > 0 && *w < n {
            *w += 1;
            left -= 1;
        }
    }
    widths
}

fn layout_table(
    prefix: &[Span<'static>],
    aligns: &[Alignment],
    rows: &[Vec<Vec<Span<'static>>>],
    width: usize,
    theme: &Theme,
    out: &mut Vec<Line<'static>>,
) {
    let ncols = rows.iter().map(Vec::len).max().unwrap_or(0);
    if ncols == 0 {
        return;
    }
    let prefix_w: usize = prefix.iter().map(|s| str_width(&s.content)).sum();
    let sep_w = 3 * (ncols - 1);
    let avail = width.saturating_sub(prefix_w + sep_w);
    if avail < ncols * 3 {
        // Too narrow for columns: one wrapped line per row, cells separated by bars.
        for row in rows {
            let mut spans = Vec::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", theme.table_border));
                }
                spans.extend(cell.iter().cloned());
            }
            wrap_spans(prefix, prefix, &spans, width, out);
        }
        return;
    }
    let cell_w = |cell: &Vec<Span<'static>>| cell.iter().map(|s| str_width(&s.content)).sum();
    let mut natural = vec![1usize; ncols];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            natural[i] = natural[i].max(cell_w(cell));
        }
    }
    let widths = fit_columns(&natural, avail);
    let empty = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let mut wrapped: Vec<Vec<Line<'static>>> = Vec::with_capacity(ncols);
        for (c, &w) in widths.iter().enumerate() {
            let mut lines = Vec::new();
            wrap_spans(&[], &[], row.get(c).unwrap_or(&empty), w, &mut lines);
            wrapped.push(lines);
        }
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut spans = prefix.to_vec();
            for (c, &w) in widths.iter().enumerate() {
                if c > 0 {
                    spans.push(Span::styled(" │ ", theme.table_border));
                }
                let line = wrapped[c].get(k);
                let used = line.map_or(0, crate::tui::conversation::wrap::line_width);
                let pad = w.saturating_sub(used);
                let (left, right) = match aligns.get(c) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                if left > 0 {
                    spans.push(Span::raw(" ".repeat(left)));
                }
                if let Some(line) = line {
                    spans.extend(line.spans.iter().cloned());
                }
                if right > 0 && c + 1 < ncols {
                    spans.push(Span::raw(" ".repeat(right)));
                }
            }
            out.push(Line::from(spans));
        }
        if r == 0 {
            let mut spans = prefix.to_vec();
            let bar: Vec<String> = widths.iter().map(|&w| "─".repeat(w)).collect();
            spans.push(Span::styled(bar.join("─┼─"), theme.table_border));
            out.push(Line::from(spans));
        }
    }
}

/// Parse and lay out in one go (tool bodies and other text that does not stream).
pub fn render(
    text: &str,
    gutter: &[Span<'static>],
    frame: Frame<'_>,
    out: &mut Vec<Line<'static>>,
) -> bool {
    let items = parse(text, frame.theme, false, true);
    layout(&items, gutter, frame, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        let theme = Theme::default();
        let highlighter = Highlighter::plain();
        let frame = Frame {
            width,
            theme: &theme,
            highlighter: &highlighter,
        };
        render(text, &[], frame, &mut out);
        out.iter()
            .map(|l| {
                let s: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
                s.trim_end().to_string()
            })
            .collect()
    }

    #[test]
    fn blocks_are_separated_and_lists_are_tight() {
        let md = "# Title\n\nSome *text* here.\n\n- one\n- two\n  - nested\n\n1. x\n\n> quoted\n";
        assert_eq!(
            lines(md, 40),
            vec![
                "Title",
                "",
                "Some text here.",
                "",
                "• one",
                "• two",
                "  ◦ nested",
                "",
                "1. x",
                "",
                "│ quoted",
            ]
        );
    }

    #[test]
    fn code_blocks_keep_indentation_and_links_show_their_url() {
        assert_eq!(
            lines(
                "see [docs](https://x.io) and <https://y.io>\n\n```rust\nfn a() {\n    b();\n}\n```\n",
                40
            ),
            vec![
                "see docs (https://x.io) and https://y.io",
                "",
                "fn a() {",
                "    b();",
                "}",
            ]
        );
    }

    proptest::proptest! {
        #[test]
        fn any_markdown_lays_out_within_the_width(
            text in "[#*_`|>~ a-z0-9.\\-\n日😀]{0,200}",
            width in 1usize..50,
        ) {
            let mut out = Vec::new();
            let (theme, highlighter) = (Theme::default(), Highlighter::plain());
            let frame = Frame {
                width,
                theme: &theme,
                highlighter: &highlighter,
            };
            render(&text, &[], frame, &mut out);
            for line in &out {
                let w = crate::tui::conversation::wrap::line_width(line);
                proptest::prop_assert!(w <= width, "{:?} wider than {}", line, width);
            }
        }
    }

    #[test]
    fn html_blocks_keep_their_lines() {
        assert_eq!(
            lines("<details>\n<summary>x</summary>\n</details>\n\nafter\n", 40),
            vec![
                "<details>",
                "<summary>x</summary>",
                "</details>",
                "",
                "after"
            ]
        );
    }

    #[test]
    fn tables_align_and_shrink_to_fit() {
        let md = "| name | n |\n|:-----|--:|\n| alpha | 1 |\n| b | 22 |\n";
        assert_eq!(
            lines(md, 40),
            vec!["name  │  n", "──────┼───", "alpha │  1", "b     │ 22"]
        );
        assert_eq!(fit_columns(&[10, 2, 30], 20), vec![9, 2, 9]);
        assert_eq!(fit_columns(&[3, 4], 20), vec![3, 4]);
    }
}
