//! The Agent tool (Claude Code's Task): the model hands a self-contained task to a sub-agent,
//! which works in a fresh conversation with its own system prompt and tools and returns only its
//! final report. `subagent_type` picks one of the person's agents (`.claude/agents/*.md`) or
//! the built-in `general-purpose` one. The sub-agent's own tool calls go through the permission
//! gate like any other; starting one needs no permission of its own (`Agent(name)` deny rules
//! refuse it). `isolation: "worktree"` runs it in a temporary git worktree of the project (as
//! its file's `isolation` does). Running sub-agents is the agent core's business: this tool
//! reaches it through [`SubagentRunner`], so the tool layer stays below the core.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Access, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::protocol::Display;
use crate::session::context::SessionContext;

/// The tool's name; Claude Code's older `Task` is an alias.
pub const NAME: &str = "Agent";
/// Other names the model may call the tool by (Claude Code's older `Task`).
pub const ALIASES: &[&str] = &["Task", "agent"];

/// Whether `name` (from an agent's `tools` list) names this tool.
pub fn is_agent_tool(name: &str) -> bool {
    name == NAME || ALIASES.contains(&name)
}

/// The agent used when `subagent_type` is not given.
pub const GENERAL_PURPOSE: &str = "general-purpose";

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInput {
    /// The task in 3-5 words.
    pub description: String,
    /// The whole task.
    pub prompt: String,
    /// Default `general-purpose`.
    #[serde(default)]
    pub subagent_type: Option<String>,
    /// An alias (`haiku`) or id; default: the agent's, else the session's.
    #[serde(default)]
    pub model: Option<String>,
    /// Return an id at once; the report comes later by itself: go on meanwhile.
    #[serde(default)]
    pub run_in_background: Option<bool>,
    /// An earlier agent's id (its result names it), to continue it; `prompt` is its next task.
    #[serde(default)]
    pub resume: Option<String>,
    /// "worktree": run in a temporary git worktree.
    #[serde(default)]
    pub isolation: Option<String>,
}

/// The only `isolation` there is.
const WORKTREE: &str = "worktree";

/// How a sub-agent is to run, besides its task.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions<'a> {
    /// A model alias or id; `None`: the agent's, else the session's.
    pub model: Option<&'a str>,
    /// In a temporary git worktree of the project (the call's `isolation: "worktree"`; the
    /// agent's own file may ask for it too).
    pub worktree: bool,
}

/// What a finished sub-agent run hands back: its report, and the id that resumes it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentDone {
    pub report: String,
    pub agent_id: String,
}

/// The tool's result text: the report, then the id to resume the agent with (Claude Code's
/// wording).
pub fn result_text(done: &SubagentDone) -> String {
    format!(
        "{}\n\nagentId: {} (for resuming to continue this agent's work if needed)",
        done.report.trim_end(),
        done.agent_id
    )
}

/// Runs a sub-agent to the end; implemented by the agent core.
#[async_trait]
pub trait SubagentRunner: Send + Sync {
    /// The agents there are: (name, when to use it).
    fn agents(&self) -> Vec<(String, String)>;
    /// Run `agent` on `prompt` (as `options` say) until it answers; its final text, or why
    /// it failed.
    async fn run(
        &self,
        agent: &str,
        prompt: &str,
        options: RunOptions<'_>,
        ctx: &ToolContext,
    ) -> Result<SubagentDone, String>;
    /// The agent type of the earlier sub-agent `id` of this session, or why it cannot be
    /// resumed (no such id).
    fn resumable(&self, _id: &str) -> Result<String, String> {
        Err("this session keeps no sub-agents to resume".into())
    }
    /// Continue the earlier sub-agent `id` with its whole conversation, `prompt` its next
    /// task.
    async fn resume(
        &self,
        _id: &str,
        _prompt: &str,
        _options: RunOptions<'_>,
        _ctx: &ToolContext,
    ) -> Result<SubagentDone, String> {
        Err("this session keeps no sub-agents to resume".into())
    }
    /// Whether `agent`'s own file says it always runs in the background (`background: true`).
    fn always_in_background(&self, _agent: &str) -> bool {
        false
    }
    /// Start `agent` on `prompt` in the background; its id (its report reaches the
    /// conversation later as a reminder), or why it could not start.
    async fn start_background(
        &self,
        agent: &str,
        description: &str,
        prompt: &str,
        options: RunOptions<'_>,
        ctx: &ToolContext,
    ) -> Result<String, String>;
}

