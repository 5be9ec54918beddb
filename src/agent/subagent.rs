//! Sub-agents: the core's side of the Agent tool. Each run is a fresh [`Core`] with its own
//! conversation, system prompt (the agent's role, the memory files, the environment) and tools
//! (the session's; for the built-in Explore and Plan agents the read-only ones and Bash limited
//! to read-only commands; or the ones a custom agent names), and its own read-file state (it
//! must read a file before editing it, like any agent), sharing the session's permission gate,
//! hooks and pending decisions — so the person is asked about its calls as about any other,
//! each labelled with the agent (`Explore › Grep parse`). What a skill or command allowed for
//! the parent's turn does not reach it; what a skill it loads allows ends with its run. A custom
//! agent's file may set its mode, request limit, preloaded skills, background running,
//! reasoning effort and MCP servers (`permissionMode`, `maxTurns`, `skills`, `background`,
//! `effort`, `mcpServers`: the named servers' tools join its list; MCP tools connected by the
//! time it starts are offered; the servers it defines run for its run: `subagent_servers.rs`;
//! `hooks` and `memory`: `subagent_scope.rs`). The Agent tool only when a custom agent lists
//! it, and never below [`MAX_DEPTH`]. Its tool calls, whole messages
//! and usage reach the client wrapped in [`Event::Subagent`] with the Agent call's id; its
//! permission requests and notices as the session's own; its streamed text not at all. Its
//! conversation is kept in the session's data directory (`subagents/agent-<id>.jsonl`), and
//! `resume` with that id continues it (`subagent_resume.rs`). SubagentStop
//! hooks run when it finishes and may send it back to work. Background runs live in
//! `background.rs`. A run with `isolation: worktree` (the agent's file or the call) works in
//! a temporary git worktree of the project (`worktree.rs`): its session's directory is the
//! worktree, the gate judges its calls against it (`PermissionGate::set_conversation_root`),
//! and the agents it starts work there too.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use tokio::sync::mpsc;

use super::background::Background;
use super::conversation::Conversation;
use super::core::{Core, Step};
use super::prompt::{Environment, subagent_prompt};
use super::services::SessionServices;
use super::subagent_resume::{self as resume, new_agent_id};
use super::subagent_scope as scope;
use super::subagent_servers::OwnServers;
use super::tool_set::ToolSet;
use super::usage::UsageMeter;
use super::worktree::AgentWorktree;
use crate::commands::agents::AgentDef;
use crate::config::model::ModelPick;
use crate::llm::ContentBlock;
use crate::protocol::{BackgroundTask, Event, TaskKind, TaskStatus};
use crate::session::context::{EventSender, SessionContext};
use crate::session::transcript::Transcript;
use crate::tools::agent_tool::{
    self, AgentTool, GENERAL_PURPOSE, RunOptions, SubagentDone, SubagentRunner,
};
use crate::tools::read_only_guard::ReadOnlyGuard;
use crate::tools::{ToolContext, ToolHandle, ToolKind, ToolRegistry, bash};

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

/// How deep sub-agents nest: the session's are at depth 1, theirs at 2, and those never get
/// the Agent tool.
pub(crate) const MAX_DEPTH: u8 = 2;

/// Where a run's events go and where it works: the Agent call that started it, its
/// background task id (if it runs in the background), its worktree (if isolated).
pub(super) struct Placement<'a> {
    pub parent_call_id: &'a str,
    pub task: Option<&'a str>,
    pub tree: Option<AgentWorktree>,
}

/// Which agent runs.
pub(super) enum Kind<'a> {
    General,
    Explore,
    Plan,
    Custom(&'a AgentDef),
}

/// The sub-agents of a session (or of a sub-agent that starts nested ones): the session's
/// services, shared, and what sub-agents at this depth start from.
pub(crate) struct Subagents {
    pub services: Arc<SessionServices>,
    /// The model a sub-agent runs on unless its definition or the call names one.
    pub model: ModelPick,
    /// Whose events the sub-agents' events join (the session's, or the sub-agent's that
    /// starts nested ones).
    pub session: Arc<SessionContext>,
    /// The environment part of their system prompts.
    pub env: Environment,
    /// The tools sub-agents may use; set once the session's registry exists.
    pub registry: OnceLock<ToolRegistry>,
    /// The depth of the agents this starts (1: the session's own).
    pub depth: u8,
    /// The session's background runs.
    pub background: Arc<Background>,
}

