//! What one plugin contributes, read from its folder as Claude Code names it: commands as
//! `/plugin:command` (`/plugin:sub:command` in subfolders), skills and agents as
//! `plugin:name`, MCP and language servers as `plugin:<plugin>:<server>` (so MCP tools are
//! `mcp__plugin_<plugin>_<server>__<tool>`), hooks from its hooks files. `${CLAUDE_PLUGIN_ROOT}`
//! becomes the plugin's folder in hook commands, server commands, args and env, and in the
//! bodies of commands, skills and agents; MCP servers also get it as a variable. Files are read
//! as the person's own are (`crate::commands`): only when they resolve inside the plugin's
//! folder after symlinks.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::commands::agents::AgentDef;
use crate::commands::skills::Skill;
use crate::commands::{CustomCommand, Found, Root, markdown_files};
use crate::config::hooks::{HookGroup, parse_hooks};
use crate::config::layers::{Layer, Origin, Problems, SettingsSource};
use crate::config::lsp_servers::LspServerSetting;
use crate::mcp::config::{Scope, ServerConfig, Transport, parse_server};

use super::manifest::{Manifest, Part};
use super::registry::read_object;

/// The variable plugins name their own folder with.
pub const ROOT_VAR: &str = "CLAUDE_PLUGIN_ROOT";

/// Everything a plugin contributes.
#[derive(Debug, Clone, Default)]
pub struct Parts {
    pub commands: Vec<CustomCommand>,
    pub skills: Vec<Skill>,
    pub agents: Vec<AgentDef>,
    pub hooks: Vec<HookGroup>,
    /// Hook problems that lost a PreToolUse hook (a guard): the gate fails closed on them.
    pub broken_hooks: Vec<String>,
    pub mcp: Vec<ServerConfig>,
    pub lsp: Vec<LspServerSetting>,
}

/// The hooks and servers of `parts`, one entry per kind that has any.
pub fn server_lines(parts: &Parts) -> Vec<String> {
    let mut out = Vec::new();
    if !parts.hooks.is_empty() {
        let mut events: Vec<&str> = parts.hooks.iter().map(|g| g.event.name()).collect();
        events.dedup();
        out.push(format!("hooks: {}", events.join(", ")));
    }
    if !parts.mcp.is_empty() {
        let names: Vec<&str> = parts.mcp.iter().map(|s| s.name.as_str()).collect();
        out.push(format!("MCP servers: {}", names.join(", ")));
    }
    if !parts.lsp.is_empty() {
        let names: Vec<&str> = parts.lsp.iter().map(|s| s.name.as_str()).collect();
        out.push(format!("language servers: {}", names.join(", ")));
    }
    out
}

/// `text` with `${CLAUDE_PLUGIN_ROOT}` replaced by `root`.
pub fn with_root(text: &str, root: &Path) -> String {
    text.replace(&format!("${{{ROOT_VAR}}}"), &root.display().to_string())
}

