//! Tools own their facts: outside `src/tools/`, production code should not mention a built-in
//! tool by its name string (`"Bash"`, `"Edit"`…) — permissions decide from kinds and accesses,
//! the TUI renders display values. Some files still do (issue 10, item 2, is open); they are
//! listed in `STILL_NAMING` with how many such strings each holds, and the list may only
//! shrink: a new mention, or a new file, fails this test. Test code (`#[cfg(test)]` modules and
//! `*tests.rs` files) may name tools freely.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use cairn::session::context::{EventSender, SessionContext};
use cairn::tools::registry::builtin_tools;

/// Files outside `src/tools/` that still name built-in tools, and how many name strings each.
const STILL_NAMING: &[(&str, usize)] = &[
    ("src/llm/scripted/mod.rs", 1),
    ("src/permissions/ask.rs", 2),
    ("src/permissions/decide.rs", 10),
    ("src/permissions/lifecycle.rs", 1),
    ("src/permissions/mod.rs", 1),
    ("src/rules.rs", 8),
    ("src/tui/prompt/external.rs", 3),
    ("src/tui/prompt/preview.rs", 2),
];

fn builtin_names() -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let (events, _rx) = EventSender::channel();
    let session = Arc::new(SessionContext::new(
        "names".into(),
        tmp.path().to_path_buf(),
        Vec::new(),
        tmp.path().join("data"),
        events,
    ));
    builtin_tools(&session)
        .iter()
        .flat_map(|t| {
            std::iter::once(t.name().to_string()).chain(t.aliases().iter().map(|a| a.to_string()))
        })
        .collect()
}

fn production_code(text: &str) -> &str {
    match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    }
}

fn mentions(root: &Path, names: &[String]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                if rel != "src/tools" {
                    stack.push(path);
                }
                continue;
            }
            if !rel.ends_with(".rs") || rel.ends_with("tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = production_code(&text);
            let count: usize = names
                .iter()
                .map(|n| code.matches(&format!("\"{n}\"")).count())
                .sum();
            if count > 0 {
                out.insert(rel, count);
            }
        }
    }
    out
}

#[test]
fn no_new_code_outside_tools_names_a_built_in_tool() {
    let names = builtin_names();
    assert!(names.iter().any(|n| n == "Bash") && names.iter().any(|n| n == "Read"));
    let found = mentions(Path::new(env!("CARGO_MANIFEST_DIR")), &names);
    let allowed: BTreeMap<String, usize> = STILL_NAMING
        .iter()
        .map(|(f, n)| (f.to_string(), *n))
        .collect();
    let grown: Vec<String> = found
        .iter()
        .filter(|(file, n)| allowed.get(*file).is_none_or(|max| *n > max))
        .map(|(file, n)| format!("{file}: {n} name strings"))
        .collect();
    assert!(
        grown.is_empty(),
        "code outside src/tools/ names built-in tools; let the tool declare the fact instead \
         (kind, Access, preview, effect):\n{}\n(all files that name tools: {found:?})",
        grown.join("\n")
    );
    // When a file stops naming tools, take it off the list so it cannot start again.
    let stale: Vec<&str> = STILL_NAMING
        .iter()
        .filter(|(f, n)| found.get(*f).is_none_or(|c| c < n))
        .map(|(f, _)| *f)
        .collect();
    assert!(
        stale.is_empty(),
        "these files name fewer tools now; lower their counts in STILL_NAMING: {stale:?}"
    );
}
