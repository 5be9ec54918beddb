//! [`DiffView`]: the state of one file's diff under review and the keys that change it.
//!
//! Owns the texts, the hunks of their diff, the person's per-hunk choice, focus, scroll and
//! layout, and a cache of styled lines (filled only for lines that were on screen). Drawing is
//! in `render.rs`. Invariants: `accepted.len() == diff.hunks.len()`; `focus` indexes a hunk
//! whenever there is one; `rows` always matches `layout` and `diff`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ratatui::style::Style;

use super::ReviewKey;
use super::emphasis::{self, Piece};
use super::rows::{self, Layout, Row};
use crate::diff::notes;
use crate::diff::{self, FileDiff, Hunk};

/// Syntax highlighting hook: `(file extension without dot, one line) -> styled segments` that
/// together spell the line, or `None` when not available (yet). A file without an extension
/// passes its whole name (`Makefile`), which is how syntect's extension lookup knows such files.
/// Segment backgrounds are ignored (the diff's own tints stay); colours and modifiers are used.
/// Segments that do not spell the line are ignored. `None` is asked again on the next frame, so
/// a background highlighter can fill in later (it must answer fast: it runs while drawing);
/// `Some` results are kept. Never called for files over [`PLAIN_ABOVE_LINES`] lines.
pub type Highlighter = Arc<dyn Fn(&str, &str) -> Option<Vec<(Style, String)>> + Send + Sync>;

/// Files longer than this (either side, in lines) are shown without syntax highlighting or
/// word-level emphasis, so a huge change stays responsive.
pub const PLAIN_ABOVE_LINES: usize = 10_000;

/// Body rows assumed for page keys before the first render tells the real height.
const DEFAULT_HEIGHT: usize = 20;

/// What kind of change the view shows (decided from the texts: an empty side means the file is
/// being created or deleted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Modified,
    New,
    Deleted,
    Unchanged,
}

/// A scrollable, per-hunk reviewable diff of one file. Keys: [`ReviewKey`] (the app's keymap
/// binds them). The path is shown as given and named in the note for the model.
pub struct DiffView {
    pub(super) path: PathBuf,
    ext: String,
    before: String,
    after: String,
    /// The model's proposal as first shown; `after` differs once the person edited it.
    proposed: String,
    pub(super) diff: FileDiff,
    pub(super) kind: FileKind,
    pub(super) accepted: Vec<bool>,
    pub(super) focus: usize,
    /// First body row on screen.
    pub(super) top: usize,
    /// Set once the person toggles; until then the width decides.
    layout_choice: Option<Layout>,
    pub(super) layout: Layout,
    pub(super) rows: Vec<Row>,
    pub(super) headers: Vec<usize>,
    /// Body height of the last render.
    pub(super) height: usize,
    /// The focused hunk must be scrolled into view at the next render (the height is known then).
    pub(super) reveal_pending: bool,
    partners: Vec<Vec<Option<usize>>>,
    cache: HashMap<(usize, usize), Vec<Piece>>,
    pub(super) plain: bool,
    /// Shown as it would be written, with no per-hunk choice (what overwriting an outside
    /// change does): the hunk keys choose nothing and the title counts no accepted hunks.
    pub(super) fixed: bool,
    highlighter: Option<Highlighter>,
    /// Digits of the largest line number.
    pub(super) number_width: usize,
}

impl fmt::Debug for DiffView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiffView")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("hunks", &self.diff.hunks.len())
            .field("accepted", &self.accepted)
            .field("focus", &self.focus)
            .field("top", &self.top)
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

impl DiffView {
    /// A view of the change from `before` to `after` (the model's proposal), all hunks
    /// accepted, the first one focused.
    pub fn new(path: PathBuf, before: String, after: String) -> DiffView {
        let ext = path
            .extension()
            .or_else(|| path.file_name())
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut view = DiffView {
            path,
            ext,
            proposed: after.clone(),
            before,
            after,
            diff: FileDiff {
                hunks: Vec::new(),
                added: 0,
                removed: 0,
            },
            kind: FileKind::Unchanged,
            accepted: Vec::new(),
            focus: 0,
            top: 0,
            layout_choice: None,
            layout: Layout::Unified,
            rows: Vec::new(),
            headers: Vec::new(),
            height: 0,
            reveal_pending: false,
            partners: Vec::new(),
            cache: HashMap::new(),
            plain: false,
            fixed: false,
            highlighter: None,
            number_width: 1,
        };
        view.recompute();
        view.accepted = vec![true; view.diff.hunks.len()];
        view
    }

    /// Highlight lines with `highlighter` (see [`Highlighter`]); without one, plain text.
    pub fn with_highlighter(mut self, highlighter: Highlighter) -> DiffView {
        self.highlighter = Some(highlighter);
        self.cache.clear();
        self
    }

