//! Which MCP servers a session has, read as Claude Code reads them: the project's `.mcp.json`,
//! the user and local scopes of `~/.claude.json` (`mcpServers` at the top level; `projects[<abs
//! project path>].mcpServers`), and `--mcp-config FILE|JSON` (with `--strict-mcp-config`, only
//! those). On a name clash the narrower scope wins: cli > local > project > user.
//!
//! `${VAR}` and `${VAR:-default}` are expanded in command, args, env, url and headers; an unset
//! variable without a default makes the server a reported problem and it is skipped. Project
//! servers start only when approved ([`Approval`]). Nothing here does I/O beyond reading the
//! files named, and nothing panics: every problem is a line `source: what is wrong`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Where a server was configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    User,
    Project,
    Local,
    /// `--mcp-config`.
    Cli,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Cli => "cli",
        }
    }
}

/// How to reach a server, with every `${VAR}` already expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// The legacy HTTP+SSE transport.
    Sse {
        url: String,
        headers: Vec<(String, String)>,
    },
}

impl Transport {
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
            Transport::Sse { .. } => "sse",
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub name: String,
    pub scope: Scope,
    /// The file (or `--mcp-config` argument) it came from, for messages.
    pub source: String,
    pub transport: Transport,
}

/// The approval settings for project (`.mcp.json`) servers, as the settings carry them.
pub use crate::config::settings::McpApprovalSettings as Approval;

impl Approval {
    /// Whether a project server may start: `disabledMcpjsonServers` wins over everything, then
    /// `enableAllProjectMcpServers`, then `enabledMcpjsonServers`.
    pub fn approves(&self, name: &str) -> bool {
        if self.disabled.iter().any(|n| n == name) {
            return false;
        }
        self.enable_all || self.enabled.iter().any(|n| n == name)
    }
}

/// Where to look.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The project root (`.mcp.json` lives here; the local scope is keyed by it).
    pub project_dir: PathBuf,
    /// `~/.claude.json`, when there is a home.
    pub claude_json: Option<PathBuf>,
    /// `--mcp-config` values: a file path or inline JSON each.
    pub cli: Vec<String>,
    /// `--strict-mcp-config`: only the `--mcp-config` servers.
    pub strict: bool,
}

/// The outcome of reading every source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// Servers to start, sorted by name.
    pub servers: Vec<ServerConfig>,
    /// Project servers not approved (not started), sorted by name.
    pub unapproved: Vec<ServerConfig>,
    /// Project servers `disabledMcpjsonServers` turned off, by name.
    pub disabled: Vec<String>,
    /// `source: what is wrong` lines.
    pub problems: Vec<String>,
}

/// `~/.claude.json` for the current user, if there is a home directory.
pub fn default_claude_json() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.home_dir().join(".claude.json"))
}

/// Read every source, expand variables with `env`, apply precedence and approval.
pub fn load(
    sources: &Sources,
    approval: &Approval,
    env: &dyn Fn(&str) -> Option<String>,
) -> McpConfig {
    let mut out = McpConfig::default();
    // Later inserts win: user, project, local, cli.
    let mut chosen: BTreeMap<String, ServerConfig> = BTreeMap::new();
    let add = |servers: Vec<ServerConfig>, chosen: &mut BTreeMap<String, ServerConfig>| {
        for s in servers {
            chosen.insert(s.name.clone(), s);
        }
    };
    if !sources.strict {
        if let Some(path) = &sources.claude_json {
            let (user, local) = read_claude_json(path, &sources.project_dir, env, &mut out);
            add(user, &mut chosen);
            let project = read_project(&sources.project_dir, approval, env, &mut out);
            add(project, &mut chosen);
            add(local, &mut chosen);
        } else {
            let project = read_project(&sources.project_dir, approval, env, &mut out);
            add(project, &mut chosen);
        }
    }
    for arg in &sources.cli {
        let servers = read_cli_arg(arg, env, &mut out.problems);
        add(servers, &mut chosen);
    }
    // A project server shadowed by another scope is not waiting for approval.
    out.unapproved.retain(|s| !chosen.contains_key(&s.name));
    out.servers = chosen.into_values().collect();
    out
}

fn read_json_file(path: &Path, problems: &mut Vec<String>) -> Option<Value> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            problems.push(format!("{}: cannot read: {e}", path.display()));
            return None;
        }
    };
    match serde_json::from_str(&text) {
        Ok(v) => Some(v),
        Err(e) => {
            problems.push(format!("{}: not valid JSON: {e}", path.display()));
            None
        }
    }
}

fn read_project(
    project_dir: &Path,
    approval: &Approval,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut McpConfig,
) -> Vec<ServerConfig> {
    let path = project_dir.join(".mcp.json");
    let Some(doc) = read_json_file(&path, &mut out.problems) else {
        return Vec::new();
    };
    let source = path.display().to_string();
    let servers = servers_of(&doc, Scope::Project, &source, env, &mut out.problems);
    servers
        .into_iter()
        .filter(|s| {
            if approval.disabled.contains(&s.name) {
                out.disabled.push(s.name.clone());
                false
            } else if approval.approves(&s.name) {
                true
            } else {
                out.unapproved.push(s.clone());
                false
            }
        })
        .collect()
}

