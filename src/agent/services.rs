//! What the parts of one session share: the model client, the permission gate, the hooks, the
//! pending permission decisions, the settings snapshot ([`SessionSettings`]), the person's
//! memory files, commands, skills and agents, and the usage sub-agents report. The host builds
//! it (in [`AgentSetup`](super::AgentSetup)) when it opens a session; the core holds it once,
//! behind an `Arc`, and every sub-agent of the session (nested ones too) shares that `Arc`
//! instead of copying its parts.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use super::deferral::Deferral;
use super::executor::PendingDecisions;
use super::output_style::OutputStyle;
use super::usage::UsageSink;
use crate::commands::CustomCommand;
use crate::commands::agents::AgentDef;
use crate::commands::skills::Skill;
use crate::config::model::Aliases;
use crate::config::snapshot::SessionSettings;
use crate::hooks::Hooks;
use crate::llm::ModelClient;
use crate::memory::Memory;
use crate::permissions::PermissionGate;
use crate::tools::bash::ENV_FILE_VAR;

/// What a session's parts share (see the module docs).
pub struct SessionServices {
    pub client: Arc<dyn ModelClient>,
    /// What the names `/model` accepts stand for (none for OpenAI-compatible servers).
    pub aliases: Aliases,
    pub gate: Arc<PermissionGate>,
    /// The hooks the settings configure; the core runs them.
    pub hooks: Arc<Hooks>,
    /// Permission requests waiting for the person's answer (sub-agents' too).
    pub decisions: PendingDecisions,
    /// The knobs the settings and the environment set.
    pub settings: SessionSettings,
    /// The person's memory files (CLAUDE.md, AGENTS.md), for the system prompt.
    pub memory: Memory,
    /// The person's own slash commands, expanded before a prompt goes to the model.
    pub commands: Vec<CustomCommand>,
    /// The person's skills: the Skill tool is offered when there is one.
    pub skills: Vec<Skill>,
    /// The person's own sub-agents (`.claude/agents/*.md`), beside the built-in ones.
    pub agents: Vec<AgentDef>,
    /// What starts the MCP servers an agent's file defines, for its run (none: they do not
    /// start, and a notice says so).
    pub agent_servers: Option<Arc<dyn crate::tools::agent_servers::AgentServers>>,
    /// The settings' output style; `None` is the default style.
    pub output_style: Option<OutputStyle>,
    /// Running against the built-in scripted model.
    pub demo: bool,
    /// The web search service WebSearch asks (none: the tool says how to configure one).
    pub web_search: Option<Arc<dyn crate::session::search::SearchBackend>>,
    /// The small, fast model tools may ask (WebFetch's reader).
    pub small_model: Option<crate::session::small_model::SmallModel>,
    /// Each request of a sub-agent (the model and its usage), for the session's core to
    /// count.
    pub subagent_usage: UsageSink,
    /// Sub-agent runs so far, nested ones included (each gets its own transcript file).
    pub subagent_runs: AtomicU64,
    /// Background work that ends while the session is idle sends the model a request of its
    /// own (the TUI, editors); `-p` ends with its answer and waits for nothing.
    pub wake_when_idle: bool,
    /// The client can show a change that conflicts with an outside change and take the
    /// person's overwrite / re-read / abort (the TUI); elsewhere such a change is refused.
    pub offers_overwrite: bool,
}

impl SessionServices {
    /// The services of a session working in `project_dir` whose transcript is at
    /// `transcript_path` (given to hooks): the hooks are `settings.hooks`, run with
    /// `settings.env`; no memory files, commands, skills or agents, no aliases, the default
    /// output style (set the fields for more).
    pub fn new(
        client: Arc<dyn ModelClient>,
        gate: PermissionGate,
        settings: SessionSettings,
        project_dir: &Path,
        transcript_path: Option<&Path>,
    ) -> SessionServices {
        let mut settings = settings;
        if let Some(file) = transcript_path.and_then(|t| env_file_for(t, &settings.env)) {
            settings.env.push((ENV_FILE_VAR.to_string(), file));
        }
        let hooks = Hooks::new(
            settings.hooks.clone(),
            project_dir.to_path_buf(),
            settings.env.clone(),
            transcript_path.map(Path::to_path_buf).unwrap_or_default(),
        );
        SessionServices {
            client,
            aliases: Aliases::default(),
            gate: Arc::new(gate),
            hooks: Arc::new(hooks),
            decisions: PendingDecisions::default(),
            settings,
            memory: Memory::default(),
            commands: Vec::new(),
            skills: Vec::new(),
            agents: Vec::new(),
            agent_servers: None,
            output_style: None,
            demo: false,
            web_search: None,
            small_model: None,
            subagent_usage: UsageSink::default(),
            subagent_runs: AtomicU64::new(0),
            wake_when_idle: true,
            offers_overwrite: false,
        }
    }

    /// A conversation's deferred-tool state as the settings choose it (`toolSearch`; whether
    /// the endpoint takes references, else as the client says).
    pub(crate) fn deferral(&self) -> Deferral {
        let search = self.settings.tool_search;
        Deferral::new(
            search.mode,
            search
                .references
                .unwrap_or_else(|| self.client.supports_tool_references()),
        )
    }

    /// The memory files in the system prompt (scope, path), for the client.
    pub fn memory_files(&self) -> Vec<(String, PathBuf)> {
        self.memory
            .files
            .iter()
            .map(|f| (f.scope.name().to_string(), f.path.clone()))
            .collect()
    }
}

/// The session's `CLAUDE_ENV_FILE` beside its transcript (`<id>.env.sh`), given to its hooks
/// and sourced before each Bash command once a SessionStart hook has written it; `None` when
/// the person names their own (in the settings' `env` or cairn's environment).
fn env_file_for(transcript: &Path, env: &[(String, String)]) -> Option<String> {
    if crate::shell::env_policy::tool_var(env, ENV_FILE_VAR).is_some() {
        return None;
    }
    let file = transcript.with_extension("env.sh");
    // The hooks append to it: its directory must exist before the first one runs.
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    Some(file.to_string_lossy().into_owned())
}
