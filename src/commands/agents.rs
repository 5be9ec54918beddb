//! Custom sub-agents, as Claude Code reads them: Markdown files in `.claude/agents/` of the
//! project or of the user's home (and the `.cairn/` equivalents). The YAML frontmatter gives
//! `name` (else the file's stem), `description` (when to use it; required), `tools` (a comma
//! string, a block or a flow list; omitted: every tool), `disallowedTools` (taken away from
//! those), `model` (`inherit`: the session's), `color`, `permissionMode` (the mode its calls
//! are decided in), `maxTurns` (the requests it may make), `skills` (loaded into its context
//! before the task), `background` (always run in the background) and `effort` (how hard its
//! model reasons: `low` … `max`), `isolation` (`worktree`: it runs in a temporary git worktree
//! of the project, `agent::worktree`), `mcpServers` (servers of the session whose tools it
//! gets, by name, and servers the file defines, started for its runs:
//! `agent::subagent_servers`), `hooks` (kept as YAML gave them, read as hooks when it starts:
//! `agent::subagent_scope`; not a mapping: the agent is skipped, as its hooks may guard its
//! calls), `memory` (`user`, `project`, `local`: where its memory directory is); the body is
//! the agent's system prompt. A `tools` field that is not a list of names gives the agent no
//! tools at all, with a notice: a list cairn cannot read never widens what an agent may do; an
//! unknown `permissionMode` leaves the session's, an unknown `effort` the session's reasoning,
//! an unknown `isolation` none. Fields Claude Code acts on that cairn does not yet (none
//! today) are named in a notice. A file without a
//! description, or whose frontmatter does not close or is not YAML, is reported with its file
//! and line and skipped; the project's agent wins over the user's of the same name.

use std::path::{Path, PathBuf};

use super::frontmatter::{self, ToolList};
use super::{Found, Root, markdown_files, present_roots};
use crate::llm::Effort;
use crate::protocol::PermissionMode;

/// The frontmatter fields of an agent file cairn applies.
const APPLIED: &[&str] = &[
    "name",
    "description",
    "tools",
    "disallowedTools",
    "model",
    "color",
    "permissionMode",
    "maxTurns",
    "skills",
    "background",
    "effort",
    "mcpServers",
    "hooks",
    "memory",
    "isolation",
];

/// Known fields cairn does not act on yet.
const NOT_APPLIED: &[&str] = &[];

/// One custom agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentDef {
    pub name: String,
    pub description: String,
    /// The tools it may use; `None`: all of the session's (but Agent itself). An unreadable
    /// `tools` field is `Some(vec![])`.
    pub tools: Option<Vec<String>>,
    /// Tools taken away from `tools` (or from all of them).
    pub disallowed_tools: Vec<String>,
    pub model: Option<String>,
    /// The colour the person chose for it (`red`, `cyan`...).
    pub color: Option<String>,
    /// The mode its calls are decided in (`permissionMode`); `None`: the session's. The
    /// session's bypass and plan modes win over it, and it is never bypass unless the session
    /// may bypass (see `PermissionGate::set_conversation_mode`).
    pub permission_mode: Option<PermissionMode>,
    /// How many requests it may make before it is stopped (`maxTurns`).
    pub max_turns: Option<u32>,
    /// Skills whose text it gets before its task (`skills`).
    pub skills: Vec<String>,
    /// It always runs in the background (`background: true`).
    pub background: bool,
    /// How hard its model reasons (`effort`); `None`: as the session's requests.
    pub effort: Option<Effort>,
    /// The MCP servers its `mcpServers` names or defines.
    pub mcp_servers: Vec<AgentServer>,
    /// Hooks for its run (`hooks`), read as the settings' hooks when it starts.
    pub hooks: Option<AgentHooks>,
    /// Where its persistent memory directory is (`memory`).
    pub memory: Option<MemoryScope>,
    /// It runs in a temporary git worktree of the project (`isolation: worktree`).
    pub worktree: bool,
    /// Its system prompt.
    pub prompt: String,
    pub path: PathBuf,
}

/// An MCP server an agent's `mcpServers` lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentServer {
    /// A server the session has (`.mcp.json`, the settings): the agent gets its tools.
    Named(String),
    /// A server defined in the agent's file (`.mcp.json`'s shape), for the agent's run only.
    Inline {
        name: String,
        config: serde_json::Value,
    },
}