    /// This view with no per-hunk choice (see `fixed`).
    pub fn fixed(mut self) -> DiffView {
        self.fixed = true;
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// The layout of the last render (or the one the person chose since).
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The focused hunk, if there are any.
    pub fn focused_hunk(&self) -> Option<usize> {
        (!self.diff.hunks.is_empty()).then_some(self.focus)
    }

    /// Apply one key. Returns true if the view used it (every key does while there is at least
    /// one hunk; none do when there is nothing to review).
    pub fn handle_key(&mut self, key: ReviewKey) -> bool {
        let n = self.diff.hunks.len();
        if n == 0 {
            return false;
        }
        let height = self.page_height();
        let page = height.saturating_sub(1).max(1);
        match key {
            ReviewKey::Up => self.scroll_to(self.top.saturating_sub(1)),
            ReviewKey::Down => self.scroll_to(self.top + 1),
            ReviewKey::PageUp => self.scroll_to(self.top.saturating_sub(page)),
            ReviewKey::PageDown => self.scroll_to(self.top + page),
            ReviewKey::NextHunk => self.focus_hunk((self.focus + 1).min(n - 1)),
            ReviewKey::PrevHunk => self.focus_hunk(self.focus.saturating_sub(1)),
            ReviewKey::ToggleHunk | ReviewKey::AcceptAll | ReviewKey::RejectAll if self.fixed => {}
            ReviewKey::ToggleHunk => {
                if let Some(a) = self.accepted.get_mut(self.focus) {
                    *a = !*a;
                }
            }
            ReviewKey::AcceptAll => self.accepted.iter_mut().for_each(|a| *a = true),
            ReviewKey::RejectAll => self.accepted.iter_mut().for_each(|a| *a = false),
            ReviewKey::ToggleLayout => {
                let next = self.layout.toggled();
                self.layout_choice = Some(next);
                self.set_layout(next);
            }
        }
        true
    }

    /// The person's choice, one entry per hunk.
    pub fn accepted(&self) -> Vec<bool> {
        self.accepted.clone()
    }

    pub fn all_accepted(&self) -> bool {
        self.accepted.iter().all(|a| *a)
    }

    /// What to write if the person approves now, and the note for the model (empty when the
    /// model's proposal is written unchanged). All hunks accepted writes `after` exactly;
    /// otherwise only the accepted hunks are applied to `before`. The note lists the rejected
    /// hunks with their text or, when the person edited the proposal, the difference between the
    /// proposal and what is written.
    pub fn approved_content(&self) -> (String, String) {
        let content = if self.all_accepted() {
            self.after.clone()
        } else {
            diff::apply_selected(&self.before, &self.after, &self.diff, &self.accepted)
        };
        let note = if self.after != self.proposed {
            notes::edited_by_user(&self.path, &self.proposed, &content)
        } else {
            notes::rejected_hunks(&self.path, &self.diff, &self.accepted)
        };
        (content, note)
    }

    /// The person's own version of the new content (from `$EDITOR`): the diff is recomputed,
    /// hunks identical to earlier ones keep their choice, new ones start accepted. The note from
    /// [`DiffView::approved_content`] then tells the model what the person changed. (When the
    /// file itself changed on disk, build a new view instead: the proposal's base is different.)
    pub fn set_after(&mut self, after: String) {
        let old_hunks = std::mem::take(&mut self.diff.hunks);
        let old_accepted = std::mem::take(&mut self.accepted);
        self.after = after;
        self.recompute();
        self.accepted = self
            .diff
            .hunks
            .iter()
            .map(|h| {
                old_hunks
                    .iter()
                    .zip(&old_accepted)
                    .find(|(old, _)| same_change(old, h))
                    .is_none_or(|(_, a)| *a)
            })
            .collect();
    }

    /// `"+N -M, 2 of 3 hunks accepted"`, or `"no changes"`.
    pub fn summary(&self) -> String {
        let n = self.diff.hunks.len();
        if n == 0 {
            return "no changes".to_string();
        }
        let k = self.accepted.iter().filter(|a| **a).count();
        format!(
            "+{} -{}, {k} of {n} {} accepted",
            self.diff.added,
            self.diff.removed,
            if n == 1 { "hunk" } else { "hunks" }
        )
    }

    /// The new content under review: the model's proposal, or the person's edit of it.
    pub fn after(&self) -> &str {
        &self.after
    }

    /// Rows of the diff body when drawn `width` columns wide (for sizing a panel around it).
    pub fn rows_at(&self, width: u16) -> usize {
        let layout = match self.kind {
            FileKind::New | FileKind::Deleted => Layout::Unified,
            _ => self.layout_for(width),
        };
        if layout == self.layout {
            self.rows.len()
        } else {
            rows::build(&self.diff.hunks, layout).len()
        }
    }

    /// Whether the content under review is the person's edit rather than the model's proposal.
    pub fn edited(&self) -> bool {
        self.after != self.proposed
    }

    /// The styled pieces of one hunk line, from the cache when possible.
    pub(super) fn line_pieces(&mut self, hunk: usize, line: usize) -> Cow<'_, [Piece]> {
        if self.cache.contains_key(&(hunk, line)) {
            return Cow::Borrowed(self.cache.get(&(hunk, line)).map_or(&[], Vec::as_slice));
        }
        let Some(hl) = self.diff.hunks.get(hunk).and_then(|h| h.lines.get(line)) else {
            return Cow::Borrowed(&[]);
        };
        let emphasis = match (self.plain, self.partners.get(hunk)) {
            (false, Some(partners)) => {
                emphasis::line_emphasis(&self.diff.hunks[hunk], partners, line)
            }
            _ => None,
        };
        let highlighted = match (&self.highlighter, self.plain) {
            (Some(h), false) => h(&self.ext, &hl.text),
            _ => None,
        };
        let final_ = highlighted.is_some() || self.highlighter.is_none() || self.plain;
        let pieces = emphasis::pieces(&hl.text, highlighted, emphasis.as_deref().unwrap_or(&[]));
        if final_ {
            Cow::Borrowed(self.cache.entry((hunk, line)).or_insert(pieces).as_slice())
        } else {
            Cow::Owned(pieces)
        }
    }

