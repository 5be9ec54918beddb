//! The module layers hold: no top-level module of `src/` reaches (through `crate::` paths) a
//! module that reaches it back, no two source files refer to each other, and the TUI uses
//! nothing of the crate but itself, the protocol and a few pure leaves. The check reads
//! the source as text — every `crate::`, `super::` and `self::` path, `use` trees included —
//! so it needs no build of its own and fails the moment someone adds a back edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules every layer may use: leaves that import nothing of the crate's.
const LEAVES: &[&str] = &["lib", "main"];

struct Source {
    /// Module path, e.g. `["tools", "bash"]` for `src/tools/bash/mod.rs`.
    module: Vec<String>,
    text: String,
}

fn sources() -> Vec<(PathBuf, Source)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            panic!("cannot list {}", dir.display());
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&root).unwrap_or(&path);
            let mut module: Vec<String> = rel
                .iter()
                .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if module.last().is_some_and(|m| m == "mod") || module == ["lib"] {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.push((path.clone(), Source { module, text }));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Strips `//` comments and string literals so prose and test data don't count as paths.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if in_str {
                if c == '"' && prev != '\\' {
                    in_str = false;
                }
                prev = if prev == '\\' && c == '\\' { ' ' } else { c };
                continue;
            }
            if c == '/' && chars.peek() == Some(&'/') {
                break;
            }
            if c == '"' {
                in_str = true;
                prev = ' ';
                continue;
            }
            out.push(c);
        }
        out.push('\n');
    }
    out
}

/// Every path that starts with `anchor::` in the code, expanded through `{…}` groups.
fn paths_after(code: &str, anchor: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let needle = format!("{anchor}::");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find(&needle) {
        let start = from + found;
        from = start + needle.len();
        let before = start.checked_sub(1).map(|i| bytes[i] as char);
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut pos = from;
        parse_tree(code, &mut pos, Vec::new(), &mut out);
    }
    out
}

fn parse_tree(code: &str, pos: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let bytes = code.as_bytes();
    let mut path = prefix;
    loop {
        skip_ws(bytes, pos);
        if *pos < bytes.len() && bytes[*pos] == b'{' {
            *pos += 1;
            loop {
                skip_ws(bytes, pos);
                if *pos >= bytes.len() {
                    return;
                }
                if bytes[*pos] == b'}' {
                    *pos += 1;
                    return;
                }
                parse_tree(code, pos, path.clone(), out);
                skip_ws(bytes, pos);
                if *pos < bytes.len() && bytes[*pos] == b',' {
                    *pos += 1;
                }
            }
        }
        let start = *pos;
        while *pos < bytes.len() && (bytes[*pos].is_ascii_alphanumeric() || bytes[*pos] == b'_') {
            *pos += 1;
        }
        if start == *pos {
            if !path.is_empty() {
                out.push(path);
            }
            return;
        }
        path.push(code[start..*pos].to_string());
        if code[*pos..].starts_with("::") {
            *pos += 2;
            continue;
        }
        // `as name` and anything else end the path.
        out.push(path);
        return;
    }
}

fn skip_ws(bytes: &[u8], pos: &mut usize) {
    while *pos < bytes.len() && bytes[*pos].is_ascii_whitespace() {
        *pos += 1;
    }
}

/// The module paths a file refers to, made absolute (from the crate root).
fn references(src: &Source) -> BTreeSet<Vec<String>> {
    let code = code_only(&src.text);
    let mut refs = BTreeSet::new();
    for path in paths_after(&code, "crate") {
        refs.insert(path);
    }
    // `super` is the parent module, whether the file is `foo.rs` or `foo/mod.rs`.
    let parent: Vec<String> = src.module[..src.module.len().saturating_sub(1)].to_vec();
    for path in paths_after(&code, "super") {
        let mut abs = parent.clone();
        abs.extend(path);
        refs.insert(abs);
    }
    for path in paths_after(&code, "self") {
        let mut abs = src.module.clone();
        abs.extend(path);
        refs.insert(abs);
    }
    refs
}

/// The longest prefix of `path` that names a source file's module.
fn resolve(path: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

#[test]
fn no_top_level_module_imports_one_that_imports_it_back() {
    let sources = sources();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, src) in &sources {
        let Some(top) = src.module.first() else {
            continue;
        };
        for r in references(src) {
            let Some(target) = r.first() else { continue };
            if target != top && !LEAVES.contains(&target.as_str()) {
                edges.entry(top.clone()).or_default().insert(target.clone());
            }
        }
    }
    // Any cycle, not only pairs: an edge a -> b is in a cycle when b reaches a back.
    let reaches = |from: &str, to: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            if m == to {
                return true;
            }
            if seen.insert(m.clone()) {
                todo.extend(edges.get(&m).into_iter().flatten().cloned());
            }
        }
        false
    };
    let cycles: Vec<String> = edges
        .iter()
        .flat_map(|(a, bs)| bs.iter().map(move |b| (a, b)))
        .filter(|(a, b)| reaches(b, a))
        .map(|(a, b)| format!("{a} -> {b}"))
        .collect();
    assert!(
        cycles.is_empty(),
        "imports between top-level modules that come back round (each is part of a cycle):\n{}",
        cycles.join("\n")
    );
}

