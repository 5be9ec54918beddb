//! The one contract every overlay keeps: the permission prompt, the `@`/`/` pickers, the
//! transcript view (Ctrl+T) and `/diff`. The App holds them on a stack; a key is looked up in the
//! keymap once ([`keymap::resolve`]) and offered to the top overlay, then down, until one
//! uses it; what is left goes to the composer and the global bindings.
//!
//! An overlay owns its state and its drawing and says what a key did as an [`Outcome`]; it never
//! reaches into the App. What only the App can do (send an answer to the core, open the editor,
//! run a command the picker chose) comes back as a [`Message`].

use std::path::PathBuf;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::protocol::Op;
use crate::tui::conversation::{Conversation, ScrollState};
use crate::tui::keymap::{Action, Context, Keys};
use crate::tui::picker::item::PickerItem;

/// What an overlay did with a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Used (or swallowed: a modal overlay keeps keys from what is below it).
    Consumed,
    /// Not this overlay's key: offer it to the one below.
    Ignored,
    /// Close this overlay.
    Close,
    /// Something for the App to do.
    Message(Message),
}

/// What an overlay asks of the App.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// The permission prompt decided: send `op`; `allowed` says whether the call may run.
    Decided {
        op: Op,
        call_id: String,
        allowed: bool,
    },
    /// `e` in an edit prompt: open `content` in the editor (file name hint `path`).
    Edit {
        request_id: u64,
        path: PathBuf,
        content: String,
    },
    /// A picker was accepted with Tab (`enter == false`) or Enter, on `item` (none: no match).
    /// The picker closes either way.
    Picked {
        item: Option<PickerItem>,
        enter: bool,
    },
    /// Stop background task `id` (the `/tasks` view's `k`).
    StopTask { id: String },
}

/// What drawing may need besides the overlay itself (the transcript draws the conversation).
pub struct RenderCtx<'a> {
    pub conversation: &'a mut Conversation,
}

/// An overlay of the App (see the module docs).
pub trait Overlay {
    /// A key, looked up once in every keymap context; the overlay reads its own context and
    /// `keys.key` for raw input (typing, picker navigation).
    fn handle_key(&mut self, keys: &Keys) -> Outcome;
    /// Draw into `area`.
    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &mut RenderCtx<'_>);
    /// The one-line summary of its keys, shown by the overlay.
    fn key_hints(&self) -> &'static str;
    /// Whether keys it ignores stop here (they go to the global bindings) rather than reaching
    /// the overlays below it. Only the pickers, which sit on the composer, are not modal.
    fn modal(&self) -> bool {
        true
    }
}

/// Global keys that still work while a modal overlay is on top.
pub fn passes_through(keys: &Keys) -> bool {
    matches!(
        keys.app(Context::Global),
        Some(
            Action::CtrlC
                | Action::Suspend
                | Action::Repaint
                | Action::PageUp
                | Action::PageDown
                | Action::ScrollTop
                | Action::ScrollBottom
                | Action::ToggleTranscript
        )
    )
}

/// The transcript view (Ctrl+T): every cell expanded, scrolled on its own.
#[derive(Default)]
pub struct Transcript {
    pub scroll: ScrollState,
}

impl Overlay for Transcript {
    fn handle_key(&mut self, keys: &Keys) -> Outcome {
        match keys.app(Context::Transcript) {
            Some(Action::ToggleTranscript) => Outcome::Close,
            Some(Action::FocusPrev) => {
                self.scroll.scroll_up(1);
                Outcome::Consumed
            }
            Some(Action::FocusNext) => {
                self.scroll.scroll_down(1);
                Outcome::Consumed
            }
            _ if passes_through(keys) => Outcome::Ignored,
            _ => Outcome::Consumed,
        }
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &mut RenderCtx<'_>) {
        use ratatui::layout::{Constraint, Layout};
        use ratatui::style::{Color, Modifier, Style};
        use ratatui::text::{Line, Span};
        use ratatui::widgets::Widget;
        let [title, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
        Line::from(vec![
            Span::styled(
                " Transcript ",
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!("  {}", self.key_hints()),
                Style::default().fg(Color::DarkGray),
            ),
        ])
        .render(title, buf);
        ctx.conversation
            .render_transcript(body, buf, &mut self.scroll);
    }

    fn key_hints(&self) -> &'static str {
        "Esc/q close · PgUp/PgDn scroll"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::input::{Key, KeyInput};
    use crate::tui::keymap::resolve;

    fn plain(key: Key) -> Keys {
        resolve(KeyInput::plain(key))
    }

    #[test]
    fn transcript_closes_scrolls_and_lets_only_global_keys_through() {
        let mut t = Transcript::default();
        assert_eq!(t.handle_key(&plain(Key::Char('q'))), Outcome::Close);
        assert_eq!(t.handle_key(&plain(Key::Esc)), Outcome::Close);
        assert_eq!(t.handle_key(&plain(Key::Down)), Outcome::Consumed);
        assert_eq!(
            t.handle_key(&resolve(KeyInput::ctrl('c'))),
            Outcome::Ignored
        );
        assert_eq!(t.handle_key(&plain(Key::PageUp)), Outcome::Ignored);
        // Typing does not leak to the composer under the transcript.
        assert_eq!(t.handle_key(&plain(Key::Char('x'))), Outcome::Consumed);
        assert!(t.modal());
    }
}
