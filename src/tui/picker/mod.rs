//! The pickers shown above the composer: `/` commands and `@` files.
//!
//! A picker is plain state (what it lists, which row is selected); the app opens, updates and
//! closes it as the word at the cursor changes, and asks it what to insert on Tab/Enter.

pub mod commands;
pub mod files;
pub mod item;

pub use item::PickerItem;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use crate::protocol::CommandInfo;
use crate::tui::input::{Key, Mods};
use crate::tui::keymap::Keys;
use crate::tui::overlay::{Message, Outcome, Overlay, RenderCtx};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKind {
    Commands,
    Files,
    /// Where a `#` note goes: one of the memory files.
    Memory,
    /// `/memory`: which memory file to edit.
    EditMemory,
    /// `/model`: which model to use.
    Model,
    /// `/resume`: which earlier session to continue.
    Session,
    /// A project MCP server waits for approval: use it, use all, or not.
    McpApproval,
    /// `/mcp`: the servers; Enter shows one (or asks about a waiting one).
    McpServers,
    /// `/mcp`, a server picked: its detail (status in plain words, error, command, config
    /// file, last stderr lines) under the actions (reconnect, back).
    McpServer,
    /// `/rewind`: which prompt to go back to (or undo the last rewind).
    Rewind,
    /// `/rewind`, a prompt picked: what to restore (numbered choices).
    RewindChoice,
    /// `/rewind`: restore files changed outside cairn too?
    RewindConfirm,
    /// `/tasks`: the background agents and shells; Enter watches one.
    Tasks,
}

/// An open picker.
#[derive(Debug, Clone)]
pub struct Picker {
    pub kind: PickerKind,
    /// The text after `/` or `@`.
    pub query: String,
    pub items: Vec<PickerItem>,
    pub selected: usize,
    /// Files only: the id of the match request whose results are awaited (latest wins).
    pub pending: Option<u64>,
}

impl Picker {
    /// The built-in commands matching `query`, then the person's own (`custom`).
    pub fn commands(query: &str, custom: &[CommandInfo]) -> Picker {
        let q = query.to_lowercase();
        let mut items: Vec<PickerItem> = commands::filter(query)
            .into_iter()
            .map(|(n, h)| PickerItem {
                label: format!("/{n}"),
                detail: h.to_string(),
            })
            .collect();
        items.extend(custom.iter().filter(|c| c.name.contains(&q)).map(|c| {
            let hint = c
                .argument_hint
                .as_deref()
                .map_or(String::new(), |h| format!(" {h}"));
            PickerItem {
                label: format!("/{}", c.name),
                detail: format!(
                    "{}{hint} ({})",
                    c.description,
                    if c.skill { "skill" } else { "custom" }
                ),
            }
        }));
        Picker {
            kind: PickerKind::Commands,
            query: query.to_string(),
            items,
            selected: 0,
            pending: None,
        }
    }

    /// A fixed list of choices (memory files, models): label, and the detail shown beside it
    /// (a path, a model id) and handed back when picked.
    pub fn choices(kind: PickerKind, targets: Vec<(String, String)>) -> Picker {
        Picker {
            kind,
            query: String::new(),
            items: targets
                .into_iter()
                .map(|(label, detail)| PickerItem { label, detail })
                .collect(),
            selected: 0,
            pending: None,
        }
    }

    pub fn files(query: &str) -> Picker {
        Picker {
            kind: PickerKind::Files,
            query: query.to_string(),
            items: Vec::new(),
            selected: 0,
            pending: None,
        }
    }

    pub fn set_files(&mut self, paths: Vec<String>) {
        self.items = paths
            .into_iter()
            .map(|p| PickerItem {
                label: p,
                detail: String::new(),
            })
            .collect();
        self.selected = 0;
    }

    pub fn select_prev(&mut self) {
        if !self.items.is_empty() {
            self.selected = (self.selected + self.items.len() - 1) % self.items.len();
        }
    }

    pub fn select_next(&mut self) {
        if !self.items.is_empty() {
            self.selected = (self.selected + 1) % self.items.len();
        }
    }

    /// Whether a digit picks the row of that number.
    fn numbered(&self) -> bool {
        matches!(
            self.kind,
            PickerKind::RewindChoice
                | PickerKind::RewindConfirm
                | PickerKind::McpApproval
                | PickerKind::McpServer
        )
    }

    pub fn selected(&self) -> Option<&PickerItem> {
        self.items.get(self.selected)
    }

    /// Rows needed (border included).
    pub fn height(&self) -> u16 {
        // A server's detail shows whole (its stderr lines are the point of it).
        let most = match self.kind {
            PickerKind::McpServer => 3 * files::MAX_MATCHES,
            _ => files::MAX_MATCHES,
        };
        let rows = self.items.len().clamp(1, most);
        u16::try_from(rows).unwrap_or(1) + 2
    }