    /// Use `layout` for the rows, keeping the same place on top.
    pub(super) fn set_layout(&mut self, layout: Layout) {
        // New and deleted files have only one side worth showing.
        let layout = match self.kind {
            FileKind::New | FileKind::Deleted => Layout::Unified,
            _ => layout,
        };
        if layout == self.layout {
            return;
        }
        let rows = rows::build(&self.diff.hunks, layout);
        self.top = rows::remap(&self.rows, &rows, self.top);
        self.rows = rows;
        self.headers = rows::header_rows(&self.rows);
        self.layout = layout;
    }

    /// The layout a render into `width` columns uses.
    pub(super) fn layout_for(&self, width: u16) -> Layout {
        self.layout_choice.unwrap_or(if width >= 140 {
            Layout::SideBySide
        } else {
            Layout::Unified
        })
    }

    pub(super) fn page_height(&self) -> usize {
        if self.height == 0 {
            DEFAULT_HEIGHT
        } else {
            self.height
        }
    }

    /// Scroll so the focused hunk is fully visible (header on top if it does not fit).
    pub(super) fn reveal_focus(&mut self) {
        if let Some((first, end)) = rows::hunk_span(&self.headers, self.rows.len(), self.focus) {
            self.top = rows::reveal(self.top, self.page_height(), self.rows.len(), first, end);
        }
    }

    /// Focus the first hunk (a set of files walked forward into this one).
    pub(super) fn focus_first(&mut self) {
        if !self.diff.hunks.is_empty() {
            self.focus_hunk(0);
        }
    }

    /// Focus the last hunk (a set of files walked back into this one).
    pub(super) fn focus_last(&mut self) {
        if let Some(last) = self.diff.hunks.len().checked_sub(1) {
            self.focus_hunk(last);
        }
    }

    fn focus_hunk(&mut self, h: usize) {
        self.focus = h;
        self.reveal_focus();
        self.reveal_pending = true;
    }

    /// Scroll to `top`; if the focused hunk left the screen, focus the hunk at the top, so Space
    /// always acts on something visible.
    fn scroll_to(&mut self, top: usize) {
        let height = self.page_height();
        self.top = top.min(rows::max_top(self.rows.len(), height));
        self.reveal_pending = false;
        let visible = |(first, end): (usize, usize)| first < self.top + height && end > self.top;
        if !rows::hunk_span(&self.headers, self.rows.len(), self.focus).is_some_and(visible)
            && let Some(row) = self.rows.get(self.top)
        {
            self.focus = row.hunk();
        }
    }

    /// Rebuild everything derived from `before`/`after`, keeping focus and scroll in range.
    fn recompute(&mut self) {
        self.diff = diff::diff(&self.before, &self.after);
        self.kind = match (self.before.is_empty(), self.after.is_empty()) {
            _ if self.diff.hunks.is_empty() => FileKind::Unchanged,
            (true, false) => FileKind::New,
            (false, true) => FileKind::Deleted,
            _ => FileKind::Modified,
        };
        self.plain =
            self.before.lines().count().max(self.after.lines().count()) > PLAIN_ABOVE_LINES;
        self.partners = self.diff.hunks.iter().map(emphasis::partners).collect();
        self.cache.clear();
        self.number_width = rows::number_width(&self.diff);
        if matches!(self.kind, FileKind::New | FileKind::Deleted) {
            self.layout = Layout::Unified;
        }
        self.rows = rows::build(&self.diff.hunks, self.layout);
        self.headers = rows::header_rows(&self.rows);
        self.focus = self.focus.min(self.diff.hunks.len().saturating_sub(1));
        self.top = self
            .top
            .min(rows::max_top(self.rows.len(), self.page_height()));
    }
}

/// Two hunks make the same change when their lines match (positions may have moved).
fn same_change(a: &Hunk, b: &Hunk) -> bool {
    a.lines.len() == b.lines.len()
        && a.lines
            .iter()
            .zip(&b.lines)
            .all(|(x, y)| x.kind == y.kind && x.text == y.text)
}
