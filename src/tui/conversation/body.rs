//! Bodies of tool cells: each [`Display`] kind turned into width-independent rows once, when the
//! call finishes, so laying out (and re-laying out on resize) only wraps.
//!
//! Diffs are the compact mode of the TUI's one diff renderer (`tui::review::compact`: line
//! numbers, red/green lines, word-level emphasis); matches get the searched pattern highlighted;
//! command output keeps its tail and ends with the exit status. Invariant: no text from a tool
//! reaches the screen without [`sanitize`]; computing a body never blocks for long (the diff is
//! windowed and its emphasis has a deadline).

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::wrap::{sanitize, wrap_spans};
use crate::protocol::{Display, SearchMatch};
use crate::tui::markdown::{self, MdItem, Para};
use crate::tui::review;
use crate::tui::theme::Theme;

/// Which end of a long body stays visible when it is collapsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    Head,
    /// Command output: the end matters (errors, summaries, the exit code).
    Tail,
}

/// A piece of a body. Plain output stays one string until it is laid out, so a session full of
/// long tool outputs holds little more than their text.
enum Part {
    Text { text: String, style: Style },
    Items(Vec<MdItem>),
}

pub(crate) struct Body {
    parts: Vec<Part>,
    pub keep: Keep,
}

impl Body {
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(|p| match p {
            Part::Text { .. } => false,
            Part::Items(items) => items.is_empty(),
        })
    }

    /// Wrap the whole body to the frame's width, each row starting with `pad`.
    pub fn layout(
        &self,
        pad: &[Span<'static>],
        frame: markdown::Frame<'_>,
        out: &mut Vec<Line<'static>>,
    ) -> bool {
        let mut pending = false;
        for part in &self.parts {
            match part {
                Part::Text { text, style } => {
                    for line in text.split('\n') {
                        let spans = [Span::styled(line.to_string(), *style)];
                        wrap_spans(pad, pad, &spans, frame.width, out);
                    }
                }
                Part::Items(items) => {
                    pending |= markdown::layout(items, pad, frame, out);
                }
            }
        }
        pending
    }
}

fn row(spans: Vec<Span<'static>>) -> MdItem {
    MdItem::Para(Para {
        first: Vec::new(),
        rest: Vec::new(),
        spans,
    })
}

fn text_part(text: &str, style: Style) -> Part {
    let text = sanitize(text);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    Part::Text {
        text: text.to_string(),
        style,
    }
}

/// Build the body of a finished call. `is_error` colours plain text bodies red.
pub(crate) fn build(display: &Display, is_error: bool, theme: &Theme) -> Body {
    let mut items = Vec::new();
    let mut parts = Vec::new();
    let mut keep = Keep::Head;
    match display {
        Display::Empty => {}
        Display::Text { text } => {
            let style = if is_error {
                theme.tool_error
            } else {
                theme.tool_body
            };
            parts.push(text_part(text, style));
        }
        Display::Markdown { text } => items = markdown::parse(text, theme, false, true),
        Display::Diff {
            path,
            before,
            after,
        } => items.extend(
            review::compact::rows(path, before, after, theme)
                .into_iter()
                .map(MdItem::Para),
        ),
        Display::Diffs { files } => {
            for f in files {
                let rows = review::compact::rows(&f.path, &f.before, &f.after, theme);
                items.extend(rows.into_iter().map(MdItem::Para));
            }
        }
        Display::Fields { fields } => {
            for f in fields {
                let label = Span::styled(format!("{} ", f.label), theme.dim);
                let value = Span::styled(sanitize(&f.value).into_owned(), theme.tool_body);
                items.push(row(vec![label, value]));
            }
        }
        Display::FileList { files, more } => {
            for f in files {
                let path = sanitize(&f.to_string_lossy()).into_owned();
                items.push(row(vec![Span::styled(path, theme.match_path)]));
            }
            more_row(*more, theme, &mut items);
        }
        Display::Matches {
            pattern,
            matches,
            more,
        } => {
            let re = regex::Regex::new(pattern).ok();
            for m in matches {
                items.push(match_row(m, re.as_ref(), pattern, theme));
            }
            more_row(*more, theme, &mut items);
        }
        Display::Command {
            command: _,
            stdout,
            stderr,
            exit_code,
            timed_out,
        } => {
            keep = Keep::Tail;
            if !stdout.trim().is_empty() {
                parts.push(text_part(stdout, theme.tool_body));
            }
            if !stderr.trim().is_empty() {
                parts.push(text_part(stderr, theme.stderr));
            }
            if stdout.trim().is_empty() && stderr.trim().is_empty() {
                items.push(row(vec![Span::styled("(no output)", theme.dim)]));
            }
            let status = match (timed_out, exit_code) {
                (true, _) => Span::styled("timed out", theme.tool_error),
                (false, Some(0)) => Span::styled("exit code 0", theme.dim),
                (false, Some(code)) => Span::styled(format!("exit code {code}"), theme.tool_error),
                (false, None) => Span::styled("killed by a signal", theme.tool_error),
            };
            items.push(row(vec![status]));
        }
        Display::Attachment { .. } => {
            let line = attachment_summary(display).unwrap_or_default();
            items.push(row(vec![Span::styled(line, theme.tool_body)]));
        }
    }
    if !items.is_empty() {
        parts.push(Part::Items(items));
    }
    Body { parts, keep }
}