    fn draw(&self, area: Rect, buf: &mut Buffer) {
        Clear.render(area, buf);
        let title = self.key_hints();
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(Style::default().fg(Color::DarkGray))
            .title(title);
        let lines: Vec<Line> = if self.items.is_empty() {
            let text = if self.pending.is_some() {
                "searching…"
            } else {
                "no matches"
            };
            vec![Line::styled(text, Style::default().fg(Color::DarkGray))]
        } else {
            let label_width = self.items.iter().map(|i| i.label.chars().count()).max();
            let label_width = label_width.unwrap_or(0);
            self.items
                .iter()
                .enumerate()
                .map(|(i, it)| {
                    let style = if i == self.selected {
                        Style::default()
                            .fg(Color::Cyan)
                            .add_modifier(Modifier::REVERSED)
                    } else {
                        Style::default()
                    };
                    Line::from(vec![
                        Span::styled(format!("{:<label_width$}", it.label), style),
                        Span::styled(
                            format!("  {}", it.detail),
                            Style::default().fg(Color::DarkGray),
                        ),
                    ])
                })
                .collect()
        };
        Paragraph::new(lines).block(block).render(area, buf);
    }
}
impl Overlay for Picker {
    /// Up/Down select, Tab/Enter accept (the App inserts or runs the item), Esc closes. Keys
    /// with modifiers and anything else are left for the composer below.
    fn handle_key(&mut self, keys: &Keys) -> Outcome {
        let key = keys.key;
        if key.mods != Mods::NONE {
            return Outcome::Ignored;
        }
        match key.code {
            Key::Up => self.select_prev(),
            Key::Down => self.select_next(),
            Key::Esc => return Outcome::Close,
            // Numbered choices: the digit picks.
            Key::Char(c @ '1'..='9') if self.numbered() => {
                let n = usize::from(c as u8 - b'1');
                return match self.items.get(n) {
                    Some(item) => Outcome::Message(Message::Picked {
                        item: Some(item.clone()),
                        enter: true,
                    }),
                    None => Outcome::Consumed,
                };
            }
            Key::Tab | Key::Enter => {
                return Outcome::Message(Message::Picked {
                    item: self.selected().cloned(),
                    enter: key.code == Key::Enter,
                });
            }
            _ => return Outcome::Ignored,
        }
        Outcome::Consumed
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, _ctx: &mut RenderCtx<'_>) {
        self.draw(area, buf);
    }

    fn key_hints(&self) -> &'static str {
        match self.kind {
            PickerKind::Commands => " commands · Tab/Enter select · Esc close ",
            PickerKind::Files => " files · Tab/Enter insert · Esc close ",
            PickerKind::Memory => " save the note to · Enter save · Esc drop it ",
            PickerKind::EditMemory => " memory files · Enter edit in $EDITOR · Esc close ",
            PickerKind::Model => " model · Enter switch · Esc close ",
            PickerKind::Session => " sessions, newest first · Enter resume · Esc close ",
            PickerKind::McpApproval => {
                " MCP servers to use · a number or Enter toggles or saves · Esc ask later "
            }
            PickerKind::McpServers => " MCP servers · Enter details (or approve) · Esc close ",
            PickerKind::McpServer => " MCP server · a number picks its action · Esc close ",
            PickerKind::Rewind => {
                " rewind to before which prompt? newest first · Enter pick · Esc close "
            }
            PickerKind::RewindChoice => " restore what? · 1-4 or Enter · Esc cancel ",
            PickerKind::RewindConfirm => {
                " files changed outside cairn since its last turn · 1-2 or Enter "
            }
            PickerKind::Tasks => " background tasks · Enter watch one (k stops it) · Esc close ",
        }
    }

    fn modal(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::input::KeyInput;
    use crate::tui::keymap::resolve;

    fn plain(key: Key) -> Keys {
        resolve(KeyInput::plain(key))
    }

    #[test]
    fn picker_reports_the_pick_and_leaves_other_keys_below() {
        let mut p = Picker::commands("", &[]);
        assert!(!p.modal());
        let first = p.selected().cloned();
        assert!(first.is_some());
        assert_eq!(
            p.handle_key(&plain(Key::Tab)),
            Outcome::Message(Message::Picked {
                item: first,
                enter: false
            })
        );
        assert_eq!(p.handle_key(&plain(Key::Down)), Outcome::Consumed);
        assert_eq!(p.handle_key(&plain(Key::Char('x'))), Outcome::Ignored);
        assert_eq!(
            p.handle_key(&resolve(KeyInput::ctrl('c'))),
            Outcome::Ignored
        );
        assert_eq!(p.handle_key(&plain(Key::Esc)), Outcome::Close);
    }
}
