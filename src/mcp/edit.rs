//! `cairn mcp add` and `cairn mcp remove`: write a server entry into the file of its scope as
//! `claude mcp add --scope` does — local: `~/.claude.json` `projects[<project>].mcpServers`;
//! project: `.mcp.json`; user: `~/.claude.json` `mcpServers`. Everything else in those files is
//! kept as it was (key order too), a file that is not valid JSON is never overwritten, and the
//! write is atomic.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// Which file an entry goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditScope {
    Local,
    Project,
    User,
}

impl EditScope {
    pub fn name(self) -> &'static str {
        match self {
            EditScope::Local => "local",
            EditScope::Project => "project",
            EditScope::User => "user",
        }
    }
}

/// The files the scopes live in.
#[derive(Debug, Clone)]
pub struct Files {
    pub project_dir: PathBuf,
    pub claude_json: PathBuf,
}

impl Files {
    fn path(&self, scope: EditScope) -> PathBuf {
        match scope {
            EditScope::Project => self.project_dir.join(".mcp.json"),
            EditScope::Local | EditScope::User => self.claude_json.clone(),
        }
    }
}

/// A server entry from `add`'s arguments: `-e KEY=value`, `-H "Name: value"`.
pub fn entry_from_args(
    transport: &str,
    target: &str,
    args: &[String],
    env: &[String],
    headers: &[String],
) -> Result<Value, String> {
    match transport {
        "stdio" => {
            let mut vars = Map::new();
            for e in env {
                let (k, v) = e
                    .split_once('=')
                    .filter(|(k, _)| !k.is_empty())
                    .ok_or_else(|| format!("-e {e:?}: expected KEY=value"))?;
                vars.insert(k.to_string(), Value::from(v));
            }
            let mut entry = json!({"type": "stdio", "command": target, "args": args});
            if !vars.is_empty() {
                entry["env"] = Value::Object(vars);
            }
            Ok(entry)
        }
        "http" | "sse" => {
            if !args.is_empty() {
                return Err(format!("a {transport} server takes a URL and no arguments"));
            }
            if !(target.starts_with("http://") || target.starts_with("https://")) {
                return Err(format!("{target:?} is not an http:// or https:// URL"));
            }
            let mut map = Map::new();
            for h in headers {
                let (k, v) = h
                    .split_once(':')
                    .filter(|(k, _)| !k.trim().is_empty())
                    .ok_or_else(|| format!("-H {h:?}: expected \"Name: value\""))?;
                map.insert(k.trim().to_string(), Value::from(v.trim()));
            }
            let mut entry = json!({"type": transport, "url": target});
            if !map.is_empty() {
                entry["headers"] = Value::Object(map);
            }
            Ok(entry)
        }
        other => Err(format!("unknown transport {other:?} (stdio, http or sse)")),
    }
}

fn read_doc(path: &Path) -> Result<Value, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(v) if v.is_object() => Ok(v),
            Ok(_) => Err(format!(
                "{}: not a JSON object; not changed",
                path.display()
            )),
            Err(e) => Err(format!(
                "{}: not valid JSON ({e}); not changed",
                path.display()
            )),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(json!({})),
        Err(e) => Err(format!("{}: cannot read: {e}", path.display())),
    }
}

/// The `mcpServers` object of `scope` inside `doc`, created when `create`.
fn servers_mut<'a>(
    doc: &'a mut Value,
    scope: EditScope,
    project_key: &str,
    create: bool,
) -> Option<&'a mut Map<String, Value>> {
    let mut at = doc.as_object_mut()?;
    if scope == EditScope::Local {
        if create {
            at.entry("projects").or_insert_with(|| json!({}));
        }
        let projects = at.get_mut("projects")?.as_object_mut()?;
        if create {
            projects
                .entry(project_key.to_string())
                .or_insert_with(|| json!({}));
        }
        at = projects.get_mut(project_key)?.as_object_mut()?;
    }
    if create {
        at.entry("mcpServers").or_insert_with(|| json!({}));
    }
    at.get_mut("mcpServers")?.as_object_mut()
}

