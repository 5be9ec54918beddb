//! The cell of one tool call: a title line with a status, and a body.
//!
//! Status follows the call's life: waiting for permission, running (spinner and elapsed time,
//! advanced by `tick`), done, error (red), denied (from the `outcome` of `ToolCallFinished`), or
//! interrupted when the turn ended first. The body is the live output tail while running and the
//! call's [`Display`] once finished; long bodies are collapsed to a few rows with "+N lines"
//! unless the cell is expanded. Invariant: the spinner frame and elapsed seconds only change
//! through [`ToolCell::advance`], so a layout is a pure function of the cell's state.

use std::time::Instant;

use ratatui::text::{Line, Span};

use super::agent::AgentActivity;
use super::body::{self, Body, Keep};
use super::layout::{COLLAPSED_ROWS, LayoutCtx, format_elapsed, was_denied};
use super::wrap::wrap_spans;
use crate::protocol::{CallOutcome, Display};
use crate::tui::theme::Theme;
use crate::tui::untrusted::one_line;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const SPINNER_FRAME_MS: u128 = 80;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolStatus {
    Waiting,
    Running,
    Done,
    Error,
    Denied,
    Interrupted,
}

pub(crate) struct ToolCell {
    pub title: String,
    pub status: ToolStatus,
    started: Instant,
    spinner: usize,
    elapsed_secs: u64,
    body: Option<Body>,
    /// The permission step's outcome, shown after the title.
    outcome: Option<CallOutcome>,
    /// The file this call worked on changed on disk afterwards.
    pub changed_on_disk: bool,
    /// What the sub-agent it started does (an Agent call), once it has done something.
    pub agent: Option<AgentActivity>,
    /// The call asks the person questions (AskUserQuestion): its wait and outcome are an
    /// answer, not a permission.
    pub asks: bool,
}

impl ToolCell {
    pub fn new(title: &str, now: Instant) -> ToolCell {
        ToolCell {
            title: title.to_string(),
            status: ToolStatus::Running,
            started: now,
            spinner: 0,
            elapsed_secs: 0,
            body: None,
            outcome: None,
            changed_on_disk: false,
            asks: false,
            agent: None,
        }
    }

    pub fn is_active(&self) -> bool {
        matches!(self.status, ToolStatus::Running | ToolStatus::Waiting)
    }

    /// Waiting -> running, with the clock starting now.
    pub fn resume(&mut self, now: Instant) {
        self.status = ToolStatus::Running;
        self.started = now;
        self.spinner = 0;
        self.elapsed_secs = 0;
    }

    pub fn set_progress(&mut self, output: &str, theme: &Theme) {
        self.body = Some(body::progress(output, theme));
    }

    pub fn finish(
        &mut self,
        is_error: bool,
        display: &Display,
        outcome: Option<CallOutcome>,
        theme: &Theme,
    ) {
        let denied = was_denied(outcome);
        self.status = if denied {
            ToolStatus::Denied
        } else if is_error {
            ToolStatus::Error
        } else {
            ToolStatus::Done
        };
        self.outcome = outcome;
        self.body = Some(body::build(display, is_error && !denied, theme));
    }

    /// Advance the spinner and elapsed time; true when what is drawn changed.
    pub fn advance(&mut self, now: Instant) -> bool {
        if self.status != ToolStatus::Running {
            return false;
        }
        let elapsed = now.saturating_duration_since(self.started);
        let frame = (elapsed.as_millis() / SPINNER_FRAME_MS) as usize % SPINNER.len();
        let secs = elapsed.as_secs();
        let changed = frame != self.spinner || secs != self.elapsed_secs;
        self.spinner = frame;
        self.elapsed_secs = secs;
        changed
    }

