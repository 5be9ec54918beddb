//! Sub-agents: the core's side of the Agent tool. Each run is a fresh [`Core`] with its own
//! conversation, system prompt (the agent's role, the memory files, the environment) and tools
//! (the session's, the read-only ones for the built-in Explore and Plan agents, or the ones a
//! custom agent names; never Agent itself, nor plan mode), and its own read-file state (it must
//! read a file before editing it, like any agent), sharing the session's permission gate,
//! hooks and pending decisions — so the person is asked about its calls as about any other, each
//! labelled with the agent (`Explore › Grep parse`). Its tool calls, permission requests and notices reach the client; its streamed text
//! does not (only its final report, as the tool's result). Its conversation is kept in the
//! session's data directory (`subagents/<n>.jsonl`). SubagentStop hooks run when it finishes
//! and may send it back to work.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use tokio::sync::mpsc;

use super::core::{Core, Step, UsageSink, lock};
use super::executor::PendingDecisions;
use super::prompt::{Environment, subagent_prompt};
use crate::commands::agents::AgentDef;
use crate::config::model::{Aliases, ModelPick};
use crate::hooks::Hooks;
use crate::llm::retry::RetryPolicy;
use crate::llm::{ContentBlock, ModelClient};
use crate::permissions::PermissionGate;
use crate::protocol::{Event, Usage};
use crate::session::context::{EventSender, SessionContext};
use crate::session::transcript::Transcript;
use crate::tools::agent_tool::{GENERAL_PURPOSE, SubagentRunner};
use crate::tools::{ToolContext, ToolKind, ToolRegistry};

/// A sub-agent that has not answered after this many requests is stopped.
const MAX_REQUESTS: u32 = 60;
/// How many times in a row SubagentStop hooks may send a sub-agent back to work.
const MAX_FORCED: u32 = 3;

const GENERAL_ROLE: &str = "\
You are a general-purpose agent working in the user's repository on a task another agent gave \
you. Search and read before you conclude; use several tools at once when they are independent. \
Do what the task asks and no more.";

const EXPLORE_ROLE: &str = "\
You are a fast, read-only explorer of the user's repository. Find the files, functions and facts \
the task asks about with Glob, Grep and Read (several at once when independent); change nothing. \
Report file paths with line numbers, and say how sure you are.";

const PLAN_ROLE: &str = "\
You are a software architect. Read the parts of the repository the task concerns (change \
nothing) and answer with an implementation plan: the files to change and how, in order, the \
risks, and how to test it.";

/// The built-in agents besides `general-purpose`.
const EXPLORE: &str = "Explore";
const PLAN: &str = "Plan";

/// Which agent runs.
enum Kind<'a> {
    General,
    Explore,
    Plan,
    Custom(&'a AgentDef),
}

/// What every sub-agent of a session shares with it.
pub(crate) struct Subagents {
    pub client: Arc<dyn ModelClient>,
    pub model: ModelPick,
    pub aliases: Aliases,
    pub session: Arc<SessionContext>,
    pub gate: Arc<PermissionGate>,
    pub hooks: Arc<Hooks>,
    pub decisions: PendingDecisions,
    pub retry: RetryPolicy,
    pub max_tokens: u32,
    pub auto_compact_pct: u8,
    pub env: Environment,
    pub memory: String,
    pub defs: Vec<AgentDef>,
    /// The tools sub-agents may use; set once the session's registry exists.
    pub registry: OnceLock<ToolRegistry>,
    pub runs: AtomicU64,
    /// Shared with the session's core, which counts what its sub-agents used.
    pub usage: UsageSink,
    /// The session's choice about deferred tools; each sub-agent loads its own.
    pub tool_search: super::deferral::ToolSearchConfig,
}