fn write_doc(path: &Path, doc: &Value) -> Result<(), String> {
    let mut text = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())?;
    text.push('\n');
    crate::files::atomic::write_atomic(path, text.as_bytes())
        .map(|_| ())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// The key of a project's entry in `~/.claude.json` naming the user and local servers turned
/// off there (Claude Code's `/mcp` toggle writes the same).
pub const DISABLED_KEY: &str = "disabledMcpServers";

/// Turn the user or local server `name` off (`off`) or on again for the project `project_dir`:
/// its name added to (or taken from) `projects[<project>].disabledMcpServers` of
/// `claude_json`. Returns the file.
pub fn set_disabled(
    claude_json: &Path,
    project_dir: &Path,
    name: &str,
    off: bool,
) -> Result<PathBuf, String> {
    let mut doc = read_doc(claude_json)?;
    let key = project_dir.to_string_lossy().to_string();
    let not_object = || {
        format!(
            "{}: not the shape expected; not changed",
            claude_json.display()
        )
    };
    let root = doc.as_object_mut().ok_or_else(not_object)?;
    let projects = root.entry("projects").or_insert_with(|| json!({}));
    let project = projects
        .as_object_mut()
        .ok_or_else(not_object)?
        .entry(key)
        .or_insert_with(|| json!({}));
    let project = project.as_object_mut().ok_or_else(not_object)?;
    let list = project.entry(DISABLED_KEY).or_insert_with(|| json!([]));
    let list = list.as_array_mut().ok_or_else(not_object)?;
    list.retain(|n| n.as_str() != Some(name));
    if off {
        list.push(Value::String(name.to_string()));
    }
    write_doc(claude_json, &doc)?;
    Ok(claude_json.to_path_buf())
}

/// Add `entry` as server `name` in `scope`. Refuses a name the scope already has.
pub fn add(files: &Files, scope: EditScope, name: &str, entry: Value) -> Result<String, String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "{name:?}: a server name may use only letters, digits, '_' and '-'"
        ));
    }
    if let Some(why) = super::names::server_name_problem(name) {
        return Err(format!("{name:?}: {why}"));
    }
    let path = files.path(scope);
    let mut doc = read_doc(&path)?;
    let key = files.project_dir.to_string_lossy().to_string();
    let Some(servers) = servers_mut(&mut doc, scope, &key, true) else {
        return Err(format!(
            "{}: \"mcpServers\" is not an object; not changed",
            path.display()
        ));
    };
    if servers.contains_key(name) {
        return Err(format!(
            "MCP server {name:?} already exists in {} config ({})",
            scope.name(),
            path.display()
        ));
    }
    servers.insert(name.to_string(), entry);
    write_doc(&path, &doc)?;
    Ok(format!(
        "Added MCP server {name:?} to {} config ({})",
        scope.name(),
        path.display()
    ))
}

