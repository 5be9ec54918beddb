//! The status line (bottom row) and the header (top row), as plain state plus render functions.
//!
//! Status: mode label (one colour per mode), DEMO label, working indicator with elapsed time and
//! "esc to interrupt", model and provider, tokens in/out/cache, cost, context used %. When the
//! row is too narrow, the least important parts are dropped first; nothing wraps. With a
//! `statusLine` command, its line takes the place of everything after the working indicator.
//! Header: cwd (home shortened to `~`) and the git branch read from `.git/HEAD` (no subprocess).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use crate::protocol::{PermissionMode, SessionInfo, Usage};

const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// One model's share of a session (`/cost`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelUsage {
    pub model: String,
    pub requests: u64,
    pub usage: Usage,
    pub cost_usd: f64,
}

/// What the status line shows.
#[derive(Debug, Clone, Default)]
pub struct StatusState {
    pub session: Option<SessionInfo>,
    pub mode: PermissionMode,
    pub total: Usage,
    pub last: Usage,
    pub cost_usd: f64,
    pub context_window: u64,
    /// Per model: requests, usage and cost (for `/cost`).
    pub by_model: Vec<ModelUsage>,
    /// When the running turn started (or the prompt was sent); `None` when idle.
    pub working_since: Option<Instant>,
    /// A transient hint replacing the right side ("Press Ctrl+C again to quit").
    pub hint: Option<String>,
    /// The `statusLine` command's line, in place of the built-in text after the mode and
    /// working indicator; `Some` (maybe empty) whenever a command is configured.
    pub command_line: Option<Line<'static>>,
    /// MCP servers that failed, by name (shown until they recover).
    pub mcp_failing: Vec<String>,
    /// Background agents still running (shown while there are any, pointing at `/tasks`).
    pub background_agents: usize,
    /// The session's language servers as the host last listed them.
    pub lsp: Vec<crate::protocol::LspServerInfo>,
}