impl Subagents {
    /// A session of its own whose events reach the client only for tool calls, permission
    /// requests and notices; files read are shared with the parent.
    fn sub_session(&self, agent: &str) -> Arc<SessionContext> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let parent = self.session.events.clone();
        let agent = agent.to_string();
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if let Some(event) = forwarded(event, &agent) {
                    parent.send(event);
                }
            }
        });
        let mut sub = SessionContext::new(
            self.session.session_id.clone(),
            self.session.project_dir.clone(),
            self.session.additional_dirs.clone(),
            self.session.data_dir.clone(),
            EventSender::new(tx),
        )
        .with_tool_env(self.session.tool_env().to_vec());
        // The session's checkpoints: a sub-agent's writing tools record one first too.
        sub.checkpoints = self.session.checkpoints.clone();
        Arc::new(sub)
    }

    fn core_for(&self, name: &str, agent: &Kind<'_>, model: Option<&str>) -> Result<Core, String> {
        let all = self.registry.get().ok_or("sub-agents are not ready yet")?;
        let registry = match agent {
            Kind::Custom(AgentDef {
                tools: Some(names), ..
            }) => all.filtered(|t| {
                names
                    .iter()
                    .any(|n| n == t.name() || t.aliases().contains(&n.as_str()))
            }),
            Kind::Custom(_) | Kind::General => all.filtered(|_| true),
            // Read-only: reading, searching and fetching; no shell, no edits.
            Kind::Explore | Kind::Plan => {
                all.filtered(|t| matches!(t.kind(), ToolKind::Read | ToolKind::Fetch))
            }
        };
        let (role, own_model) = match agent {
            Kind::Custom(d) => (d.prompt.as_str(), d.model.as_deref()),
            Kind::General => (GENERAL_ROLE, None),
            Kind::Explore => (EXPLORE_ROLE, None),
            Kind::Plan => (PLAN_ROLE, None),
        };
        let system = subagent_prompt(role, &self.env, &self.memory, &registry);
        let model = match model.or(own_model) {
            Some(name) => self.aliases.pick(name),
            None => self.model.clone(),
        };
        let session = self.sub_session(name);
        let n = self.runs.fetch_add(1, Ordering::Relaxed) + 1;
        let transcript = Transcript::at(
            session
                .data_dir
                .join("subagents")
                .join(format!("{n}.jsonl")),
            &session.session_id,
        );
        Ok(Core {
            client: Arc::clone(&self.client),
            model,
            aliases: self.aliases.clone(),
            session,
            gate: Arc::clone(&self.gate),
            hooks: Arc::clone(&self.hooks),
            registry,
            decisions: self.decisions.clone(),
            system,
            messages: Vec::new(),
            max_turns: None,
            retry: self.retry.clone(),
            max_tokens: self.max_tokens,
            total_usage: Usage::default(),
            total_cost: 0.0,
            turn_counter: 0,
            deferral: super::deferral::Deferral::new(
                self.tool_search.mode,
                self.tool_search
                    .references
                    .unwrap_or_else(|| self.client.supports_tool_references()),
            ),
            registry_version: 0,
            transcript,
            demo: false,
            commands: Vec::new(),
            memory_files: Vec::new(),
            auto_compact_pct: self.auto_compact_pct,
            last_context: 0,
            memory_chars: self.memory.len(),
            last_state: None,
            resume: None,
            usage_sink: Some(Arc::clone(&self.usage)),
            subagent_usage: UsageSink::default(),
            agents: Vec::new(),
            skills: Vec::new(),
            rewind_undo: None,
        })
    }
}

/// The events of a sub-agent the client sees, its calls and requests labelled with the agent.
fn forwarded(event: Event, agent: &str) -> Option<Event> {
    let label = |title: &mut String| *title = format!("{agent} › {title}");
    match event {
        Event::ToolCallStarted {
            call_id,
            tool,
            mut title,
            input,
        } => {
            label(&mut title);
            Some(Event::ToolCallStarted {
                call_id,
                tool,
                title,
                input,
            })
        }
        Event::PermissionRequest(mut req) => {
            label(&mut req.title);
            Some(Event::PermissionRequest(req))
        }
        Event::PermissionRequestUpdated { mut request, note } => {
            label(&mut request.title);
            Some(Event::PermissionRequestUpdated { request, note })
        }
        Event::ToolCallProgress { .. }
        | Event::ToolCallFinished { .. }
        | Event::Notice { .. }
        | Event::Error { .. } => Some(event),
        _ => None,
    }
}