    pub fn layout(&self, ctx: &LayoutCtx<'_>, out: &mut Vec<Line<'static>>) -> bool {
        let theme = ctx.theme;
        let (glyph, glyph_style, suffix) = match self.status {
            ToolStatus::Waiting => (
                "? ",
                theme.tool_waiting,
                if self.asks {
                    " · waiting for your answer"
                } else {
                    " · waiting for permission"
                }
                .to_string(),
            ),
            ToolStatus::Done if self.asks => ("● ", theme.tool_done, " · answered".to_string()),
            ToolStatus::Denied if self.asks => ("⊘ ", theme.tool_denied, " · declined".to_string()),
            ToolStatus::Running => (
                SPINNER[self.spinner % SPINNER.len()],
                theme.tool_running,
                format!(" · {}", format_elapsed(self.elapsed_secs)),
            ),
            ToolStatus::Done => ("● ", theme.tool_done, outcome_suffix(self.outcome)),
            ToolStatus::Error => ("✗ ", theme.tool_error, outcome_suffix(self.outcome)),
            ToolStatus::Denied => (
                "⊘ ",
                theme.tool_denied,
                if self.outcome == Some(CallOutcome::DeniedForSession) {
                    " · denied for this session".to_string()
                } else {
                    " · denied".to_string()
                },
            ),
            ToolStatus::Interrupted => ("◼ ", theme.tool_denied, " · interrupted".to_string()),
        };
        let glyph_span = if self.status == ToolStatus::Running {
            // Spinner frames are one column; pad to the two-column gutter.
            Span::styled(format!("{glyph} "), glyph_style)
        } else {
            Span::styled(glyph, glyph_style)
        };
        let glyph_span = if ctx.focused {
            Span::styled(glyph_span.content, glyph_style.patch(theme.focus))
        } else {
            glyph_span
        };
        let title_style = if self.status == ToolStatus::Error {
            theme.tool_title.patch(theme.tool_error)
        } else {
            theme.tool_title
        };
        let mut title = vec![
            Span::styled(one_line(&self.title).into_owned(), title_style),
            Span::styled(suffix, glyph_style),
        ];
        if self.changed_on_disk {
            title.push(Span::styled(" · changed on disk since", theme.tool_waiting));
        }
        wrap_spans(&[glyph_span], &[Span::raw("  ")], &title, ctx.width, out);
        if let Some(agent) = &self.agent {
            let running = self.is_active();
            return agent.layout(ctx, running, self.elapsed_secs, self.body.as_ref(), out);
        }
        let Some(body) = &self.body else {
            return false;
        };
        if body.is_empty() {
            return false;
        }
        let mut rows = Vec::new();
        let pad = [Span::raw("    ")];
        let pending = body.layout(&pad, ctx.frame(), &mut rows);
        let limit = if self.status == ToolStatus::Running {
            COLLAPSED_ROWS
        } else if ctx.expanded {
            usize::MAX
        } else {
            COLLAPSED_ROWS
        };
        // Hiding a single row saves nothing: show it.
        let hidden = if rows.len() > limit.saturating_add(1) {
            rows.len() - limit
        } else {
            0
        };
        let hint = |n: usize| {
            let text = if self.status == ToolStatus::Running {
                format!("… +{n} lines")
            } else {
                format!("… +{n} lines (ctrl+o to expand)")
            };
            let mut line = Vec::new();
            wrap_spans(
                &pad,
                &pad,
                &[Span::styled(text, theme.hint)],
                ctx.width,
                &mut line,
            );
            line
        };
        let start = out.len();
        match (hidden, body.keep) {
            (0, _) => out.extend(rows),
            (n, Keep::Head) => {
                out.extend(rows.into_iter().take(limit));
                out.extend(hint(n));
            }
            (n, Keep::Tail) => {
                out.extend(hint(n));
                out.extend(rows.into_iter().skip(n));
            }
        }
        // The first body row hangs off the title with an elbow.
        if ctx.width >= 4
            && let Some(first) = out.get_mut(start).and_then(|l| l.spans.first_mut())
            && first.content == "    "
        {
            *first = Span::styled("  ⎿ ", theme.dim);
        }
        pending
    }
}

/// How the permission step ended, after the title of an allowed call (nothing when no one was
/// asked).
fn outcome_suffix(outcome: Option<CallOutcome>) -> String {
    match outcome {
        Some(CallOutcome::AllowedOnce) => " · allowed once",
        Some(CallOutcome::AllowedForSession) => " · allowed for this session",
        Some(CallOutcome::AllowedAlways) => " · always allowed",
        Some(CallOutcome::AllowedEdited) => " · allowed with your changes",
        Some(CallOutcome::PlanApproved) => " · approved",
        Some(CallOutcome::Denied | CallOutcome::DeniedForSession) | None => "",
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn elapsed_formats() {
        assert_eq!(format_elapsed(0), "0s");
        assert_eq!(format_elapsed(59), "59s");
        assert_eq!(format_elapsed(185), "3m 05s");
        assert_eq!(format_elapsed(3720), "1h 02m");
    }

    #[test]
    fn advance_reports_changes_only_while_running() {
        let t0 = Instant::now();
        let mut cell = ToolCell::new("Bash sleep 5", t0);
        assert!(!cell.advance(t0));
        assert!(cell.advance(t0 + Duration::from_millis(100)));
        assert!(!cell.advance(t0 + Duration::from_millis(110)));
        assert!(cell.advance(t0 + Duration::from_millis(1000)));
        cell.status = ToolStatus::Done;
        assert!(!cell.advance(t0 + Duration::from_secs(9)));
    }
}
