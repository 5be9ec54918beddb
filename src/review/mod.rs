//! Reviewing a proposed file change before it lands: splitting it into hunks, applying only the
//! hunks the person accepted, and telling the model in words what the person rejected or changed.
//! Pure text logic with no terminal in sight; the TUI's permission prompt drives it.

pub mod editor;
pub mod hunks;
pub mod notes;
