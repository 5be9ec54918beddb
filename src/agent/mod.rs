//! The agent core: the query loop (build the request, stream, run tools, loop until the model
//! ends its turn), the streaming tool executor, system-prompt assembly and the session state.
//!
//! A client starts the core with [`start`] and then talks to it only through the returned
//! [`AgentHandle`]: [`Op`]s in, [`Event`]s out.

mod attachments;
mod background;
pub mod compact;
mod core;
pub mod deferral;
pub mod executor;
mod init;
mod invoke;
pub mod output_style;
pub mod prompt;
mod resume;
mod rewind;
mod rewind_report;
mod running_tasks;
mod subagent;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::config::hooks::HooksConfig;
use crate::config::model::{Aliases, ModelPick};
use crate::hooks::Hooks;
use crate::llm::ModelClient;
use crate::llm::retry::RetryPolicy;
use crate::permissions::PermissionGate;
use crate::protocol::Usage;
use crate::session::transcript::Transcript;
use crate::tools::agent_tool::{self, AgentTool, SubagentRunner};
use crate::tools::registry::builtin_tools;
use crate::tools::{ToolHandle, ToolKind, ToolRegistry};

use self::executor::PendingDecisions;
use crate::session::context::{EventSender, SessionContext};

/// The client's end of a running core.
pub use crate::protocol::Connection as AgentHandle;

/// Everything needed to start a session.
pub struct AgentSetup {
    pub client: Arc<dyn ModelClient>,
    /// The model the session starts with.
    pub model: ModelPick,
    /// What the names `/model` accepts stand for (none for OpenAI-compatible servers).
    pub aliases: Aliases,
    pub project_dir: PathBuf,
    pub additional_dirs: Vec<PathBuf>,
    /// Per-session data (spill files); created on demand.
    pub data_dir: PathBuf,
    /// Where the JSONL transcript goes; None writes none.
    pub transcript_path: Option<PathBuf>,
    pub session_id: String,
    pub gate: PermissionGate,
    /// The hooks the settings configure; the core runs them (none: `HooksConfig::default()`).
    pub hooks: HooksConfig,
    pub max_turns: Option<u32>,
    pub retry: RetryPolicy,
    pub max_tokens: u32,
    /// Running against the built-in scripted model.
    pub demo: bool,
    /// Tools beyond the built-ins (MCP tools; tests' own tools). Sorted after the built-ins; a
    /// built-in of the same name wins.
    pub extra_tools: Vec<ToolHandle>,
    /// Tools that join while the session runs (MCP servers that connect in the background);
    /// the core takes in what is new before each request. Empty by default.
    pub late_tools: crate::tools::LateTools,
    /// The settings' `env`, for the commands tools run.
    pub tool_env: Vec<(String, String)>,
    /// The files the settings layers read: the file tools refuse writes that would break one
    /// (files shaped like settings files are guarded whether listed or not).
    pub settings_files: Vec<std::path::PathBuf>,
    /// The person's memory files (CLAUDE.md, AGENTS.md), for the system prompt.
    pub memory: crate::memory::Memory,
    /// The person's own slash commands, expanded before a prompt goes to the model.
    pub commands: Vec<crate::commands::CustomCommand>,
    /// A session to continue (`--continue`, `--resume`): its conversation, mode, todo list and
    /// usage are taken over. `transcript_path` and `session_id` are then its own (or new ones
    /// for a fork).
    pub resume: Option<crate::session::resume::Resumed>,
    /// Auto-compaction threshold, percent of the context window (0: never).
    pub auto_compact_pct: u8,
    /// With `resume`: a new session starting from the old history (`--fork-session`).
    pub fork: bool,
    /// The mode was given on the command line: a resumed session's mode does not replace it.
    pub mode_from_flag: bool,
    /// The person's own sub-agents (`.claude/agents/*.md`), beside the built-in one.
    pub agents: Vec<crate::commands::agents::AgentDef>,
    /// The person's skills: the Skill tool is offered when there is one.
    pub skills: Vec<crate::commands::skills::Skill>,
    /// The settings' output style; `None` is the default style.
    pub output_style: Option<output_style::OutputStyle>,
    /// Which tools are deferred and how requests carry them (`toolSearch`).
    pub tool_search: deferral::ToolSearchConfig,
    /// Record checkpoints of the working directories for `/rewind` (on unless
    /// `CAIRN_CHECKPOINTS=off`).
    pub checkpoints: bool,
    /// The checkpoint store's size budget in bytes (`checkpointBudgetMB`); `None`: ten times
    /// the working tree, 50 MB to 1 GB.
    pub checkpoint_budget: Option<u64>,
}