/// The one line an attachment shows: `image/png · 48 KiB · 640×480`, a document's title first.
pub(crate) fn attachment_summary(display: &Display) -> Option<String> {
    let Display::Attachment {
        media_type,
        bytes,
        width,
        height,
        title,
    } = display
    else {
        return None;
    };
    let mut fields: Vec<String> = Vec::new();
    if let Some(title) = title {
        fields.push(sanitize(title).into_owned());
    }
    fields.push(sanitize(media_type).into_owned());
    fields.push(human_size(*bytes));
    if let (Some(w), Some(h)) = (width, height) {
        fields.push(format!("{w}×{h}"));
    }
    Some(fields.join(" · "))
}

/// Bytes in B, KiB or MiB, one decimal below ten units.
fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    // Below 9.95 one decimal still rounds under ten ("9.9 KiB", never "10.0 KiB").
    if value < 9.95 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// The live output tail of a running command.
pub(crate) fn progress(output: &str, theme: &Theme) -> Body {
    Body {
        parts: vec![text_part(output, theme.dim)],
        keep: Keep::Tail,
    }
}

fn more_row(more: usize, theme: &Theme, out: &mut Vec<MdItem>) {
    if more > 0 {
        out.push(row(vec![Span::styled(
            format!("… and {more} more"),
            theme.dim,
        )]));
    }
}

fn match_row(m: &SearchMatch, re: Option<&regex::Regex>, pattern: &str, theme: &Theme) -> MdItem {
    let mut spans = vec![Span::styled(
        sanitize(&m.path.to_string_lossy()).into_owned(),
        theme.match_path,
    )];
    let Some(line) = m.line else {
        return row(spans);
    };
    spans.push(Span::styled(":", theme.dim));
    spans.push(Span::styled(line.to_string(), theme.match_line_no));
    spans.push(Span::styled(": ", theme.dim));
    let text = sanitize(&m.text);
    let text = text.trim_end();
    let hits: Vec<(usize, usize)> = match re {
        Some(re) => re
            .find_iter(text)
            .filter(|h| !h.is_empty())
            .map(|h| (h.start(), h.end()))
            .collect(),
        None if !pattern.is_empty() => text
            .match_indices(pattern)
            .map(|(i, s)| (i, i + s.len()))
            .collect(),
        None => Vec::new(),
    };
    let mut at = 0;
    for (start, end) in hits {
        if start > at {
            spans.push(Span::styled(text[at..start].to_string(), theme.tool_body));
        }
        spans.push(Span::styled(text[start..end].to_string(), theme.match_hit));
        at = end;
    }
    if at < text.len() {
        spans.push(Span::styled(text[at..].to_string(), theme.tool_body));
    }
    row(spans)
}