/// Where an agent's memory directory is: `user` (`~/.claude/agent-memory/<name>/`),
/// `project` (`.claude/agent-memory/<name>/`), `local` (`.claude/agent-memory-local/<name>/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryScope {
    User,
    Project,
    Local,
}

/// An agent file's `hooks` as YAML gave them (an object of events), and the file's text, so
/// the notices about them can name their lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentHooks {
    pub value: serde_json::Value,
    pub text: String,
}

impl AgentServer {
    pub fn name(&self) -> &str {
        match self {
            AgentServer::Named(name) | AgentServer::Inline { name, .. } => name,
        }
    }
}

impl AgentDef {
    /// Whether a tool called `name` of MCP server `server` comes with the agent's
    /// `mcpServers` (unless its `disallowedTools` takes it away: the tool, `mcp__<server>` or
    /// `mcp__<server>__*`).
    pub fn gets_server_tool(&self, server: &str, name: &str) -> bool {
        self.mcp_servers.iter().any(|s| s.name() == server)
            && !self.takes_away_server_tool(server, name)
    }

    /// Whether its `disallowedTools` takes away the tool called `name` of MCP server
    /// `server`: by name, `mcp__<server>` or `mcp__<server>__*`.
    pub fn takes_away_server_tool(&self, server: &str, name: &str) -> bool {
        let whole = format!("mcp__{server}");
        let all = format!("mcp__{server}__*");
        self.disallowed_tools
            .iter()
            .any(|n| n == name || *n == whole || *n == all)
    }

    /// Whether the agent may use the tool called `name` (or aliased `aliases`), as far as its
    /// own file says.
    pub fn may_use(&self, name: &str, aliases: &[&str]) -> bool {
        let named = |list: &[String]| {
            list.iter()
                .any(|n| n == name || aliases.contains(&n.as_str()))
        };
        !named(&self.disallowed_tools) && self.tools.as_deref().is_none_or(named)
    }
}

/// Agents of the project first, then of the user; a name is taken once.
pub fn discover(project: &Path, home: Option<&Path>) -> Found<AgentDef> {
    let mut out = Found::default();
    for root in present_roots(project, home, "agents", &mut out.problems) {
        for file in markdown_files(&root.dir) {
            let agent = read_agent(&root, &file, &mut out.problems);
            out.add(agent, |a| a.name.as_str());
        }
    }
    out
}

