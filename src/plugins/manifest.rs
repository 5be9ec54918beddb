//! A plugin's manifest, `.claude-plugin/plugin.json`, as Claude Code reads it: `name`
//! (required; lowercase letters, digits and `-`), `version`, `description`, and where its
//! parts are beyond the standard folders — `commands`, `agents`, `skills` (a path or a list of
//! paths, each `./`-relative to the plugin's root, added to `commands/`, `agents/`, `skills/`),
//! `hooks` (a path or a list of paths to hooks files, or the hooks object inline; added to
//! `hooks/hooks.json`), `mcpServers` and `lspServers` (a path or paths to a JSON file, or the
//! servers inline; added to `.mcp.json` and `.lsp.json`). A plugin without a manifest is named
//! after its folder. Every path must stay inside the plugin's root.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::registry::read_object;

/// Where a part comes from: a file of the plugin, or the manifest itself (inline).
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    File(PathBuf),
    Inline(Value),
}

/// What the manifest says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Manifest {
    pub name: String,
    pub version: Option<String>,
    pub description: Option<String>,
    /// Folders or files of commands (the standard `commands/` first).
    pub commands: Vec<PathBuf>,
    pub agents: Vec<PathBuf>,
    pub skills: Vec<PathBuf>,
    pub hooks: Vec<Part>,
    pub mcp_servers: Vec<Part>,
    pub lsp_servers: Vec<Part>,
}

/// Whether `name` is a plugin name Claude Code accepts (kebab-case).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// `rel` (`./x/y`) under `root`, or why not: absolute paths and `..` are refused.
fn inside(root: &Path, rel: &str) -> Result<PathBuf, String> {
    let p = Path::new(rel);
    if p.components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "{rel:?} must be a path inside the plugin (`./…`, no `..`)"
        ));
    }
    Ok(root.join(p))
}

/// A path or a list of paths.
fn paths(root: &Path, key: &str, v: &Value) -> Result<Vec<PathBuf>, String> {
    match v {
        Value::String(s) => Ok(vec![inside(root, s)?]),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => inside(root, s),
                _ => Err(format!("`{key}` must be a path or a list of paths")),
            })
            .collect(),
        _ => Err(format!("`{key}` must be a path or a list of paths")),
    }
}

/// A path, a list of paths, or the thing inline.
fn parts(root: &Path, key: &str, v: &Value) -> Result<Vec<Part>, String> {
    match v {
        Value::Object(_) => Ok(vec![Part::Inline(v.clone())]),
        _ => Ok(paths(root, key, v)?.into_iter().map(Part::File).collect()),
    }
}

/// Read the plugin at `root`: its manifest (when there is one) and its standard folders and
/// files. Problems that lose a part are returned beside it; a manifest that cannot be read or
/// names the plugin wrongly is an error.
pub fn read(root: &Path) -> Result<(Manifest, Vec<String>), String> {
    let file = root.join(".claude-plugin").join("plugin.json");
    let doc = if file.is_file() {
        read_object(&file)?
    } else {
        Default::default()
    };
    let mut problems = Vec::new();
    let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    let name = match text("name") {
        Some(n) => n,
        None if doc.is_empty() => root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        None => return Err(format!("{}: no `name`", file.display())),
    };
    if !valid_name(&name) {
        return Err(format!(
            "{}: plugin name {name:?} must be lowercase letters, digits and `-`",
            file.display()
        ));
    }
    let mut m = Manifest {
        name,
        version: text("version"),
        description: text("description"),
        commands: vec![root.join("commands")],
        agents: vec![root.join("agents")],
        skills: vec![root.join("skills")],
        hooks: vec![Part::File(root.join("hooks").join("hooks.json"))],
        mcp_servers: vec![Part::File(root.join(".mcp.json"))],
        lsp_servers: vec![Part::File(root.join(".lsp.json"))],
    };
    let mut extend_paths = |key: &str, into: &mut Vec<PathBuf>| {
        if let Some(v) = doc.get(key) {
            match paths(root, key, v) {
                Ok(more) => {
                    for p in more {
                        if !into.contains(&p) {
                            into.push(p);
                        }
                    }
                }
                Err(why) => problems.push(format!("{}: {why}; ignored", file.display())),
            }
        }
    };
    extend_paths("commands", &mut m.commands);
    extend_paths("agents", &mut m.agents);
    extend_paths("skills", &mut m.skills);
    for (key, into) in [
        ("hooks", &mut m.hooks),
        ("mcpServers", &mut m.mcp_servers),
        ("lspServers", &mut m.lsp_servers),
    ] {
        if let Some(v) = doc.get(key) {
            match parts(root, key, v) {
                Ok(more) => {
                    for p in more {
                        if !into.contains(&p) {
                            into.push(p);
                        }
                    }
                }
                Err(why) => problems.push(format!("{}: {why}; ignored", file.display())),
            }
        }
    }
    Ok((m, problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_paths_add_to_the_standard_ones_and_may_not_leave_the_plugin() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("p");
        std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        std::fs::write(
            root.join(".claude-plugin/plugin.json"),
            r#"{"name": "demo", "version": "1.2.0", "commands": ["./extra/cmd.md"],
               "agents": "../outside", "mcpServers": {"s": {"command": "x"}}}"#,
        )
        .unwrap();
        let (m, problems) = read(&root).unwrap();
        assert_eq!(m.name, "demo");
        assert_eq!(m.version.as_deref(), Some("1.2.0"));
        assert_eq!(
            m.commands,
            [root.join("commands"), root.join("extra/cmd.md")]
        );
        assert_eq!(m.agents, [root.join("agents")]);
        assert_eq!(m.mcp_servers.len(), 2);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].contains("\"../outside\" must be a path inside"),
            "{problems:?}"
        );
        std::fs::write(
            root.join(".claude-plugin/plugin.json"),
            r#"{"name": "Bad Name"}"#,
        )
        .unwrap();
        assert!(read(&root).unwrap_err().contains("must be lowercase"));
    }
}