impl Subagents {
    /// The same, for the agents a sub-agent (whose session is `session`) starts.
    fn nested(&self, session: Arc<SessionContext>) -> Subagents {
        Subagents {
            services: Arc::clone(&self.services),
            model: self.model.clone(),
            session,
            env: self.env.clone(),
            registry: self
                .registry
                .get()
                .cloned()
                .map(OnceLock::from)
                .unwrap_or_default(),
            depth: self.depth.saturating_add(1),
            background: Arc::clone(&self.background),
        }
    }

    /// A session of its own whose events reach the client wrapped with the Agent call's id
    /// (see [`forwarded`]); files read are shared with the parent. `task`: the id of a
    /// `run_in_background` run, which its permission requests carry. It works in `dir` (its
    /// worktree) when given, else where the parent does.
    fn sub_session(
        &self,
        agent: &str,
        parent_call_id: &str,
        task: Option<&str>,
        dir: Option<&std::path::Path>,
    ) -> Arc<SessionContext> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let parent = self.session.events.clone();
        let agent = agent.to_string();
        let parent_call_id = parent_call_id.to_string();
        let task = task.map(str::to_string);
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if let Some(event) = forwarded(event, &agent, &parent_call_id, task.as_deref()) {
                    parent.send(event);
                }
            }
        });
        let mut sub = SessionContext::new(
            self.session.session_id.clone(),
            dir.map_or_else(|| self.session.project_dir.clone(), |d| d.to_path_buf()),
            self.session.additional_dirs.clone(),
            self.session.data_dir.clone(),
            EventSender::new(tx),
        )
        .with_tool_env(self.session.tool_env().to_vec())
        .with_search(self.session.search().cloned())
        .with_small_model(self.session.small_model().cloned())
        .with_memory_roots(Some(self.session.memory_roots()))
        .with_settings_check(self.session.settings_check())
        .with_client_files(self.session.client_files())
        .with_client_terminal(self.session.client_terminal());
        // The session's checkpoints: a sub-agent's writing tools record one first too.
        sub.checkpoints = self.session.checkpoints.clone();
        Arc::new(sub)
    }

    /// Which agent `name` is.
    pub(super) fn kind(&self, name: &str) -> Result<Kind<'_>, String> {
        match self.services.agents.iter().find(|d| d.name == name) {
            Some(def) => Ok(Kind::Custom(def)),
            None if name == GENERAL_PURPOSE => Ok(Kind::General),
            None if name == EXPLORE => Ok(Kind::Explore),
            None if name == PLAN => Ok(Kind::Plan),
            None => Err(format!("there is no agent called {name}")),
        }
    }

    /// `prompt` after the text of the skills a custom agent's `skills` names (as the Skill tool
    /// would load them); a name no skill answers to is said in a notice and skipped.
    fn with_skills(&self, agent: &Kind<'_>, prompt: &str) -> String {
        let Kind::Custom(def) = agent else {
            return prompt.to_string();
        };
        let mut parts = Vec::new();
        for name in &def.skills {
            match self.services.skills.iter().find(|s| s.answers_to(name)) {
                Some(skill) => parts.push(crate::tools::skill::skill_text(skill, None)),
                None => self.session.events.send(Event::Notice {
                    message: format!(
                        "The {} agent names a skill `{name}` that does not exist; it runs \
                         without it.",
                        def.name
                    ),
                }),
            }
        }
        if parts.is_empty() {
            return prompt.to_string();
        }
        parts.push(format!("Your task:\n\n{prompt}"));
        parts.join("\n\n---\n\n")
    }

    /// The tools of `agent`, whose session is `session`.
    fn tools_for(
        &self,
        agent: &Kind<'_>,
        session: &Arc<SessionContext>,
    ) -> Result<ToolRegistry, String> {
        let mut all = self
            .registry
            .get()
            .ok_or("sub-agents are not ready yet")?
            .clone();
        // The MCP tools of the servers connected by now.
        all.refresh_late();
        let same = |t: &ToolHandle| Some(Arc::clone(t));
        Ok(match agent {
            Kind::Custom(
                def @ AgentDef {
                    tools: Some(names), ..
                },
            ) => {
                // The Agent tool only when the agent lists it, and not too deep.
                let mut extra: Vec<ToolHandle> = Vec::new();
                if self.depth < MAX_DEPTH
                    && names.iter().any(|n| agent_tool::is_agent_tool(n))
                    && !def
                        .disallowed_tools
                        .iter()
                        .any(|n| agent_tool::is_agent_tool(n))
                {
                    let nested = Arc::new(self.nested(Arc::clone(session)));
                    extra.push(Arc::new(AgentTool::new(nested)));
                }
                let listed = |t: &ToolHandle| {
                    def.may_use(t.name(), t.aliases())
                        || t.mcp_name()
                            .is_some_and(|m| def.gets_server_tool(m.server, t.name()))
                };
                all.mapped(|t| listed(t).then(|| Arc::clone(t)), extra)
            }
            // All of the session's tools but those its `disallowedTools` takes away.
            Kind::Custom(def) => all.mapped(
                |t| def.may_use(t.name(), t.aliases()).then(|| Arc::clone(t)),
                Vec::new(),
            ),
            Kind::General => all.mapped(same, Vec::new()),
            // Read-only: reading, searching and fetching, and Bash for read-only commands.
            Kind::Explore | Kind::Plan => all.mapped(
                |t| match t.kind() {
                    ToolKind::Read | ToolKind::Fetch => Some(Arc::clone(t)),
                    _ if t.name() == bash::NAME => {
                        Some(Arc::new(ReadOnlyGuard::new(Arc::clone(t))) as ToolHandle)
                    }
                    _ => None,
                },
                Vec::new(),
            ),
        })
    }

    /// The worktree a run of agent `name` works in: a new one when its file or the call
    /// asks for isolation (or why there cannot be one), else none.
    async fn tree_for(
        &self,
        name: &str,
        agent: &Kind<'_>,
        asked: bool,
    ) -> Result<Option<AgentWorktree>, String> {
        if !(asked || matches!(agent, Kind::Custom(def) if def.worktree)) {
            return Ok(None);
        }
        self.new_tree(name).await.map(Some)
    }

    async fn new_tree(&self, name: &str) -> Result<AgentWorktree, String> {
        AgentWorktree::create(&self.session.project_dir, name)
            .await
            .map_err(|why| format!("it cannot run in an isolated worktree: {why}"))
    }

    /// A core for agent `name` whose conversation is kept as sub-agent `id` (a new one, or the
    /// one being resumed: its transcript is appended to), and that id.
    pub(super) fn core_with(
        &self,
        name: &str,
        agent: &Kind<'_>,
        model: Option<&str>,
        place: Placement<'_>,
        id: &str,
    ) -> Result<(Core, String), String> {
        let dir = place.tree.as_ref().map(|t| t.workdir.as_path());
        let session = self.sub_session(name, place.parent_call_id, place.task, dir);
        // Its calls are judged against its worktree, or its parent's when it runs in one.
        let gate = &self.services.gate;
        let root = dir
            .map(std::path::Path::to_path_buf)
            .or_else(|| gate.conversation_root(&self.session.conversation));
        if let Some(root) = root {
            gate.set_conversation_root(&session.conversation, &root);
        }
        let mut registry = self.tools_for(agent, &session)?;
        let mut memory_section = String::new();
        if let Kind::Custom(def) = agent {
            let home = self.session.memory_roots().home;
            // Where the agent was started from: its memory outlives a worktree.
            let memory = scope::memory_for(def, &self.session.project_dir, home.as_deref())
                .map_err(|e| format!("the {name} agent cannot start: {e}"))?;
            if let (Some(memory), Some(all)) = (memory, self.registry.get()) {
                registry = scope::with_memory_tools(registry, all, def, &memory.dir);
                memory_section = memory.section;
            }
        }
        let (role, own_model) = match agent {
            Kind::Custom(d) => (d.prompt.as_str(), d.model.as_deref()),
            Kind::General => (GENERAL_ROLE, None),
            // Claude Code's Explore runs on the fast model.
            Kind::Explore => (EXPLORE_ROLE, self.services.aliases.fast()),
            Kind::Plan => (PLAN_ROLE, None),
        };
        let memory = crate::memory::render(&self.services.memory);
        let env = Environment {
            cwd: session.project_dir.display().to_string(),
            ..self.env.clone()
        };
        let system = subagent_prompt(role, &env, &memory, &registry) + &memory_section;
        let model = match model.or(own_model) {
            Some(name) => self.services.aliases.pick(name),
            None => self.model.clone(),
        };
        self.services.subagent_runs.fetch_add(1, Ordering::Relaxed);
        let transcript = Transcript::at(
            resume::transcript_path(&session.data_dir, id),
            &session.session_id,
        );
        resume::remember_type(&session.data_dir, id, name);
        let mut max_turns = None;
        if let Kind::Custom(def) = agent {
            max_turns = def.max_turns;
            if let Some(mode) = def.permission_mode
                && let Some(note) = self
                    .services
                    .gate
                    .set_conversation_mode(&session.conversation, mode)
            {
                self.session.events.send(Event::Notice {
                    message: format!("The {name} agent: {note}."),
                });
            }
        }
        let hooks = match agent {
            Kind::Custom(def) => {
                let (hooks, notes) = super::subagent_scope::hooks_for(
                    &self.services.hooks,
                    def,
                    &self.session.project_dir,
                )?;
                for message in notes {
                    self.session.events.send(Event::Notice { message });
                }
                hooks
            }
            _ => Arc::clone(&self.services.hooks),
        };
        let deferral = self.services.deferral();
        let core = Core {
            services: Arc::clone(&self.services),
            model,
            session,
            tools: ToolSet::new(registry, deferral),
            system,
            conversation: Conversation::new(transcript),
            usage: UsageMeter::for_subagent(),
            max_turns,
            effort: match agent {
                Kind::Custom(def) => def.effort,
                _ => None,
            },
            hooks,
            turns_started: 0,
            rewind_undo: None,
            worktree: place.tree,
            own_servers: match agent {
                Kind::Custom(def) => OwnServers::of(def),
                _ => None,
            },
        };
        Ok((core, id.to_string()))
    }
}