impl AgentSetup {
    pub fn new_session_id() -> String {
        uuid::Uuid::new_v4().to_string()
    }
}

/// The branch checked out in `dir`'s repository, read from `.git/HEAD` (no git process runs).
fn git_branch(dir: &std::path::Path) -> Option<String> {
    let git = dir
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|g| g.is_dir())?;
    // A FIFO (a folder or archive can hold one) would block the start forever.
    let head = git.join("HEAD");
    if !head.is_file() {
        return None;
    }
    let head = std::fs::read_to_string(head).ok()?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .map(|b| b.chars().filter(|c| !c.is_control()).collect())
}

/// Start the core on the current tokio runtime.
pub fn start(setup: AgentSetup) -> AgentHandle {
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    // The checkpoints live in the session's data dir; the session's data (and the folder of
    // transcripts, unless it holds a working directory) is never checkpointed.
    let checkpoint_dir = setup
        .data_dir
        .join(crate::session::checkpoints::CHECKPOINT_DIR);
    let mut checkpoint_skip = vec![setup.data_dir.clone()];
    if let Some(folder) = setup.transcript_path.as_deref().and_then(|p| p.parent()) {
        let holds_root = std::iter::once(&setup.project_dir)
            .chain(&setup.additional_dirs)
            .any(|r| r.starts_with(folder));
        if !holds_root {
            checkpoint_skip.push(folder.to_path_buf());
        }
    }
    let session = SessionContext::new(
        setup.session_id.clone(),
        setup.project_dir.clone(),
        setup.additional_dirs,
        setup.data_dir,
        EventSender::new(events_tx),
    )
    .with_tool_env(setup.tool_env.clone())
    .with_memory_roots(setup.memory.roots.clone())
    .with_settings_check(Some(settings_check(setup.settings_files.clone())));
    let session = Arc::new(if setup.checkpoints {
        session.with_checkpoints(checkpoint_dir, checkpoint_skip, setup.checkpoint_budget)
    } else {
        session
    });
    // The watcher is a convenience on top of the write-time checks, which guard every edit
    // anyway; a session whose watcher cannot start goes on without it.
    if !crate::session::watcher::attach_watcher(&session) {
        tracing::warn!("the file watcher could not start; outside edits are caught at write time");
    }
    let gate = Arc::new(setup.gate);
    let mut extra_tools = setup.extra_tools;
    // Offered when there is a skill or a command the model may use.
    let skill_tool =
        crate::tools::skill::SkillTool::new(setup.skills.clone(), setup.commands.clone());
    if !skill_tool.is_empty() {
        extra_tools.push(Arc::new(skill_tool));
    }
    let env = prompt::Environment::detect(&setup.project_dir, &setup.model.id);
    let memory = crate::memory::render(&setup.memory);
    let hooks = Arc::new(Hooks::new(
        setup.hooks,
        setup.project_dir.clone(),
        setup.tool_env.clone(),
        setup.transcript_path.clone().unwrap_or_default(),
    ));
    let decisions = PendingDecisions::default();
    let background: Arc<background::Background> = Arc::default();
    let subagents = Arc::new(subagent::Subagents {
        client: Arc::clone(&setup.client),
        model: setup.model.clone(),
        aliases: setup.aliases.clone(),
        session: Arc::clone(&session),
        gate: Arc::clone(&gate),
        hooks: Arc::clone(&hooks),
        decisions: decisions.clone(),
        retry: setup.retry.clone(),
        max_tokens: setup.max_tokens,
        auto_compact_pct: setup.auto_compact_pct,
        env: env.clone(),
        memory: memory.clone(),
        defs: setup.agents,
        registry: std::sync::OnceLock::new(),
        runs: Arc::default(),
        usage: core::UsageSink::default(),
        tool_search: setup.tool_search,
        depth: 1,
        background: Arc::clone(&background),
    });
    extra_tools.push(Arc::new(AgentTool::new(subagents.clone())));
    let searching = setup.tool_search.mode != deferral::ToolSearchMode::Never;
    let registry = ToolRegistry::new(builtin_tools(&session), extra_tools).filtered(|t| {
        gate.offers_tool(t) && (searching || t.name() != crate::tools::tool_search::NAME)
    });
    // Sub-agents get the same tools but Agent itself and plan mode (the mode is the session's).
    let late_gate = Arc::clone(&gate);
    let sub_tools = registry
        .filtered(|t| t.name() != agent_tool::NAME && t.kind() != ToolKind::Plan)
        .following(setup.late_tools.clone(), move |t| late_gate.offers_tool(t));
    let _ = subagents.registry.set(sub_tools);
    let late_gate = Arc::clone(&gate);
    let registry = registry.following(setup.late_tools, move |t| late_gate.offers_tool(t));
    let mut deferral = deferral::Deferral::new(
        setup.tool_search.mode,
        setup
            .tool_search
            .references
            .unwrap_or_else(|| setup.client.supports_tool_references()),
    );
    deferral.publish(&registry, &setup.model.id, 0);
    let system = prompt::system_prompt(
        &env,
        &memory,
        setup.output_style.as_ref(),
        &registry,
        &deferral.prompt_section(),
    );
    let transcript = match setup.transcript_path {
        // A new file starts with the header; a resumed session's file goes on as it is.
        Some(p) if !p.exists() => Transcript::at(p, &setup.session_id)
            .with_header(&setup.project_dir, git_branch(&setup.project_dir)),
        Some(p) => Transcript::at(p, &setup.session_id),
        None => Transcript::disabled(),
    };
    let core = core::Core {
        client: setup.client,
        model: setup.model,
        aliases: setup.aliases,
        session,
        gate,
        hooks,
        registry,
        decisions,
        system,
        messages: Vec::new(),
        max_turns: setup.max_turns,
        retry: setup.retry,
        max_tokens: setup.max_tokens,
        total_usage: Usage::default(),
        total_cost: 0.0,
        turn_counter: 0,
        deferral,
        registry_version: 0,
        transcript,
        demo: setup.demo,
        commands: setup.commands,
        last_state: None,
        agents: subagents.agents(),
        usage_sink: None,
        subagent_usage: Arc::clone(&subagents.usage),
        auto_compact_pct: setup.auto_compact_pct,
        last_context: 0,
        memory_chars: memory.len(),
        resume: setup.resume.map(|r| (r, setup.mode_from_flag, setup.fork)),
        memory_files: setup
            .memory
            .files
            .iter()
            .map(|f| (f.scope.name().to_string(), f.path.clone()))
            .collect(),
        skills: setup.skills,
        rewind_undo: None,
        background: Arc::clone(&background.running),
    };
    tokio::spawn(core.run(ops_rx));
    AgentHandle {
        session_id: setup.session_id,
        ops: ops_tx,
        events: events_rx,
    }
}

/// The check of the file tools' writes to settings files ([`crate::config::settings_write`]).
fn settings_check(files: Vec<std::path::PathBuf>) -> crate::session::context::SettingsWriteCheck {
    let files = crate::config::settings_write::SettingsFiles::new(files);
    crate::session::context::SettingsWriteCheck(Arc::new(move |path, before, after| {
        files.check(path, before, after)
    }))
}
