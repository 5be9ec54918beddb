//! What a sub-agent did, inside the tool cell of the Agent call that started it: its tool calls
//! (title, status and, once finished, their bodies) from the [`Event::Subagent`] events routed
//! to the cell, and the tokens its requests used. The cell shows a live line (the call it is
//! on now) while it works, a `Done (N tool uses · X tokens · T)` line when it is done, and,
//! expanded, every call with its output. Calls of a nested sub-agent join the same list.
//! Invariant: nothing here lays out text until the cell is drawn.

use ratatui::text::{Line, Span};

use super::body::{self, Body};
use super::layout::{COLLAPSED_ROWS, LayoutCtx, format_elapsed, was_denied};
use super::wrap::{sanitize, wrap_spans};
use crate::protocol::Event;
use crate::tui::status::compact;
use crate::tui::theme::Theme;
use crate::tui::untrusted::one_line;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CallState {
    Running,
    Waiting,
    Done,
    Error,
    Denied,
    Interrupted,
}

struct ChildCall {
    call_id: String,
    title: String,
    state: CallState,
    body: Option<Body>,
}

/// A sub-agent's activity, as its Agent call's cell shows it.
#[derive(Default)]
pub(crate) struct AgentActivity {
    calls: Vec<ChildCall>,
    /// Tokens of its requests (input, cache and output).
    tokens: u64,
    /// The text of its last message (what it said while working), shown expanded while it
    /// runs.
    last_message: Option<String>,
}

impl AgentActivity {
    /// Fold one of the sub-agent's events (unwrapped) in.
    pub fn apply(&mut self, event: &Event, theme: &Theme) {
        match event {
            Event::Subagent { event, .. } => self.apply(event, theme),
            Event::ToolCallStarted { call_id, title, .. } if self.call(call_id).is_none() => {
                self.calls.push(ChildCall {
                    call_id: call_id.clone(),
                    title: title.clone(),
                    state: CallState::Running,
                    body: None,
                });
            }
            Event::ToolCallFinished {
                call_id,
                is_error,
                display,
                outcome,
            } => {
                if let Some(c) = self.call(call_id) {
                    let denied = was_denied(*outcome);
                    c.state = match (denied, is_error) {
                        (true, _) => CallState::Denied,
                        (false, true) => CallState::Error,
                        (false, false) => CallState::Done,
                    };
                    c.body = Some(body::build(display, *is_error && !denied, theme));
                }
            }
            Event::AssistantMessage { content, .. } => {
                let text = super::message_text(content);
                if !text.trim().is_empty() {
                    self.last_message = Some(text);
                }
            }
            Event::Usage { last, .. } => {
                self.tokens += last.context_tokens() + last.output_tokens;
            }
            _ => {}
        }
    }

    fn call(&mut self, call_id: &str) -> Option<&mut ChildCall> {
        self.calls.iter_mut().find(|c| c.call_id == call_id)
    }

    /// One of its calls waits for (or got) the person's answer.
    pub fn set_waiting(&mut self, call_id: &str, waiting: bool) {
        if let Some(c) = self.call(call_id)
            && matches!(c.state, CallState::Running | CallState::Waiting)
        {
            c.state = if waiting {
                CallState::Waiting
            } else {
                CallState::Running
            };
        }
    }

    /// The run was cut short: calls still going never finish.
    pub fn interrupt(&mut self) {
        for c in &mut self.calls {
            if matches!(c.state, CallState::Running | CallState::Waiting) {
                c.state = CallState::Interrupted;
            }
        }
    }

    /// Whether one of its calls is still going.
    pub fn is_busy(&self) -> bool {
        self.calls
            .iter()
            .any(|c| matches!(c.state, CallState::Running | CallState::Waiting))
    }

    /// `3 tool uses · 12.3k tokens`.
    fn counts(&self) -> String {
        let uses = match self.calls.len() {
            1 => "1 tool use".to_string(),
            n => format!("{n} tool uses"),
        };
        format!("{uses} · {} tokens", compact(self.tokens))
    }

