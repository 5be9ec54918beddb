//! The composer: where the person types. Our own widget around tui-textarea (lib `tui_textarea`)
//! so the text engine can be replaced without touching the app.
//!
//! Owns the text being edited, soft wrap, prompt history (walk with Up/Down, Ctrl+R search) and
//! collapsed pastes. It never sends anything itself: the app asks for [`Composer::take_submission`]
//! and decides what to do with it.

pub mod history;
pub mod paste;

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};
use tui_textarea::{CursorMove, CursorRenderMode, TextArea, WrapMode};

use crate::tui::input::{Key, KeyInput};
use history::History;
use paste::CollapsedPaste;

/// At most this many text rows; longer text scrolls inside the composer.
const MAX_ROWS: u16 = 8;

const PLACEHOLDER: &str = "Type a message  ·  / commands  ·  @ files  ·  ! shell";

/// Ctrl+R state: the query, the matching history entry, and the text to restore on Esc.
#[derive(Debug, Clone)]
struct Search {
    query: String,
    found: Option<usize>,
    draft: String,
}

/// The text input at the bottom of the screen.
pub struct Composer {
    textarea: TextArea<'static>,
    history: History,
    pastes: Vec<CollapsedPaste>,
    search: Option<Search>,
}

impl Composer {
    pub fn new(history: History) -> Composer {
        Composer {
            textarea: new_textarea(),
            history,
            pastes: Vec::new(),
            search: None,
        }
    }

    /// The text as shown (collapsed pastes as placeholders).
    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.textarea.is_empty()
    }

    /// Replace the whole text; the cursor goes to the end.
    pub fn set_text(&mut self, text: &str) {
        let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let row = lines.len().saturating_sub(1);
        let col = lines.last().map_or(0, |l| l.chars().count());
        self.textarea.set_lines(lines, (row, col));
    }

    pub fn clear(&mut self) {
        self.textarea = new_textarea();
        self.pastes.clear();
        self.search = None;
        self.history.stop_walking();
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn insert_newline(&mut self) {
        self.textarea.insert_newline();
    }

    pub fn insert_str(&mut self, s: &str) {
        self.textarea.insert_str(s);
    }

    /// Enter after a trailing `\` at the end of the cursor's line: replace the `\` by a newline.
    /// Returns false (and changes nothing) otherwise.
    pub fn backslash_newline(&mut self) -> bool {
        let (row, col) = self.textarea.cursor();
        let Some(line) = self.textarea.lines().get(row) else {
            return false;
        };
        if col != line.chars().count() || !line.ends_with('\\') {
            return false;
        }
        self.textarea.delete_char();
        self.textarea.insert_newline();
        true
    }

    /// Take the text to send: pastes expanded, recorded in history, composer cleared. `None` when
    /// there is nothing but whitespace.
    pub fn take_submission(&mut self) -> Option<String> {
        let shown = self.text();
        if shown.trim().is_empty() {
            return None;
        }
        let full = paste::expand(&shown, &self.pastes);
        // The full text: a recalled placeholder would have lost its paste.
        self.history.record(&full);
        self.clear();
        Some(full)
    }

    /// A bracketed paste: an image file's path as `[Image #N]`, small text inline, large text as
    /// a placeholder.
    pub fn paste(&mut self, text: &str) {
        let text = paste::normalise(text);
        self.history.stop_walking();
        if let Some(path) = paste::image_path(&text) {
            let n = 1 + self
                .pastes
                .iter()
                .filter(|p| p.placeholder.starts_with("[Image #"))
                .count();
            let p = paste::image(n, &path);
            self.textarea.insert_str(&p.placeholder);
            self.pastes.push(p);
            return;
        }
        match paste::collapse(&text) {
            Some(p) => {
                self.textarea.insert_str(&p.placeholder);
                self.pastes.push(p);
            }
            None => {
                self.textarea.insert_str(&text);
            }
        }
    }

    /// Up: recall the older prompt when the composer is empty or shows a recalled prompt and the
    /// cursor is on the first line. Returns false when it did not apply (the cursor moves instead).
    pub fn history_prev(&mut self) -> bool {
        let recalled = self.history.current().is_some_and(|h| h == self.text());
        if !(self.is_empty() || recalled) || self.textarea.cursor().0 != 0 {
            return false;
        }
        let draft = self.text();
        match self.history.older(&draft).map(str::to_string) {
            Some(entry) => {
                self.set_text(&entry);
                true
            }
            None => recalled,
        }
    }

    /// Down: the newer prompt (then the draft) while walking, from the last line.
    pub fn history_next(&mut self) -> bool {
        let last_row = self.textarea.lines().len().saturating_sub(1);
        if !self.history.is_walking() || self.textarea.cursor().0 != last_row {
            return false;
        }
        match self.history.newer() {
            Some(entry) => {
                self.set_text(&entry);
                true
            }
            None => false,
        }
    }

    pub fn is_searching(&self) -> bool {
        self.search.is_some()
    }

    /// Ctrl+R: start searching, or step to the next older match.
    pub fn search_step(&mut self) {
        match &mut self.search {
            None => {
                self.search = Some(Search {
                    query: String::new(),
                    found: None,
                    draft: self.textarea.lines().join("\n"),
                });
            }
            Some(s) => {
                if let Some(i) = self.history.search(&s.query, s.found) {
                    s.found = Some(i);
                }
            }
        }
        self.show_search_match();
    }

    /// A key while searching. Returns true when consumed.
    pub fn search_key(&mut self, key: KeyInput) -> bool {
        let Some(s) = &mut self.search else {
            return false;
        };
        match key.code {
            Key::Char(c) if !key.mods.ctrl && !key.mods.alt => {
                s.query.push(c);
                s.found = self.history.search(&s.query, None);
            }
            Key::Backspace => {
                s.query.pop();
                s.found = self.history.search(&s.query, None);
            }
            Key::Esc => {
                let draft = s.draft.clone();
                self.search = None;
                self.set_text(&draft);
                return true;
            }
            Key::Enter | Key::Tab | Key::Left | Key::Right => {
                // Accept: the match stays in the composer for editing.
                self.search = None;
                return true;
            }
            _ => return true,
        }
        self.show_search_match();
        true
    }

    fn show_search_match(&mut self) {
        let Some(s) = &self.search else { return };
        let text = match s.found.and_then(|i| self.history.get(i)) {
            Some(entry) => entry.to_string(),
            None if s.query.is_empty() => s.draft.clone(),
            None => return,
        };
        self.set_text(&text);
    }

    /// An editing key for the text engine. Returns true if the text changed.
    pub fn edit(&mut self, key: KeyInput) -> bool {
        let changed = if key == KeyInput::ctrl('u') {
            // Readline's Ctrl+U (the text engine would undo).
            self.textarea.delete_line_by_head()
        } else {
            self.textarea.input(to_textarea_input(key))
        };
        if changed {
            self.history.stop_walking();
        }
        changed
    }

    /// The `@word` or `/word` the cursor is in: (its first character's column, the word).
    pub fn word_at_cursor(&self) -> Option<(usize, String)> {
        let (row, col) = self.textarea.cursor();
        let line = self.textarea.lines().get(row)?;
        let before: Vec<char> = line.chars().take(col).collect();
        let start = before
            .iter()
            .rposition(|c| c.is_whitespace())
            .map_or(0, |i| i + 1);
        let word: String = before[start..].iter().collect();
        if word.is_empty() {
            None
        } else {
            Some((start, word))
        }
    }

    /// Replace the word before the cursor (as returned by [`Self::word_at_cursor`]) by `with`.
    pub fn replace_word_at_cursor(&mut self, with: &str) {
        if let Some((_, word)) = self.word_at_cursor() {
            for _ in 0..word.chars().count() {
                self.textarea.delete_char();
            }
        }
        self.textarea.insert_str(with);
        self.history.stop_walking();
    }

    /// Rows this composer wants at `width` columns, border included.
    pub fn height(&mut self, width: u16) -> u16 {
        let rows = self
            .textarea
            .measure(width.saturating_sub(2).max(1))
            .content_rows;
        rows.clamp(1, MAX_ROWS) + 1
    }

    /// Draw with a top rule; the first two columns hold the prompt sign. Returns where the
    /// terminal cursor belongs.
    pub fn render(&self, area: Rect, buf: &mut Buffer, busy: bool) -> Option<Position> {
        let title = match &self.search {
            Some(s) => {
                let state = if s.found.is_some() || s.query.is_empty() {
                    ""
                } else {
                    " (no match)"
                };
                Line::from(vec![
                    Span::raw(" "),
                    Span::styled(
                        format!("history search: {}{state}", s.query),
                        Style::default().fg(Color::Yellow),
                    ),
                    Span::raw(" "),
                ])
            }
            None if busy => Line::from(Span::styled(
                " Enter queues the message until the turn ends ",
                Style::default().fg(Color::DarkGray),
            )),
            None => Line::default(),
        };
        let block = Block::default()
            .borders(Borders::TOP)
            .border_style(Style::default().fg(Color::DarkGray))
            .title(title);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width < 3 || inner.height == 0 {
            return None;
        }
        buf.set_string(
            inner.x,
            inner.y,
            "› ",
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
        );
        let text_area = Rect {
            x: inner.x + 2,
            width: inner.width - 2,
            ..inner
        };
        (&self.textarea).render(text_area, buf);
        // Already in terminal coordinates.
        self.textarea.rendered_cursor_position()
    }
}