impl Drop for Subagents {
    fn drop(&mut self) {
        // The session's own: the session is over, and so are its background runs.
        if self.depth == 1 {
            self.background.stop_all();
        }
    }
}

/// What of a sub-agent's events the client sees: its tool calls, whole messages and usage
/// wrapped with the Agent call's id; its permission requests labelled with the agent (and,
/// when it runs in the background as `task`, with that id, nested agents' too); its notices
/// and errors as they are. Its streamed text and turn events stay inside.
fn forwarded(event: Event, agent: &str, parent_call_id: &str, task: Option<&str>) -> Option<Event> {
    let label = |req: &mut crate::protocol::PermissionRequest| {
        req.title = format!("{agent} › {}", req.title);
        if req.background_task.is_none() {
            req.background_task = task.map(str::to_string);
        }
    };
    match event {
        Event::PermissionRequest(mut req) => {
            label(&mut req);
            Some(Event::PermissionRequest(req))
        }
        Event::PermissionRequestUpdated { mut request, note } => {
            label(&mut request);
            Some(Event::PermissionRequestUpdated { request, note })
        }
        Event::Notice { .. } | Event::Error { .. } | Event::BackgroundTask(_) => Some(event),
        Event::ToolCallStarted { .. }
        | Event::ToolCallRunning { .. }
        | Event::ToolCallProgress { .. }
        | Event::ToolCallFinished { .. }
        | Event::AssistantMessage { .. }
        | Event::ToolResults { .. }
        | Event::Usage { .. }
        | Event::Subagent { .. } => Some(Event::Subagent {
            parent_call_id: parent_call_id.to_string(),
            agent: agent.to_string(),
            event: Box::new(event),
        }),
        _ => None,
    }
}

