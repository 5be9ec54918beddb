//! Large pastes: shown in the composer as a short `[pasted N lines]` placeholder, sent whole;
//! a pasted path of an existing image file (as terminals paste a dragged file: maybe quoted,
//! spaces escaped, `file://`) is shown as `[Image #N]` and sent as an `@` mention of it.
//!
//! The composer keeps the placeholders it inserted with their full text; on submit each
//! placeholder still present is replaced (first occurrence, in paste order) by its text. A
//! placeholder the person deleted drops its paste.

/// Pastes with more lines than this, or more characters than [`MAX_INLINE_CHARS`], collapse.
pub const MAX_INLINE_LINES: usize = 5;
pub const MAX_INLINE_CHARS: usize = 1000;

/// One collapsed paste.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollapsedPaste {
    pub placeholder: String,
    pub text: String,
}

/// Normalise line endings of pasted text (terminals send `\r` for newlines).
pub fn normalise(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// The placeholder for `text` if it is large enough to collapse.
pub fn collapse(text: &str) -> Option<CollapsedPaste> {
    let lines = text.lines().count().max(1);
    if lines <= MAX_INLINE_LINES && text.chars().count() <= MAX_INLINE_CHARS {
        return None;
    }
    let placeholder = if lines == 1 {
        format!("[pasted 1 line, {} chars]", text.chars().count())
    } else {
        format!("[pasted {lines} lines]")
    };
    Some(CollapsedPaste {
        placeholder,
        text: text.to_string(),
    })
}

/// The image file a paste names, if it is one: an absolute path (after removing `file://`,
/// surrounding quotes and `\ ` escapes) of an existing PNG, JPEG, GIF or WebP file.
pub fn image_path(text: &str) -> Option<std::path::PathBuf> {
    let t = text.trim();
    let t = t.strip_prefix("file://").unwrap_or(t);
    let t = ['\'', '"']
        .iter()
        .find_map(|q| t.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)))
        .unwrap_or(t);
    let path = std::path::PathBuf::from(t.replace("\\ ", " "));
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let image = matches!(ext.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp");
    (image && path.is_absolute() && path.is_file()).then_some(path)
}

/// The placeholder of the `n`-th image pasted into a message, sent as a mention of `path`.
pub fn image(n: usize, path: &std::path::Path) -> CollapsedPaste {
    let shown = path.display().to_string();
    let text = if shown.contains(char::is_whitespace) {
        format!("@\"{shown}\"")
    } else {
        format!("@{shown}")
    };
    CollapsedPaste {
        placeholder: format!("[Image #{n}]"),
        text,
    }
}

/// Replace the placeholders still present in `composed` by their full text.
pub fn expand(composed: &str, pastes: &[CollapsedPaste]) -> String {
    let mut out = composed.to_string();
    // Replace in paste order; search after the previous replacement so an identical placeholder
    // later in the text gets the later paste.
    let mut from = 0;
    for p in pastes {
        if let Some(pos) = out[from..].find(&p.placeholder) {
            let at = from + pos;
            out.replace_range(at..at + p.placeholder.len(), &p.text);
            from = at + p.text.len();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_pastes_stay_inline() {
        assert_eq!(collapse("a\nb\nc"), None);
    }

    #[test]
    fn large_pastes_collapse_and_expand_in_order() {
        let a = "1\n2\n3\n4\n5\n6\n7";
        let b = "x\ny\nz\nw\nv\nu\nt";
        let pa = collapse(a).unwrap();
        let pb = collapse(b).unwrap();
        assert_eq!(pa.placeholder, "[pasted 7 lines]");
        let composed = format!("see {} and {}", pa.placeholder, pb.placeholder);
        assert_eq!(expand(&composed, &[pa, pb]), format!("see {a} and {b}"));
    }

    #[test]
    fn a_deleted_placeholder_drops_its_paste() {
        let p = collapse(&"long ".repeat(300)).unwrap();
        assert_eq!(p.placeholder, "[pasted 1 line, 1500 chars]");
        assert_eq!(expand("nothing here", &[p]), "nothing here");
    }

    #[test]
    fn a_pasted_image_path_becomes_a_numbered_mention() {
        let dir = tempfile::tempdir().unwrap();
        let shot = dir.path().join("Screen Shot 1.png");
        std::fs::write(&shot, b"png").unwrap();
        let escaped = shot.display().to_string().replace(' ', "\\ ");
        for pasted in [
            format!("'{}'", shot.display()),
            escaped,
            format!("file://{}", shot.display()),
        ] {
            assert_eq!(
                image_path(&pasted).as_deref(),
                Some(shot.as_path()),
                "{pasted}"
            );
        }
        assert_eq!(
            image_path("notes.png"),
            None,
            "relative: not a dragged file"
        );
        assert_eq!(
            image_path(&dir.path().join("missing.png").display().to_string()),
            None
        );
        let p = image(2, &shot);
        assert_eq!(p.placeholder, "[Image #2]");
        assert_eq!(p.text, format!("@\"{}\"", shot.display()));
        assert_eq!(
            expand("look [Image #2]", std::slice::from_ref(&p)),
            format!("look {}", p.text)
        );
    }

    #[test]
    fn normalises_carriage_returns() {
        assert_eq!(normalise("a\r\nb\rc"), "a\nb\nc");
    }
}