/// Remove server `name` from `scope`, or from the one scope that has it.
pub fn remove(files: &Files, scope: Option<EditScope>, name: &str) -> Result<String, String> {
    let key = files.project_dir.to_string_lossy().to_string();
    let scopes = match scope {
        Some(s) => vec![s],
        None => vec![EditScope::Local, EditScope::Project, EditScope::User],
    };
    let mut found = Vec::new();
    for s in scopes {
        let path = files.path(s);
        let mut doc = read_doc(&path)?;
        if servers_mut(&mut doc, s, &key, false).is_some_and(|m| m.contains_key(name)) {
            found.push((s, path, doc));
        }
    }
    match found.len() {
        0 => Err(format!(
            "no MCP server named {name:?} in {}",
            match scope {
                Some(s) => format!("{} config", s.name()),
                None => "any scope".into(),
            }
        )),
        1 => {
            let (s, path, mut doc) = found.remove(0);
            if let Some(m) = servers_mut(&mut doc, s, &key, false) {
                m.remove(name);
            }
            write_doc(&path, &doc)?;
            Ok(format!(
                "Removed MCP server {name:?} from {} config ({})",
                s.name(),
                path.display()
            ))
        }
        _ => {
            let names: Vec<&str> = found.iter().map(|(s, _, _)| s.name()).collect();
            Err(format!(
                "MCP server {name:?} exists in several scopes ({}); name one with --scope",
                names.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_and_remove_keep_the_rest_of_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("proj");
        std::fs::create_dir(&project).unwrap();
        let claude_json = dir.path().join(".claude.json");
        std::fs::write(&claude_json, r#"{"zeta": 1, "alpha": {"keep": true}}"#).unwrap();
        let files = Files {
            project_dir: project.clone(),
            claude_json: claude_json.clone(),
        };
        let stdio = entry_from_args(
            "stdio",
            "npx",
            &["-y".into(), "pkg".into()],
            &["K=v".into()],
            &[],
        )
        .unwrap();
        add(&files, EditScope::Local, "fs", stdio.clone()).unwrap();
        add(&files, EditScope::User, "fs", stdio.clone()).unwrap();
        let http = entry_from_args(
            "http",
            "https://x.test/mcp",
            &[],
            &[],
            &["Authorization: Bearer t".into()],
        )
        .unwrap();
        add(&files, EditScope::Project, "web", http).unwrap();
        let err = add(&files, EditScope::Local, "fs", stdio).unwrap_err();
        assert!(err.contains("already exists in local config"), "{err}");

        // What was written reads back through the loader.
        let sources = super::super::config::Sources {
            project_dir: project.clone(),
            claude_json: Some(claude_json.clone()),
            cli: vec![],
            strict: false,
        };
        let approval = super::super::config::Approval {
            enable_all: true,
            ..Default::default()
        };
        let cfg = super::super::config::load(&sources, &approval, &|_| None);
        assert!(cfg.problems.is_empty(), "{:?}", cfg.problems);
        let names: Vec<(&str, &str)> = cfg
            .servers
            .iter()
            .map(|s| (s.name.as_str(), s.scope.name()))
            .collect();
        assert_eq!(names, [("fs", "local"), ("web", "project")]);

        let text = std::fs::read_to_string(&claude_json).unwrap();
        assert!(
            text.find("\"zeta\"").unwrap() < text.find("\"alpha\"").unwrap(),
            "{text}"
        );
        let err = remove(&files, None, "fs").unwrap_err();
        assert!(err.contains("several scopes (local, user)"), "{err}");
        remove(&files, Some(EditScope::User), "fs").unwrap();
        remove(&files, None, "fs").unwrap();
        assert!(
            remove(&files, None, "fs")
                .unwrap_err()
                .contains("no MCP server")
        );
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&claude_json).unwrap()).unwrap();
        assert_eq!(doc["alpha"], json!({"keep": true}));
        assert!(doc["mcpServers"].as_object().unwrap().is_empty());
    }

    #[test]
    fn bad_arguments_and_broken_files_change_nothing() {
        assert!(entry_from_args("stdio", "x", &[], &["NOEQUALS".into()], &[]).is_err());
        assert!(entry_from_args("http", "ftp://x", &[], &[], &[]).is_err());
        assert!(entry_from_args("ws", "x", &[], &[], &[]).is_err());
        let dir = tempfile::tempdir().unwrap();
        let claude_json = dir.path().join(".claude.json");
        std::fs::write(&claude_json, "{ broken").unwrap();
        let files = Files {
            project_dir: dir.path().to_path_buf(),
            claude_json: claude_json.clone(),
        };
        let err = add(&files, EditScope::User, "a", json!({"command": "x"})).unwrap_err();
        assert!(err.contains("not valid JSON"), "{err}");
        assert_eq!(std::fs::read_to_string(&claude_json).unwrap(), "{ broken");
        assert!(add(&files, EditScope::User, "bad name", json!({})).is_err());
        let err = add(&files, EditScope::User, "safe__evil", json!({})).unwrap_err();
        assert!(err.contains("contains \"__\""), "{err}");
    }
}