#[test]
fn no_two_source_files_refer_to_each_other() {
    let sources = sources();
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|(_, s)| s.module.clone()).collect();
    let mut edges: BTreeSet<(Vec<String>, Vec<String>)> = BTreeSet::new();
    for (_, src) in &sources {
        for r in references(src) {
            if let Some(target) = resolve(&r, &modules) {
                // A file may use its own children and parents freely (`mod` declarations and
                // `super::` re-exports are not circles between peers).
                let nested = target.starts_with(&src.module) || src.module.starts_with(&target);
                if !nested {
                    edges.insert((src.module.clone(), target));
                }
            }
        }
    }
    let circles: Vec<String> = edges
        .iter()
        .filter(|(a, b)| a < b && edges.contains(&(b.clone(), a.clone())))
        .map(|(a, b)| format!("{} <-> {}", a.join("::"), b.join("::")))
        .collect();
    assert!(
        circles.is_empty(),
        "source files that refer to each other:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_path_reader_sees_use_trees_and_ignores_comments_and_strings() {
    let code = code_only(
        "use crate::{agent::session::X, tools};\n// crate::tui\nlet s = \"crate::config\";\nfn f(_: crate::llm::T) {}\n",
    );
    let paths = paths_after(&code, "crate");
    let firsts: BTreeSet<&str> = paths.iter().map(|p| p[0].as_str()).collect();
    assert_eq!(firsts, BTreeSet::from(["agent", "tools", "llm"]));
    assert!(paths.contains(&vec!["agent".into(), "session".into(), "X".into()]));
}

/// What the TUI may use besides its own modules and the protocol: pure functions over data
/// (no I/O, no state of the session). `diff`: diffs and hunks of two texts (the review and
/// `/diff`); `media::ansi`: skipping a terminal escape sequence in text; `suggest`: the closest
/// names to a mistyped one.
const TUI_PURE_LEAVES: &[&[&str]] = &[&["diff"], &["media", "ansi"], &["suggest"]];

/// Every `crate::` path of a `tui` source file that is not the TUI's own, the protocol, or a
/// pure leaf, as `file: path`.
fn tui_reaches_outside(sources: &[(PathBuf, Source)]) -> Vec<String> {
    let allowed = |path: &[String]| {
        matches!(path.first().map(String::as_str), Some("tui" | "protocol"))
            || TUI_PURE_LEAVES
                .iter()
                .any(|leaf| leaf.len() <= path.len() && leaf.iter().zip(path).all(|(a, b)| a == b))
    };
    let mut out = Vec::new();
    for (file, src) in sources {
        if src.module.first().is_none_or(|m| m != "tui") {
            continue;
        }
        for r in references(src) {
            if !allowed(&r) {
                out.push(format!("{}: crate::{}", file.display(), r.join("::")));
            }
        }
    }
    out
}

#[test]
fn the_tui_uses_only_the_protocol_and_pure_leaves() {
    let outside = tui_reaches_outside(&sources());
    assert!(
        outside.is_empty(),
        "the TUI is a client of the protocol; it reaches around it here (ask the session's \
         host through an Op::Host instead, or justify a pure leaf in TUI_PURE_LEAVES):\n{}",
        outside.join("\n")
    );
}

#[test]
fn the_tui_check_catches_a_reach_around_the_protocol() {
    let source = |text: &str| {
        (
            PathBuf::from("src/tui/app/mcp.rs"),
            Source {
                module: vec!["tui".into(), "app".into(), "mcp".into()],
                text: text.into(),
            },
        )
    };
    let fine = source(
        "use crate::protocol::{HostOp, Op};\nuse crate::diff::Hunk;\nuse super::App;\n\
         fn f() { crate::media::ansi::skip_escape(&mut \"\".chars()); }\n",
    );
    assert_eq!(tui_reaches_outside(&[fine]), Vec::<String>::new());
    let bad = source(
        "use crate::mcp::McpManager;\nfn f() { crate::media::pdf::read(); }\n\
         // crate::session::resume::list is only prose\n",
    );
    assert_eq!(
        tui_reaches_outside(&[bad]),
        [
            "src/tui/app/mcp.rs: crate::mcp::McpManager",
            "src/tui/app/mcp.rs: crate::media::pdf::read"
        ]
    );
}