impl StatusState {
    /// The language servers that have started, with their states (`LSP pyright ready`); a
    /// failed one in red, pointing at `/lsp`. Nothing while none has started.
    fn lsp_spans(&self) -> Vec<Span<'static>> {
        use crate::protocol::LspState;
        let started: Vec<_> = self
            .lsp
            .iter()
            .filter(|s| s.state != LspState::NotStarted)
            .collect();
        if started.is_empty() {
            return Vec::new();
        }
        let mut spans = vec![Span::styled(
            " LSP",
            Style::default().add_modifier(Modifier::DIM),
        )];
        for s in started {
            let style = match s.state {
                LspState::Failed { .. } => Style::default().fg(Color::Red),
                LspState::Ready => Style::default().add_modifier(Modifier::DIM),
                _ => Style::default().fg(Color::Yellow),
            };
            let tail = if matches!(s.state, LspState::Failed { .. }) {
                " · /lsp"
            } else {
                ""
            };
            spans.push(Span::styled(
                format!(" {} {}{tail}", s.name, s.state.word()),
                style,
            ));
        }
        spans
    }

    /// Fold one request's usage in; `total_cost_usd` is the session's new total.
    pub fn add_usage(&mut self, model: &str, last: &Usage, total_cost_usd: f64) {
        let cost = (total_cost_usd - self.cost_usd).max(0.0);
        if model.is_empty() {
            return;
        }
        match self.by_model.iter_mut().find(|m| m.model == model) {
            Some(m) => {
                m.requests += 1;
                m.usage.add(last);
                m.cost_usd += cost;
            }
            None => self.by_model.push(ModelUsage {
                model: model.to_string(),
                requests: 1,
                usage: *last,
                cost_usd: cost,
            }),
        }
    }

    /// `/cost`: the session's tokens, cache hits and cost, in all and per model.
    pub fn cost_report(&self) -> String {
        let t = &self.total;
        let mut out = format!(
            "Session cost: ${:.4}. Tokens: in {} · out {} · cache read {} · cache write {}{}",
            self.cost_usd,
            compact(t.input_tokens),
            compact(t.output_tokens),
            compact(t.cache_read_input_tokens),
            compact(t.cache_creation_input_tokens),
            cache_share(t)
        );
        for m in &self.by_model {
            let u = &m.usage;
            let requests = if m.requests == 1 {
                "request"
            } else {
                "requests"
            };
            out.push_str(&format!(
                "\n  {}: {} {requests} · in {} · out {} · cache read {} · cache write {}{} · ${:.4}",
                m.model,
                m.requests,
                compact(u.input_tokens),
                compact(u.output_tokens),
                compact(u.cache_read_input_tokens),
                compact(u.cache_creation_input_tokens),
                cache_share(u),
                m.cost_usd
            ));
        }
        let listed: f64 = self.by_model.iter().map(|m| m.cost_usd).sum();
        if self.cost_usd - listed > 0.000_05 {
            out.push_str(&format!(
                "\n  earlier in this session (before it was resumed): ${:.4}",
                self.cost_usd - listed
            ));
        }
        out
    }

    /// Context used, in percent of the window, from the last request's input side.
    pub fn context_percent(&self) -> Option<u64> {
        if self.context_window == 0 {
            return None;
        }
        Some((self.last.context_tokens() * 100 / self.context_window).min(100))
    }

    /// The one-line summary printed after exit.
    pub fn exit_summary(&self) -> String {
        let id = self
            .session
            .as_ref()
            .map_or("(none)", |s| s.session_id.as_str());
        format!(
            "cairn session {id} · tokens in {} out {} cache {} · cost ${:.4}",
            self.total.input_tokens,
            self.total.output_tokens,
            self.total.cache_read_input_tokens + self.total.cache_creation_input_tokens,
            self.cost_usd
        )
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, now: Instant) {
        let dim = Style::default().fg(Color::DarkGray);
        let mut left: Vec<Span> = vec![Span::styled(
            format!(" {} ", mode_label(self.mode)),
            mode_style(self.mode),
        )];
        if self.session.as_ref().is_some_and(|s| s.demo) {
            left.push(Span::raw(" "));
            left.push(Span::styled(
                " DEMO ",
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            ));
        }
        if let Some(since) = self.working_since {
            let elapsed = now.saturating_duration_since(since);
            let frame = SPINNER[(elapsed.as_millis() / 100) as usize % SPINNER.len()];
            left.push(Span::styled(
                format!(" {frame} working {} ", format_elapsed(elapsed)),
                Style::default().fg(Color::Cyan),
            ));
            left.push(Span::styled("· esc to interrupt", dim));
        }
        if self.background_agents > 0 {
            let n = self.background_agents;
            left.push(Span::raw(" "));
            left.push(Span::styled(
                format!(
                    " {n} background agent{} running · /tasks ",
                    if n == 1 { "" } else { "s" }
                ),
                Style::default().fg(Color::Magenta),
            ));
        }
        if !self.mcp_failing.is_empty() {
            let n = self.mcp_failing.len();
            left.push(Span::raw(" "));
            left.push(Span::styled(
                format!(
                    " {n} MCP server{} failed · /mcp ",
                    if n == 1 { "" } else { "s" }
                ),
                Style::default().fg(Color::Red),
            ));
        }
        left.extend(self.lsp_spans());
        if let (None, Some(custom)) = (&self.hint, &self.command_line) {
            left.push(Span::raw("  "));
            left.extend(custom.spans.iter().cloned());
            Line::from(left).render(area, buf);
            return;
        }
        // Right side, most important first; dropped from the end when it does not fit.
        let mut right: Vec<String> = Vec::new();
        if let Some(hint) = &self.hint {
            right.push(hint.clone());
        } else {
            if let Some(s) = &self.session {
                let model = if s.model_label.is_empty() {
                    &s.model
                } else {
                    &s.model_label
                };
                right.push(format!("{model} ({})", s.provider));
            }
            if let Some(p) = self.context_percent() {
                // Until auto-compaction, as Claude Code counts it (else of the whole window).
                let limit = match self.session.as_ref().map(|s| s.auto_compact_pct) {
                    Some(0) | None => 100,
                    Some(pct) => u64::from(pct.min(100)),
                };
                right.push(format!("context {}% left", limit.saturating_sub(p)));
            }
            right.push(format!("${:.4}", self.cost_usd));
            right.push(format!(
                "in {} out {} cache {}",
                compact(self.total.input_tokens),
                compact(self.total.output_tokens),
                compact(
                    self.total.cache_read_input_tokens + self.total.cache_creation_input_tokens
                )
            ));
        }
        let left_width: usize = left.iter().map(|s| s.content.width()).sum();
        let avail = usize::from(area.width).saturating_sub(left_width + 1);
        let mut shown: Vec<&str> = Vec::new();
        let mut used = 0;
        for part in &right {
            let w = part.width() + if shown.is_empty() { 1 } else { 3 };
            if used + w > avail {
                break;
            }
            used += w;
            shown.push(part);
        }
        let right_text = format!("{} ", shown.join(" · "));
        let pad = avail.saturating_sub(right_text.width()) + 1;
        left.push(Span::raw(" ".repeat(pad)));
        let style = if self.hint.is_some() {
            Style::default().fg(Color::Yellow)
        } else {
            dim
        };
        left.push(Span::styled(right_text, style));
        Line::from(left).render(area, buf);
    }
}

