//! PLACEHOLDER (branch tui-app) for the syntax highlighter owned by the `tui-view` work.
//!
//! Same names and signatures as the real module; it never highlights. The lead replaces this
//! file with the real one at merge.

/// Highlights code off the render path (placeholder: never highlights).
#[derive(Clone, Default)]
pub struct Highlighter {}

impl Highlighter {
    /// Cheap: the real one loads syntaxes on a background thread.
    pub fn new() -> Highlighter {
        Highlighter {}
    }

    /// Never highlights: for tests.
    pub fn plain() -> Highlighter {
        Highlighter {}
    }
}