#[async_trait]
impl SubagentRunner for Subagents {
    fn agents(&self) -> Vec<(String, String)> {
        let builtins = [
            (
                GENERAL_PURPOSE,
                "Searches, research and multi-step tasks (all tools).",
            ),
            (
                EXPLORE,
                "Fast, read-only search: finds files, code and facts (Read, \
                 Glob, Grep, WebFetch, read-only Bash).",
            ),
            (
                PLAN,
                "Read-only: studies the code and answers with an implementation plan.",
            ),
        ];
        // A person's agent of the same name replaces a built-in one.
        let mut out: Vec<(String, String)> = builtins
            .iter()
            .filter(|(name, _)| !self.services.agents.iter().any(|d| d.name == *name))
            .map(|(n, d)| (n.to_string(), d.to_string()))
            .collect();
        out.extend(
            self.services
                .agents
                .iter()
                .map(|d| (d.name.clone(), d.description.clone())),
        );
        out
    }

    fn always_in_background(&self, agent: &str) -> bool {
        matches!(self.kind(agent), Ok(Kind::Custom(def)) if def.background)
    }

    async fn run(
        &self,
        agent: &str,
        prompt: &str,
        options: RunOptions<'_>,
        ctx: &ToolContext,
    ) -> Result<SubagentDone, String> {
        let kind = self.kind(agent)?;
        let place = Placement {
            parent_call_id: &ctx.call_id,
            task: None,
            tree: self.tree_for(agent, &kind, options.worktree).await?,
        };
        let (mut core, agent_id) =
            self.core_with(agent, &kind, options.model, place, &new_agent_id())?;
        let prompt = self.with_skills(&kind, prompt);
        let report = core.run_subagent(&prompt, &ctx.cancel).await?;
        Ok(SubagentDone { report, agent_id })
    }

