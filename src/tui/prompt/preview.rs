//! What a permission prompt shows about the call: an embedded [`DiffView`] for file changes, or
//! styled text lines for everything else — the plan as Markdown, and whatever display the
//! tool's own preview built (labelled fields, with code such as a command highlighted). Nothing
//! here knows a particular tool.
//!
//! Text previews are laid out per width at draw time and scroll with `top`; nothing here sends
//! anything to the core.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::data::{framed_rows, gutter};
use crate::protocol::{Display, Field, PermissionRequest, RequestKind};
use crate::tui::conversation::wrap::wrap_spans;
use crate::tui::highlight::{Highlighter, Lookup};
use crate::tui::markdown;
use crate::tui::review::{self, DiffSet, DiffView};
use crate::tui::theme::Theme;
use crate::tui::untrusted::{lines, one_line};

/// The preview of one request.
pub enum Preview {
    Diff(Box<DiffSet>),
    Text { top: usize, height: usize },
}

impl Preview {
    /// The preview for `req`: a diff view when the core sent a diff, else text.
    pub fn for_request(req: &PermissionRequest, cwd: &Path, highlighter: &Highlighter) -> Preview {
        match (&req.kind, &req.preview) {
            (
                RequestKind::Tool,
                Some(Display::Diff {
                    path,
                    before,
                    after,
                }),
            ) => Preview::Diff(Box::new(DiffSet::single(diff_view(
                relative(path, cwd),
                before.clone(),
                after.clone(),
                highlighter,
            )))),
            // What overwriting does to the file as it is now: nothing to choose in it.
            (
                RequestKind::Conflict { .. },
                Some(Display::Diff {
                    path,
                    before,
                    after,
                }),
            ) => {
                let view = diff_view(
                    relative(path, cwd),
                    before.clone(),
                    after.clone(),
                    highlighter,
                );
                Preview::Diff(Box::new(DiffSet::single(view.fixed())))
            }
            (RequestKind::Tool, Some(Display::Diffs { files })) => {
                let views = files.iter().map(|f| {
                    let path = relative(&f.path, cwd);
                    diff_view(path, f.before.clone(), f.after.clone(), highlighter)
                });
                match DiffSet::files(views.collect()) {
                    Some(set) => Preview::Diff(Box::new(set)),
                    None => Preview::Text { top: 0, height: 0 },
                }
            }
            _ => Preview::Text { top: 0, height: 0 },
        }
    }
}

