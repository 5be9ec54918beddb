//! [`DiffSet`]: one change under review that may span several files (a semantic rename), each
//! file a [`DiffView`] of its own, approved or trimmed as one set.
//!
//! One file at a time is on screen. The hunk keys walk across files: the next hunk after a
//! file's last is the next file's first, so the person reviews the whole set with the keys
//! they use for one file. With several files a row above the diff says which file of how many
//! is shown. What is approved is each file's accepted hunks ([`DiffSet::approved_files`]); the
//! `$EDITOR` round trip edits the file on screen.

use std::path::{Path, PathBuf};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::{DiffView, ReviewKey};
use crate::protocol::EditedFile;

/// The files of one change and which of them is on screen. Never empty.
#[derive(Debug)]
pub struct DiffSet {
    files: Vec<DiffView>,
    current: usize,
}

impl DiffSet {
    /// The usual case: one file.
    pub fn single(view: DiffView) -> DiffSet {
        DiffSet {
            files: vec![view],
            current: 0,
        }
    }

    /// Several files, the first on screen; `None` when there are none.
    pub fn files(files: Vec<DiffView>) -> Option<DiffSet> {
        (!files.is_empty()).then_some(DiffSet { files, current: 0 })
    }

    fn on_screen(&self) -> &DiffView {
        &self.files[self.current.min(self.files.len() - 1)]
    }

    fn on_screen_mut(&mut self) -> &mut DiffView {
        let i = self.current.min(self.files.len() - 1);
        &mut self.files[i]
    }

    /// The layout of the file on screen.
    pub fn layout(&self) -> super::Layout {
        self.on_screen().layout()
    }

    /// The file on screen.
    pub fn path(&self) -> &Path {
        self.on_screen().path()
    }

    /// The new content of the file on screen (what `$EDITOR` starts from).
    pub fn after(&self) -> &str {
        self.on_screen().after()
    }

    /// The person's own version of the file on screen.
    pub fn set_after(&mut self, after: String) {
        self.on_screen_mut().set_after(after);
    }

    pub fn all_accepted(&self) -> bool {
        self.files.iter().all(DiffView::all_accepted)
    }

    pub fn edited(&self) -> bool {
        self.files.iter().any(DiffView::edited)
    }

    /// For one file: its content to write and the note for the model (see
    /// [`DiffView::approved_content`]). For several: the notes of every file, joined; the
    /// contents come from [`DiffSet::approved_files`].
    pub fn approved_content(&self) -> (String, String) {
        if let [one] = self.files.as_slice() {
            return one.approved_content();
        }
        let notes: Vec<String> = self
            .files
            .iter()
            .map(|f| f.approved_content().1)
            .filter(|n| !n.trim().is_empty())
            .collect();
        (String::new(), notes.join("\n\n"))
    }

    /// Each file's content as approved, for a change to several files (empty for one file,
    /// whose content [`DiffSet::approved_content`] gives). Paths are as the request gave them.
    pub fn approved_files(&self, paths: &[PathBuf]) -> Vec<EditedFile> {
        if self.files.len() < 2 {
            return Vec::new();
        }
        self.files
            .iter()
            .zip(paths)
            .map(|(f, path)| EditedFile {
                path: path.clone(),
                content: f.approved_content().0,
            })
            .collect()
    }

    /// Apply one key; hunk keys cross from one file to the next.
    pub fn handle_key(&mut self, key: ReviewKey) -> bool {
        let last = self.files.len() - 1;
        let view = self.on_screen();
        let hunks = view.accepted().len();
        let at = view.focused_hunk();
        match key {
            ReviewKey::NextHunk if self.current < last && at.is_none_or(|h| h + 1 >= hunks) => {
                self.current += 1;
                self.on_screen_mut().focus_first();
                true
            }
            ReviewKey::PrevHunk if self.current > 0 && at.is_none_or(|h| h == 0) => {
                self.current -= 1;
                self.on_screen_mut().focus_last();
                true
            }
            // Accepting or rejecting everything means the whole set.
            ReviewKey::AcceptAll | ReviewKey::RejectAll => {
                for f in &mut self.files {
                    f.handle_key(key);
                }
                true
            }
            _ => self.on_screen_mut().handle_key(key),
        }
    }

    /// Body rows at `width`: the file on screen, and the row naming it among several.
    pub fn rows_at(&self, width: u16) -> usize {
        self.on_screen().rows_at(width) + usize::from(self.files.len() > 1)
    }

    /// Draw the file on screen, under a row saying which of the set it is.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if self.files.len() < 2 || area.height < 2 {
            self.on_screen_mut().render(area, buf);
            return;
        }
        let text = format!(
            "File {} of {} · Tab/Shift+Tab move through every file's hunks",
            self.current + 1,
            self.files.len(),
        );
        let style = Style::default()
            .fg(Color::Cyan)
            .add_modifier(Modifier::BOLD);
        buf.set_stringn(area.x, area.y, text, usize::from(area.width), style);
        let rest = Rect {
            y: area.y + 1,
            height: area.height - 1,
            ..area
        };
        self.on_screen_mut().render(rest, buf);
    }
}
