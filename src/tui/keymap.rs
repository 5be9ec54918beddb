//! Key bindings as data: one table of (context, key, action, help). The app looks keys up here
//! instead of matching on keys in code, `/help` and docs/tui.md list the same table, and a test
//! checks that no key is bound twice in one context.
//!
//! Keys not in the table fall through to the composer's text editing (or are ignored by overlays).

use crate::tui::input::{Key, KeyInput, Mods};
use crate::tui::review::ReviewKey;

/// Where a binding applies. Overlays see their own context first; `Global` applies everywhere
/// an overlay does not consume the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    Global,
    Composer,
    Transcript,
    Permission,
    /// The `/diff` overlay.
    Diff,
}

/// What a key does to the app itself (its own context, the composer, the transcript, `/diff`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Submit,
    Newline,
    HistoryPrev,
    HistoryNext,
    HistorySearch,
    /// Esc: close what is open, else interrupt a running turn.
    Cancel,
    /// Ctrl+C: interrupt, clear, or (twice on an idle empty composer) quit.
    CtrlC,
    /// Ctrl+D: quit when the composer is empty.
    QuitIfEmpty,
    CycleMode,
    PageUp,
    PageDown,
    ScrollTop,
    ScrollBottom,
    ToggleTranscript,
    /// Show or hide the todo list above the composer.
    ToggleTodos,
    ToggleExpanded,
    FocusPrev,
    FocusNext,
    Suspend,
    /// Ctrl+L: repaint the whole screen.
    Repaint,
}

/// What a key does in a permission prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromptAction {
    AllowOnce,
    AllowSession,
    DenyOnce,
    DenySession,
    DenyWithFeedback,
    AlwaysAllow,
    /// Allow, and allow every file edit for the rest of the session (edit prompts only).
    AllowAllEdits,
    /// Move the focus between the prompt's options; Enter chooses the focused one.
    OptionPrev,
    OptionNext,
    Choose,
    /// A key for the diff (or preview) inside the prompt.
    Review(ReviewKey),
    /// Open the proposed content in `$EDITOR`.
    EditInEditor,
    /// A digit key: the option shown with that number (the prompt reads the digit).
    Number,
    /// The option of a question at this index (never bound to a key: the numbers pick it).
    Pick(u8),
    /// Send the options picked of a multi-select question (never bound: its number picks it).
    Done,
    /// Show every option and the key hints when the panel lists them on one line.
    More,
    /// Write the session's version over an outside change (never bound: its number picks it).
    Overwrite,
    /// Keep the outside change; the model reads the file again (never bound: its number picks
    /// it).
    Reread,
}

/// What a binding does: an app action, a prompt's own action, or a key for a diff view. Each
/// context holds only the kinds its owner handles (the prompt's context only `Prompt`, the
/// composer's and the global context only `App`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bound {
    App(Action),
    Prompt(PromptAction),
    Review(ReviewKey),
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub context: Context,
    pub key: KeyInput,
    pub action: Bound,
    pub help: &'static str,
}

const fn bind(context: Context, key: KeyInput, action: Bound, help: &'static str) -> Binding {
    Binding {
        context,
        key,
        action,
        help,
    }
}

const fn ch(c: char) -> KeyInput {
    KeyInput::plain(Key::Char(c))
}

use Action as A;
use Bound as B;
use Context as C;
use PromptAction as P;

