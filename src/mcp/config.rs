//! Which MCP servers a session has, read as Claude Code reads them: the project's `.mcp.json`,
//! the user and local scopes of `~/.claude.json` (`mcpServers` at the top level; `projects[<abs
//! project path>].mcpServers`), and `--mcp-config FILE|JSON` (with `--strict-mcp-config`, only
//! those). On a name clash the narrower scope wins: cli > local > project > user.
//!
//! `${VAR}` and `${VAR:-default}` are expanded in command, args, env, url and headers; an unset
//! variable without a default makes the server a reported problem and it is skipped. Project
//! servers start only when approved ([`Approval`]); a `disabledMcpjsonServers` that could not be
//! read starts none of them. Server names that would make `mcp__<server>__<tool>` ambiguous are
//! refused ([`super::names`]), and so are two servers whose names become the same there.
//!
//! Bounds (a repository's file is untrusted): a file is read through a reader that stops past
//! [`MAX_CONFIG_BYTES`] (`~/.claude.json`, which also holds Claude Code's history:
//! [`MAX_CLAUDE_JSON_BYTES`]), and a larger one is reported and skipped whole; one
//! `mcpServers` object yields at most [`MAX_SERVERS_PER_FILE`] servers, in file order, and
//! the rest are reported and not started. Nothing here does I/O beyond reading the files
//! named, and nothing panics: every problem is a line `source: what is wrong`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::names::{normalize, server_name_problem};

/// The most bytes a `.mcp.json` or `--mcp-config` file (or inline JSON) may have.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// The most bytes `~/.claude.json` may have (Claude Code keeps its project history there too).
pub const MAX_CLAUDE_JSON_BYTES: u64 = 16 * 1024 * 1024;
/// The most servers one `mcpServers` object may configure; the rest are not started.
pub const MAX_SERVERS_PER_FILE: usize = 100;

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

impl ServerConfig {
    /// What it runs (its command line) or reaches (its URL and transport), in one line.
    pub fn describe(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for a in args {
                    line.push(' ');
                    line.push_str(a);
                }
                line
            }
            Transport::Http { url, .. } => format!("{url} (HTTP)"),
            Transport::Sse { url, .. } => format!("{url} (SSE)"),
        }
    }
}

/// The approval settings for project (`.mcp.json`) servers, as the settings carry them.
pub use crate::config::settings::McpApprovalSettings as Approval;

