//! The agent harness: the real agent core (executor, permission gate, tools) talking to the
//! scripted model server over HTTP, with helpers to answer permission requests, collect a
//! turn's events and read what the model was sent. Needs `support/llm.rs` included as `llm`
//! next to it: `#[path = "support/llm.rs"] mod llm;` and `#[path = "support/agent.rs"] mod agent;`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn::agent::{AgentHandle, AgentSetup, SessionServices, start};
use cairn::config::LoadedSettings;
use cairn::config::hooks::HooksConfig;
use cairn::config::model::Aliases;
use cairn::config::snapshot::SessionSettings;
use cairn::llm::Provider;
use cairn::llm::retry::RetryPolicy;
use cairn::llm::scripted::ScriptedServer;
use cairn::permissions::{GateConfig, PermissionGate};
use cairn::protocol::{Decision, Event, Op, PermissionMode, PermissionRequest, TurnEnd};
use cairn::tools::ToolHandle;
use serde_json::Value;

use crate::llm;

/// How long a turn may take before the test gives up on it.
const TURN_DEADLINE: Duration = Duration::from_secs(30);

/// What a test chooses about a session. [`Setup::in_dir`] fills in the usual choices.
pub struct Setup {
    pub provider: Provider,
    pub project_dir: PathBuf,
    pub data_dir: PathBuf,
    /// Whether the session writes a transcript (to `data_dir/t.jsonl`).
    pub transcript: bool,
    pub session_id: &'static str,
    pub gate: PermissionGate,
    /// The hooks the core runs (none by default).
    pub hooks: HooksConfig,
    pub max_turns: Option<u32>,
    pub idle: Duration,
    pub retry: RetryPolicy,
    pub tools: Vec<ToolHandle>,
    /// The person's skills (none by default).
    pub skills: Vec<cairn::commands::skills::Skill>,
    /// The person's slash commands (none by default).
    pub commands: Vec<cairn::commands::CustomCommand>,
    /// The model name the session starts with (`test-model`), and the aliases `/model` and
    /// `model:` lines resolve (none by default).
    pub model: String,
    pub aliases: Aliases,
    /// The person's own sub-agents (none by default).
    pub agents: Vec<cairn::commands::agents::AgentDef>,
    /// A session to continue (none by default).
    pub resume: Option<cairn::session::resume::Resumed>,
    /// Auto-compaction threshold, percent (85 by default).
    pub auto_compact_pct: u8,
    /// Deferred tools (`auto`, and references as the client says, by default).
    pub tool_search: cairn::agent::deferral::ToolSearchConfig,
    pub checkpoints: bool,
    /// The checkpoint store's budget in bytes (`None`: the default).
    pub checkpoint_budget: Option<u64>,
    /// The web search service (none: WebSearch says how to configure one).
    pub web_search: Option<std::sync::Arc<dyn cairn::session::search::SearchBackend>>,
    /// Tools that join while the session runs (MCP servers' tools).
    pub late_tools: cairn::tools::LateTools,
    /// The client's files (an editor's buffers; none by default).
    pub client_files: Option<std::sync::Arc<dyn cairn::files::client::ClientFiles>>,
    /// The settings' `env` (none by default).
    pub env: Vec<(String, String)>,
    /// Each request's `max_tokens` (1024 by default).
    pub max_tokens: u32,
    /// Whether the client can resolve a conflict with an outside change (as the TUI does;
    /// false by default, as `-p` and editors).
    pub offers_overwrite: bool,
    /// What starts the MCP servers an agent's file defines (none by default).
    pub agent_servers: Option<std::sync::Arc<dyn cairn::tools::agent_servers::AgentServers>>,
}

impl Setup {
    /// A session in project `dir` with its data (and transcript) in `dir/.data`, an
    /// interactive default-mode gate, a 30 s idle deadline, four quick attempts per request
    /// and no extra tools.
    pub fn in_dir(dir: &Path, provider: Provider) -> Setup {
        Setup {
            provider,
            project_dir: dir.to_path_buf(),
            data_dir: dir.join(".data"),
            transcript: true,
            session_id: "s-test",
            gate: interactive_gate(dir),
            hooks: HooksConfig::default(),
            max_turns: None,
            idle: Duration::from_secs(30),
            retry: llm::fast_retry(4, 20, 200),
            tools: Vec::new(),
            skills: Vec::new(),
            commands: Vec::new(),
            model: "test-model".into(),
            aliases: Aliases::default(),
            resume: None,
            agents: Vec::new(),
            auto_compact_pct: 85,
            tool_search: Default::default(),
            checkpoints: true,
            checkpoint_budget: None,
            web_search: None,
            late_tools: Default::default(),
            client_files: None,
            env: Vec::new(),
            max_tokens: 1024,
            offers_overwrite: false,
            agent_servers: None,
        }
    }
}

/// An interactive gate in default mode over project `dir` (data in `dir/.data`), with no
/// settings: unsafe tools ask, and the test answers.
pub fn interactive_gate(dir: &Path) -> PermissionGate {
    let settings = LoadedSettings {
        project_root: dir.to_path_buf(),
        project_dir: dir.to_path_buf(),
        ..LoadedSettings::default()
    };
    gate_with_settings(dir, &settings)
}

/// An interactive default-mode gate over project `dir` with these settings.
pub fn gate_with_settings(dir: &Path, settings: &LoadedSettings) -> PermissionGate {
    gate_allowing(dir, settings, Vec::new())
}

/// As [`gate_with_settings`], with `--allowedTools` rules.
pub fn gate_allowing(
    dir: &Path,
    settings: &LoadedSettings,
    cli_allow: Vec<String>,
) -> PermissionGate {
    gate_in_mode(dir, settings, cli_allow, PermissionMode::Default)
}

