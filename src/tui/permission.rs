//! The permission prompt overlay: a layer that asks the person about pending
//! [`PermissionRequest`]s, oldest first ("1 of 3"), and answers each with exactly one
//! [`Op::PermissionDecision`].
//!
//! Basic form: tool, title, reason and the preview as text, then numbered choices. "Always
//! allow" is offered only when the request carries a `saveable_rule`. A later issue turns the
//! preview into a full diff review.

use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};
use similar::{ChangeTag, TextDiff};

use crate::protocol::{Decision, Display, Op, PermissionMode, PermissionRequest, RequestKind};
use crate::tui::input::{Key, KeyInput};
use crate::tui::keymap::{self, Action, Context};

/// Preview lines shown at most; the rest is summarised as "+N more lines".
const MAX_PREVIEW_LINES: usize = 12;

/// What a key did to the prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptResult {
    /// The key was used (or swallowed: a prompt is modal).
    Consumed,
    /// The person decided: send this op.
    Decided(Op),
}

/// Pending requests and the feedback line being typed, if any.
#[derive(Debug, Default)]
pub struct PermissionPrompt {
    queue: VecDeque<PermissionRequest>,
    /// `Some` while typing the "tell the model what to do instead" text.
    feedback: Option<String>,
}

impl PermissionPrompt {
    pub fn push(&mut self, request: PermissionRequest) {
        self.queue.push_back(request);
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn current(&self) -> Option<&PermissionRequest> {
        self.queue.front()
    }

    pub fn is_typing_feedback(&self) -> bool {
        self.feedback.is_some()
    }

    /// A key while the prompt is on top. Every key is consumed: the prompt is modal.
    pub fn handle_key(&mut self, key: KeyInput) -> PromptResult {
        let Some(req) = self.queue.front() else {
            return PromptResult::Consumed;
        };
        if let Some(text) = &mut self.feedback {
            match key.code {
                Key::Enter => {
                    let feedback = std::mem::take(text).trim().to_string();
                    self.feedback = None;
                    if feedback.is_empty() {
                        return self.decide(Decision::DenyOnce);
                    }
                    return self.decide(Decision::DenyWithFeedback { feedback });
                }
                Key::Esc => self.feedback = None,
                Key::Backspace => {
                    text.pop();
                }
                Key::Char(c) if !key.mods.ctrl && !key.mods.alt => text.push(c),
                _ => {}
            }
            return PromptResult::Consumed;
        }
        let plan = matches!(req.kind, RequestKind::PlanApproval { .. });
        let decision = match keymap::lookup(Context::Permission, key) {
            Some(Action::AllowOnce) if plan => Decision::ApprovePlan {
                mode: PermissionMode::AcceptEdits,
            },
            Some(Action::AllowSession) if plan => Decision::ApprovePlan {
                mode: PermissionMode::Default,
            },
            Some(Action::AllowOnce) => Decision::AllowOnce,
            Some(Action::AllowSession) => Decision::AllowSession,
            Some(Action::DenyOnce) => Decision::DenyOnce,
            Some(Action::DenySession) if !plan => Decision::DenySession,
            Some(Action::AlwaysAllow) if !plan && req.saveable_rule.is_some() => {
                Decision::AlwaysAllow
            }
            Some(Action::DenyWithFeedback) => {
                self.feedback = Some(String::new());
                return PromptResult::Consumed;
            }
            _ => return PromptResult::Consumed,
        };
        self.decide(decision)
    }

    /// A paste while typing feedback joins the line (newlines become spaces); else ignored.
    pub fn paste(&mut self, text: &str) {
        if let Some(line) = &mut self.feedback {
            line.push_str(&text.replace(['\r', '\n'], " "));
        }
    }

    /// Drop every pending request (the turn ended; the core no longer waits for answers).
    pub fn clear(&mut self) {
        self.queue.clear();
        self.feedback = None;
    }

    fn decide(&mut self, decision: Decision) -> PromptResult {
        match self.queue.pop_front() {
            Some(req) => PromptResult::Decided(Op::PermissionDecision {
                request_id: req.id,
                decision,
            }),
            None => PromptResult::Consumed,
        }
    }

    fn lines(&self) -> Vec<Line<'static>> {
        let Some(req) = self.queue.front() else {
            return Vec::new();
        };
        let dim = Style::default().fg(Color::DarkGray);
        let bold = Style::default().add_modifier(Modifier::BOLD);
        // Titles usually start with the tool name already (`Bash npm test`).
        let mut lines = vec![if req.title.starts_with(&req.tool) {
            Line::styled(req.title.clone(), bold)
        } else {
            Line::from(vec![
                Span::styled(format!("{} ", req.tool), bold.fg(Color::Yellow)),
                Span::styled(req.title.clone(), bold),
            ])
        }];
        if !req.reason.is_empty() {
            lines.push(Line::styled(req.reason.clone(), dim));
        }
        let mut preview = match (&req.kind, &req.preview) {
            (RequestKind::PlanApproval { plan }, _) => text_lines(plan, Style::default()),
            (_, Some(p)) => preview_lines(p),
            (_, None) => Vec::new(),
        };
        if preview.len() > MAX_PREVIEW_LINES {
            let more = preview.len() - MAX_PREVIEW_LINES;
            preview.truncate(MAX_PREVIEW_LINES);
            preview.push(Line::styled(format!("… +{more} more lines"), dim));
        }
        if !preview.is_empty() {
            lines.push(Line::default());
            lines.extend(preview);
        }
        lines.push(Line::default());
        if let Some(text) = &self.feedback {
            lines.push(Line::styled("Tell the model what to do instead:", bold));
            lines.push(Line::from(vec![
                Span::styled("› ", Style::default().fg(Color::Cyan)),
                Span::raw(text.clone()),
                Span::styled("▏", Style::default().fg(Color::Cyan)),
            ]));
            lines.push(Line::styled("Enter send · Esc back", dim));
            return lines;
        }
        let choices: Vec<String> = match &req.kind {
            RequestKind::PlanApproval { .. } => vec![
                "1 yes, and accept edits".into(),
                "2 yes, and ask before edits".into(),
                "3 no, keep planning".into(),
                "5 no, and tell the model what to change".into(),
            ],
            RequestKind::Tool => {
                let scope = req
                    .session_scope
                    .as_deref()
                    .map_or(String::new(), |s| format!(" ({s})"));
                let mut c = vec![
                    "1 yes".to_string(),
                    format!("2 yes, for this session{scope}"),
                    "3 no".into(),
                    format!("4 no, for this session{scope}"),
                    "5 no, and tell the model what to do instead".into(),
                ];
                if let Some(rule) = &req.saveable_rule {
                    c.push(format!("6 always allow {rule}"));
                }
                c
            }
        };
        lines.extend(choices.into_iter().map(Line::from));
        lines
    }

