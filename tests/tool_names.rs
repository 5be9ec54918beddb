//! Tools own their facts: outside `src/tools/`, production code never mentions a built-in tool
//! by its name string (`"Bash"`, `"Edit"`…) — permissions decide from kinds and accesses, the
//! TUI renders the displays tools build, and the rule language's tool words live in
//! `src/tools/kind.rs`. Test code (`#[cfg(test)]` modules and `*tests.rs` files) and comments
//! may name tools freely.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use cairn::session::context::{EventSender, SessionContext};
use cairn::tools::registry::builtin_tools;

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

/// The code before the test module, without comment lines.
fn production_code(text: &str) -> String {
    let code = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
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
fn no_code_outside_tools_names_a_built_in_tool() {
    let names = builtin_names();
    assert!(names.iter().any(|n| n == "Bash") && names.iter().any(|n| n == "Read"));
    let found = mentions(Path::new(env!("CARGO_MANIFEST_DIR")), &names);
    assert!(
        found.is_empty(),
        "code outside src/tools/ names built-in tools; let the tool declare the fact instead \
         (kind, Access, preview, effect): {found:?}"
    );
}

#[test]
fn the_check_sees_a_name_in_code() {
    let names = vec!["Bash".to_string()];
    let text = "// \"Bash\" in a comment\nlet x = \"Bash\";\n#[cfg(test)]\nmod t { \"Bash\" }";
    assert_eq!(production_code(text), "let x = \"Bash\";");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/tools")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), text).unwrap();
    std::fs::write(dir.path().join("src/tools/b.rs"), text).unwrap();
    let found = mentions(dir.path(), &names);
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        [("src/a.rs".to_string(), 1)]
    );
}