/// The label of a mode in the status line.
pub fn mode_label(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "default",
        PermissionMode::AcceptEdits => "accept edits",
        PermissionMode::Plan => "plan",
        PermissionMode::BypassPermissions => "bypass permissions",
        PermissionMode::DontAsk => "don't ask",
    }
}

/// A distinct colour per mode (background of the label).
pub fn mode_style(mode: PermissionMode) -> Style {
    let bg = match mode {
        PermissionMode::Default => Color::DarkGray,
        PermissionMode::AcceptEdits => Color::Magenta,
        PermissionMode::Plan => Color::Blue,
        PermissionMode::BypassPermissions => Color::Red,
        PermissionMode::DontAsk => Color::Green,
    };
    Style::default()
        .fg(Color::White)
        .bg(bg)
        .add_modifier(Modifier::BOLD)
}

/// `12s`, `3m 04s`.
pub fn format_elapsed(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m {:02}s", s / 60, s % 60)
    }
}

/// `950`, `12.3k`, `4.5M`.
pub fn compact(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    }
}

/// The header: cwd and git branch.
#[derive(Debug, Clone, Default)]
pub struct Header {
    pub cwd: PathBuf,
    /// `cwd` as shown (`~/...`), computed once rather than per frame.
    pub cwd_label: String,
    pub branch: Option<String>,
}

impl Header {
    pub fn for_dir(cwd: &Path) -> Header {
        Header {
            cwd: cwd.to_path_buf(),
            cwd_label: home_as_tilde(cwd),
            branch: git_branch(cwd),
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let cwd = self.cwd_label.clone();
        let mut spans = vec![
            Span::styled(
                " cairn ",
                Style::default()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(cwd, Style::default().fg(Color::Gray)),
        ];
        if let Some(b) = &self.branch {
            spans.push(Span::styled(
                format!("  ⎇ {b}"),
                Style::default().fg(Color::Green),
            ));
        }
        Line::from(spans).render(area, buf);
    }
}

/// The branch checked out in the repository containing `dir`, from `.git/HEAD`: the branch
/// name, or the short commit when detached. Follows a `.git` file (worktrees, submodules).
/// `dir` with the home directory shown as `~`.
fn home_as_tilde(dir: &Path) -> String {
    let home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
    let Some(rest) = home.and_then(|h| dir.strip_prefix(h).ok().map(Path::to_path_buf)) else {
        return dir.display().to_string();
    };
    if rest.as_os_str().is_empty() {
        "~".to_string()
    } else {
        format!("~/{}", rest.display())
    }
}

pub fn git_branch(dir: &Path) -> Option<String> {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        let dot_git = d.join(".git");
        let git_dir = if dot_git.is_dir() {
            Some(dot_git)
        } else if dot_git.is_file() {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let target = text.trim().strip_prefix("gitdir:")?.trim();
            Some(d.join(target))
        } else {
            None
        };
        if let Some(g) = git_dir {
            // A FIFO would block the screen forever.
            let head = g.join("HEAD");
            if !head.is_file() {
                return None;
            }
            let head = std::fs::read_to_string(head).ok()?;
            let head = head.trim();
            return Some(match head.strip_prefix("ref: ") {
                Some(r) => r.strip_prefix("refs/heads/").unwrap_or(r).to_string(),
                None => head.chars().take(7).collect(),
            });
        }
        cur = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn a_head_that_is_a_fifo_is_no_branch_and_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join(".git/HEAD"))
            .status();
        assert!(made.unwrap().success());
        assert_eq!(git_branch(dir.path()), None);
    }