/// The default bindings.
pub const DEFAULT_BINDINGS: &[Binding] = &[
    bind(
        C::Global,
        KeyInput::plain(Key::Esc),
        B::App(A::Cancel),
        "interrupt the running turn / close",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('c'),
        B::App(A::CtrlC),
        "interrupt; twice on an empty prompt quits",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('d'),
        B::App(A::QuitIfEmpty),
        "quit (on an empty prompt)",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('z'),
        B::App(A::Suspend),
        "suspend (fg resumes)",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('l'),
        B::App(A::Repaint),
        "repaint the screen",
    ),
    bind(
        C::Global,
        KeyInput::plain(Key::BackTab),
        B::App(A::CycleMode),
        "cycle the permission mode",
    ),
    bind(
        C::Global,
        KeyInput::plain(Key::PageUp),
        B::App(A::PageUp),
        "scroll up a page",
    ),
    bind(
        C::Global,
        KeyInput::plain(Key::PageDown),
        B::App(A::PageDown),
        "scroll down a page",
    ),
    bind(
        C::Global,
        KeyInput::new(Key::Home, Mods::CTRL),
        B::App(A::ScrollTop),
        "scroll to the top",
    ),
    bind(
        C::Global,
        KeyInput::new(Key::End, Mods::CTRL),
        B::App(A::ScrollBottom),
        "scroll to the bottom",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('t'),
        B::App(A::ToggleTranscript),
        "full transcript view",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('g'),
        B::App(A::ToggleTodos),
        "show/hide the todo list",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('o'),
        B::App(A::ToggleExpanded),
        "expand/collapse the turn's tool cells (or the focused one)",
    ),
    bind(
        C::Global,
        KeyInput::new(Key::Up, Mods::ALT),
        B::App(A::FocusPrev),
        "focus the previous cell",
    ),
    bind(
        C::Global,
        KeyInput::new(Key::Down, Mods::ALT),
        B::App(A::FocusNext),
        "focus the next cell",
    ),
    bind(
        C::Composer,
        KeyInput::plain(Key::Enter),
        B::App(A::Submit),
        "send (queued while a turn runs)",
    ),
    bind(
        C::Composer,
        KeyInput::new(Key::Enter, Mods::SHIFT),
        B::App(A::Newline),
        "new line",
    ),
    bind(
        C::Composer,
        KeyInput::new(Key::Enter, Mods::ALT),
        B::App(A::Newline),
        "new line",
    ),
    bind(
        C::Composer,
        KeyInput::ctrl('j'),
        B::App(A::Newline),
        "new line",
    ),
    bind(
        C::Composer,
        KeyInput::plain(Key::Up),
        B::App(A::HistoryPrev),
        "previous prompt (on the first line)",
    ),
    bind(
        C::Composer,
        KeyInput::plain(Key::Down),
        B::App(A::HistoryNext),
        "next prompt (on the last line)",
    ),
    bind(
        C::Composer,
        KeyInput::ctrl('r'),
        B::App(A::HistorySearch),
        "search prompt history",
    ),
    bind(
        C::Transcript,
        KeyInput::plain(Key::Esc),
        B::App(A::ToggleTranscript),
        "close the transcript",
    ),
    bind(
        C::Transcript,
        ch('q'),
        B::App(A::ToggleTranscript),
        "close the transcript",
    ),
    bind(
        C::Transcript,
        KeyInput::plain(Key::Up),
        B::App(A::FocusPrev),
        "scroll up",
    ),
    bind(
        C::Transcript,
        KeyInput::plain(Key::Down),
        B::App(A::FocusNext),
        "scroll down",
    ),
    bind(
        C::Permission,
        ch('1'),
        B::Prompt(P::Number),
        "choose the option with that number",
    ),
    bind(
        C::Permission,
        ch('2'),
        B::Prompt(P::Number),
        "choose the option with that number",
    ),
    bind(
        C::Permission,
        ch('3'),
        B::Prompt(P::Number),
        "choose the option with that number",
    ),
    bind(
        C::Permission,
        ch('4'),
        B::Prompt(P::Number),
        "choose the option with that number",
    ),
    bind(
        C::Permission,
        ch('5'),
        B::Prompt(P::Number),
        "choose the option with that number",
    ),
    bind(
        C::Permission,
        ch('6'),
        B::Prompt(P::Number),
        "choose the option with that number",
    ),
    bind(
        C::Permission,
        ch('7'),
        B::Prompt(P::Number),
        "choose the option with that number",
    ),
    bind(
        C::Permission,
        ch('8'),
        B::Prompt(P::Number),
        "choose the option with that number",
    ),
    bind(
        C::Permission,
        ch('9'),
        B::Prompt(P::Number),
        "choose the option with that number",
    ),
    bind(
        C::Permission,
        ch('?'),
        B::Prompt(P::More),
        "show every option and key",
    ),
    bind(C::Permission, ch('y'), B::Prompt(P::AllowOnce), "yes, once"),
    bind(
        C::Permission,
        ch('a'),
        B::Prompt(P::AllowSession),
        "yes, for this session",
    ),
    bind(C::Permission, ch('n'), B::Prompt(P::DenyOnce), "no"),
    bind(
        C::Permission,
        KeyInput::plain(Key::Esc),
        B::Prompt(P::DenyOnce),
        "no",
    ),
    bind(
        C::Permission,
        ch('d'),
        B::Prompt(P::DenySession),
        "no, for this session",
    ),
    bind(
        C::Permission,
        ch('f'),
        B::Prompt(P::DenyWithFeedback),
        "no, and tell the model why",
    ),
    bind(
        C::Permission,
        ch('s'),
        B::Prompt(P::AlwaysAllow),
        "always allow (saves the rule)",
    ),
    bind(
        C::Permission,
        ch('w'),
        B::Prompt(P::AllowAllEdits),
        "yes, and allow all edits this session",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::Up),
        B::Prompt(P::OptionPrev),
        "focus the previous option",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::Down),
        B::Prompt(P::OptionNext),
        "focus the next option",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::Enter),
        B::Prompt(P::Choose),
        "choose the focused option",
    ),
    bind(
        C::Permission,
        ch('j'),
        B::Prompt(P::Review(ReviewKey::Down)),
        "scroll the preview down",
    ),
    bind(
        C::Permission,
        ch('k'),
        B::Prompt(P::Review(ReviewKey::Up)),
        "scroll the preview up",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::PageDown),
        B::Prompt(P::Review(ReviewKey::PageDown)),
        "page the preview down",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::PageUp),
        B::Prompt(P::Review(ReviewKey::PageUp)),
        "page the preview up",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::Tab),
        B::Prompt(P::Review(ReviewKey::NextHunk)),
        "next hunk",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::BackTab),
        B::Prompt(P::Review(ReviewKey::PrevHunk)),
        "previous hunk",
    ),
    bind(
        C::Permission,
        ch(' '),
        B::Prompt(P::Review(ReviewKey::ToggleHunk)),
        "accept/reject the focused hunk",
    ),
    bind(
        C::Permission,
        ch('A'),
        B::Prompt(P::Review(ReviewKey::AcceptAll)),
        "accept all hunks",
    ),
    bind(
        C::Permission,
        ch('R'),
        B::Prompt(P::Review(ReviewKey::RejectAll)),
        "reject all hunks",
    ),
    bind(
        C::Permission,
        ch('v'),
        B::Prompt(P::Review(ReviewKey::ToggleLayout)),
        "unified / side by side",
    ),
    bind(
        C::Permission,
        ch('e'),
        B::Prompt(P::EditInEditor),
        "edit the proposal in $EDITOR",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::Esc),
        B::App(A::Cancel),
        "close",
    ),
    bind(C::Diff, ch('q'), B::App(A::Cancel), "close"),
    bind(
        C::Diff,
        KeyInput::plain(Key::Left),
        B::App(A::FocusPrev),
        "previous file",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::Right),
        B::App(A::FocusNext),
        "next file",
    ),
    bind(C::Diff, ch('j'), B::Review(ReviewKey::Down), "scroll down"),
    bind(
        C::Diff,
        KeyInput::plain(Key::Down),
        B::Review(ReviewKey::Down),
        "scroll down",
    ),
    bind(C::Diff, ch('k'), B::Review(ReviewKey::Up), "scroll up"),
    bind(
        C::Diff,
        KeyInput::plain(Key::Up),
        B::Review(ReviewKey::Up),
        "scroll up",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::PageDown),
        B::Review(ReviewKey::PageDown),
        "page down",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::PageUp),
        B::Review(ReviewKey::PageUp),
        "page up",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::Tab),
        B::Review(ReviewKey::NextHunk),
        "next hunk",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::BackTab),
        B::Review(ReviewKey::PrevHunk),
        "previous hunk",
    ),
    bind(
        C::Diff,
        ch('v'),
        B::Review(ReviewKey::ToggleLayout),
        "unified / side by side",
    ),
];