/// `value` with `${CLAUDE_PLUGIN_ROOT}` replaced in every string.
fn value_with_root(value: &Value, root: &Path) -> Value {
    match value {
        Value::String(s) => Value::String(with_root(s, root)),
        Value::Array(items) => items.iter().map(|v| value_with_root(v, root)).collect(),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), value_with_root(v, root)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Read every part of the plugin `m` at `root`. `layer` is who turned it on (for hooks'
/// origins); `env` expands `${VAR}` in MCP servers as their own configuration does.
pub fn read(
    m: &Manifest,
    root: &Path,
    layer: Layer,
    env: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<String>,
) -> Parts {
    let mut parts = Parts::default();
    let bound = root.to_path_buf();
    let ns = |name: &str| format!("{}:{name}", m.name);
    let root_at = |dir: PathBuf| Root {
        dir,
        bound: bound.clone(),
    };
    let commands = m.commands.iter().flat_map(|p| markdown_under(p, true));
    parts.commands = gather(
        commands.map(|(dir, file)| (root_at(dir), file)).collect(),
        problems,
        crate::commands::read_command,
        |c| {
            c.name = ns(&c.name);
            c.body = with_root(&c.body, root);
        },
        |c| &c.name,
    );
    let skills = m.skills.iter().flat_map(|p| skill_dirs(p));
    parts.skills = gather(
        skills
            .map(|dir| (root_at(dir.parent().unwrap_or(&dir).to_path_buf()), dir))
            .collect(),
        problems,
        |r, dir, p| crate::commands::skills::read_skill(r, dir, &dir.join("SKILL.md"), p),
        |s| {
            s.name = ns(&s.name);
            s.dir_name = ns(&s.dir_name);
            s.body = with_root(&s.body, root);
        },
        |s| &s.name,
    );
    let agents = m.agents.iter().flat_map(|p| markdown_under(p, false));
    parts.agents = gather(
        agents.map(|(dir, file)| (root_at(dir), file)).collect(),
        problems,
        crate::commands::agents::read_agent,
        |a| {
            a.name = ns(&a.name);
            a.prompt = with_root(&a.prompt, root);
        },
        |a| &a.name,
    );
    for part in &m.hooks {
        // A hooks file that cannot be read may have held a PreToolUse guard: fail closed.
        let mut lost = Vec::new();
        let loaded = load_part(part, root, "hooks", &mut lost);
        parts.broken_hooks.extend(lost.iter().cloned());
        problems.extend(lost);
        let Some((source, doc)) = loaded else {
            continue;
        };
        let value = doc.get("hooks").cloned().unwrap_or(doc);
        let src = SettingsSource {
            origin: Origin { layer, source },
            text: String::new(),
            value: value.clone(),
        };
        let mut hook_problems = Problems::default();
        for mut group in parse_hooks(&src, &value, &mut hook_problems) {
            for c in &mut group.commands {
                c.command = with_root(&c.command, root);
            }
            parts.hooks.push(group);
        }
        problems.extend(hook_problems.notes);
        parts.broken_hooks.extend(hook_problems.broken);
    }
    let root_env = |k: &str| {
        if k == ROOT_VAR {
            Some(root.display().to_string())
        } else {
            env(k)
        }
    };
    for part in &m.mcp_servers {
        let Some((source, doc)) = load_part(part, root, "mcpServers", problems) else {
            continue;
        };
        let servers = doc.get("mcpServers").cloned().unwrap_or(doc);
        for (name, value) in servers.as_object().into_iter().flatten() {
            let full = format!("plugin:{}:{name}", m.name);
            match parse_server(&full, value, &root_env) {
                Ok(mut transport) => {
                    if let Transport::Stdio { env, .. } = &mut transport
                        && env.iter().all(|(k, _)| k != ROOT_VAR)
                    {
                        env.push((ROOT_VAR.into(), root.display().to_string()));
                    }
                    if parts.mcp.iter().all(|s| s.name != full) {
                        parts.mcp.push(ServerConfig {
                            name: full,
                            scope: Scope::User,
                            source: source.clone(),
                            transport,
                        });
                    }
                }
                Err(why) => problems.push(format!("{source}: MCP server {name:?}: {why}")),
            }
        }
    }
    for part in &m.lsp_servers {
        let Some((source, doc)) = load_part(part, root, "lspServers", problems) else {
            continue;
        };
        let servers = doc.get("lspServers").cloned().unwrap_or(doc);
        for (name, value) in servers.as_object().into_iter().flatten() {
            let full = format!("plugin:{}:{name}", m.name);
            let value = value_with_root(value, root);
            match crate::config::lsp_servers::parse(&full, &value, &source) {
                Ok(server) if parts.lsp.iter().all(|s| s.name != full) => parts.lsp.push(server),
                Ok(_) => {}
                Err(why) => problems.push(format!("{source}: language server {name:?}: {why}")),
            }
        }
    }
    parts
}

/// Read each file (`read`), namespace what it gives (`rename`), keep the first of each name.
fn gather<T>(
    files: Vec<(Root, PathBuf)>,
    problems: &mut Vec<String>,
    read: impl Fn(&Root, &Path, &mut Vec<String>) -> Result<T, String>,
    rename: impl Fn(&mut T),
    name_of: impl Fn(&T) -> &str,
) -> Vec<T> {
    let mut found = Found::default();
    for (root, file) in files {
        let item = read(&root, &file, problems).map(|mut t| {
            rename(&mut t);
            t
        });
        found.add(item, &name_of);
    }
    problems.extend(found.problems);
    found.items
}

/// A part's JSON and where it came from; `None` (and a problem when it exists but cannot be
/// read) otherwise. A file that resolves outside the plugin is not read.
fn load_part(
    part: &Part,
    root: &Path,
    what: &str,
    problems: &mut Vec<String>,
) -> Option<(String, Value)> {
    match part {
        Part::Inline(v) => Some((
            format!(
                "{} (`{what}`)",
                root.join(".claude-plugin/plugin.json").display()
            ),
            v.clone(),
        )),
        Part::File(path) => {
            if std::fs::symlink_metadata(path).is_err() {
                return None;
            }
            let read = crate::files::containment::resolve_inside(path, root)
                .map_err(|e| format!("{}: skipped: {e}", path.display()))
                .and_then(|real| read_object(&real));
            match read {
                Ok(doc) => Some((path.display().to_string(), Value::Object(doc))),
                Err(e) => {
                    problems.push(e);
                    None
                }
            }
        }
    }
}

/// The Markdown files a commands or agents path names, each with the folder its name is
/// taken relative to: a file itself, or the files in a folder (its subfolders too when
/// `nested`).
fn markdown_under(path: &Path, nested: bool) -> Vec<(PathBuf, PathBuf)> {
    if path.is_file() {
        let dir = path.parent().unwrap_or(path).to_path_buf();
        return vec![(dir, path.to_path_buf())];
    }
    if !path.is_dir() {
        return Vec::new();
    }
    let mut files = if nested {
        let mut out = Vec::new();
        crate::commands::collect(path, &mut out, 0);
        out
    } else {
        markdown_files(path)
    };
    files.sort();
    files.into_iter().map(|f| (path.to_path_buf(), f)).collect()
}

/// The skill folders a skills path names: itself when it holds a `SKILL.md`, else its
/// subfolders that do.
fn skill_dirs(path: &Path) -> Vec<PathBuf> {
    if path.join("SKILL.md").is_file() {
        return vec![path.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|d| d.join("SKILL.md").is_file())
        .collect();
    dirs.sort();
    dirs
}
