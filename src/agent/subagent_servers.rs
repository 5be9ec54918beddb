//! A custom agent's own MCP servers: the `mcpServers` entries that define one
//! (`name: {definition}`, `.mcp.json`'s shape), started when its run starts (through the
//! session's [`AgentServers`]: the MCP client, with the session's options), their tools offered
//! to that run only (`mcp__<server>__<tool>`, through the same permission gate as any MCP
//! tool; its `disallowedTools` and the gate's deny rules take them away as they do a named
//! server's), and stopped when the run ends, however it ends (a dropped run stops them too).
//! An own server's name hides the session's server of that name for the run (a notice says
//! so). A server that does not start is a notice, and a line in the agent's result; the agent
//! runs without it. Waiting for them is bounded by each server's start-up timeout
//! (`MCP_TIMEOUT`) and by the run's cancellation.
//!
//! Nothing from an untrusted folder runs: the host takes a project agent's definitions away
//! until the folder is trusted ([`without_untrusted_servers`]), and a plugin's agents never
//! have any ([`without_plugin_servers`]), as Claude Code documents.

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::services::SessionServices;
use super::tool_set::ToolSet;
use crate::commands::agents::{AgentDef, AgentServer};
use crate::protocol::Event;
use crate::session::context::EventSender;
use crate::tools::DynTool;
use crate::tools::agent_servers::{InlineServer, RunServers};

/// The servers one run of an agent defines, before and while they run.
pub(crate) struct OwnServers {
    def: AgentDef,
    defined: Vec<InlineServer>,
    running: Option<RunServers>,
}

impl OwnServers {
    /// The servers `def` defines (a name defined twice: the first); `None` when it defines
    /// none.
    pub fn of(def: &AgentDef) -> Option<OwnServers> {
        let mut seen = std::collections::HashSet::new();
        let defined: Vec<InlineServer> = def
            .mcp_servers
            .iter()
            .filter_map(|s| match s {
                AgentServer::Inline { name, config } => Some(InlineServer {
                    name: name.clone(),
                    config: config.clone(),
                    source: def.path.clone(),
                }),
                AgentServer::Named(_) => None,
            })
            .filter(|s| seen.insert(s.name.clone()))
            .collect();
        (!defined.is_empty()).then(|| OwnServers {
            def: def.clone(),
            defined,
            running: None,
        })
    }

    /// Start the servers (their tools join `tools`), unless `cancel` fires first. Returns a
    /// line for the agent's result about each server that did not start.
    pub async fn start(
        &mut self,
        services: &SessionServices,
        events: &EventSender,
        tools: &mut ToolSet,
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, String> {
        let agent = self.def.name.clone();
        let failed = match &services.agent_servers {
            Some(starter) => {
                let run = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err("interrupted by the user".into()),
                    run = starter.start(&agent, &self.defined) => run,
                };
                let failed = run.failed.clone();
                let (late, keep) = (run.tools.clone(), self.keep(services));
                let ours = run.servers.clone();
                tools.rebuild(|registry| {
                    shadowed(registry, &ours, &agent, events);
                    registry
                        .mapped(
                            |t| (!serves(t.as_ref(), &ours)).then(|| Arc::clone(t)),
                            Vec::new(),
                        )
                        .following(late, keep)
                });
                self.running = Some(run);
                failed
            }
            None => {
                let why = "this session runs no MCP servers";
                let failed = self.defined.iter().map(|s| (s.name.clone(), why.into()));
                failed.collect()
            }
        };
        let mut lines = Vec::new();
        for (name, why) in failed {
            events.send(Event::Notice {
                message: format!(
                    "The {agent} agent's MCP server \"{name}\" did not start: {why}. The agent \
                     runs without it."
                ),
            });
            lines.push(format!(
                "(The MCP server \"{name}\" of the {agent} agent did not start, and it ran \
                 without it: {why})"
            ));
        }
        Ok(lines)
    }

    /// Which of the run's servers' tools the agent gets: its `disallowedTools` and the
    /// gate's deny rules take them away as they do a named server's.
    fn keep(
        &self,
        services: &SessionServices,
    ) -> impl Fn(&dyn DynTool) -> bool + Send + Sync + use<> {
        let def = self.def.clone();
        let gate = Arc::clone(&services.gate);
        move |t: &dyn DynTool| {
            t.mcp_name()
                .is_some_and(|m| !def.takes_away_server_tool(m.server, t.name()))
                && gate.offers_tool(t)
        }
    }

