//! The run of turns as the person sees it: whether a prompt is in flight, the prompts queued
//! behind it, the model's todo list (and whether it is shown), and the two "press again" keys
//! (Ctrl+C twice to quit, Esc twice on an idle, empty composer to rewind).
//!
//! Invariants: at most one prompt is in flight; a prompt sent while a turn runs is queued, and
//! the queue goes out one prompt per finished turn, in order, unless an interrupt takes it back
//! ([`Turn::take_queued`]). A "press again" arms only until another key comes. It sends
//! nothing itself: the App sends what these methods say to send.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::protocol::Todo;
use crate::tui::keymap::Action;

/// Two Esc presses this close together on an empty, idle composer open `/rewind`.
pub(super) const ESC_ESC: Duration = Duration::from_millis(800);

#[derive(Debug)]
pub(crate) struct Turn {
    running: bool,
    queued: VecDeque<String>,
    /// Ctrl+C on an idle, empty composer armed quitting.
    quit_armed: bool,
    /// When Esc was last pressed on an idle, empty composer.
    esc_at: Option<Instant>,
    /// The model's todo list (TodoWrite), and whether it is shown above the composer.
    todos: Vec<Todo>,
    todos_shown: bool,
}

impl Default for Turn {
    fn default() -> Turn {
        Turn {
            running: false,
            queued: VecDeque::new(),
            quit_armed: false,
            esc_at: None,
            todos: Vec::new(),
            todos_shown: true,
        }
    }
}

impl Turn {
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// A prompt went out or the core started a turn.
    pub fn started(&mut self) {
        self.running = true;
    }

    /// The turn ended: the next queued prompt, to send now. A todo list with every item done
    /// is put away (it stays in the conversation's TodoWrite cell), so it does not sit over
    /// later prompts.
    pub fn finished(&mut self) -> Option<String> {
        self.running = false;
        let done = |t: &Todo| matches!(t.status, crate::protocol::TodoStatus::Completed);
        if self.todos.iter().all(done) {
            self.todos.clear();
        }
        self.queued.pop_front()
    }

    /// The core is gone: no turn runs or will.
    pub fn stopped(&mut self) {
        self.running = false;
    }

    /// A prompt the person sent: `Some` when it goes out now, `None` when it waits for the
    /// running turn.
    pub fn submit(&mut self, text: String) -> Option<String> {
        if self.running {
            self.queued.push_back(text);
            None
        } else {
            Some(text)
        }
    }

    pub fn queued(&self) -> impl ExactSizeIterator<Item = &str> {
        self.queued.iter().map(String::as_str)
    }

    /// An interrupt: the queued prompts come back to the person, in order.
    pub fn take_queued(&mut self) -> Vec<String> {
        self.queued.drain(..).collect()
    }

    /// A key came with this global binding: a different key disarms the "press again" keys.
    pub fn key(&mut self, global: Option<Action>) {
        if global != Some(Action::Cancel) {
            self.esc_at = None;
        }
        if global != Some(Action::CtrlC) {
            self.quit_armed = false;
        }
    }

    /// Ctrl+C with nothing to stop or clear: true on the second press (quit), else it arms.
    pub fn ctrl_c_idle(&mut self) -> bool {
        std::mem::replace(&mut self.quit_armed, true)
    }

    /// Esc on an idle, empty composer with nothing open: true on the second press within
    /// [`ESC_ESC`] (rewind), else it arms.
    pub fn esc_idle(&mut self, now: Instant) -> bool {
        match self.esc_at.take() {
            Some(at) if now.duration_since(at) <= ESC_ESC => true,
            _ => {
                self.esc_at = Some(now);
                false
            }
        }
    }

    /// Esc was used for something else (closing the picker).
    pub fn esc_used(&mut self) {
        self.esc_at = None;
    }

    pub fn set_todos(&mut self, todos: &[Todo]) {
        self.todos = todos.to_vec();
    }

    pub fn toggle_todos(&mut self) {
        self.todos_shown = !self.todos_shown;
    }

    /// The todo list to draw: empty while hidden.
    pub fn shown_todos(&self) -> &[Todo] {
        if self.todos_shown { &self.todos } else { &[] }
    }
}
