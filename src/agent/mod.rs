//! The agent core: the query loop (build the request, stream, run tools, loop until the model
//! ends its turn), the streaming tool executor, system-prompt assembly and the session state.
//!
//! A client starts the core with [`start`] and then talks to it only through the returned
//! [`AgentHandle`]: [`Op`]s in, [`Event`]s out.

mod attachments;
mod background;
pub mod compact;
mod conversation;
mod core;
pub mod deferral;
pub mod executor;
mod init;
mod invoke;
mod mcp_invoke;
pub mod output_style;
pub mod prompt;
mod resume;
mod rewind;
mod rewind_report;
mod running_tasks;
pub mod services;
mod subagent;
mod subagent_resume;
pub mod subagent_scope;
pub mod subagent_servers;
mod tool_set;
mod usage;
mod worktree;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::config::model::ModelPick;
use crate::protocol::{Event, Op};
use crate::session::transcript::Transcript;
use crate::tools::agent_tool::{self, AgentTool, SubagentRunner};
use crate::tools::registry::builtin_tools_with;
use crate::tools::{ToolHandle, ToolKind, ToolRegistry};

use self::conversation::Conversation;
use self::tool_set::ToolSet;
use self::usage::UsageMeter;
use crate::session::context::{EventSender, SessionContext};
pub use services::SessionServices;

/// The client's end of a running core.
pub struct AgentHandle {
    pub session_id: String,
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
}

/// Everything needed to start a session: the services its parts share, and where and as what
/// this session runs.
pub struct AgentSetup {
    /// The client, gate, hooks, settings, memory, commands, skills and agents.
    pub services: SessionServices,
    /// The model the session starts with.
    pub model: ModelPick,
    pub project_dir: PathBuf,
    pub additional_dirs: Vec<PathBuf>,
    /// Per-session data (spill files); created on demand.
    pub data_dir: PathBuf,
    /// Where the JSONL transcript goes; None writes none.
    pub transcript_path: Option<PathBuf>,
    pub session_id: String,
    pub max_turns: Option<u32>,
    /// Tools beyond the built-ins (MCP tools; tests' own tools). Sorted after the built-ins; a
    /// built-in of the same name wins.
    pub extra_tools: Vec<ToolHandle>,
    /// Tools that join while the session runs (MCP servers that connect in the background);
    /// the core takes in what is new before each request. Empty by default.
    pub late_tools: crate::tools::LateTools,
    /// A session to continue (`--continue`, `--resume`): its conversation, mode, todo list and
    /// usage are taken over. `transcript_path` and `session_id` are then its own (or new ones
    /// for a fork).
    pub resume: Option<crate::session::resume::Resumed>,
    /// With `resume`: a new session starting from the old history (`--fork-session`).
    pub fork: bool,
    /// The mode was given on the command line: a resumed session's mode does not replace it.
    pub mode_from_flag: bool,
    /// The client's files (an editor's buffers), when it serves them: the text file tools
    /// read and write through them (`files::client`).
    pub client_files: Option<Arc<dyn crate::files::client::ClientFiles>>,
    /// The client's terminals, when it offers them: Bash runs its commands there
    /// (`shell::client`).
    pub client_terminal: Option<Arc<dyn crate::shell::client::ClientTerminal>>,
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
    let services = Arc::new(setup.services);
    let settings = &services.settings;
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
    .with_tool_env(settings.env.clone())
    .with_search(services.web_search.clone())
    .with_small_model(services.small_model.clone())
    .with_memory_roots(services.memory.roots.clone())
    .with_settings_check(Some(settings_check(settings.files.clone())))
    .with_client_files(setup.client_files.clone())
    .with_client_terminal(setup.client_terminal.clone());
    let session = Arc::new(if settings.checkpoints {
        session.with_checkpoints(checkpoint_dir, checkpoint_skip, settings.checkpoint_budget)
    } else {
        session
    });
    // The watcher is a convenience on top of the write-time checks, which guard every edit
    // anyway; a session whose watcher cannot start goes on without it.
    if !crate::session::watcher::attach_watcher(&session) {
        tracing::warn!("the file watcher could not start; outside edits are caught at write time");
    }
    let gate = Arc::clone(&services.gate);
    let mut extra_tools = setup.extra_tools;
    // Offered when there is a skill or a command the model may use.
    let skill_tool =
        crate::tools::skill::SkillTool::new(services.skills.clone(), services.commands.clone());
    if !skill_tool.is_empty() {
        extra_tools.push(Arc::new(skill_tool));
    }
    let env = prompt::Environment::detect(&setup.project_dir, &setup.model.id);
    let memory = crate::memory::render(&services.memory);
    let background: Arc<background::Background> = Arc::default();
    let subagents = Arc::new(subagent::Subagents {
        services: Arc::clone(&services),
        model: setup.model.clone(),
        session: Arc::clone(&session),
        env: env.clone(),
        registry: std::sync::OnceLock::new(),
        depth: 1,
        background: Arc::clone(&background),
    });
    extra_tools.push(Arc::new(AgentTool::new(subagents.clone())));
    let searching = settings.tool_search.mode != deferral::ToolSearchMode::Never;
    let registry = ToolRegistry::new(
        builtin_tools_with(&session, Arc::clone(&background.running.shells)),
        extra_tools,
    )
    .filtered(|t| {
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
    let mut deferral = services.deferral();
    deferral.publish(&registry, &setup.model.id, 0);
    let system = prompt::system_prompt(
        &env,
        &memory,
        services.output_style.as_ref(),
        &registry,
        &format!(
            "{}{}",
            deferral.prompt_section(),
            deferral.connecting_section(&registry)
        ),
    );
    let transcript = match setup.transcript_path {
        // A new file starts with the header; a resumed session's file goes on as it is.
        Some(p) if !p.exists() => Transcript::at(p, &setup.session_id)
            .with_header(&setup.project_dir, git_branch(&setup.project_dir)),
        Some(p) => Transcript::at(p, &setup.session_id),
        None => Transcript::disabled(),
    };
    let opening = core::Opening {
        resume: setup.resume.map(|r| (r, setup.mode_from_flag, setup.fork)),
        agents: subagents.agents(),
        background: Arc::clone(&background.running),
    };
    let core = core::Core {
        services: Arc::clone(&services),
        model: setup.model,
        session,
        tools: ToolSet::new(registry, deferral),
        system,
        conversation: Conversation::new(transcript),
        usage: UsageMeter::default(),
        max_turns: setup.max_turns,
        effort: None,
        hooks: Arc::clone(&services.hooks),
        turns_started: 0,
        rewind_undo: None,
        worktree: None,
        own_servers: None,
    };
    tokio::spawn(core.run(ops_rx, opening));
    AgentHandle {
        session_id: setup.session_id,
        ops: ops_tx,
        events: events_rx,
    }
}

/// The check of the file tools' writes to settings files ([`crate::config::settings_write`]).
fn settings_check(files: Vec<std::path::PathBuf>) -> crate::session::context::SettingsWriteCheck {
    let files = Arc::new(crate::config::settings_write::SettingsFiles::new(files));
    let covers = Arc::clone(&files);
    crate::session::context::SettingsWriteCheck(
        Arc::new(move |path, before, after| files.check(path, before, after)),
        Arc::new(move |path| covers.covers(path)),
    )
}