    /// The live line while it works: the call it is on (the latest still going, else the
    /// latest), or that it is starting.
    fn live(&self, theme: &Theme) -> Vec<Span<'static>> {
        let current = self
            .calls
            .iter()
            .rev()
            .find(|c| matches!(c.state, CallState::Running | CallState::Waiting))
            .or(self.calls.last());
        let mut spans = match current {
            Some(c) if c.state == CallState::Waiting => vec![
                Span::styled(one_line(&c.title).into_owned(), theme.tool_body),
                Span::styled(" · waiting for permission", theme.tool_waiting),
            ],
            Some(c) => vec![Span::styled(
                one_line(&c.title).into_owned(),
                theme.tool_body,
            )],
            None => vec![Span::styled("Starting…", theme.dim)],
        };
        spans.push(Span::styled(format!(" · {}", self.counts()), theme.dim));
        spans
    }

    /// The rows under the title: the live line while `running` (or while a background run's
    /// calls go on), else the summary (`summary`: its first word, `Done`, `Failed` or
    /// `Stopped`, and the run's seconds); expanded, every call with its output. `report` is
    /// the final report (or why it failed), laid out after the summary.
    pub fn layout(
        &self,
        ctx: &LayoutCtx<'_>,
        running: bool,
        (ended, elapsed_secs): (&str, u64),
        report: Option<&Body>,
        out: &mut Vec<Line<'static>>,
    ) -> bool {
        let theme = ctx.theme;
        let elbow = [Span::styled("  ⎿ ", theme.dim)];
        let pad = [Span::raw("    ")];
        if running || self.is_busy() {
            wrap_spans(&elbow, &pad, &self.live(theme), ctx.width, out);
            if !ctx.expanded {
                return false;
            }
        } else {
            let summary = format!(
                "{ended} ({} · {})",
                self.counts(),
                format_elapsed(elapsed_secs)
            );
            let hint = if ctx.expanded || self.calls.is_empty() {
                ""
            } else {
                " (ctrl+o to expand)"
            };
            let spans = [
                Span::styled(summary, theme.dim),
                Span::styled(hint, theme.hint),
            ];
            wrap_spans(&elbow, &pad, &spans, ctx.width, out);
        }
        let mut pending = false;
        if ctx.expanded {
            let inner = [Span::raw("      ")];
            for c in &self.calls {
                let (glyph, style) = match c.state {
                    CallState::Running => ("⋯ ", theme.tool_running),
                    CallState::Waiting => ("? ", theme.tool_waiting),
                    CallState::Done => ("● ", theme.tool_done),
                    CallState::Error => ("✗ ", theme.tool_error),
                    CallState::Denied => ("⊘ ", theme.tool_denied),
                    CallState::Interrupted => ("◼ ", theme.tool_denied),
                };
                let first = [Span::raw("    "), Span::styled(glyph, style)];
                let title = [Span::styled(
                    one_line(&c.title).into_owned(),
                    theme.tool_title,
                )];
                wrap_spans(&first, &inner, &title, ctx.width, out);
                if let Some(b) = &c.body {
                    pending |= b.layout(&inner, ctx.frame(), out);
                }
            }
            if let Some(text) = self
                .last_message
                .as_ref()
                .filter(|_| running || self.is_busy())
            {
                let said = [Span::styled(sanitize(text).into_owned(), theme.dim)];
                wrap_spans(&[Span::raw("    ▸ ")], &inner, &said, ctx.width, out);
            }
        }
        if let Some(report) = report.filter(|r| !r.is_empty()) {
            let mut rows = Vec::new();
            pending |= report.layout(&pad, ctx.frame(), &mut rows);
            let limit = if ctx.expanded {
                usize::MAX
            } else {
                COLLAPSED_ROWS
            };
            let hidden = rows.len().saturating_sub(limit);
            out.extend(rows.into_iter().take(limit));
            if hidden > 0 {
                let text = format!("… +{hidden} lines (ctrl+o to expand)");
                wrap_spans(
                    &pad,
                    &pad,
                    &[Span::styled(text, theme.hint)],
                    ctx.width,
                    out,
                );
            }
        }
        pending
    }
}