fn new_textarea() -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_wrap_mode(WrapMode::WordOrGlyph);
    t.set_cursor_line_style(Style::default());
    // The terminal's own cursor is placed at the text cursor (blinks, and IMEs follow it).
    t.set_cursor_render_mode(CursorRenderMode::Hidden);
    t.set_placeholder_text(PLACEHOLDER);
    t.set_placeholder_style(Style::default().fg(Color::DarkGray));
    t.set_max_rows(MAX_ROWS);
    t.move_cursor(CursorMove::Bottom);
    t
}

fn to_textarea_input(key: KeyInput) -> tui_textarea::Input {
    use tui_textarea::Key as T;
    let k = match key.code {
        Key::Char(c) => T::Char(c),
        Key::Enter => T::Enter,
        Key::Esc => T::Esc,
        Key::Backspace => T::Backspace,
        Key::Delete => T::Delete,
        Key::Tab => T::Tab,
        Key::BackTab => T::Null,
        Key::Up => T::Up,
        Key::Down => T::Down,
        Key::Left => T::Left,
        Key::Right => T::Right,
        Key::Home => T::Home,
        Key::End => T::End,
        Key::PageUp => T::PageUp,
        Key::PageDown => T::PageDown,
        Key::F(n) => T::F(n),
    };
    tui_textarea::Input {
        key: k,
        ctrl: key.mods.ctrl,
        alt: key.mods.alt,
        shift: key.mods.shift,
    }
}

#[cfg(test)]
mod tests;
