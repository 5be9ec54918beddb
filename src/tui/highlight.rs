//! Syntax highlighting of code blocks, computed off the render path.
//!
//! A [`Highlighter`] is a cheap, clonable handle to one background thread. The thread loads the
//! syntax and theme sets (two-face's extended set, onig regex engine) when it starts, so nothing
//! slow happens on the UI's startup path. Rendering asks with [`Highlighter::get`]: a cached
//! result comes back at once; otherwise the code is queued for the thread and the caller draws it
//! plain for now. Results land in a cache keyed by (language, hash of the code) and bump
//! [`Highlighter::generation`], which tells the view to redraw the blocks that were plain.
//! Invariants: `get` never blocks on highlighting; each (language, code) is highlighted at most
//! once while cached; [`Highlighter::plain`] never highlights (deterministic tests).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

/// Highlighted code: one entry per line, each a list of styled spans (no newline characters).
pub type HighlightedLines = Arc<Vec<Vec<Span<'static>>>>;

/// Code larger than this stays plain: highlighting it would hold the thread for long.
const MAX_CODE_BYTES: usize = 256 * 1024;
/// The cache is dropped wholesale past this many entries (a session rarely gets near it).
const MAX_CACHE_ENTRIES: usize = 4096;

/// What [`Highlighter::get`] knows about a block of code.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// Highlighted lines, ready to draw.
    Ready(HighlightedLines),
    /// Queued or being highlighted: draw plain and look again after the generation changes.
    Pending,
    /// Will never be highlighted (plain highlighter, unknown language, too large).
    Plain,
}

#[derive(Clone)]
enum Entry {
    Pending,
    Ready(HighlightedLines),
    Plain,
}

type Key = (String, u64);

struct Request {
    key: Key,
    code: String,
}

struct Shared {
    requests: Sender<Request>,
    cache: Mutex<HashMap<Key, Entry>>,
    generation: AtomicU64,
}

/// Handle to the background highlighting thread (or to nothing, for [`Highlighter::plain`]).
#[derive(Clone)]
pub struct Highlighter {
    shared: Option<Arc<Shared>>,
}

impl std::fmt::Debug for Highlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Highlighter")
            .field("enabled", &self.shared.is_some())
            .finish()
    }
}

impl Default for Highlighter {
    fn default() -> Highlighter {
        Highlighter::new()
    }
}

impl Highlighter {
    /// Start the background thread; returns at once. Syntaxes load on that thread, and until a
    /// block's result arrives it renders plain. If the thread cannot start, code stays plain.
    pub fn new() -> Highlighter {
        let (tx, rx) = mpsc::channel::<Request>();
        let shared = Arc::new(Shared {
            requests: tx,
            cache: Mutex::new(HashMap::new()),
            generation: AtomicU64::new(0),
        });
        // The thread holds only a weak handle, so it ends when the last Highlighter is dropped
        // (the channel closes).
        let weak = Arc::downgrade(&shared);
        let spawned = std::thread::Builder::new()
            .name("cairn-highlight".into())
            .spawn(move || worker(rx, weak));
        match spawned {
            Ok(_) => Highlighter {
                shared: Some(shared),
            },
            Err(err) => {
                tracing::warn!("syntax highlighting disabled: cannot start its thread: {err}");
                Highlighter::plain()
            }
        }
    }

    /// A highlighter that never highlights: code always renders plain. For tests and for
    /// terminals where colour is unwanted.
    pub fn plain() -> Highlighter {
        Highlighter { shared: None }
    }

    /// Whether this highlighter can ever colour code.
    pub fn is_enabled(&self) -> bool {
        self.shared.is_some()
    }

    /// Increases each time a result arrives; the view redraws pending blocks when it changes.
    pub fn generation(&self) -> u64 {
        self.shared
            .as_ref()
            .map_or(0, |s| s.generation.load(Ordering::Acquire))
    }