/// The user and local servers of `~/.claude.json`.
fn read_claude_json(
    path: &Path,
    project_dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut McpConfig,
) -> (Vec<ServerConfig>, Vec<ServerConfig>) {
    let Some(doc) = read_json_file(path, &mut out.problems) else {
        return (Vec::new(), Vec::new());
    };
    let source = path.display().to_string();
    let user = servers_of(&doc, Scope::User, &source, env, &mut out.problems);
    let key = project_dir.to_string_lossy();
    let local = doc
        .get("projects")
        .and_then(|p| p.get(key.as_ref()))
        .map(|p| {
            let source = format!("{source} (projects[{key}])");
            servers_of(p, Scope::Local, &source, env, &mut out.problems)
        })
        .unwrap_or_default();
    (user, local)
}

fn read_cli_arg(
    arg: &str,
    env: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<String>,
) -> Vec<ServerConfig> {
    let trimmed = arg.trim();
    let (doc, source) = if trimmed.starts_with('{') {
        match serde_json::from_str::<Value>(trimmed) {
            Ok(v) => (v, "--mcp-config (inline JSON)".to_string()),
            Err(e) => {
                problems.push(format!("--mcp-config (inline JSON): not valid JSON: {e}"));
                return Vec::new();
            }
        }
    } else {
        let path = Path::new(trimmed);
        match std::fs::read_to_string(path) {
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(v) => (v, path.display().to_string()),
                Err(e) => {
                    problems.push(format!("{}: not valid JSON: {e}", path.display()));
                    return Vec::new();
                }
            },
            Err(e) => {
                problems.push(format!("{}: cannot read: {e}", path.display()));
                return Vec::new();
            }
        }
    };
    if doc.get("mcpServers").is_none() {
        problems.push(format!("{source}: no \"mcpServers\" object"));
        return Vec::new();
    }
    servers_of(&doc, Scope::Cli, &source, env, problems)
}

/// The servers under `doc.mcpServers` (none when the key is absent).
fn servers_of(
    doc: &Value,
    scope: Scope,
    source: &str,
    env: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<String>,
) -> Vec<ServerConfig> {
    let Some(servers) = doc.get("mcpServers") else {
        return Vec::new();
    };
    let Some(servers) = servers.as_object() else {
        problems.push(format!("{source}: \"mcpServers\" must be an object"));
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, value) in servers {
        match parse_server(name, value, env) {
            Ok(transport) => out.push(ServerConfig {
                name: name.clone(),
                scope,
                source: source.to_string(),
                transport,
            }),
            Err(why) => problems.push(format!("{source}: server \"{name}\": {why}")),
        }
    }
    out
}

/// One server entry, expanded.
pub fn parse_server(
    name: &str,
    value: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Transport, String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    let Some(obj) = value.as_object() else {
        return Err("must be an object".into());
    };
    let kind = match obj.get("type") {
        None => {
            if obj.contains_key("command") {
                "stdio"
            } else if obj.contains_key("url") {
                return Err("\"type\" is missing (\"http\" or \"sse\" for a url)".into());
            } else {
                return Err("needs a \"command\" (stdio) or a \"type\" and \"url\"".into());
            }
        }
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return Err("\"type\" must be a string".into()),
    };
    match kind {
        "stdio" => {
            let command = expand(
                &string_field(obj, "command")?.ok_or("\"command\" is missing")?,
                env,
            )?;
            if command.trim().is_empty() {
                return Err("\"command\" is empty".into());
            }
            let args = match obj.get("args") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|a| match a {
                        Value::String(s) => expand(s, env),
                        _ => Err("\"args\" must be strings".to_string()),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("\"args\" must be an array of strings".into()),
            };
            let env_vars = string_map(obj, "env", env)?;
            Ok(Transport::Stdio {
                command,
                args,
                env: env_vars,
            })
        }
        "http" | "sse" => {
            let url = expand(&string_field(obj, "url")?.ok_or("\"url\" is missing")?, env)?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "\"url\" must start with http:// or https:// (got {url:?})"
                ));
            }
            let headers = string_map(obj, "headers", env)?;
            Ok(if kind == "http" {
                Transport::Http { url, headers }
            } else {
                Transport::Sse { url, headers }
            })
        }
        other => Err(format!(
            "unknown \"type\" {other:?} (expected \"stdio\", \"http\" or \"sse\")"
        )),
    }
}

fn string_field(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("\"{key}\" must be a string")),
    }
}

fn string_map(
    obj: &Map<String, Value>,
    key: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    match obj.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), expand(s, env)?)),
                _ => Err(format!("\"{key}.{k}\" must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("\"{key}\" must be an object of strings")),
    }
}

/// Expand `${VAR}` and `${VAR:-default}`. An unset variable without a default is an error
/// naming it; `$` not followed by `{` is kept as written.
pub fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed \"${{\" in {text:?}"));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        match (
            env(name).filter(|v| !v.is_empty() || default.is_none()),
            default,
        ) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(format!(
                    "environment variable {name} is not set (write ${{{name}:-default}} for a default)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
