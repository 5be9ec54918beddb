//! The session's MCP servers: [`start_servers`] connects every configured server concurrently
//! in the background (starting cairn never waits for them) and hands each server's tools to the
//! shared [`LateTools`] list whenever its lists are new (connected, restarted, changed); while a
//! connected server offers resources, the two resource tools join them, and the core gets the
//! servers' resources and prompts as a [`Catalog`]. A server that fails keeps its error for
//! display. Each [`Server`] owns its live connection and its restarts.
//!
//! A running session can also start a project server the person approves ([`McpManager::
//! approve`], the answer remembered in local settings) and reconnect a server on request
//! ([`McpManager::reconnect`]); every change of status is announced on [`McpManager::changes`].
//!
//! Dropping the [`McpManager`] stops every server (stdio process groups are killed).

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::catalog::{Catalog, SharedServers};
use super::config::{McpConfig, ServerConfig};
use super::server::{McpOptions, OnLists, Server, Status};
use super::tool::McpTool;
use crate::tools::{LateTools, ToolHandle};

/// The owner of the resource tools in the late list (no server can have this name).
const RESOURCE_TOOLS: &str = "\u{0}resources";

/// The person's answer about a project server waiting for approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalChoice {
    /// Start it, and add it to `enabledMcpjsonServers`.
    UseThis,
    /// Start every waiting server, and set `enableAllProjectMcpServers`.
    UseAll,
    /// Leave it off, and add it to `disabledMcpjsonServers`.
    Refuse,
}

/// The session's servers.
pub struct McpManager {
    servers: SharedServers,
    catalog: Arc<Catalog>,
    late: LateTools,
    options: McpOptions,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Project servers waiting for approval.
    unapproved: Mutex<Vec<ServerConfig>>,
    /// Servers turned off (in the settings, or in `/mcp`), sorted by name.
    disabled: Mutex<Vec<ServerConfig>>,
    /// `~/.claude.json`, where turning a user or local server off is remembered.
    claude_json: Option<std::path::PathBuf>,
    changed: Arc<tokio::sync::watch::Sender<u64>>,
    /// Configuration problems (`source: what is wrong`).
    pub problems: Vec<String>,
}

/// A poisoned list is still a list: a panic elsewhere loses no server.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Start connecting every server of `config` in the background; tools appear in `late` as
/// their servers become ready. Must run inside a tokio runtime.
pub fn start_servers(config: McpConfig, options: McpOptions, late: LateTools) -> McpManager {
    let servers: SharedServers = Arc::default();
    let catalog = Arc::new(Catalog::new(Arc::clone(&servers), options.timeouts.startup));
    late.set_catalog(Arc::clone(&catalog) as Arc<dyn crate::tools::mcp_catalog::McpCatalog>);
    let manager = McpManager {
        servers,
        catalog,
        late,
        options,
        tasks: Mutex::new(Vec::new()),
        unapproved: Mutex::new(config.unapproved),
        disabled: Mutex::new(config.disabled),
        claude_json: config.claude_json,
        changed: Arc::new(tokio::sync::watch::channel(0).0),
        problems: config.problems,
    };
    for sc in config.servers {
        manager.launch(sc);
    }
    manager
}

/// The tools of a server that can be named: one without a name, or one whose name becomes the
/// same as an earlier one's in `mcp__<server>__<tool>` (`a.b` after `a_b`), is left out (and
/// logged): the model could not call it, and a rule could not tell it from the other.
fn distinct_tools<'a>(
    server: &'a str,
    tools: &'a [rmcp::model::Tool],
) -> impl Iterator<Item = &'a rmcp::model::Tool> {
    let mut seen = std::collections::HashSet::new();
    tools.iter().filter(move |t| {
        let keep = !t.name.is_empty() && seen.insert(super::names::normalize(&t.name));
        if !keep {
            tracing::warn!(target: "cairn::mcp", server, tool = %t.name,
                "tool left out: its name is empty or the same as another's in mcp__<server>__<tool>");
        }
        keep
    })
}

impl McpManager {
    /// Add `config` to the servers and connect it in the background.
    fn launch(&self, config: ServerConfig) {
        let server = Server::new(
            config,
            self.options.clone(),
            Arc::clone(&self.changed),
            self.publisher(),
        );
        lock(&self.servers).push(Arc::clone(&server));
        let task = self.connect_task(server, false);
        lock(&self.tasks).push(task);
    }