    /// The highlighted form of `code` in language `lang` (a fence info string such as `rust`,
    /// `py` or `sh`), queueing it for the background thread when it is not cached yet.
    pub fn get(&self, lang: &str, code: &str) -> Lookup {
        let Some(shared) = &self.shared else {
            return Lookup::Plain;
        };
        let lang = lang
            .split([',', ' ', '{'])
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if lang.is_empty() || code.len() > MAX_CODE_BYTES {
            return Lookup::Plain;
        }
        let mut hasher = DefaultHasher::new();
        code.hash(&mut hasher);
        let key = (lang, hasher.finish());
        let Ok(mut cache) = shared.cache.lock() else {
            return Lookup::Plain;
        };
        match cache.get(&key) {
            Some(Entry::Ready(lines)) => return Lookup::Ready(lines.clone()),
            Some(Entry::Pending) => return Lookup::Pending,
            Some(Entry::Plain) => return Lookup::Plain,
            None => {}
        }
        if cache.len() >= MAX_CACHE_ENTRIES {
            cache.retain(|_, e| matches!(e, Entry::Pending));
        }
        let request = Request {
            key: key.clone(),
            code: code.to_string(),
        };
        if shared.requests.send(request).is_err() {
            cache.insert(key, Entry::Plain);
            return Lookup::Plain;
        }
        cache.insert(key, Entry::Pending);
        Lookup::Pending
    }
}

fn worker(rx: Receiver<Request>, shared: std::sync::Weak<Shared>) {
    let syntaxes = two_face::syntax::extra_newlines();
    let themes = two_face::theme::extra();
    let theme = themes
        .get(two_face::theme::EmbeddedThemeName::Base16OceanDark)
        .clone();
    while let Ok(request) = rx.recv() {
        let entry = match highlight(&syntaxes, &theme, &request.key.0, &request.code) {
            Some(lines) => Entry::Ready(Arc::new(lines)),
            None => Entry::Plain,
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if let Ok(mut cache) = shared.cache.lock() {
            cache.insert(request.key, entry);
        }
        shared.generation.fetch_add(1, Ordering::AcqRel);
    }
}

fn highlight(
    syntaxes: &SyntaxSet,
    theme: &Theme,
    lang: &str,
    code: &str,
) -> Option<Vec<Vec<Span<'static>>>> {
    let syntax = syntaxes.find_syntax_by_token(lang)?;
    let mut lines = HighlightLines::new(syntax, theme);
    let mut out = Vec::new();
    for line in LinesWithEndings::from(code) {
        let regions = lines.highlight_line(line, syntaxes).ok()?;
        let spans = regions
            .into_iter()
            .filter_map(|(style, text)| {
                let text = text.trim_end_matches(['\n', '\r']);
                (!text.is_empty()).then(|| Span::styled(text.to_string(), convert(style)))
            })
            .collect();
        out.push(spans);
    }
    Some(out)
}

/// syntect colour -> ratatui style; the background is left to the terminal.
fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn plain_never_highlights() {
        let h = Highlighter::plain();
        assert!(matches!(h.get("rust", "fn main() {}"), Lookup::Plain));
        assert_eq!(h.generation(), 0);
    }

    #[test]
    fn real_highlighter_colours_rust_and_leaves_unknown_languages_plain() {
        let h = Highlighter::new();
        let code = "fn main() {\n    let x = 1;\n}\n";
        assert!(matches!(h.get("rust", code), Lookup::Pending));
        assert!(matches!(h.get("no-such-language", code), Lookup::Pending));
        let deadline = Instant::now() + Duration::from_secs(60);
        let lines = loop {
            if let Lookup::Ready(lines) = h.get("rust", code) {
                break lines;
            }
            assert!(Instant::now() < deadline, "no highlight result within 60 s");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(lines.len(), 3);
        let first: String = lines[0].iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(first, "fn main() {");
        assert!(lines[0].len() > 1, "expected several styled tokens");
        assert!(
            lines[0]
                .iter()
                .all(|s| matches!(s.style.fg, Some(Color::Rgb(..))))
        );
        while matches!(h.get("no-such-language", code), Lookup::Pending) {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(matches!(h.get("no-such-language", code), Lookup::Plain));
        assert!(h.generation() >= 2);
    }
}
