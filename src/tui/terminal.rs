//! The terminal: entering and leaving full-screen mode, drawing inside synchronized updates,
//! OSC 52 clipboard writes, and Ctrl+Z suspend/resume.
//!
//! Invariant: whatever happens (normal exit, error, panic, suspend), the terminal is put back as
//! it was: the [`TerminalGuard`] restores on drop and [`install_panic_hook`] restores before the
//! panic message prints. Nothing is written outside the alternate screen while it is active.
//!
//! The event loop draws through the [`Screen`] trait, so tests drive it with [`TestScreen`]
//! (ratatui's TestBackend) instead of a real terminal.

use std::io::{self, Stdout, Write};

use base64::Engine as _;
use ratatui::Terminal;
use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::terminal::{
    BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen,
    disable_raw_mode, enable_raw_mode, supports_keyboard_enhancement,
};
use ratatui::crossterm::{cursor, execute, queue};

use crate::tui::app::App;

/// Where the event loop draws and sends terminal-level requests.
pub trait Screen {
    /// Draw the app (only what changed reaches the terminal).
    fn draw(&mut self, app: &mut App) -> io::Result<()>;
    /// Put `text` on the clipboard (OSC 52).
    fn copy_to_clipboard(&mut self, text: &str) -> io::Result<()>;
    /// Ctrl+Z: give the terminal back, stop the process, take it again when resumed.
    fn suspend(&mut self) -> io::Result<()>;
    /// Forget what is on the screen so the next draw repaints every cell.
    fn repaint(&mut self) -> io::Result<()>;
    /// Give the terminal to another program (`$EDITOR`) while `run` runs, then take it back
    /// and repaint.
    fn release_for(&mut self, run: &mut dyn FnMut()) -> io::Result<()>;
}

/// The OSC 52 sequence that asks the terminal to set the clipboard (works over SSH too).
pub fn osc52(text: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    format!("\x1b]52;c;{b64}\x07")
}

/// Full-screen mode on the real terminal; restores it on drop.
pub struct TerminalGuard {
    terminal: Terminal<CrosstermBackend<Stdout>>,
    keyboard_enhanced: bool,
    active: bool,
}

impl TerminalGuard {
    /// Raw mode, alternate screen, bracketed paste, mouse capture, and the keyboard enhancement
    /// (so Shift+Enter is distinct from Enter) where the terminal supports it.
    pub fn enter() -> io::Result<TerminalGuard> {
        let keyboard_enhanced = setup()?;
        let terminal = match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(t) => t,
            Err(e) => {
                restore(keyboard_enhanced);
                return Err(e);
            }
        };
        Ok(TerminalGuard {
            terminal,
            keyboard_enhanced,
            active: true,
        })
    }

    /// Draw anything (a screen shown before the app, such as the trust question).
    pub fn draw_with(&mut self, render: impl FnOnce(&mut ratatui::Frame)) -> io::Result<()> {
        queue!(self.terminal.backend_mut(), BeginSynchronizedUpdate)?;
        let drawn = self.terminal.draw(render).map(|_| ());
        execute!(self.terminal.backend_mut(), EndSynchronizedUpdate)?;
        drawn
    }

    /// Put the terminal back now (also done on drop).
    pub fn leave(&mut self) {
        if self.active {
            restore(self.keyboard_enhanced);
            self.active = false;
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        self.leave();
    }
}

impl Screen for TerminalGuard {
    fn draw(&mut self, app: &mut App) -> io::Result<()> {
        queue!(self.terminal.backend_mut(), BeginSynchronizedUpdate)?;
        let drawn = self.terminal.draw(|f| app.render(f)).map(|_| ());
        // End the update even when drawing failed, or the terminal stays frozen.
        execute!(self.terminal.backend_mut(), EndSynchronizedUpdate)?;
        drawn
    }

    fn copy_to_clipboard(&mut self, text: &str) -> io::Result<()> {
        let backend = self.terminal.backend_mut();
        backend.write_all(osc52(text).as_bytes())?;
        backend.flush()
    }

    fn suspend(&mut self) -> io::Result<()> {
        self.leave();
        // SAFETY: raise() only sends a signal to this process; SIGTSTP stops it until `fg`
        // (SIGCONT), after which execution continues here.
        unsafe {
            libc::raise(libc::SIGTSTP);
        }
        self.keyboard_enhanced = setup()?;
        self.active = true;
        // The screen was someone else's meanwhile: repaint everything.
        self.terminal.clear()
    }

    fn repaint(&mut self) -> io::Result<()> {
        self.terminal.clear()
    }

    fn release_for(&mut self, run: &mut dyn FnMut()) -> io::Result<()> {
        self.leave();
        run();
        self.keyboard_enhanced = setup()?;
        self.active = true;
        self.terminal.clear()
    }
}

fn setup() -> io::Result<bool> {
    enable_raw_mode()?;
    let mut out = io::stdout();
    if let Err(e) = execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableMouseCapture
    ) {
        restore(false);
        return Err(e);
    }
    let enhanced = matches!(supports_keyboard_enhancement(), Ok(true));
    if enhanced {
        let _ = execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        );
    }
    Ok(enhanced)
}

/// Undo [`setup`]. Best effort: every step runs even if one fails.
fn restore(keyboard_enhanced: bool) {
    let mut out = io::stdout();
    if keyboard_enhanced {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        EndSynchronizedUpdate,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
}

/// Restore the terminal before the default panic message prints, so it is readable and the
/// shell is usable afterwards.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // Keyboard enhancement may or may not be on; popping when not pushed is harmless.
        restore(true);
        previous(info);
    }));
}

/// A screen backed by ratatui's TestBackend, for tests of the loop and for snapshots.
pub struct TestScreen {
    pub terminal: Terminal<TestBackend>,
    /// Every OSC 52 sequence written.
    pub clipboard: Vec<String>,
    pub suspended: usize,
    /// How many times the terminal was given to another program (`$EDITOR`).
    pub released: usize,
    pub repaints: usize,
    pub draws: usize,
}

impl TestScreen {
    pub fn new(width: u16, height: u16) -> TestScreen {
        let terminal = match Terminal::new(TestBackend::new(width, height)) {
            Ok(t) => t,
            Err(never) => match never {},
        };
        TestScreen {
            terminal,
            clipboard: Vec::new(),
            suspended: 0,
            released: 0,
            repaints: 0,
            draws: 0,
        }
    }

    /// The screen as text, one line per row.
    pub fn text(&self) -> String {
        let buf = self.terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buf.area.height {
            let mut line = String::new();
            for x in 0..buf.area.width {
                line.push_str(buf[(x, y)].symbol());
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

impl Screen for TestScreen {
    fn draw(&mut self, app: &mut App) -> io::Result<()> {
        self.draws += 1;
        match self.terminal.draw(|f| app.render(f)) {
            Ok(_) => Ok(()),
            Err(never) => match never {},
        }
    }

    fn copy_to_clipboard(&mut self, text: &str) -> io::Result<()> {
        self.clipboard.push(osc52(text));
        Ok(())
    }

    fn suspend(&mut self) -> io::Result<()> {
        self.suspended += 1;
        Ok(())
    }

    fn repaint(&mut self) -> io::Result<()> {
        self.repaints += 1;
        Ok(())
    }

    fn release_for(&mut self, run: &mut dyn FnMut()) -> io::Result<()> {
        self.released += 1;
        run();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_encodes_base64_for_the_clipboard() {
        assert_eq!(osc52("hi ✓"), "\x1b]52;c;aGkg4pyT\x07");
    }
}