#[async_trait]
impl SubagentRunner for Subagents {
    fn agents(&self) -> Vec<(String, String)> {
        let builtins = [
            (
                GENERAL_PURPOSE,
                "Searches, research and multi-step tasks across the repository (all tools).",
            ),
            (
                EXPLORE,
                "Fast, read-only search of the repository: finds files, code and facts (Read, \
                 Glob, Grep, WebFetch).",
            ),
            (
                PLAN,
                "Read-only: studies the code and answers with an implementation plan.",
            ),
        ];
        // A person's agent of the same name replaces a built-in one.
        let mut out: Vec<(String, String)> = builtins
            .iter()
            .filter(|(name, _)| !self.defs.iter().any(|d| d.name == *name))
            .map(|(n, d)| (n.to_string(), d.to_string()))
            .collect();
        out.extend(
            self.defs
                .iter()
                .map(|d| (d.name.clone(), d.description.clone())),
        );
        out
    }

    async fn run(
        &self,
        agent: &str,
        prompt: &str,
        model: Option<&str>,
        ctx: &ToolContext,
    ) -> Result<String, String> {
        let kind = match self.defs.iter().find(|d| d.name == agent) {
            Some(def) => Kind::Custom(def),
            None if agent == GENERAL_PURPOSE => Kind::General,
            None if agent == EXPLORE => Kind::Explore,
            None if agent == PLAN => Kind::Plan,
            None => return Err(format!("there is no agent called {agent}")),
        };
        let mut core = self.core_for(agent, &kind, model)?;
        core.run_subagent(prompt, &ctx.cancel).await
    }
}

impl Core {
    /// Count the requests of sub-agents since the last time: in the totals, the transcript
    /// (so a resume counts them too) and a Usage event each (per model in `/cost`).
    pub(super) fn count_subagent_usage(&mut self) {
        let spent = std::mem::take(&mut *lock(&self.subagent_usage));
        for (model, usage) in spent {
            self.transcript
                .record(&crate::session::transcript::Record::Usage {
                    model: model.clone(),
                    usage,
                });
            self.total_usage.add(&usage);
            self.total_cost += crate::llm::pricing::cost_usd(&model, &usage);
            self.events().send(Event::Usage {
                last: usage,
                total: self.total_usage,
                total_cost_usd: self.total_cost,
                context_window: crate::llm::pricing::context_window(&self.request_model()),
                model,
            });
        }
    }

    /// Work on `prompt` until the model answers without tools; the answer.
    async fn run_subagent(
        &mut self,
        prompt: &str,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<String, String> {
        self.push_user(vec![ContentBlock::Text {
            text: prompt.to_string(),
        }]);
        let mut forced = 0;
        for _ in 0..MAX_REQUESTS {
            match self.one_request(cancel).await {
                Step::ToolsRan | Step::Again => continue,
                Step::Done(text) => {
                    let stop = self
                        .hooks
                        .subagent_stop(&self.session, self.gate.mode())
                        .await;
                    if let Some(reason) = stop.blocked
                        && forced < MAX_FORCED
                    {
                        forced += 1;
                        self.push_user(vec![ContentBlock::Text { text: reason }]);
                        continue;
                    }
                    return Ok(text);
                }
                Step::Interrupted => return Err("interrupted by the user".into()),
                Step::Failed(why) => return Err(why),
            }
        }
        Err(format!("it did not finish within {MAX_REQUESTS} requests"))
    }
}
