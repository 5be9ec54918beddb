//! Our own input type: crossterm events are converted here, at the edge, so the rest of the TUI
//! (and its tests) never sees crossterm. Key releases are dropped; only presses and repeats pass.

use ratatui::crossterm::event as ct;

/// One thing the person did at the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputEvent {
    Key(KeyInput),
    /// Bracketed paste: the whole pasted text at once.
    Paste(String),
    ScrollUp,
    ScrollDown,
    Resize {
        width: u16,
        height: u16,
    },
}

/// A key with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyInput {
    pub code: Key,
    pub mods: Mods,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Char(char),
    Enter,
    Esc,
    Backspace,
    Delete,
    Tab,
    /// Shift+Tab as most terminals report it.
    BackTab,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    F(u8),
}

/// Modifier keys held with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Mods {
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
}

impl Mods {
    pub const NONE: Mods = Mods {
        ctrl: false,
        alt: false,
        shift: false,
    };
    pub const CTRL: Mods = Mods {
        ctrl: true,
        alt: false,
        shift: false,
    };
    pub const ALT: Mods = Mods {
        ctrl: false,
        alt: true,
        shift: false,
    };
    pub const SHIFT: Mods = Mods {
        ctrl: false,
        alt: false,
        shift: true,
    };
}

impl KeyInput {
    pub const fn new(code: Key, mods: Mods) -> KeyInput {
        KeyInput { code, mods }
    }

    pub const fn plain(code: Key) -> KeyInput {
        KeyInput::new(code, Mods::NONE)
    }

    pub const fn ctrl(c: char) -> KeyInput {
        KeyInput::new(Key::Char(c), Mods::CTRL)
    }

    /// How the key reads in help texts: `Ctrl+R`, `Shift+Tab`, `PgUp`.
    pub fn label(&self) -> String {
        let mut s = String::new();
        if self.mods.ctrl {
            s.push_str("Ctrl+");
        }
        if self.mods.alt {
            s.push_str("Alt+");
        }
        if self.mods.shift {
            s.push_str("Shift+");
        }
        let key = match self.code {
            Key::Char(' ') => "Space".to_string(),
            // Chords read `Ctrl+R`; a plain key is the character itself (`q`, `?`).
            Key::Char(c) if self.mods.ctrl || self.mods.alt => c.to_ascii_uppercase().to_string(),
            Key::Char(c) => c.to_string(),
            Key::Enter => "Enter".into(),
            Key::Esc => "Esc".into(),
            Key::Backspace => "Backspace".into(),
            Key::Delete => "Delete".into(),
            Key::Tab => "Tab".into(),
            Key::BackTab => "Shift+Tab".into(),
            Key::Up => "Up".into(),
            Key::Down => "Down".into(),
            Key::Left => "Left".into(),
            Key::Right => "Right".into(),
            Key::Home => "Home".into(),
            Key::End => "End".into(),
            Key::PageUp => "PgUp".into(),
            Key::PageDown => "PgDn".into(),
            Key::F(n) => format!("F{n}"),
        };
        s.push_str(&key);
        s
    }
}

/// Convert a crossterm event; `None` for what we ignore (releases, focus, mouse moves).
pub fn from_crossterm(event: ct::Event) -> Option<InputEvent> {
    match event {
        ct::Event::Key(k) if k.kind != ct::KeyEventKind::Release => key_from_crossterm(k),
        ct::Event::Paste(text) => Some(InputEvent::Paste(text)),
        ct::Event::Mouse(m) => match m.kind {
            ct::MouseEventKind::ScrollUp => Some(InputEvent::ScrollUp),
            ct::MouseEventKind::ScrollDown => Some(InputEvent::ScrollDown),
            _ => None,
        },
        ct::Event::Resize(width, height) => Some(InputEvent::Resize { width, height }),
        _ => None,
    }
}

fn key_from_crossterm(k: ct::KeyEvent) -> Option<InputEvent> {
    let mut mods = Mods {
        ctrl: k.modifiers.contains(ct::KeyModifiers::CONTROL),
        alt: k.modifiers.contains(ct::KeyModifiers::ALT),
        shift: k.modifiers.contains(ct::KeyModifiers::SHIFT),
    };
    let code = match k.code {
        ct::KeyCode::Char(c) => {
            // Shift is already in the character itself ('A', '?'); keep it out of the chord.
            mods.shift = false;
            Key::Char(if mods.ctrl { c.to_ascii_lowercase() } else { c })
        }
        ct::KeyCode::Enter => Key::Enter,
        ct::KeyCode::Esc => Key::Esc,
        ct::KeyCode::Backspace => Key::Backspace,
        ct::KeyCode::Delete => Key::Delete,
        ct::KeyCode::Tab if mods.shift => {
            mods.shift = false;
            Key::BackTab
        }
        ct::KeyCode::Tab => Key::Tab,
        ct::KeyCode::BackTab => {
            mods.shift = false;
            Key::BackTab
        }
        ct::KeyCode::Up => Key::Up,
        ct::KeyCode::Down => Key::Down,
        ct::KeyCode::Left => Key::Left,
        ct::KeyCode::Right => Key::Right,
        ct::KeyCode::Home => Key::Home,
        ct::KeyCode::End => Key::End,
        ct::KeyCode::PageUp => Key::PageUp,
        ct::KeyCode::PageDown => Key::PageDown,
        ct::KeyCode::F(n) => Key::F(n),
        _ => return None,
    };
    Some(InputEvent::Key(KeyInput { code, mods }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: ct::KeyCode, m: ct::KeyModifiers) -> Option<InputEvent> {
        from_crossterm(ct::Event::Key(ct::KeyEvent::new(code, m)))
    }

    #[test]
    fn converts_keys_and_drops_shift_from_characters() {
        assert_eq!(
            key(ct::KeyCode::Char('A'), ct::KeyModifiers::SHIFT),
            Some(InputEvent::Key(KeyInput::plain(Key::Char('A'))))
        );
        assert_eq!(
            key(ct::KeyCode::BackTab, ct::KeyModifiers::SHIFT),
            Some(InputEvent::Key(KeyInput::plain(Key::BackTab)))
        );
        assert_eq!(
            key(ct::KeyCode::Enter, ct::KeyModifiers::SHIFT),
            Some(InputEvent::Key(KeyInput::new(Key::Enter, Mods::SHIFT)))
        );
        assert_eq!(
            key(ct::KeyCode::Char('c'), ct::KeyModifiers::CONTROL),
            Some(InputEvent::Key(KeyInput::ctrl('c')))
        );
    }

    #[test]
    fn releases_are_dropped_and_pastes_pass_whole() {
        let mut release = ct::KeyEvent::new(ct::KeyCode::Char('a'), ct::KeyModifiers::NONE);
        release.kind = ct::KeyEventKind::Release;
        assert_eq!(from_crossterm(ct::Event::Key(release)), None);
        assert_eq!(
            from_crossterm(ct::Event::Paste("a\nb".into())),
            Some(InputEvent::Paste("a\nb".into()))
        );
    }
}