impl Approval {
    /// Whether a project server may start: an unreadable `disabledMcpjsonServers` refuses all,
    /// `disabledMcpjsonServers` wins over everything else, then `enableAllProjectMcpServers`,
    /// then `enabledMcpjsonServers`.
    pub fn approves(&self, name: &str) -> bool {
        if self.blocked.is_some() || self.disabled.iter().any(|n| n == name) {
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
    /// Servers turned off: project ones by `disabledMcpjsonServers`, user and local ones by
    /// the project's `disabledMcpServers` in `~/.claude.json`; sorted by name.
    pub disabled: Vec<ServerConfig>,
    /// `source: what is wrong` lines.
    pub problems: Vec<String>,
    /// The `~/.claude.json` read (where turning a user or local server off is kept).
    pub claude_json: Option<PathBuf>,
    /// The names its project entry's `disabledMcpServers` turns off (for user-scope servers
    /// added later too: a plugin's).
    pub turned_off: Vec<String>,
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
    let mut out = McpConfig {
        claude_json: sources.claude_json.clone(),
        ..McpConfig::default()
    };
    // Later inserts win: user, project, local, cli.
    let mut chosen: BTreeMap<String, ServerConfig> = BTreeMap::new();
    let add = |servers: Vec<ServerConfig>, chosen: &mut BTreeMap<String, ServerConfig>| {
        for s in servers {
            chosen.insert(s.name.clone(), s);
        }
    };
    // `disabledMcpServers` of the project's entry in `~/.claude.json`: user and local servers
    // the person turned off here (`/mcp`).
    if !sources.strict {
        if let Some(path) = &sources.claude_json {
            let (user, local, off) = read_claude_json(path, &sources.project_dir, env, &mut out);
            out.turned_off = off;
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
    // A project server shadowed by another scope is not waiting for approval, nor off.
    out.unapproved.retain(|s| !chosen.contains_key(&s.name));
    out.disabled.retain(|s| !chosen.contains_key(&s.name));
    chosen.retain(|name, s| {
        let off = matches!(s.scope, Scope::User | Scope::Local) && out.turned_off.contains(name);
        if off {
            out.disabled.push(s.clone());
        }
        !off
    });
    out.disabled.sort_by(|a, b| a.name.cmp(&b.name));
    out.servers = chosen.into_values().collect();
    refuse_clashing_names(&mut out);
    out
}

/// Servers whose names differ but become the same in tool names (`a.b` and `a_b` are both
/// `mcp__a_b__…`): a rule or a tool name could not tell them apart, so none of them starts.
fn refuse_clashing_names(out: &mut McpConfig) {
    let mut by_normal: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in out.servers.iter().chain(&out.unapproved) {
        by_normal
            .entry(normalize(&s.name))
            .or_default()
            .push(format!("\"{}\" ({})", s.name, s.source));
    }
    by_normal.retain(|_, names| names.len() > 1);
    for (normal, names) in &by_normal {
        out.problems.push(format!(
            "servers {} all become mcp__{normal}__<tool> in tool names, so rules could not \
             tell them apart; none of them is started: rename all but one",
            names.join(" and ")
        ));
    }
    let keep = |s: &ServerConfig| !by_normal.contains_key(&normalize(&s.name));
    out.servers.retain(keep);
    out.unapproved.retain(keep);
}

/// The JSON document in `path`, read through a reader that stops past `limit` bytes; None
/// (with a problem line unless the file does not exist) when it cannot be had.
fn read_json_file(path: &Path, limit: u64, problems: &mut Vec<String>) -> Option<Value> {
    match read_bounded(path, limit) {
        Ok(Some(bytes)) => parse_json(&bytes, &path.display().to_string(), problems),
        Ok(None) => None,
        Err(why) => {
            problems.push(format!("{}: {why}", path.display()));
            None
        }
    }
}

/// The bytes of the regular file `path`, at most `limit` of them: `Ok(None)` when there is no
/// such file, `Err` (why, for a problem line) when it cannot be read or is larger.
fn read_bounded(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, String> {
    use std::io::Read as _;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read: {e}")),
    };
    // A FIFO or a device would block or never end.
    if !meta.is_file() {
        return Err("cannot read: not a regular file".into());
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(Some(bytes))
}

fn too_large(limit: u64) -> String {
    format!(
        "larger than {} KiB, the most cairn reads of an MCP configuration; skipped (no server \
         from it starts)",
        limit / 1024
    )
}

fn parse_json(bytes: &[u8], source: &str, problems: &mut Vec<String>) -> Option<Value> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    match serde_json::from_slice(bytes) {
        Ok(v) => Some(v),
        Err(e) => {
            problems.push(format!("{source}: not valid JSON: {e}"));
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
    let Some(doc) = read_json_file(&path, MAX_CONFIG_BYTES, &mut out.problems) else {
        return Vec::new();
    };
    let source = path.display().to_string();
    let servers = servers_of(&doc, Scope::Project, &source, env, &mut out.problems);
    if let Some(why) = &approval.blocked {
        if !servers.is_empty() {
            out.problems.push(format!(
                "{source}: no server of this file is started, because the settings' list of \
                 refused servers could not be read ({why})"
            ));
        }
        out.disabled.extend(servers);
        return Vec::new();
    }
    servers
        .into_iter()
        .filter(|s| {
            if approval.disabled.contains(&s.name) {
                out.disabled.push(s.clone());
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

/// The user and local servers of `~/.claude.json`, and the names its project entry's
/// `disabledMcpServers` turns off.
fn read_claude_json(
    path: &Path,
    project_dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut McpConfig,
) -> (Vec<ServerConfig>, Vec<ServerConfig>, Vec<String>) {
    let Some(doc) = read_json_file(path, MAX_CLAUDE_JSON_BYTES, &mut out.problems) else {
        return (Vec::new(), Vec::new(), Vec::new());
    };
    let source = path.display().to_string();
    let user = servers_of(&doc, Scope::User, &source, env, &mut out.problems);
    let key = project_dir.to_string_lossy();
    let project = doc.get("projects").and_then(|p| p.get(key.as_ref()));
    let local = project
        .map(|p| {
            let source = format!("{source} (projects[{key}])");
            servers_of(p, Scope::Local, &source, env, &mut out.problems)
        })
        .unwrap_or_default();
    let off = project
        .and_then(|p| p.get(super::edit::DISABLED_KEY))
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    (user, local, off)
}

fn read_cli_arg(
    arg: &str,
    env: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<String>,
) -> Vec<ServerConfig> {
    let trimmed = arg.trim();
    let (doc, source) = if trimmed.starts_with('{') {
        let source = "--mcp-config (inline JSON)".to_string();
        if trimmed.len() as u64 > MAX_CONFIG_BYTES {
            problems.push(format!("{source}: {}", too_large(MAX_CONFIG_BYTES)));
            return Vec::new();
        }
        match parse_json(trimmed.as_bytes(), &source, problems) {
            Some(v) => (v, source),
            None => return Vec::new(),
        }
    } else {
        let path = Path::new(trimmed);
        match read_json_file(path, MAX_CONFIG_BYTES, problems) {
            Some(v) => (v, path.display().to_string()),
            None => {
                if !path.exists() {
                    problems.push(format!("{}: cannot read: no such file", path.display()));
                }
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
    if servers.len() > MAX_SERVERS_PER_FILE {
        problems.push(format!(
            "{source}: {} servers, more than the {MAX_SERVERS_PER_FILE} cairn takes from one \
             file; the first {MAX_SERVERS_PER_FILE} (in file order) are read, the other {} are \
             not started",
            servers.len(),
            servers.len() - MAX_SERVERS_PER_FILE
        ));
    }
    let mut out = Vec::new();
    for (name, value) in servers.iter().take(MAX_SERVERS_PER_FILE) {
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
    if let Some(why) = server_name_problem(name) {
        return Err(why);
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
