//! Reading the words of a parsed command: their values after quote removal, and whether
//! each is a plain literal (no expansion, glob or `~user`). Pure functions over tree-sitter
//! nodes; nothing here decides anything.

use tree_sitter::Node;

pub fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

/// The value of a word node, and whether it is a plain literal.
pub fn word_value(node: Node, src: &[u8]) -> (String, bool) {
    let raw = text(node, src);
    match node.kind() {
        "word" | "number" => (unescape(raw), !has_unescaped_glob(raw) && !other_home(raw)),
        "raw_string" => (
            raw.trim_start_matches('\'')
                .trim_end_matches('\'')
                .to_string(),
            true,
        ),
        "string" => {
            let mut cursor = node.walk();
            let only_text = node
                .named_children(&mut cursor)
                .all(|c| c.kind() == "string_content");
            let inner = raw
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .unwrap_or(raw);
            (unescape_double(inner), only_text)
        }
        "concatenation" => {
            let mut value = String::new();
            let mut literal = true;
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                let (v, l) = word_value(child, src);
                value.push_str(&v);
                literal &= l;
            }
            (value, literal)
        }
        _ => (raw.to_string(), false),
    }
}

/// The pattern of a bare word that the shell would expand as filenames (`src/*.rs`, `a?`,
/// `[ab].txt`), as written with its escapes; None for anything else. Words with quotes,
/// braces (brace expansion), a leading `~`, or characters of extended globs are not patterns
/// this module vouches for.
pub fn glob_pattern(node: Node, src: &[u8]) -> Option<String> {
    let raw = text(node, src);
    let bare = |n: Node| n.kind() == "word" || !n.is_named();
    let mut cursor = node.walk();
    let shape = match node.kind() {
        "word" => true,
        "concatenation" => node.children(&mut cursor).all(bare),
        _ => false,
    };
    let plain = shape
        && has_unescaped_glob(raw)
        && !raw.starts_with('~')
        && !raw.contains(['{', '}', '(', ')', '|', '@', '!', '+', '\'', '"', '$', '`']);
    plain.then(|| raw.to_string())
}

/// `~user/x` is that user's home to bash: not something to check as a relative path.
fn other_home(raw: &str) -> bool {
    raw.starts_with('~') && raw != "~" && !raw.starts_with("~/")
}

/// Whether a bare word has a glob or brace character that the shell would expand.
fn has_unescaped_glob(s: &str) -> bool {
    let mut escaped = false;
    for c in s.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '*' | '?' | '[' | '{' => return true,
            _ => {}
        }
    }
    false
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&n)) if matches!(n, '"' | '\\' | '$' | '`') => {
                out.push(n);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// The command name without its directory (`/bin/ls` -> `ls`).
pub fn program_of(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}