pub(crate) fn read_agent(
    root: &Root,
    file: &Path,
    notices: &mut Vec<String>,
) -> Result<AgentDef, String> {
    let text = root.read(file, "agent")?;
    let (mut front, body) = frontmatter::parse(&text, file, "agent")?;
    let Some(description) = front.text("description") else {
        return Err(format!(
            "{}:1: no `description` in the frontmatter; agent skipped",
            file.display()
        ));
    };
    let name = front.text("name").unwrap_or_else(|| {
        file.file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let tools = match front.names("tools", "the agent gets no tools") {
        ToolList::Absent => None,
        ToolList::Listed(names) => Some(names),
        ToolList::Unreadable => Some(Vec::new()),
    };
    // An unreadable deny list cannot be honoured: then the agent gets no tools either.
    let (tools, disallowed_tools) = match front.names("disallowedTools", "the agent gets no tools")
    {
        ToolList::Absent => (tools, Vec::new()),
        ToolList::Listed(names) => (tools, names),
        ToolList::Unreadable => (Some(Vec::new()), Vec::new()),
    };
    let permission_mode = front.text("permissionMode").and_then(|m| {
        let mode = PermissionMode::parse(&m);
        if mode.is_none() {
            front.wrong(
                "permissionMode",
                "default, acceptEdits, plan, dontAsk or bypassPermissions",
                "the agent runs in the session's mode",
            );
        }
        mode
    });
    let skills = match front.names("skills", "no skills are loaded for it") {
        ToolList::Listed(names) => names,
        ToolList::Absent | ToolList::Unreadable => Vec::new(),
    };
    let effort = front.text("effort").and_then(|e| {
        let effort = Effort::parse(&e);
        if effort.is_none() {
            front.wrong(
                "effort",
                Effort::NAMES,
                "the agent reasons as the session's requests do",
            );
        }
        effort
    });
    // Hooks may guard its calls: a `hooks` value cairn cannot read skips the agent.
    let hooks = match front.raw("hooks") {
        None | Some((serde_json::Value::Null, _)) => None,
        Some((value @ serde_json::Value::Object(_), _)) => Some(AgentHooks {
            value: value.clone(),
            text: text.clone(),
        }),
        Some(_) => {
            front.wrong(
                "hooks",
                "a mapping of hook events",
                "agent skipped (its hooks may guard its calls)",
            );
            return Err(front.take_last_notice().unwrap_or_default());
        }
    };
    let memory = front.text("memory").and_then(|m| {
        let scope = match m.as_str() {
            "user" => Some(MemoryScope::User),
            "project" => Some(MemoryScope::Project),
            "local" => Some(MemoryScope::Local),
            _ => None,
        };
        if scope.is_none() {
            front.wrong(
                "memory",
                "user, project or local",
                "the agent has no memory directory",
            );
        }
        scope
    });
    let worktree = front.text("isolation").is_some_and(|i| {
        let worktree = i == "worktree";
        if !worktree {
            front.wrong(
                "isolation",
                "worktree",
                "the agent runs in the project itself",
            );
        }
        worktree
    });
    let mcp_servers = mcp_servers(&mut front);
    let agent = AgentDef {
        name,
        description,
        tools,
        disallowed_tools,
        model: front.text("model").filter(|m| m != "inherit"),
        color: front.text("color"),
        permission_mode,
        max_turns: front.count("maxTurns").filter(|n| *n > 0),
        skills,
        background: front.flag("background").unwrap_or(false),
        effort,
        mcp_servers,
        hooks,
        memory,
        worktree,
        prompt: body.trim().to_string(),
        path: file.to_path_buf(),
    };
    front.not_applied(NOT_APPLIED, "agent");
    notices.extend(front.finish(&[APPLIED, NOT_APPLIED].concat()));
    Ok(agent)
}

/// `mcpServers`: a list whose entries are server names or `name: {definition}`; a comma
/// string of names. An entry of another shape is a notice and skipped (the agent gets fewer
/// servers, never more).
fn mcp_servers(front: &mut frontmatter::Front) -> Vec<AgentServer> {
    use serde_json::Value;
    let Some((value, _)) = front.raw("mcpServers") else {
        return Vec::new();
    };
    let items = match value {
        Value::Array(items) => items.clone(),
        Value::String(s) => frontmatter::split_names(s)
            .into_iter()
            .map(Value::String)
            .collect(),
        Value::Null => return Vec::new(),
        _ => {
            front.wrong(
                "mcpServers",
                "a list of server names or definitions",
                "the agent gets no servers of its own",
            );
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (n, item) in items.into_iter().enumerate() {
        match item {
            Value::String(name) if !name.trim().is_empty() => {
                out.push(AgentServer::Named(name.trim().to_string()));
            }
            Value::Object(map) if map.len() == 1 && map.values().all(Value::is_object) => {
                if let Some((name, config)) = map.into_iter().next() {
                    out.push(AgentServer::Inline { name, config });
                }
            }
            _ => front.notice(
                "mcpServers",
                &format!(
                    "`mcpServers` entry {} should be a server name or `name: {{definition}}`; \
                     that entry is ignored",
                    n + 1
                ),
            ),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_found_with_their_tools_and_broken_ones_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let (proj, home) = (tmp.path().join("proj"), tmp.path().join("home"));
        let write = |p: PathBuf, t: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        };
        write(
            proj.join(".claude/agents/reviewer.md"),
            "---\nname: code-reviewer\ndescription: Reviews diffs\ntools: Read, Grep, Glob\nmodel: haiku\n---\nYou review code.\n",
        );
        write(
            home.join(".claude/agents/helper.md"),
            "---\ndescription: Helps\nmodel: inherit\n---\nYou help.\n",
        );
        write(home.join(".claude/agents/broken.md"), "no frontmatter\n");
        let found = discover(&proj, Some(&home));
        let names: Vec<&str> = found.items.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["code-reviewer", "helper"]);
        let reviewer = &found.items[0];
        assert_eq!(
            reviewer.tools.as_deref(),
            Some(&["Read".to_string(), "Grep".into(), "Glob".into()][..])
        );
        assert_eq!(reviewer.model.as_deref(), Some("haiku"));
        assert_eq!(reviewer.prompt, "You review code.");
        assert_eq!(found.items[1].tools, None);
        assert_eq!(found.items[1].model, None);
        assert_eq!(found.problems.len(), 1);
        assert!(found.problems[0].contains("broken.md:1: no `description`"));
    }
}
