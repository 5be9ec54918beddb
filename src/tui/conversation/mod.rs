//! PLACEHOLDER (branch tui-app) for the conversation view owned by the `tui-view` work.
//!
//! Same names and signatures as the real `Conversation`; renders every entry as plain text so
//! the app half compiles and can be tested. The lead replaces this directory at merge.

mod scroll;

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

pub use scroll::ScrollState;

use crate::protocol::Event;
use crate::tui::highlight::Highlighter;

/// How an inline notice is styled.
#[derive(Debug, Clone, Copy)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone)]
enum Entry {
    User(String),
    Assistant(String),
    Tool(String),
    Notice(NoticeKind, String),
}

/// The conversation: a list of entries drawn as plain text (placeholder).
pub struct Conversation {
    entries: Vec<Entry>,
    streaming: bool,
    dirty: bool,
}

impl Conversation {
    pub fn new(_highlighter: Highlighter) -> Conversation {
        Conversation {
            entries: Vec::new(),
            streaming: false,
            dirty: true,
        }
    }

    pub fn apply_event(&mut self, event: &Event) {
        self.dirty = true;
        match event {
            Event::TextDelta { text } => match self.entries.last_mut() {
                Some(Entry::Assistant(s)) if self.streaming => s.push_str(text),
                _ => {
                    self.streaming = true;
                    self.entries.push(Entry::Assistant(text.clone()));
                }
            },
            Event::ToolCallStarted { title, .. } => {
                self.streaming = false;
                self.entries.push(Entry::Tool(title.clone()));
            }
            Event::TurnFinished { .. } => self.streaming = false,
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => self.entries.push(Entry::Notice(
                NoticeKind::Warning,
                format!(
                    "{reason}, retrying in {} s ({attempt}/{max_attempts})",
                    delay_ms / 1000
                ),
            )),
            Event::Notice { message } => {
                self.entries
                    .push(Entry::Notice(NoticeKind::Info, message.clone()));
            }
            Event::Error { message } => {
                self.entries
                    .push(Entry::Notice(NoticeKind::Error, message.clone()));
            }
            _ => self.dirty = false,
        }
    }

    pub fn push_user(&mut self, text: &str) {
        self.streaming = false;
        self.dirty = true;
        self.entries.push(Entry::User(text.to_string()));
    }

    pub fn push_notice(&mut self, kind: NoticeKind, text: &str) {
        self.streaming = false;
        self.dirty = true;
        self.entries.push(Entry::Notice(kind, text.to_string()));
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.streaming = false;
        self.dirty = true;
    }

    fn lines(&self) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for e in &self.entries {
            let (prefix, text, style) = match e {
                Entry::User(t) => ("> ", t, Style::default().fg(Color::Cyan)),
                Entry::Assistant(t) => ("", t, Style::default()),
                Entry::Tool(t) => ("* ", t, Style::default().fg(Color::Magenta)),
                Entry::Notice(NoticeKind::Info, t) => ("", t, Style::default().fg(Color::Gray)),
                Entry::Notice(NoticeKind::Warning, t) => {
                    ("", t, Style::default().fg(Color::Yellow))
                }
                Entry::Notice(NoticeKind::Error, t) => ("", t, Style::default().fg(Color::Red)),
            };
            for (i, l) in text.split('\n').enumerate() {
                let p = if i == 0 { prefix } else { "  " };
                out.push(Line::styled(format!("{p}{l}"), style));
            }
            out.push(Line::default());
        }
        out
    }

    pub fn render(&mut self, area: Rect, buf: &mut Buffer, scroll: &mut ScrollState) {
        self.dirty = false;
        scroll.page = usize::from(area.height.saturating_sub(1));
        let lines = self.lines();
        let total = lines.len();
        let height = usize::from(area.height);
        let max_offset = total.saturating_sub(height);
        scroll.offset = scroll.offset.min(max_offset);
        let top = total.saturating_sub(height + scroll.offset);
        let visible: Vec<Line<'static>> = lines.into_iter().skip(top).take(height).collect();
        Paragraph::new(visible)
            .wrap(Wrap { trim: false })
            .render(area, buf);
    }

    pub fn focus_prev(&mut self) {}
    pub fn focus_next(&mut self) {}
    pub fn toggle_expanded(&mut self) {
        self.dirty = true;
    }

    pub fn tick(&mut self, _now: Instant) -> bool {
        false
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    pub fn last_answer(&self) -> Option<String> {
        self.entries.iter().rev().find_map(|e| match e {
            Entry::Assistant(t) => Some(t.clone()),
            _ => None,
        })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn render_transcript(&mut self, area: Rect, buf: &mut Buffer, scroll: &mut ScrollState) {
        self.render(area, buf, scroll);
    }
}