/// A diff view whose lines are coloured by the conversation's background highlighter.
pub fn diff_view(
    path: PathBuf,
    before: String,
    after: String,
    highlighter: &Highlighter,
) -> DiffView {
    let view = DiffView::new(path, before, after);
    if !highlighter.is_enabled() {
        return view;
    }
    let hl = highlighter.clone();
    let bridge: review::Highlighter =
        Arc::new(move |ext: &str, line: &str| match hl.get(ext, line) {
            Lookup::Ready(lines) => Some(
                lines
                    .first()
                    .map(|spans| {
                        spans
                            .iter()
                            .map(|s| (s.style, s.content.to_string()))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            Lookup::Pending => None,
            Lookup::Plain => Some(vec![(Style::default(), line.to_string())]),
        });
    view.with_highlighter(bridge)
}

/// `path` relative to `cwd` when it is inside it, else as given.
pub fn relative(path: &Path, cwd: &Path) -> PathBuf {
    path.strip_prefix(cwd)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

/// The text preview of `req` wrapped to `width`.
pub fn text_lines(
    req: &PermissionRequest,
    width: usize,
    highlighter: &Highlighter,
) -> Vec<Line<'static>> {
    let theme = Theme::default();
    let mut out = Vec::new();
    if let RequestKind::PlanApproval { plan } = &req.kind {
        let frame = markdown::Frame {
            width,
            theme: &theme,
            highlighter,
        };
        markdown::render(plan, &[], frame, &mut out);
        return out;
    }
    if let Some(display) = &req.preview {
        display_lines(display, width, highlighter, &mut out);
    }
    out
}

/// Labelled fields: plain values after a label column, as one-line fields (a line break in
/// a value is shown as a mark, never as a row of its own); code highlighted, after a short
/// prompt label (`$ `) or under a longer one, every row after the first framed by the gutter.
fn field_lines(
    fields: &[Field],
    width: usize,
    highlighter: &Highlighter,
    out: &mut Vec<Line<'static>>,
) {
    // The label column: ten wide, or one more than the longest plain label (up to twenty).
    let column = fields
        .iter()
        .filter(|f| f.syntax.is_none())
        .map(|f| f.label.chars().count() + 1)
        .max()
        .unwrap_or(0)
        .clamp(10, 20);
    for f in fields {
        let Some(syntax) = &f.syntax else {
            let value = one_line(&f.value).into_owned();
            wrap_spans(
                &[Span::styled(
                    format!("{:<column$}", format!("{} ", one_line(&f.label))),
                    dim(),
                )],
                &[Span::raw(" ".repeat(column))],
                &[Span::raw(value)],
                width,
                out,
            );
            continue;
        };
        let inline = f.label.chars().count() <= 2;
        let first = if inline {
            Span::styled(
                format!("{} ", one_line(&f.label)),
                Style::default().fg(Color::Cyan),
            )
        } else {
            out.push(Line::styled(one_line(&f.label).into_owned(), dim()));
            gutter()
        };
        let (first, rest) = ([first], [gutter()]);
        // The highlighter sees the cleaned text, so its spans carry no control or invisible
        // character, and its lines are the lines shown.
        let clean = lines(&f.value).join("\n");
        match highlighter.get(syntax, &clean) {
            Lookup::Ready(lines) => {
                for (i, spans) in lines.iter().enumerate() {
                    let p = if i == 0 { &first[..] } else { &rest[..] };
                    wrap_spans(p, &rest, spans, width, out);
                }
            }
            _ => {
                for (i, line) in clean.split('\n').enumerate() {
                    let p = if i == 0 { &first[..] } else { &rest[..] };
                    let style = if inline {
                        Style::default().add_modifier(Modifier::BOLD)
                    } else {
                        Style::default()
                    };
                    let spans = [Span::styled(line.to_string(), style)];
                    wrap_spans(p, &rest, &spans, width, out);
                }
            }
        }
    }
}

fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

/// A tool's preview as lines: text framed by the gutter, one-line items (paths, matches) as
/// one-line fields.
fn display_lines(
    display: &Display,
    width: usize,
    highlighter: &Highlighter,
    out: &mut Vec<Line<'static>>,
) {
    let plain = |out: &mut Vec<Line<'static>>, s: &str| {
        let content = [Span::raw(one_line(s).into_owned())];
        wrap_spans(&[], &[Span::raw("  ")], &content, width, out);
    };
    match display {
        Display::Empty => {}
        Display::Text { text } | Display::Markdown { text } => {
            framed_rows("", text, Style::default(), width, usize::MAX, out);
        }
        Display::Command { command, .. } => {
            let field = Field::code("$", "bash", command.clone());
            field_lines(&[field], width, highlighter, out);
        }
        Display::FileList { files, more } => {
            files
                .iter()
                .for_each(|f| plain(out, &f.display().to_string()));
            if *more > 0 {
                plain(out, &format!("… and {more} more"));
            }
        }
        Display::Matches { matches, .. } => {
            for m in matches {
                let at = m.line.map_or(String::new(), |n| format!(":{n}"));
                plain(out, &format!("{}{at}: {}", m.path.display(), m.text));
            }
        }
        Display::Diff { path, .. } => plain(out, &path.display().to_string()),
        Display::Diffs { files } => {
            for f in files {
                plain(out, &f.path.display().to_string());
            }
        }
        Display::Fields { fields } => field_lines(fields, width, highlighter, out),
        Display::Attachment {
            media_type, bytes, ..
        } => plain(out, &format!("{media_type}, {bytes} bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_inside_the_project_only() {
        let cwd = Path::new("/work/project");
        assert_eq!(
            relative(Path::new("/work/project/src/main.rs"), cwd),
            PathBuf::from("src/main.rs")
        );
        assert_eq!(
            relative(Path::new("/etc/hosts"), cwd),
            PathBuf::from("/etc/hosts")
        );
    }
}