/// As [`gate_allowing`], in `mode`.
pub fn gate_in_mode(
    dir: &Path,
    settings: &LoadedSettings,
    cli_allow: Vec<String>,
    mode: PermissionMode,
) -> PermissionGate {
    PermissionGate::new(GateConfig {
        settings,
        cli_allow,
        cli_deny: Vec::new(),
        mode,
        interactive: true,
        project_dir: dir.to_path_buf(),
        additional_dirs: Vec::new(),
        session_data_dir: dir.join(".data"),
        running_as_root: false,
        sandboxed: false,
    })
    .unwrap()
}

/// A running agent and the scripted server it talks to.
pub struct Agent {
    pub server: ScriptedServer,
    pub handle: AgentHandle,
}

impl Agent {
    /// Start a scripted server playing `script` and an agent core talking to it.
    pub fn start(script: &Value, setup: Setup) -> Agent {
        let server = llm::scripted(script);
        let client = llm::client(setup.provider, &server, setup.idle);
        let transcript_path = setup.transcript.then(|| setup.data_dir.join("t.jsonl"));
        let settings = SessionSettings {
            auto_compact_pct: setup.auto_compact_pct,
            tool_search: setup.tool_search,
            checkpoints: setup.checkpoints,
            checkpoint_budget: setup.checkpoint_budget,
            max_tokens: setup.max_tokens,
            retry: setup.retry,
            hooks: setup.hooks,
            env: setup.env,
            ..SessionSettings::default()
        };
        let services = SessionServices {
            aliases: setup.aliases.clone(),
            commands: setup.commands,
            skills: setup.skills,
            agents: setup.agents,
            web_search: setup.web_search,
            offers_overwrite: setup.offers_overwrite,
            agent_servers: setup.agent_servers,
            ..SessionServices::new(
                client,
                setup.gate,
                settings,
                &setup.project_dir,
                transcript_path.as_deref(),
            )
        };
        let handle = start(AgentSetup {
            services,
            model: setup.aliases.pick(&setup.model),
            project_dir: setup.project_dir,
            additional_dirs: Vec::new(),
            data_dir: setup.data_dir,
            transcript_path,
            session_id: setup.session_id.into(),
            max_turns: setup.max_turns,
            extra_tools: setup.tools,
            late_tools: setup.late_tools,
            resume: setup.resume,
            fork: false,
            mode_from_flag: false,
            client_files: setup.client_files,
            client_terminal: None,
        });
        Agent { server, handle }
    }

    pub fn submit(&self, text: &str) {
        self.handle
            .ops
            .send(Op::Submit { text: text.into() })
            .unwrap();
    }

    /// Run `prompt` as `cairn -p` does, in `format`, to the end: the outcome and what was
    /// printed. The session is handed to the headless runner, so it is used up.
    pub async fn headless(
        self,
        prompt: &str,
        format: cairn::cli::OutputFormat,
    ) -> (cairn::headless::Outcome, String) {
        let mut out = Vec::new();
        let connection = cairn::protocol::Connection {
            session_id: self.handle.session_id,
            ops: self.handle.ops,
            events: self.handle.events,
        };
        let outcome = cairn::headless::run(
            connection,
            prompt.into(),
            format,
            false,
            &Default::default(),
            &mut out,
        )
        .await
        .unwrap();
        (outcome, String::from_utf8(out).unwrap())
    }

    /// Submit `text` and collect the turn's events, allowing every permission request.
    pub async fn prompt(&mut self, text: &str) -> Vec<Event> {
        self.submit(text);
        self.run_turn().await
    }

    /// Collect events until the turn finishes, allowing every permission request.
    pub async fn run_turn(&mut self) -> Vec<Event> {
        self.run_turn_answering(|_| Decision::AllowOnce).await
    }

    /// Collect events until the turn finishes, answering each permission request with
    /// `answer`'s decision.
    pub async fn run_turn_answering(
        &mut self,
        mut answer: impl FnMut(&PermissionRequest) -> Decision,
    ) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let ev = tokio::time::timeout(TURN_DEADLINE, self.handle.events.recv())
                .await
                .expect("the turn did not finish in time")
                .expect("the core stopped");
            if let Event::PermissionRequest(req) = &ev {
                self.handle
                    .ops
                    .send(Op::PermissionDecision {
                        request_id: req.id,
                        decision: answer(req),
                    })
                    .unwrap();
            }
            let done = matches!(ev, Event::TurnFinished { .. });
            events.push(ev);
            if done {
                return events;
            }
        }
    }

    /// The body of the n-th request the server got.
    pub fn request_body(&self, n: usize) -> Value {
        self.server.requests()[n].body.clone()
    }
}

/// How the turn ended: its end, final text and number of model turns.
pub fn finished(events: &[Event]) -> (TurnEnd, String, u32) {
    events
        .iter()
        .find_map(|e| match e {
            Event::TurnFinished {
                end,
                text,
                num_turns,
                ..
            } => Some((*end, text.clone(), *num_turns)),
            _ => None,
        })
        .expect("no TurnFinished")
}

/// All streamed text of a turn.
pub fn streamed_text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// All tool results the model was sent in a request (text, is_error), whatever the wire
/// format; structured content is given as its JSON text.
pub fn tool_results(body: &Value) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] == "tool" {
            let content = m["content"].as_str().unwrap_or_default().to_string();
            out.push((content, false));
        }
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" {
                let content = match &b["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                out.push((content, b["is_error"].as_bool().unwrap_or(false)));
            }
        }
    }
    out
}
