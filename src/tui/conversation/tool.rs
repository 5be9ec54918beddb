//! The cell of one tool call: a title line with a status, and a body.
//!
//! Status follows the call's life: waiting for permission, running (spinner and elapsed time,
//! advanced by `tick`), done, error (red), denied (from the `outcome` of `ToolCallFinished`), or
//! interrupted when the turn ended first. The body is the live output tail while running and the
//! call's [`Display`] once finished; long bodies are collapsed to a few rows with "+N lines"
//! unless the cell is expanded (an edit collapsed shows its changed lines, trimmed from the
//! middle). Problems a language server found after the call's edit follow the body as a
//! count, listed when expanded. Invariant: the spinner frame and elapsed seconds only change
//! through [`ToolCell::advance`], so a layout is a pure function of the cell's state.

use std::time::Instant;

use ratatui::text::{Line, Span};

use super::agent::AgentActivity;
use super::body::{self, Body, Keep};
use super::layout::{COLLAPSED_DIFF_ROWS, COLLAPSED_ROWS, LayoutCtx, format_elapsed, was_denied};
use super::wrap::{sanitize, str_width, wrap_spans};
use crate::protocol::{BackgroundTask, CallOutcome, Display, TaskKind, TaskStatus};
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

/// A background run as its call's cell shows it.
pub(crate) struct BackgroundRun {
    pub id: String,
    kind: TaskKind,
    pub status: TaskStatus,
    elapsed_secs: u64,
    /// An agent's report or why it failed; a shell's exit.
    report: Option<Body>,
}

impl BackgroundRun {
    /// The title's glyph and suffix (an agent's duration is on its summary line).
    fn title(&self, theme: &Theme) -> (&'static str, ratatui::style::Style, String) {
        let id = &self.id;
        let ended = match (self.kind, self.status) {
            (TaskKind::Agent, _) => format!(" · {id}"),
            (TaskKind::Shell, TaskStatus::Stopped) => {
                format!(
                    " · {id} · stopped after {}",
                    format_elapsed(self.elapsed_secs)
                )
            }
            (TaskKind::Shell, _) => format!(" · {id} · {}", format_elapsed(self.elapsed_secs)),
        };
        match self.status {
            TaskStatus::Running => (
                "⋯ ",
                theme.tool_running,
                format!(" · in the background as {id} (/tasks)"),
            ),
            TaskStatus::Completed => ("● ", theme.tool_done, ended),
            TaskStatus::Failed => ("✗ ", theme.tool_error, ended),
            TaskStatus::Stopped => ("◼ ", theme.tool_denied, ended),
        }
    }

