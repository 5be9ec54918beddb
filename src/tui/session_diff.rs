//! `/diff`: every file cairn changed in this session, as one reviewable overlay.
//!
//! [`SessionChanges`] collects the changes from finished tool calls (the first `before` and the
//! latest `after` per file, in the order files were first changed, and the lines each change
//! added and removed, summed as Claude Code's status line reports them). [`SessionDiff`] is the
//! overlay: a file list on top and the selected file's [`DiffView`] below. It is read-only: the
//! changes are already on disk, so hunk choices have no effect and nothing is sent to the core.

use std::path::{Path, PathBuf};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::diff;
use crate::tui::highlight::Highlighter;
use crate::tui::keymap::{Action, Bound, Context, Keys};
use crate::tui::overlay::{Outcome, Overlay, RenderCtx, passes_through};
use crate::tui::prompt::diff_view;
use crate::tui::review::{DiffView, ReviewKey};

/// File list rows shown at most (the list scrolls with the selection).
const MAX_LIST_ROWS: usize = 6;

/// The files changed in this session: (path, first before, latest after).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SessionChanges {
    files: Vec<(PathBuf, String, String)>,
    lines_added: usize,
    lines_removed: usize,
}

impl SessionChanges {
    /// A successful change to `path` from `before` to `after`.
    pub fn record(&mut self, path: &Path, before: &str, after: &str) {
        let change = diff::diff(before, after);
        self.lines_added += change.added;
        self.lines_removed += change.removed;
        match self.files.iter_mut().find(|(p, _, _)| p == path) {
            Some((_, _, last)) => *last = after.to_string(),
            None => self
                .files
                .push((path.to_path_buf(), before.to_string(), after.to_string())),
        }
    }

    /// After a rewind put files back: each file's latest content is read again from disk
    /// (paths are relative to `cwd`; a file that is gone reads as empty), and files back to how
    /// they were before the session are dropped. The line counts keep what the session did.
    pub fn reread(&mut self, cwd: &Path) {
        self.files.retain_mut(|(path, before, after)| {
            match std::fs::read(cwd.join(&*path)) {
                Ok(bytes) => *after = String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => after.clear(),
                // Unreadable now: what was last seen is the best there is.
                Err(_) => {}
            }
            after != before
        });
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Lines added and removed by every change so far (each edit counted, not the net change).
    pub fn lines_changed(&self) -> (usize, usize) {
        (self.lines_added, self.lines_removed)
    }

    /// (path, before, after) per file, in the order files were first changed.
    pub fn files(&self) -> impl Iterator<Item = (&Path, &str, &str)> {
        self.files
            .iter()
            .map(|(p, b, a)| (p.as_path(), b.as_str(), a.as_str()))
    }
}

/// The `/diff` overlay.
pub struct SessionDiff {
    views: Vec<DiffView>,
    /// (added, removed) per file, for the list.
    sizes: Vec<(usize, usize)>,
    selected: usize,
}

impl SessionDiff {
    pub fn new(changes: &SessionChanges, highlighter: &Highlighter) -> SessionDiff {
        let mut views = Vec::new();
        let mut sizes = Vec::new();
        for (path, before, after) in changes.files() {
            let d = diff::diff(before, after);
            sizes.push((d.added, d.removed));
            views.push(diff_view(
                path.to_path_buf(),
                before.to_string(),
                after.to_string(),
                highlighter,
            ));
        }
        SessionDiff {
            views,
            sizes,
            selected: 0,
        }
    }

    /// The selected file's path.
    pub fn selected(&self) -> Option<&Path> {
        self.views.get(self.selected).map(DiffView::path)
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer) {
        if area.height < 3 {
            return;
        }
        let dim = Style::default().fg(Color::DarkGray);
        let n = self.views.len();
        Line::from(vec![
            Span::styled(
                " Session diff ",
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!(
                    "  {n} {} changed · {}",
                    if n == 1 { "file" } else { "files" },
                    self.key_hints()
                ),
                dim,
            ),
        ])
        .render(Rect { height: 1, ..area }, buf);
        let list_rows = n.min(MAX_LIST_ROWS);
        let first = self
            .selected
            .saturating_sub(list_rows.saturating_sub(1))
            .min(n.saturating_sub(list_rows));
        for (row, i) in (first..n).take(list_rows).enumerate() {
            let (added, removed) = self.sizes.get(i).copied().unwrap_or_default();
            let path = self.views.get(i).map(|v| v.path().display().to_string());
            let focused = i == self.selected;
            let style = if focused {
                Style::default()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            let line = Line::from(vec![
                Span::styled(if focused { "› " } else { "  " }, style),
                Span::styled(path.unwrap_or_default(), style),
                Span::styled(format!("  +{added}"), Style::default().fg(Color::Green)),
                Span::styled(format!(" -{removed}"), Style::default().fg(Color::Red)),
            ]);
            let y = area.y + 1 + u16::try_from(row).unwrap_or(0);
            line.render(Rect::new(area.x, y, area.width, 1), buf);
        }
        let top = area.y + 1 + u16::try_from(list_rows).unwrap_or(0);
        let body = Rect::new(area.x, top, area.width, area.bottom().saturating_sub(top));
        if let Some(v) = self.views.get_mut(self.selected) {
            v.render(body, buf);
        }
    }
}

impl Overlay for SessionDiff {
    fn handle_key(&mut self, keys: &Keys) -> Outcome {
        match keys.get(Context::Diff) {
            Some(Bound::App(Action::Cancel)) => Outcome::Close,
            Some(Bound::App(Action::FocusPrev)) => {
                self.selected = self.selected.saturating_sub(1);
                Outcome::Consumed
            }
            Some(Bound::App(Action::FocusNext)) => {
                self.selected = (self.selected + 1).min(self.views.len().saturating_sub(1));
                Outcome::Consumed
            }
            Some(Bound::Review(k)) => {
                // Read-only: the changes are on disk already.
                let read_only = matches!(
                    k,
                    ReviewKey::ToggleHunk | ReviewKey::AcceptAll | ReviewKey::RejectAll
                );
                if let Some(v) = self.views.get_mut(self.selected)
                    && !read_only
                {
                    v.handle_key(k);
                }
                Outcome::Consumed
            }
            _ if passes_through(keys) => Outcome::Ignored,
            _ => Outcome::Consumed,
        }
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, _ctx: &mut RenderCtx<'_>) {
        self.draw(area, buf);
    }

    fn key_hints(&self) -> &'static str {
        "←/→ file · j/k PgUp/PgDn scroll · Tab hunk · v layout · Esc close"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_before_and_the_latest_after_per_file() {
        let mut c = SessionChanges::default();
        c.record(Path::new("a.txt"), "1\n", "2\n");
        c.record(Path::new("b.txt"), "", "new\n");
        c.record(Path::new("a.txt"), "2\n", "3\n");
        let files: Vec<_> = c.files().collect();
        assert_eq!(
            files,
            [
                (Path::new("a.txt"), "1\n", "3\n"),
                (Path::new("b.txt"), "", "new\n")
            ]
        );
    }
}