    /// Stop the servers (the run ended) and wait until they are gone.
    pub async fn close(&mut self) {
        if let Some(run) = self.running.take() {
            run.close().await;
        }
    }
}

/// Whether `tool` is a tool of one of `servers` (named as in `mcp__<server>__…`).
fn serves(tool: &dyn DynTool, servers: &[String]) -> bool {
    tool.mcp_name()
        .is_some_and(|m| servers.iter().any(|s| s == m.server))
}

/// Tell of each of `servers` whose name a session server the agent had already has.
fn shadowed(
    registry: &crate::tools::ToolRegistry,
    servers: &[String],
    agent: &str,
    events: &EventSender,
) {
    for server in servers {
        let theirs = registry
            .iter()
            .any(|t| serves(t.as_ref(), std::slice::from_ref(server)));
        if theirs {
            events.send(Event::Notice {
                message: format!(
                    "The {agent} agent defines its own MCP server \"{server}\": it replaces the \
                     session's server of that name for the agent's run."
                ),
            });
        }
    }
}

/// The names of the servers `agent` defines, quoted and joined.
fn defined_names(agent: &AgentDef) -> Option<String> {
    let names: Vec<String> = agent
        .mcp_servers
        .iter()
        .filter(|s| matches!(s, AgentServer::Inline { .. }))
        .map(|s| format!("`{}`", s.name()))
        .collect();
    (!names.is_empty()).then(|| names.join(", "))
}

/// Keep only the servers `agent` names (those of the session).
fn keep_named(agent: &mut AgentDef) {
    agent
        .mcp_servers
        .retain(|s| matches!(s, AgentServer::Named(_)));
}

/// `agents` without the servers those under `project_dir` define (the folder is not
/// trusted), and a notice for each agent that lost some.
pub fn without_untrusted_servers(agents: &mut [AgentDef], project_dir: &Path) -> Vec<String> {
    agents
        .iter_mut()
        .filter(|a| a.path.starts_with(project_dir))
        .filter_map(|a| {
            let names = defined_names(a)?;
            keep_named(a);
            Some(format!(
                "{}: the {} agent's own MCP servers ({names}) do not start until you trust this \
                 folder",
                a.path.display(),
                a.name
            ))
        })
        .collect()
}

/// A plugin's `agent` without the servers it defines (a plugin's agents may not define any),
/// and the notice when it had some.
pub fn without_plugin_servers(agent: &mut AgentDef) -> Option<String> {
    let names = defined_names(agent)?;
    keep_named(agent);
    Some(format!(
        "{}: the {} agent's own MCP servers ({names}) do not start: a plugin's agents cannot \
         define MCP servers",
        agent.path.display(),
        agent.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(path: &str, servers: Vec<AgentServer>) -> AgentDef {
        AgentDef {
            name: "a".into(),
            mcp_servers: servers,
            path: path.into(),
            ..AgentDef::default()
        }
    }

    #[test]
    fn an_untrusted_projects_and_a_plugins_agents_keep_only_named_servers() {
        let own = || AgentServer::Inline {
            name: "own".into(),
            config: serde_json::json!({"command": "x"}),
        };
        let named = || AgentServer::Named("github".into());
        let mut agents = vec![
            agent("/p/.claude/agents/a.md", vec![named(), own()]),
            agent("/home/.claude/agents/a.md", vec![own()]),
        ];
        let notices = without_untrusted_servers(&mut agents, Path::new("/p"));
        assert_eq!(
            notices,
            [
                "/p/.claude/agents/a.md: the a agent's own MCP servers (`own`) do not start until \
              you trust this folder"
            ]
        );
        assert_eq!(agents[0].mcp_servers, [named()]);
        assert!(OwnServers::of(&agents[0]).is_none());
        // The user's agent keeps its own; a name defined twice starts once.
        agents[1].mcp_servers.push(own());
        let kept = OwnServers::of(&agents[1]).unwrap();
        assert_eq!(kept.defined.len(), 1);
        let mut plugin = agent("/plugins/x/agents/a.md", vec![own(), named()]);
        assert_eq!(
            without_plugin_servers(&mut plugin).as_deref(),
            Some(
                "/plugins/x/agents/a.md: the a agent's own MCP servers (`own`) do not start: a \
                 plugin's agents cannot define MCP servers"
            )
        );
        assert_eq!(plugin.mcp_servers, [named()]);
        assert_eq!(without_plugin_servers(&mut plugin), None);
    }
}
