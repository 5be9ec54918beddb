//! The diff review widget shown inside permission prompts for file edits: a scrollable unified
//! or side-by-side diff of one file with a per-hunk accept/reject choice.
//!
//! It owns only widget state and drawing into a ratatui `Buffer`; it does no terminal I/O and
//! never talks to the core. The text logic (hunks, applying a subset, the note for the model) is
//! in [`crate::review`]; this module only presents it. Keys arrive as [`ReviewKey`], our own
//! input type, so the prompt that embeds the view decides which terminal keys map to what.

mod diff_view;
mod emphasis;
mod render;
mod rows;
#[cfg(test)]
mod tests;

pub use diff_view::{DiffView, FileKind, Highlighter, PLAIN_ABOVE_LINES};
pub use rows::Layout;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What the person asks of the diff view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReviewKey {
    Up,
    Down,
    PageUp,
    PageDown,
    /// Focus the next hunk and scroll it into view.
    NextHunk,
    PrevHunk,
    /// Accept or reject the focused hunk.
    ToggleHunk,
    AcceptAll,
    RejectAll,
    /// Unified <-> side by side.
    ToggleLayout,
}

/// The default bindings, as a table: (key as shown to people, action, what it does).
pub const KEY_BINDINGS: &[(&str, ReviewKey, &str)] = &[
    ("j/↓", ReviewKey::Down, "scroll down"),
    ("k/↑", ReviewKey::Up, "scroll up"),
    ("PgDn", ReviewKey::PageDown, "page down"),
    ("PgUp", ReviewKey::PageUp, "page up"),
    ("Tab", ReviewKey::NextHunk, "next hunk"),
    ("S-Tab", ReviewKey::PrevHunk, "previous hunk"),
    ("Space", ReviewKey::ToggleHunk, "accept/reject hunk"),
    ("A", ReviewKey::AcceptAll, "accept all hunks"),
    ("R", ReviewKey::RejectAll, "reject all hunks"),
    ("v", ReviewKey::ToggleLayout, "unified / side by side"),
];

impl ReviewKey {
    /// The default mapping from a terminal key: j/k and Up/Down scroll a line, PgUp/PgDn a
    /// page, Tab/Shift+Tab move between hunks, Space toggles, `A`/`R` accept or reject all,
    /// `v` switches the layout. Releases and anything else give `None`.
    pub fn from_key(key: &KeyEvent) -> Option<ReviewKey> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return None;
        }
        Some(match key.code {
            KeyCode::Char('j') | KeyCode::Down => ReviewKey::Down,
            KeyCode::Char('k') | KeyCode::Up => ReviewKey::Up,
            KeyCode::PageDown => ReviewKey::PageDown,
            KeyCode::PageUp => ReviewKey::PageUp,
            KeyCode::Tab => ReviewKey::NextHunk,
            KeyCode::BackTab => ReviewKey::PrevHunk,
            KeyCode::Char(' ') => ReviewKey::ToggleHunk,
            KeyCode::Char('A') => ReviewKey::AcceptAll,
            KeyCode::Char('R') => ReviewKey::RejectAll,
            KeyCode::Char('v') => ReviewKey::ToggleLayout,
            _ => return None,
        })
    }
}