    /// The agent summary's first word once it ended.
    fn ended(&self) -> &'static str {
        match self.status {
            TaskStatus::Running | TaskStatus::Completed => "Done",
            TaskStatus::Failed => "Failed",
            TaskStatus::Stopped => "Stopped",
        }
    }
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
    /// The background agent or shell this call started (`run_in_background`), as its
    /// [`BackgroundTask`] events tell it: the cell follows it in place.
    pub background: Option<BackgroundRun>,
    /// Problems a language server found in the file after this call's edit (one line each),
    /// and whether they are new since before it (false: the file had not been checked before).
    diagnostics: Option<(Vec<String>, bool)>,
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
            background: None,
            diagnostics: None,
        }
    }

    /// Take in an event of the background task this call started.
    pub fn set_background(&mut self, task: &BackgroundTask, theme: &Theme) {
        let report = task.report.as_ref().map(|text| {
            let failed = task.status == TaskStatus::Failed;
            let display = if failed || task.kind == TaskKind::Shell {
                Display::Text { text: text.clone() }
            } else {
                Display::Markdown { text: text.clone() }
            };
            body::build(&display, failed, theme)
        });
        self.background = Some(BackgroundRun {
            id: task.id.clone(),
            kind: task.kind,
            status: task.status,
            elapsed_secs: task.elapsed_ms / 1000,
            report,
        });
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

    /// The problems a language server reported after this call's edit.
    pub fn set_diagnostics(&mut self, problems: &[String], new: bool) {
        self.diagnostics = Some((problems.to_vec(), new));
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
        // A call that started background work shows the work.
        let (glyph, glyph_style, suffix) = match &self.background {
            Some(run) if self.status == ToolStatus::Done => run.title(theme),
            _ => (glyph, glyph_style, suffix),
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
        let title_style = if ctx.focused {
            title_style.patch(theme.focus)
        } else {
            title_style
        };
        let mut title = vec![
            Span::styled(one_line(&self.title).into_owned(), title_style),
            Span::styled(suffix, glyph_style),
        ];
        if self.changed_on_disk {
            title.push(Span::styled(" · changed on disk since", theme.tool_waiting));
        }
        if ctx.focused {
            // What the keys do now, when it fits on the title's row; the marker alone if not.
            let verb = if ctx.expanded { "collapse" } else { "expand" };
            let hint = format!("  ◂ ctrl+o to {verb} · esc to unfocus");
            let used: usize = 2 + title.iter().map(|s| str_width(&s.content)).sum::<usize>();
            let hint = if used + str_width(&hint) <= ctx.width {
                hint
            } else {
                "  ◂".to_string()
            };
            title.push(Span::styled(hint, theme.hint));
        }
        wrap_spans(&[glyph_span], &[Span::raw("  ")], &title, ctx.width, out);
        let run = self.background.as_ref();
        if let Some(agent) = &self.agent {
            let pending = match run {
                // Running: the live line; its "Running in the background" text would be stale.
                Some(run) => {
                    let running = run.status == TaskStatus::Running;
                    let summary = (run.ended(), run.elapsed_secs);
                    agent.layout(ctx, running, summary, run.report.as_ref(), out)
                }
                None => {
                    let summary = ("Done", self.elapsed_secs);
                    agent.layout(ctx, self.is_active(), summary, self.body.as_ref(), out)
                }
            };
            return pending;
        }
        if let Some(run) =
            run.filter(|r| r.kind == TaskKind::Agent && r.status != TaskStatus::Running)
        {
            // An agent that did nothing: its end and report alone.
            let agent = AgentActivity::default();
            let summary = (run.ended(), run.elapsed_secs);
            return agent.layout(ctx, false, summary, run.report.as_ref(), out);
        }
        let mut pending = self.layout_body(ctx, out);
        if let Some(report) = run.and_then(|r| r.report.as_ref()) {
            pending |= report.layout(&[Span::raw("    ")], ctx.frame(), out);
        }
        self.layout_diagnostics(ctx, out);
        pending
    }

    fn layout_body(&self, ctx: &LayoutCtx<'_>, out: &mut Vec<Line<'static>>) -> bool {
        let theme = ctx.theme;
        let Some(body) = &self.body else {
            return false;
        };
        if body.is_empty() {
            return false;
        }
        let mut rows = Vec::new();
        let pad = [Span::raw("    ")];
        let collapsed = self.status == ToolStatus::Running || !ctx.expanded;
        let pending = if collapsed {
            body.layout_collapsed(&pad, ctx.frame(), &mut rows)
        } else {
            body.layout(&pad, ctx.frame(), &mut rows)
        };
        let limit = if !collapsed {
            usize::MAX
        } else if body.has_collapsed_form() {
            COLLAPSED_DIFF_ROWS
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
            (n, Keep::Middle) => {
                // The summary and the first changes, then the last ones.
                let head = limit.div_ceil(2);
                let mut rows = rows.into_iter();
                out.extend(rows.by_ref().take(head));
                out.extend(hint(n));
                // What is left is the hidden middle and the last `limit - head` rows.
                out.extend(rows.skip(n));
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

    /// `⚠ 2 new problems` under an edit a language server complained about; the problems
    /// themselves when the cell is expanded.
    fn layout_diagnostics(&self, ctx: &LayoutCtx<'_>, out: &mut Vec<Line<'static>>) {
        let Some((problems, new)) = &self.diagnostics else {
            return;
        };
        if problems.is_empty() {
            return;
        }
        let theme = ctx.theme;
        let n = problems.len();
        let noun = if n == 1 { "problem" } else { "problems" };
        let which = if *new { "new " } else { "" };
        let mut head = vec![Span::styled(
            format!("⚠ {n} {which}{noun}"),
            theme.notice_warning,
        )];
        if !ctx.expanded {
            head.push(Span::styled(" (ctrl+o to expand)", theme.hint));
        }
        let pad = [Span::raw("    ")];
        wrap_spans(&pad, &pad, &head, ctx.width, out);
        if ctx.expanded {
            let pad = [Span::raw("      ")];
            for p in problems {
                let line = [Span::styled(sanitize(p).into_owned(), theme.tool_body)];
                wrap_spans(&pad, &pad, &line, ctx.width, out);
            }
        }
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
