//! Reviewing a diff in the TUI: the one renderer of a [`crate::diff::FileDiff`] for the
//! terminal. Its full mode is [`DiffView`], the widget inside permission prompts for file edits
//! and `/diff` (a scrollable unified or side-by-side diff of one file with a per-hunk
//! accept/reject choice; [`DiffSet`] holds one or several of them when a change spans files);
//! its compact mode (`compact`) gives the conversation's diff cells. Both
//! build each line from the same pieces (`emphasis`: word-level changes, tabs, control
//! characters) and number lines the same way (`rows`).
//!
//! It owns only widget state and drawing into a ratatui `Buffer`; it does no terminal I/O and
//! never talks to the core. The text logic (hunks, applying a subset, the note for the model) is
//! in [`crate::diff`]; this module only presents it. Keys arrive as [`ReviewKey`], our own
//! input type; which terminal keys map to them is the app's keymap (`tui::keymap`), per overlay.

pub(crate) mod compact;
mod diff_set;
mod diff_view;
mod emphasis;
mod render;
mod rows;
#[cfg(test)]
mod tests;

pub use diff_set::DiffSet;
pub use diff_view::{DiffView, FileKind, Highlighter, PLAIN_ABOVE_LINES};
pub use rows::Layout;

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
