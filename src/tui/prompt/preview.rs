//! What a permission prompt shows about the call: an embedded [`DiffView`] for file changes, or
//! styled text lines for everything else (the highlighted Bash command, the WebFetch URL and
//! domain, an MCP call's server, tool and arguments, the plan as Markdown).
//!
//! Text previews are laid out per width at draw time and scroll with `top`; nothing here sends
//! anything to the core.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::protocol::{Display, PermissionRequest, RequestKind};
use crate::tui::conversation::wrap::{sanitize, wrap_spans};
use crate::tui::highlight::{Highlighter, Lookup};
use crate::tui::markdown;
use crate::tui::review::{self, DiffView};
use crate::tui::theme::Theme;

/// The preview of one request.
pub enum Preview {
    Diff(Box<DiffView>),
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
            ) => Preview::Diff(Box::new(diff_view(
                relative(path, cwd),
                before.clone(),
                after.clone(),
                highlighter,
            ))),
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
    cwd: &Path,
    width: usize,
    highlighter: &Highlighter,
) -> Vec<Line<'static>> {
    let theme = Theme::default();
    let mut out = Vec::new();
    if let RequestKind::PlanApproval { plan } = &req.kind {
        markdown::render(plan, &[], width, &theme, highlighter, &mut out);
        return out;
    }
    let label = |s: &str| Span::styled(format!("{s:<10}"), dim());
    let field = |out: &mut Vec<Line<'static>>, name: &str, value: &str| {
        wrap_spans(
            &[label(name)],
            &[Span::raw(" ".repeat(10))],
            &[Span::raw(sanitize(value).into_owned())],
            width,
            out,
        );
    };
    let input = &req.input;
    let text = |key: &str| input.get(key).and_then(Value::as_str);
    if req.tool == "Bash" {
        let command = text("command").unwrap_or_default();
        let prefix = [Span::styled("$ ", Style::default().fg(Color::Cyan))];
        let rest = [Span::raw("  ")];
        match highlighter.get("bash", command) {
            Lookup::Ready(lines) => {
                for (i, spans) in lines.iter().enumerate() {
                    let p = if i == 0 { &prefix[..] } else { &rest[..] };
                    wrap_spans(p, &rest, spans, width, &mut out);
                }
            }
            _ => {
                for (i, line) in command.split('\n').enumerate() {
                    let p = if i == 0 { &prefix[..] } else { &rest[..] };
                    let spans = [Span::styled(
                        sanitize(line).into_owned(),
                        Style::default().add_modifier(Modifier::BOLD),
                    )];
                    wrap_spans(p, &rest, &spans, width, &mut out);
                }
            }
        }
        if let Some(d) = text("description") {
            field(&mut out, "what", d);
        }
        let dir = text("cwd")
            .or_else(|| text("working_dir"))
            .map_or_else(|| crate::tui::status::tilde_path(cwd), str::to_string);
        field(&mut out, "in", &dir);
        return out;
    }
    if req.tool == "WebFetch" {
        let url = text("url").unwrap_or_default();
        field(&mut out, "url", url);
        field(&mut out, "domain", &domain(url));
        if let Some(p) = text("prompt") {
            field(&mut out, "prompt", p);
        }
        return out;
    }
    if let Some((server, tool)) = mcp_name(&req.tool) {
        field(&mut out, "server", server);
        field(&mut out, "tool", tool);
        out.push(Line::styled("arguments", dim()));
        let json = serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string());
        match highlighter.get("json", &json) {
            Lookup::Ready(lines) => {
                for spans in lines.iter() {
                    wrap_spans(
                        &[Span::raw("  ")],
                        &[Span::raw("  ")],
                        spans,
                        width,
                        &mut out,
                    );
                }
            }
            _ => {
                for line in json.lines() {
                    let spans = [Span::raw(sanitize(line).into_owned())];
                    wrap_spans(
                        &[Span::raw("  ")],
                        &[Span::raw("  ")],
                        &spans,
                        width,
                        &mut out,
                    );
                }
            }
        }
        return out;
    }
    if let Some(display) = &req.preview {
        display_lines(display, width, &mut out);
    }
    out
}

fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

/// `mcp__server__tool` -> (server, tool).
pub fn mcp_name(tool: &str) -> Option<(&str, &str)> {
    tool.strip_prefix("mcp__")?.split_once("__")
}

/// The host of a URL (`https://user@docs.rs:443/x` -> `docs.rs`), or the text when it has none.
pub fn domain(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host.starts_with('[') {
        host.split_inclusive(']').next().unwrap_or(host)
    } else {
        host.split(':').next().unwrap_or(host)
    };
    host.to_ascii_lowercase()
}

/// Any other preview as plain lines.
fn display_lines(display: &Display, width: usize, out: &mut Vec<Line<'static>>) {
    let plain = |out: &mut Vec<Line<'static>>, s: &str| {
        wrap_spans(&[], &[], &[Span::raw(sanitize(s).into_owned())], width, out);
    };
    match display {
        Display::Empty => {}
        Display::Text { text } | Display::Markdown { text } => {
            text.lines().for_each(|l| plain(out, l));
        }
        Display::Command { command, .. } => plain(out, &format!("$ {command}")),
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
        Display::Attachment {
            media_type, bytes, ..
        } => plain(out, &format!("{media_type}, {bytes} bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_and_mcp_names() {
        assert_eq!(domain("https://Docs.rs/serde/latest"), "docs.rs");
        assert_eq!(domain("http://user:pw@example.com:8080/a?b"), "example.com");
        assert_eq!(domain("https://[::1]:3000/"), "[::1]");
        assert_eq!(domain("example.org"), "example.org");
        assert_eq!(
            mcp_name("mcp__github__create_issue"),
            Some(("github", "create_issue"))
        );
        assert_eq!(mcp_name("Bash"), None);
    }

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