    #[test]
    fn branch_from_head_file_worktree_and_detached() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        assert_eq!(
            git_branch(&repo.join("src/deep")).as_deref(),
            Some("feature/x")
        );

        let wt = dir.path().join("wt");
        let wt_git = dir.path().join("gitdirs/wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        std::fs::write(wt_git.join("HEAD"), "0123456789abcdef\n").unwrap();
        assert_eq!(git_branch(&wt).as_deref(), Some("0123456"));
    }

    #[test]
    fn formats_numbers_and_time() {
        assert_eq!(compact(950), "950");
        assert_eq!(compact(12_345), "12.3k");
        assert_eq!(compact(4_500_000), "4.5M");
        assert_eq!(format_elapsed(Duration::from_secs(7)), "7s");
        assert_eq!(format_elapsed(Duration::from_secs(184)), "3m 04s");
    }

    #[test]
    fn context_percent_uses_the_last_request() {
        let s = StatusState {
            last: Usage {
                input_tokens: 1000,
                cache_read_input_tokens: 49_000,
                ..Usage::default()
            },
            context_window: 200_000,
            ..StatusState::default()
        };
        assert_eq!(s.context_percent(), Some(25));
    }
}

#[cfg(test)]
mod render_tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use super::*;

    fn row(s: &StatusState, width: u16) -> String {
        let mut buf = Buffer::empty(Rect::new(0, 0, width, 1));
        s.render(buf.area, &mut buf, Instant::now());
        (0..width)
            .map(|x| buf[(x, 0)].symbol().to_string())
            .collect::<String>()
            .trim_end()
            .to_string()
    }

    #[test]
    fn drops_right_hand_parts_from_the_end_when_narrow() {
        let s = StatusState {
            session: Some(SessionInfo {
                session_id: "s".into(),
                model: "m1".into(),
                model_label: String::new(),
                provider: "openai".into(),
                cwd: PathBuf::from("/"),
                tools: vec![],
                mode: PermissionMode::Plan,
                demo: true,
                commands: Vec::new(),
                memory_files: Vec::new(),
                model_choices: Vec::new(),
                auto_compact_pct: 85,
                agents: Vec::new(),
            }),
            mode: PermissionMode::Plan,
            cost_usd: 1.5,
            ..StatusState::default()
        };
        assert_eq!(
            row(&s, 70),
            " plan   DEMO               m1 (openai) · $1.5000 · in 0 out 0 cache 0"
        );
        assert_eq!(row(&s, 40), " plan   DEMO      m1 (openai) · $1.5000");
        assert_eq!(row(&s, 20), " plan   DEMO");
    }
}

/// ` (N% of input from the cache)` when anything was read from the cache.
fn cache_share(u: &Usage) -> String {
    let input = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    if u.cache_read_input_tokens == 0 || input == 0 {
        return String::new();
    }
    format!(
        " ({}% of input from the cache)",
        u.cache_read_input_tokens * 100 / input
    )
}

/// `/context`: the window and what fills it, with a bar of `width` cells.
pub fn context_report(
    model: &str,
    window: u64,
    parts: &[(String, u64)],
    last_used: Option<u64>,
    width: usize,
) -> String {
    let estimated: u64 = parts.iter().map(|(_, t)| t).sum();
    let used = last_used.unwrap_or(estimated);
    let window = window.max(1);
    let filled = ((used.min(window) * width as u64) / window) as usize;
    let bar: String = "■".repeat(filled) + &"□".repeat(width.saturating_sub(filled));
    let mut out = format!(
        "Context of {model}: {} of {} tokens ({}%)\n{bar}\n",
        compact(used),
        compact(window),
        used * 100 / window
    );
    let shown: Vec<String> = parts
        .iter()
        .map(|(name, tokens)| format!("{name} ~{}", compact(*tokens)))
        .collect();
    out.push_str(&shown.join(" · "));
    out.push_str(&format!(
        " · free ~{}",
        compact(window.saturating_sub(used))
    ));
    if last_used.is_some() {
        out.push_str("\n(the total is what the last request used; the parts are estimates)");
    }
    out
}