    fn resumable(&self, id: &str) -> Result<String, String> {
        resume::agent_type(&self.session.data_dir, id)
    }

    async fn resume(
        &self,
        id: &str,
        prompt: &str,
        options: RunOptions<'_>,
        ctx: &ToolContext,
    ) -> Result<SubagentDone, String> {
        // Its earlier conversation, then the new task.
        let data_dir = &self.session.data_dir;
        let name = resume::agent_type(data_dir, id)?;
        let kind = self.kind(&name)?;
        let earlier = crate::session::resume::load(&resume::transcript_path(data_dir, id))
            .map_err(|e| e.to_string())?;
        // An isolated agent continues in a new worktree (its earlier one may be gone).
        let place = Placement {
            parent_call_id: &ctx.call_id,
            task: None,
            tree: self.tree_for(&name, &kind, options.worktree).await?,
        };
        let (mut core, agent_id) = self.core_with(&name, &kind, options.model, place, id)?;
        core.conversation.messages = earlier.messages;
        let report = core.run_subagent(prompt, &ctx.cancel).await?;
        Ok(SubagentDone { report, agent_id })
    }

    async fn start_background(
        &self,
        agent: &str,
        description: &str,
        prompt: &str,
        options: RunOptions<'_>,
        ctx: &ToolContext,
    ) -> Result<String, String> {
        let kind = self.kind(agent)?;
        let id = self.background.next_id();
        let place = Placement {
            parent_call_id: &ctx.call_id,
            task: Some(&id),
            tree: self.tree_for(agent, &kind, options.worktree).await?,
        };
        let (core, _) = self.core_with(agent, &kind, options.model, place, &new_agent_id())?;
        let prompt = self.with_skills(&kind, prompt);
        let task = BackgroundTask {
            id: id.clone(),
            kind: TaskKind::Agent,
            agent: agent.to_string(),
            description: description.to_string(),
            status: TaskStatus::Running,
            elapsed_ms: 0,
            call_id: Some(ctx.call_id.clone()),
            report: None,
        };
        self.background.start(task, core, &prompt, &self.session);
        Ok(id)
    }
}

impl Core {
    /// Work on `prompt` until the model answers without tools; the answer. The run is the
    /// sub-agent's one turn: what a skill it loaded allowed ends with it, and what the gate
    /// kept for its conversation. Its own MCP servers run for as long as it does
    /// (`subagent_servers.rs`). Its worktree, if it ran in one, is removed when it changed
    /// nothing, else kept and named at the end of the answer (or of why it failed).
    pub(super) async fn run_subagent(
        &mut self,
        prompt: &str,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<String, String> {
        let started = match &mut self.own_servers {
            Some(own) => {
                let events = &self.session.events;
                own.start(&self.services, events, &mut self.tools, cancel)
                    .await
            }
            None => Ok(Vec::new()),
        };
        let (result, missing) = match started {
            Ok(missing) => (self.work_on(prompt, cancel).await, missing),
            Err(why) => (Err(why), Vec::new()),
        };
        self.gate().end_turn(&self.session.conversation);
        self.gate().forget_conversation(&self.session.conversation);
        if let Some(own) = &mut self.own_servers {
            own.close().await;
        }
        // What did not start is said after the report.
        let told = |text: String| {
            let lines = std::iter::once(text).chain(missing.iter().cloned());
            lines.collect::<Vec<_>>().join("\n\n")
        };
        let result = result.map(&told).map_err(&told);
        let Some(tree) = self.worktree.take() else {
            return result;
        };
        let note = tree.finish().await;
        match result {
            Ok(report) => Ok(report + &note),
            Err(why) => Err(why + &note),
        }
    }

    async fn work_on(
        &mut self,
        prompt: &str,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<String, String> {
        self.push_user(vec![ContentBlock::Text {
            text: prompt.to_string(),
        }]);
        let mut forced = 0;
        // Its file's `maxTurns`, else a bound of our own.
        let limit = self.max_turns.unwrap_or(MAX_REQUESTS);
        for _ in 0..limit {
            match self.one_request(cancel).await {
                Step::ToolsRan | Step::Again => continue,
                Step::Done(text) => {
                    let stop = self
                        .hooks
                        .subagent_stop(&self.session, self.gate().mode(), forced > 0)
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
        Err(match self.max_turns {
            Some(n) => {
                format!("it reached its limit of {n} turns (`maxTurns`) without a final answer")
            }
            None => format!("it did not finish within {MAX_REQUESTS} requests"),
        })
    }
}