pub struct AgentTool {
    runner: Arc<dyn SubagentRunner>,
}

impl AgentTool {
    pub fn new(runner: Arc<dyn SubagentRunner>) -> AgentTool {
        AgentTool { runner }
    }
}

fn agent_name(input: &AgentInput) -> &str {
    input
        .subagent_type
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or(GENERAL_PURPOSE)
}

/// The `resume` id of a call, when it names one.
fn resume_id(input: &AgentInput) -> Option<&str> {
    input
        .resume
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// A finished run's output: the report and its id for the model, the report for the person.
fn finished(done: &SubagentDone) -> ToolOutput {
    let display = Display::Markdown {
        text: done.report.clone(),
    };
    ToolOutput::with_display(result_text(done), display)
}

#[async_trait]
impl Tool for AgentTool {
    type Input = AgentInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new(NAME, ToolKind::Other)
            .aliases(ALIASES)
            .read_only()
            .concurrency_safe()
    }

    fn description(&self) -> String {
        let mut text = String::from(
            "Hands a self-contained task (searches, research, independent work) to a \
             sub-agent, which returns only its final report. It cannot see this conversation: \
             give it every fact it needs. Several calls in one message run at once. A result \
             ends with the agent's id: pass it as resume (the next task as prompt) to continue \
             that agent. Agents:",
        );
        for (name, description) in self.runner.agents() {
            text.push_str(&format!("\n- {name}: {description}"));
        }
        text
    }

    fn title(&self, input: &AgentInput, _ctx: &SessionContext) -> String {
        format!("{} · {}", agent_name(input), input.description.trim())
    }

    fn accesses(&self, input: &AgentInput, _ctx: &SessionContext) -> Vec<Access> {
        // A resumed agent is checked as the type it was started as.
        let name = match resume_id(input).map(|id| self.runner.resumable(id)) {
            Some(Ok(kind)) => kind,
            _ => agent_name(input).to_string(),
        };
        vec![Access::Named(name)]
    }

    async fn validate(&self, input: &AgentInput, _ctx: &ToolContext) -> Result<(), ToolError> {
        if let Some(other) = input.isolation.as_deref().filter(|i| i.trim() != WORKTREE) {
            return Err(ToolError::new(format!(
                "isolation `{other}` is not known: the only isolation is \"{WORKTREE}\""
            )));
        }
        if let Some(id) = resume_id(input) {
            return match self.runner.resumable(id) {
                Ok(_) => Ok(()),
                Err(why) => Err(ToolError::new(format!("Cannot resume agent '{id}': {why}"))),
            };
        }
        let name = agent_name(input);
        let agents = self.runner.agents();
        if agents.iter().any(|(n, _)| n == name) {
            return Ok(());
        }
        let names: Vec<&str> = agents.iter().map(|(n, _)| n.as_str()).collect();
        Err(ToolError::new(format!(
            "Agent type '{name}' not found. Available agents: {}",
            names.join(", ")
        )))
    }

    async fn call(&self, input: AgentInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let name = agent_name(&input);
        let options = RunOptions {
            model: input
                .model
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty()),
            worktree: input.isolation.is_some(),
        };
        if let Some(id) = resume_id(&input) {
            // A resumed agent runs in the foreground, as the type it was started as.
            return match self.runner.resume(id, &input.prompt, options, ctx).await {
                Ok(done) => Ok(finished(&done)),
                Err(why) => Err(ToolError::new(format!("The agent {id} failed: {why}"))),
            };
        }
        if input.run_in_background == Some(true) || self.runner.always_in_background(name) {
            let description = input.description.trim();
            return match self
                .runner
                .start_background(name, description, &input.prompt, options, ctx)
                .await
            {
                Ok(id) => Ok(ToolOutput::with_display(
                    format!(
                        "The {name} agent is working in the background as {id}. Its report \
                         will come to you by itself when it is done; do not wait or poll \
                         for it."
                    ),
                    Display::Text {
                        text: format!("Running in the background as {id} (/tasks)"),
                    },
                )),
                Err(why) => Err(ToolError::new(format!(
                    "The {name} agent could not start: {why}"
                ))),
            };
        }
        match self.runner.run(name, &input.prompt, options, ctx).await {
            Ok(done) => Ok(finished(&done)),
            Err(why) => Err(ToolError::new(format!("The {name} agent failed: {why}"))),
        }
    }
}