/// A key looked up in the table once: what it does in every context. The app resolves each key
/// once and offers the result to its layers top-down, each reading its own context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keys {
    pub key: KeyInput,
    bound: [Option<Bound>; CONTEXTS],
}

/// How many [`Context`]s there are (the size of [`Keys`]' table); `Diff` is the last one.
const CONTEXTS: usize = Context::Diff as usize + 1;

impl Keys {
    /// What the key does in `context`, if anything.
    pub fn get(&self, context: Context) -> Option<Bound> {
        self.bound[context as usize]
    }

    /// The app action the key is bound to in `context` (not a prompt's or a diff's key).
    pub fn app(&self, context: Context) -> Option<Action> {
        match self.get(context)? {
            Bound::App(action) => Some(action),
            Bound::Prompt(_) | Bound::Review(_) => None,
        }
    }
}

/// Look `key` up in every context at once.
pub fn resolve(key: KeyInput) -> Keys {
    let mut bound = [None; CONTEXTS];
    for b in DEFAULT_BINDINGS.iter().filter(|b| b.key == key) {
        bound[b.context as usize].get_or_insert(b.action);
    }
    Keys { key, bound }
}

/// `Key  help` lines for `/help`, one per distinct action of the given contexts, keys aligned.
pub fn help_lines(contexts: &[Context]) -> Vec<String> {
    let mut rows: Vec<(String, &str)> = Vec::new();
    let mut seen: Vec<(Context, Bound)> = Vec::new();
    for b in DEFAULT_BINDINGS
        .iter()
        .filter(|b| contexts.contains(&b.context))
    {
        if seen.contains(&(b.context, b.action)) {
            continue;
        }
        seen.push((b.context, b.action));
        let keys: Vec<String> = DEFAULT_BINDINGS
            .iter()
            .filter(|o| o.context == b.context && o.action == b.action)
            .map(|o| o.key.label())
            .collect();
        rows.push((keys.join(" / "), b.help));
    }
    let width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    rows.into_iter()
        .map(|(keys, help)| format!("{keys:<width$}  {help}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn defaults_bind_each_key_once_per_context() {
        let mut seen = HashSet::new();
        for b in DEFAULT_BINDINGS {
            assert!(
                seen.insert((b.context, b.key)),
                "{} is bound twice in {:?}",
                b.key.label(),
                b.context
            );
        }
    }

    #[test]
    fn resolve_finds_by_context() {
        let enter = resolve(KeyInput::plain(Key::Enter));
        assert_eq!(enter.app(Context::Composer), Some(Action::Submit));
        assert_eq!(enter.get(Context::Global), None);
        let esc = resolve(KeyInput::plain(Key::Esc));
        assert_eq!(
            esc.get(Context::Permission),
            Some(Bound::Prompt(PromptAction::DenyOnce))
        );
        assert_eq!(esc.app(Context::Global), Some(Action::Cancel));
        assert_eq!(esc.app(Context::Permission), None);
        let j = resolve(KeyInput::plain(Key::Char('j')));
        assert_eq!(j.get(Context::Diff), Some(Bound::Review(ReviewKey::Down)));
    }

    #[test]
    fn help_groups_keys_of_one_action() {
        let lines = help_lines(&[Context::Composer]);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("Shift+Enter / Alt+Enter / Ctrl+J  new line")),
            "{lines:#?}"
        );
    }
}