    /// Rows wanted at `width`, border included, capped by `max`.
    pub fn height(&self, width: u16, max: u16) -> u16 {
        let inner = usize::from(width.saturating_sub(2).max(1));
        let rows: usize = self
            .lines()
            .iter()
            .map(|l| l.width().max(1).div_ceil(inner))
            .sum();
        u16::try_from(rows + 2).unwrap_or(max).min(max)
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        Clear.render(area, buf);
        let count = if self.queue.len() > 1 {
            format!(" 1 of {} ", self.queue.len())
        } else {
            String::new()
        };
        let title = match self.queue.front().map(|r| &r.kind) {
            Some(RequestKind::PlanApproval { .. }) => " Approve the plan? ",
            _ => " Allow this? ",
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(Style::default().fg(Color::Yellow))
            .title(Line::from(vec![
                Span::styled(title, Style::default().add_modifier(Modifier::BOLD)),
                Span::raw(count),
            ]));
        Paragraph::new(self.lines())
            .block(block)
            .wrap(Wrap { trim: false })
            .render(area, buf);
    }
}

fn text_lines(text: &str, style: Style) -> Vec<Line<'static>> {
    text.lines()
        .map(|l| Line::styled(l.to_string(), style))
        .collect()
}

/// A preview as plain lines (diff lines coloured).
fn preview_lines(display: &Display) -> Vec<Line<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    match display {
        Display::Empty => Vec::new(),
        Display::Text { text } | Display::Markdown { text } => text_lines(text, Style::default()),
        Display::Command { command, .. } => vec![Line::from(vec![
            Span::styled("$ ", dim),
            Span::raw(command.clone()),
        ])],
        Display::FileList { files, more } => {
            let mut l: Vec<Line> = files
                .iter()
                .map(|f| Line::raw(f.display().to_string()))
                .collect();
            if *more > 0 {
                l.push(Line::styled(format!("… and {more} more"), dim));
            }
            l
        }
        Display::Matches { matches, .. } => matches
            .iter()
            .map(|m| {
                let at = m.line.map_or(String::new(), |n| format!(":{n}"));
                Line::raw(format!("{}{at}: {}", m.path.display(), m.text))
            })
            .collect(),
        Display::Diff {
            path,
            before,
            after,
        } => {
            let mut l = vec![Line::styled(path.display().to_string(), dim)];
            let diff = TextDiff::from_lines(before.as_str(), after.as_str());
            for group in diff.grouped_ops(2) {
                l.push(Line::styled("…", dim));
                for op in group {
                    for change in diff.iter_changes(&op) {
                        let (sign, style) = match change.tag() {
                            ChangeTag::Delete => ("-", Style::default().fg(Color::Red)),
                            ChangeTag::Insert => ("+", Style::default().fg(Color::Green)),
                            ChangeTag::Equal => (" ", Style::default()),
                        };
                        let text = change.value().trim_end_matches('\n').to_string();
                        l.push(Line::styled(format!("{sign} {text}"), style));
                    }
                }
            }
            l
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;

    fn edit_request() -> PermissionRequest {
        PermissionRequest {
            id: 4,
            call_id: "c4".into(),
            tool: "Edit".into(),
            title: "Edit src/lib.rs".into(),
            input: json!({}),
            reason: "edits ask in default mode".into(),
            preview: Some(Display::Diff {
                path: PathBuf::from("src/lib.rs"),
                before: "a\nb\nc\n".into(),
                after: "a\nB\nc\n".into(),
            }),
            session_scope: Some("edits to src/lib.rs".into()),
            saveable_rule: None,
            kind: RequestKind::Tool,
        }
    }

    fn text(p: &PermissionPrompt) -> Vec<String> {
        p.lines().iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn shows_the_diff_preview_and_no_always_choice_without_a_rule() {
        let mut p = PermissionPrompt::default();
        p.push(edit_request());
        assert_eq!(
            text(&p),
            [
                "Edit src/lib.rs",
                "edits ask in default mode",
                "",
                "src/lib.rs",
                "…",
                "  a",
                "- b",
                "+ B",
                "  c",
                "",
                "1 yes",
                "2 yes, for this session (edits to src/lib.rs)",
                "3 no",
                "4 no, for this session (edits to src/lib.rs)",
                "5 no, and tell the model what to do instead",
            ]
        );
    }

    #[test]
    fn long_previews_are_cut_with_a_count() {
        let mut req = edit_request();
        req.preview = Some(Display::Text {
            text: (1..=20).map(|i| format!("{i}\n")).collect(),
        });
        let mut p = PermissionPrompt::default();
        p.push(req);
        let lines = text(&p);
        assert!(lines.contains(&"12".to_string()));
        assert!(!lines.contains(&"13".to_string()));
        assert!(lines.contains(&"… +8 more lines".to_string()), "{lines:#?}");
    }

    #[test]
    fn feedback_typing_and_backing_out() {
        let mut p = PermissionPrompt::default();
        p.push(edit_request());
        assert_eq!(
            p.handle_key(KeyInput::plain(Key::Char('f'))),
            PromptResult::Consumed
        );
        assert!(p.is_typing_feedback());
        for c in "nox".chars() {
            p.handle_key(KeyInput::plain(Key::Char(c)));
        }
        p.handle_key(KeyInput::plain(Key::Backspace));
        // Digits are text while typing feedback, not choices.
        p.handle_key(KeyInput::plain(Key::Char('1')));
        p.paste(" use\nthe  test");
        assert_eq!(
            p.handle_key(KeyInput::plain(Key::Enter)),
            PromptResult::Decided(Op::PermissionDecision {
                request_id: 4,
                decision: Decision::DenyWithFeedback {
                    feedback: "no1 use the  test".into()
                }
            })
        );
        assert!(p.is_empty());
    }
}