    /// What a server's new lists become: its tools in the late list, and the resource tools
    /// while any server offers resources.
    fn publisher(&self) -> OnLists {
        let late = self.late.clone();
        let (deferred, max_chars) = (self.options.deferred, self.options.max_output_chars);
        // Weak: the servers hold this, and must not keep their own list alive.
        let servers = Arc::downgrade(&self.servers);
        let catalog = Arc::downgrade(&self.catalog);
        Arc::new(move |server: &Arc<Server>| {
            // A server turned off while it was connecting offers nothing.
            let off = servers
                .upgrade()
                .is_some_and(|all| !lock(&all).iter().any(|s| Arc::ptr_eq(s, server)));
            if off {
                return;
            }
            let lists = server.lists();
            let tools: Vec<ToolHandle> = distinct_tools(server.name(), &lists.tools)
                .map(|t| {
                    Arc::new(McpTool::new(Arc::clone(server), t, deferred, max_chars)) as ToolHandle
                })
                .collect();
            late.replace(server.name(), tools);
            let (Some(servers), Some(catalog)) = (servers.upgrade(), catalog.upgrade()) else {
                return;
            };
            let offered = lock(&servers)
                .iter()
                .any(|s| !s.lists().resources.is_empty());
            let present = late.has_owner(RESOURCE_TOOLS);
            if offered != present {
                let tools = match offered {
                    true => crate::tools::mcp_resources::tools(catalog),
                    false => Vec::new(),
                };
                late.replace(RESOURCE_TOOLS, tools);
            }
        })
    }

    /// Connect (or, with `again`, reconnect) `server`; its tools join the late list when its
    /// lists are read.
    fn connect_task(&self, server: Arc<Server>, again: bool) -> tokio::task::JoinHandle<()> {
        let late = self.late.clone();
        tokio::spawn(async move {
            let conn = if again {
                server.reconnect().await
            } else {
                server.start().await
            };
            if conn.is_none() {
                late.replace(server.name(), Vec::new());
                tracing::warn!(target: "cairn::mcp", server = %server.name(), "{}", server.status());
            }
        })
    }

    /// The options its servers start with.
    pub fn options(&self) -> &McpOptions {
        &self.options
    }

    /// Every server started so far (approved ones join as they are approved).
    pub fn servers(&self) -> Vec<Arc<Server>> {
        lock(&self.servers).clone()
    }

    /// Project servers waiting for approval.
    pub fn unapproved(&self) -> Vec<ServerConfig> {
        lock(&self.unapproved).clone()
    }

    /// Servers turned off.
    pub fn disabled(&self) -> Vec<ServerConfig> {
        lock(&self.disabled).clone()
    }

