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

/// What a key does.
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
    ToggleExpanded,
    FocusPrev,
    FocusNext,
    Suspend,
    /// Ctrl+L: repaint the whole screen.
    Repaint,
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
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub context: Context,
    pub key: KeyInput,
    pub action: Action,
    pub help: &'static str,
}

const fn bind(context: Context, key: KeyInput, action: Action, help: &'static str) -> Binding {
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
use Context as C;

/// The default bindings.
pub const DEFAULT_BINDINGS: &[Binding] = &[
    bind(
        C::Global,
        KeyInput::plain(Key::Esc),
        A::Cancel,
        "interrupt the running turn / close",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('c'),
        A::CtrlC,
        "interrupt; twice on an empty prompt quits",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('d'),
        A::QuitIfEmpty,
        "quit (on an empty prompt)",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('z'),
        A::Suspend,
        "suspend (fg resumes)",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('l'),
        A::Repaint,
        "repaint the screen",
    ),
    bind(
        C::Global,
        KeyInput::plain(Key::BackTab),
        A::CycleMode,
        "cycle the permission mode",
    ),
    bind(
        C::Global,
        KeyInput::plain(Key::PageUp),
        A::PageUp,
        "scroll up a page",
    ),
    bind(
        C::Global,
        KeyInput::plain(Key::PageDown),
        A::PageDown,
        "scroll down a page",
    ),
    bind(
        C::Global,
        KeyInput::new(Key::Home, Mods::CTRL),
        A::ScrollTop,
        "scroll to the top",
    ),
    bind(
        C::Global,
        KeyInput::new(Key::End, Mods::CTRL),
        A::ScrollBottom,
        "scroll to the bottom",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('t'),
        A::ToggleTranscript,
        "full transcript view",
    ),
    bind(
        C::Global,
        KeyInput::ctrl('o'),
        A::ToggleExpanded,
        "expand/collapse the focused cell",
    ),
    bind(
        C::Global,
        KeyInput::new(Key::Up, Mods::ALT),
        A::FocusPrev,
        "focus the previous cell",
    ),
    bind(
        C::Global,
        KeyInput::new(Key::Down, Mods::ALT),
        A::FocusNext,
        "focus the next cell",
    ),
    bind(
        C::Composer,
        KeyInput::plain(Key::Enter),
        A::Submit,
        "send (queued while a turn runs)",
    ),
    bind(
        C::Composer,
        KeyInput::new(Key::Enter, Mods::SHIFT),
        A::Newline,
        "new line",
    ),
    bind(
        C::Composer,
        KeyInput::new(Key::Enter, Mods::ALT),
        A::Newline,
        "new line",
    ),
    bind(C::Composer, KeyInput::ctrl('j'), A::Newline, "new line"),
    bind(
        C::Composer,
        KeyInput::plain(Key::Up),
        A::HistoryPrev,
        "previous prompt (on the first line)",
    ),
    bind(
        C::Composer,
        KeyInput::plain(Key::Down),
        A::HistoryNext,
        "next prompt (on the last line)",
    ),
    bind(
        C::Composer,
        KeyInput::ctrl('r'),
        A::HistorySearch,
        "search prompt history",
    ),
    bind(
        C::Transcript,
        KeyInput::plain(Key::Esc),
        A::ToggleTranscript,
        "close the transcript",
    ),
    bind(
        C::Transcript,
        ch('q'),
        A::ToggleTranscript,
        "close the transcript",
    ),
    bind(
        C::Transcript,
        KeyInput::plain(Key::Up),
        A::FocusPrev,
        "scroll up",
    ),
    bind(
        C::Transcript,
        KeyInput::plain(Key::Down),
        A::FocusNext,
        "scroll down",
    ),
    bind(C::Permission, ch('1'), A::AllowOnce, "yes, once"),
    bind(C::Permission, ch('y'), A::AllowOnce, "yes, once"),
    bind(
        C::Permission,
        ch('2'),
        A::AllowSession,
        "yes, for this session",
    ),
    bind(
        C::Permission,
        ch('a'),
        A::AllowSession,
        "yes, for this session",
    ),
    bind(C::Permission, ch('3'), A::DenyOnce, "no"),
    bind(C::Permission, ch('n'), A::DenyOnce, "no"),
    bind(C::Permission, KeyInput::plain(Key::Esc), A::DenyOnce, "no"),
    bind(
        C::Permission,
        ch('4'),
        A::DenySession,
        "no, for this session",
    ),
    bind(
        C::Permission,
        ch('d'),
        A::DenySession,
        "no, for this session",
    ),
    bind(
        C::Permission,
        ch('5'),
        A::DenyWithFeedback,
        "no, and tell the model why",
    ),
    bind(
        C::Permission,
        ch('f'),
        A::DenyWithFeedback,
        "no, and tell the model why",
    ),
    bind(
        C::Permission,
        ch('6'),
        A::AlwaysAllow,
        "always allow (saves the rule)",
    ),
    bind(
        C::Permission,
        ch('s'),
        A::AlwaysAllow,
        "always allow (saves the rule)",
    ),
    bind(
        C::Permission,
        ch('7'),
        A::AllowAllEdits,
        "yes, and allow all edits this session",
    ),
    bind(
        C::Permission,
        ch('w'),
        A::AllowAllEdits,
        "yes, and allow all edits this session",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::Up),
        A::OptionPrev,
        "focus the previous option",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::Down),
        A::OptionNext,
        "focus the next option",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::Enter),
        A::Choose,
        "choose the focused option",
    ),
    bind(
        C::Permission,
        ch('j'),
        A::Review(ReviewKey::Down),
        "scroll the preview down",
    ),
    bind(
        C::Permission,
        ch('k'),
        A::Review(ReviewKey::Up),
        "scroll the preview up",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::PageDown),
        A::Review(ReviewKey::PageDown),
        "page the preview down",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::PageUp),
        A::Review(ReviewKey::PageUp),
        "page the preview up",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::Tab),
        A::Review(ReviewKey::NextHunk),
        "next hunk",
    ),
    bind(
        C::Permission,
        KeyInput::plain(Key::BackTab),
        A::Review(ReviewKey::PrevHunk),
        "previous hunk",
    ),
    bind(
        C::Permission,
        ch(' '),
        A::Review(ReviewKey::ToggleHunk),
        "accept/reject the focused hunk",
    ),
    bind(
        C::Permission,
        ch('A'),
        A::Review(ReviewKey::AcceptAll),
        "accept all hunks",
    ),
    bind(
        C::Permission,
        ch('R'),
        A::Review(ReviewKey::RejectAll),
        "reject all hunks",
    ),
    bind(
        C::Permission,
        ch('v'),
        A::Review(ReviewKey::ToggleLayout),
        "unified / side by side",
    ),
    bind(
        C::Permission,
        ch('e'),
        A::EditInEditor,
        "edit the proposal in $EDITOR",
    ),
    bind(C::Diff, KeyInput::plain(Key::Esc), A::Cancel, "close"),
    bind(C::Diff, ch('q'), A::Cancel, "close"),
    bind(
        C::Diff,
        KeyInput::plain(Key::Left),
        A::FocusPrev,
        "previous file",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::Right),
        A::FocusNext,
        "next file",
    ),
    bind(C::Diff, ch('j'), A::Review(ReviewKey::Down), "scroll down"),
    bind(
        C::Diff,
        KeyInput::plain(Key::Down),
        A::Review(ReviewKey::Down),
        "scroll down",
    ),
    bind(C::Diff, ch('k'), A::Review(ReviewKey::Up), "scroll up"),
    bind(
        C::Diff,
        KeyInput::plain(Key::Up),
        A::Review(ReviewKey::Up),
        "scroll up",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::PageDown),
        A::Review(ReviewKey::PageDown),
        "page down",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::PageUp),
        A::Review(ReviewKey::PageUp),
        "page up",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::Tab),
        A::Review(ReviewKey::NextHunk),
        "next hunk",
    ),
    bind(
        C::Diff,
        KeyInput::plain(Key::BackTab),
        A::Review(ReviewKey::PrevHunk),
        "previous hunk",
    ),
    bind(
        C::Diff,
        ch('v'),
        A::Review(ReviewKey::ToggleLayout),
        "unified / side by side",
    ),
];

/// The action bound to `key` in `context`, if any.
pub fn lookup(context: Context, key: KeyInput) -> Option<Action> {
    DEFAULT_BINDINGS
        .iter()
        .find(|b| b.context == context && b.key == key)
        .map(|b| b.action)
}

/// `Key  help` lines for `/help`, one per distinct action of the given contexts, keys aligned.
pub fn help_lines(contexts: &[Context]) -> Vec<String> {
    let mut rows: Vec<(String, &str)> = Vec::new();
    let mut seen: Vec<(Context, Action)> = Vec::new();
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
    fn lookup_finds_by_context() {
        assert_eq!(
            lookup(Context::Composer, KeyInput::plain(Key::Enter)),
            Some(Action::Submit)
        );
        assert_eq!(lookup(Context::Global, KeyInput::plain(Key::Enter)), None);
        assert_eq!(
            lookup(Context::Permission, KeyInput::plain(Key::Esc)),
            Some(Action::DenyOnce)
        );
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