    /// Turn the server `name` off (`enabled` false: disconnected now, its tools gone) or on
    /// again (started now), and remember it for the next sessions: a project server in
    /// `disabledMcpjsonServers` / `enabledMcpjsonServers` of `project_root`'s
    /// `.claude/settings.local.json`, a user or local one in the project's
    /// `disabledMcpServers` in `~/.claude.json`; a server of `--mcp-config`, a plugin or the
    /// client is off for this session only. Nothing changes when the answer cannot be written.
    /// Returns a line for the person.
    pub fn set_enabled(
        &self,
        project_root: &Path,
        name: &str,
        enabled: bool,
    ) -> Result<String, String> {
        let config = match enabled {
            true => self.disabled().into_iter().find(|s| s.name == name),
            false => self.server(name).map(|s| s.config().clone()),
        };
        let state = if enabled { "on" } else { "off" };
        let config = config.ok_or_else(|| format!("no MCP server \"{name}\" to turn {state}"))?;
        let kept = match config.scope {
            super::config::Scope::Project => {
                let choice = match enabled {
                    true => crate::config::local::McpChoice::Enable,
                    false => crate::config::local::McpChoice::Disable,
                };
                let saved = crate::config::local::save_mcp_choice(project_root, name, choice)
                    .map_err(|e| e.to_string())?;
                format!("remembered in {}", saved.display())
            }
            super::config::Scope::User | super::config::Scope::Local => match &self.claude_json {
                Some(file) => {
                    let project = &self.options.project_dir;
                    let saved = super::edit::set_disabled(file, project, name, !enabled)?;
                    format!("remembered in {}", saved.display())
                }
                None => "for this session: there is no ~/.claude.json".into(),
            },
            super::config::Scope::Cli => "for this session".into(),
        };
        if enabled {
            lock(&self.disabled).retain(|s| s.name != name);
            self.launch(config);
        } else if let Some(server) = self.server(name) {
            lock(&self.servers).retain(|s| s.name() != name);
            server.log_event("disabled (asked in /mcp)");
            self.late.replace(name, Vec::new());
            tokio::spawn(async move { server.stop().await });
            let mut off = lock(&self.disabled);
            off.push(config);
            off.sort_by(|a, b| a.name.cmp(&b.name));
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
        Ok(format!("MCP server \"{name}\" turned {state} ({kept})."))
    }

    /// A receiver that sees a new value at every change of a server's status (or of the
    /// waiting list), for a client that redraws on change.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Every server's name, scope, transport and status (for `/mcp`), one line each, then
    /// the servers waiting for approval.
    pub fn status_lines(&self) -> Vec<String> {
        let waiting = self.unapproved().into_iter().map(|s| {
            format!(
                "{} (project): needs approval (add it to enabledMcpjsonServers)",
                s.name
            )
        });
        self.servers()
            .iter()
            .map(|s| {
                let config = s.config();
                format!(
                    "{} ({}, {}): {}",
                    s.name(),
                    config.scope.name(),
                    config.transport.kind(),
                    s.status()
                )
            })
            .chain(waiting)
            .collect()
    }

    /// The servers that failed, by name.
    pub fn failing(&self) -> Vec<String> {
        self.servers()
            .iter()
            .filter(|s| matches!(s.status(), Status::Failed(_)))
            .map(|s| s.name().to_string())
            .collect()
    }

    /// Answer for the project server `name` waiting for approval: the answer is written to
    /// `.claude/settings.local.json` of `project_root` (so it is asked once), and the server
    /// (or, for [`ApprovalChoice::UseAll`], every waiting one) starts now. Returns a line for
    /// the person; an error when no such server waits or the settings cannot be written
    /// (then nothing starts: the answer would be lost).
    pub fn approve(
        &self,
        project_root: &Path,
        name: &str,
        choice: ApprovalChoice,
    ) -> Result<String, String> {
        if !self.unapproved().iter().any(|s| s.name == name) {
            return Err(format!("no MCP server \"{name}\" is waiting for approval"));
        }
        let saved = crate::config::local::save_mcp_choice(project_root, name, choice.into())
            .map_err(|e| e.to_string())?;
        let starting: Vec<ServerConfig> = {
            let mut waiting = lock(&self.unapproved);
            let chosen: Vec<ServerConfig> = match choice {
                ApprovalChoice::UseAll => std::mem::take(&mut *waiting),
                ApprovalChoice::UseThis | ApprovalChoice::Refuse => {
                    let (chosen, rest) = waiting.drain(..).partition(|s| s.name == name);
                    *waiting = rest;
                    chosen
                }
            };
            if choice == ApprovalChoice::Refuse {
                Vec::new()
            } else {
                chosen
            }
        };
        let names: Vec<String> = starting.iter().map(|s| s.name.clone()).collect();
        for config in starting {
            self.launch(config);
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
        let file = saved.display();
        Ok(match choice {
            ApprovalChoice::Refuse => {
                format!("MCP server \"{name}\" stays off (remembered in {file}).")
            }
            _ => format!(
                "Starting MCP server{} {} (remembered in {file}).",
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            ),
        })
    }

    /// Drop `name`'s connection and open a new one in the background (its tools are
    /// replaced when it is ready). An error when there is no such server.
    pub fn reconnect(&self, name: &str) -> Result<(), String> {
        let server = self
            .server(name)
            .ok_or_else(|| format!("no MCP server named \"{name}\""))?;
        let task = self.connect_task(server, true);
        lock(&self.tasks).push(task);
        Ok(())
    }

    /// Where the server `name`'s log file is (or would be), when servers keep logs.
    pub fn log_path(&self, name: &str) -> Option<std::path::PathBuf> {
        let dir = self.options.log_dir.as_deref()?;
        Some(dir.join(super::server_log::file_name(name)))
    }

    pub fn server(&self, name: &str) -> Option<Arc<Server>> {
        self.servers().into_iter().find(|s| s.name() == name)
    }

    /// Every server's prompts, as `/mcp__<server>__<prompt>` commands.
    pub fn prompts(&self) -> Vec<crate::tools::mcp_catalog::PromptEntry> {
        use crate::tools::mcp_catalog::McpCatalog;
        self.catalog.prompts()
    }

    /// The tools of every server connected so far.
    pub fn tools(&self) -> Vec<ToolHandle> {
        self.late.snapshot().1
    }

    /// Wait until no server is still connecting, at most `bound`. Returns whether all settled.
    pub async fn wait_settled(&self, bound: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let pending = lock(&self.tasks).iter().any(|t| !t.is_finished());
            if !pending {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stop every server now.
    pub async fn shutdown(&self) {
        for t in lock(&self.tasks).iter() {
            t.abort();
        }
        for s in self.servers() {
            s.stop().await;
        }
    }
}

impl From<ApprovalChoice> for crate::config::local::McpChoice {
    fn from(choice: ApprovalChoice) -> Self {
        match choice {
            ApprovalChoice::UseThis => Self::Enable,
            ApprovalChoice::UseAll => Self::EnableAll,
            ApprovalChoice::Refuse => Self::Disable,
        }
    }
}

impl Drop for McpManager {
    fn drop(&mut self) {
        for t in lock(&self.tasks).iter() {
            t.abort();
        }
        // Each connection kills its process group when dropped; take them out of the servers
        // (tools in a registry may still hold the servers themselves).
        for s in lock(&self.servers).iter() {
            s.stop_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::{McpConfig, Scope, ServerConfig, Transport};

    #[tokio::test]
    async fn a_user_server_turned_off_is_remembered_in_the_projects_entry_and_back_on() {
        let dir = tempfile::tempdir().unwrap();
        let claude_json = dir.path().join(".claude.json");
        std::fs::write(&claude_json, r#"{"numStartups": 2}"#).unwrap();
        let server = ServerConfig {
            name: "u".into(),
            scope: Scope::User,
            source: claude_json.display().to_string(),
            transport: Transport::Stdio {
                command: "false".into(),
                args: Vec::new(),
                env: Default::default(),
            },
        };
        let config = McpConfig {
            servers: vec![server],
            claude_json: Some(claude_json.clone()),
            ..McpConfig::default()
        };
        let options = super::McpOptions::from_env(dir.path().to_path_buf(), &|_| None);
        let manager = super::start_servers(config, options, Default::default());
        let line = manager.set_enabled(dir.path(), "u", false).unwrap();
        assert_eq!(
            line,
            format!(
                "MCP server \"u\" turned off (remembered in {}).",
                claude_json.display()
            )
        );
        assert!(manager.server("u").is_none());
        assert_eq!(manager.disabled()[0].name, "u");
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&claude_json).unwrap()).unwrap();
        let key = dir.path().display().to_string();
        assert_eq!(
            doc["projects"][&key]["disabledMcpServers"],
            serde_json::json!(["u"])
        );
        assert_eq!(doc["numStartups"], 2);
        manager.set_enabled(dir.path(), "u", true).unwrap();
        assert!(manager.server("u").is_some() && manager.disabled().is_empty());
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&claude_json).unwrap()).unwrap();
        assert_eq!(
            doc["projects"][&key]["disabledMcpServers"],
            serde_json::json!([])
        );
        let err = manager.set_enabled(dir.path(), "nope", false).unwrap_err();
        assert_eq!(err, "no MCP server \"nope\" to turn off");
    }
    #[test]
    fn tools_whose_names_clash_or_are_empty_are_left_out() {
        let tool = |name: &str| -> rmcp::model::Tool {
            serde_json::from_value(serde_json::json!({"name": name, "inputSchema": {}})).unwrap()
        };
        let tools = [tool("a_b"), tool("a.b"), tool(""), tool("c")];
        let kept: Vec<&str> = super::distinct_tools("s", &tools)
            .map(|t| t.name.as_ref())
            .collect();
        assert_eq!(kept, ["a_b", "c"]);
    }
}
