//! The permission gate: decides, per tool call, whether it runs, is refused, or needs the
//! person's answer ([`PermissionGate::check`]), and applies that answer (session grants and
//! denials, saved rules, plan approval: [`PermissionGate::apply_decision`]). It decides from
//! the tool's kind and the call's accesses, never from a tool's name; the PreToolUse hooks'
//! answer is one of its inputs (the core runs the hooks).
//!
//! This is the one place that decision is made, in this order (see [`decide`]): PreToolUse
//! answer -> session denials and deny rules -> broken settings (fail closed: only read-only
//! calls pass) -> plan mode -> hook deny -> ask rules (and hook
//! ask) -> hook allow -> bypassPermissions -> safety (paths as given, every symlink hop and
//! resolved; protected paths; outside the working directories) -> acceptEdits -> allow rules ->
//! session grants -> the running skill's or command's `allowed-tools` (only inside the working
//! directories and off protected paths) -> read-only allowances -> ask the person (or,
//! headless / dontAsk, refuse with a message naming what would allow it). Invariant: nothing
//! allows a call that a deny rule matches — not allow rules, not modes, not hooks, not session
//! grants; and nothing the repository wrote (a skill's or command's `allowed-tools`) allows a
//! path outside the working directories, a protected path, or another skill.
//!
//! Before a tool reads anything for its validation or preview, the executor asks
//! [`PermissionGate::check_before_io`] for the refusals that rest on the call's paths alone, so
//! a denied path answers the same whether or not the file exists.

pub mod ask;
mod commands;
pub mod conflict;
mod decide;
mod plan;
mod question;
pub mod roots;
pub mod safety;

pub use decide::Analysed;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::config::LoadedSettings;
use crate::config::hooks::HookEvent;
use crate::config::layers::{Layer, Origin};
use crate::config::settings::SourcedRule;
use crate::protocol::{
    CallOutcome, Decision, Grant, PermissionMode, PermissionRequest, RequestKind,
};
use crate::tools::{Access, DynTool, ParsedInput, Preview, ToolKind};

use crate::rules::{self, Rule, RuleContext, split_rule_list};
use safety::Roots;

/// What the gate knows about one call.
pub struct CallInfo<'a> {
    pub call_id: &'a str,
    /// The conversation making the call (`SessionContext::conversation`): only its own
    /// turn grants apply.
    pub conversation: &'a str,
    pub tool: &'a dyn DynTool,
    pub input: &'a ParsedInput,
    pub raw_input: &'a Value,
    pub title: &'a str,
    pub accesses: &'a [Access],
    pub preview: Option<&'a Preview>,
}

/// The gate's verdict before asking anyone.
#[derive(Debug, Clone, PartialEq)]
pub enum GateOutcome {
    Allow,
    /// Refused; the message goes to the model as the tool result.
    Deny {
        message: String,
    },
    /// Ask the person. The executor assigns the request id.
    Ask(Box<PermissionRequest>),
}

/// What the person's answer means for the call.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionEffect {
    pub allow: bool,
    pub outcome: CallOutcome,
    /// For a denial: the tool result text. For an allowance: a note for the person, when
    /// something went wrong on the side (e.g. the rule could not be saved).
    pub message: Option<String>,
    /// Plan approval switches the mode.
    pub new_mode: Option<PermissionMode>,
}

/// A request to the person about `call` that is not an ordinary permission question (a plan to
/// approve, questions to answer): nothing to grant for the session, no rule to save.
fn person_request(
    call: &CallInfo<'_>,
    reason: &str,
    preview: Option<crate::protocol::Display>,
    kind: RequestKind,
) -> GateOutcome {
    GateOutcome::Ask(Box::new(request_to_person(call, reason, preview, kind)))
}

/// The request behind [`person_request`].
fn request_to_person(
    call: &CallInfo<'_>,
    reason: &str,
    preview: Option<crate::protocol::Display>,
    kind: RequestKind,
) -> PermissionRequest {
    PermissionRequest {
        id: 0,
        call_id: call.call_id.to_string(),
        tool: call.tool.name().to_string(),
        title: call.title.to_string(),
        input: call.raw_input.clone(),
        reason: reason.into(),
        preview,
        session_scope: None,
        saveable_rule: None,
        background_task: None,
        kind,
    }
}

/// The permission mode, shareable with whatever needs to read it without the gate.
#[derive(Debug, Default)]
pub struct ModeCell {
    mode: Mutex<PermissionMode>,
}

impl ModeCell {
    pub fn new(mode: PermissionMode) -> ModeCell {
        ModeCell {
            mode: Mutex::new(mode),
        }
    }

    pub fn get(&self) -> PermissionMode {
        *lock(&self.mode)
    }

    pub fn set(&self, mode: PermissionMode) {
        *lock(&self.mode) = mode;
    }
}

/// Everything the gate is built from.
pub struct GateConfig<'a> {
    pub settings: &'a LoadedSettings,
    /// `--allowedTools` values (comma or space separated rules).
    pub cli_allow: Vec<String>,
    /// `--disallowedTools` values.
    pub cli_deny: Vec<String>,
    /// The starting mode (`--permission-mode`, else `settings.default_mode`, else default).
    pub mode: PermissionMode,
    /// Whether a person can be asked (false in headless mode).
    pub interactive: bool,
    /// Where cairn started (the first working directory).
    pub project_dir: PathBuf,
    /// `--add-dir` directories (settings' `additionalDirectories` are added by the gate).
    pub additional_dirs: Vec<PathBuf>,
    /// The session's data directory: spill files there are always readable.
    pub session_data_dir: PathBuf,
    /// Whether the process runs as root ([`running_as_root`]).
    pub running_as_root: bool,
    /// Whether `IS_SANDBOX=1` is set: allows bypassPermissions as root.
    pub sandboxed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    #[error(
        "bypassPermissions cannot be used when running as root, for safety. Run as a normal \
         user, or set IS_SANDBOX=1 if this is an isolated sandbox."
    )]
    BypassAsRoot,
}

/// The mode a session starts in: `--permission-mode` if given, else the settings'
/// `permissions.defaultMode`, else default. An unknown flag value is an error for the person.
pub fn starting_mode(
    flag: Option<&str>,
    settings: &LoadedSettings,
) -> Result<PermissionMode, String> {
    match flag {
        Some(f) => PermissionMode::parse(f).ok_or_else(|| {
            format!(
                "unknown permission mode `{f}`: use default, acceptEdits, plan, \
                 bypassPermissions or dontAsk"
            )
        }),
        None => Ok(settings.default_mode.unwrap_or_default()),
    }
}

/// Whether this process runs as root.
pub fn running_as_root() -> bool {
    // SAFETY: geteuid(2) takes no arguments, cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// The scope of an open request: what "for this session" covers.
#[derive(Debug, Clone)]
struct Pending {
    /// What "allow for this session" grants (empty: nothing beyond this call).
    scope: Vec<Rule>,
    /// What "deny for this session" refuses: the same scope, or, when the call had none (an
    /// ask rule or a hook asked), exactly the call's commands, paths, hosts and names.
    deny_scope: Vec<Rule>,
}

pub struct PermissionGate {
    mode: Arc<ModeCell>,
    interactive: bool,
    bypass_allowed: bool,
    deny: Vec<SourcedRule>,
    ask: Vec<SourcedRule>,
    allow: Mutex<Vec<SourcedRule>>,
    rule_ctx: RuleContext,
    project_root: PathBuf,
    project_dir: PathBuf,
    /// The working directories besides the project (flags and settings).
    additional_dirs: Vec<PathBuf>,
    working: Roots,
    /// The session's roots, for every conversation without its own.
    main_roots: Arc<roots::ConversationRoots>,
    /// Conversations working in their own worktree (isolated sub-agents): `roots.rs`.
    conversation_roots: roots::RootsByConversation,
    data: Roots,
    session_allow: Mutex<Vec<Rule>>,
    /// `allowed-tools` of the slash command or skill now running (the person invoked it or
    /// approved it), by conversation; cleared when that conversation's turn ends. Weaker than
    /// the rules above: see `decide::gaps`.
    turn_allow: Mutex<HashMap<String, Vec<Rule>>>,
    /// The modes sub-agents' conversations are decided in (their `permissionMode`), by
    /// conversation; see [`Self::mode_for`].
    conversation_modes: Mutex<HashMap<String, PermissionMode>>,
    /// Shared with the [`ReadGuard`]s handed out, so a denial given now reaches them too.
    session_deny: Arc<Mutex<Vec<Rule>>>,
    pending: Mutex<HashMap<String, Pending>>,
    /// Whether PreToolUse hooks are configured: their answer could lift refusals that
    /// [`Self::check_before_io`] would otherwise give.
    pre_tool_hooks: bool,
    diagnostics: Vec<String>,
    /// Settings problems that may have hidden a deny rule, an ask rule or a PreToolUse hook
    /// (`file:line: what`). While any stands, every call that is not read-only is refused.
    settings_broken: Vec<String>,
    /// The settings' `env`, which the commands of tools get on top of cairn's environment.
    tool_env: Vec<(String, String)>,
    /// Its variables that change what a command executes (`PATH`, `BASH_ENV`, `GIT_CONFIG_*`,
    /// …: [`crate::shell::exec_env`]): while any is set, no command is read-only.
    exec_env: Vec<String>,
}

/// Whether `deny` or the session's denials forbid reading `path` (fails closed: a path whose
/// facts cannot be read counts as denied).
fn read_denied_by<'a>(
    mut deny: impl Iterator<Item = &'a Rule>,
    session_deny: &Mutex<Vec<Rule>>,
    roots: &roots::ConversationRoots,
    data: &Roots,
    path: &std::path::Path,
) -> bool {
    let Ok(facts) = safety::path_facts(path, &roots.working, data) else {
        return true;
    };
    let facts = roots.apply(facts);
    let denied = |r: &Rule| {
        facts
            .blocking_candidates()
            .any(|c| r.matches_target(rules::Target::Read(c), true))
    };
    deny.any(denied) || lock(session_deny).iter().any(denied)
}

/// A cheap, cloneable view of the gate's read-deny rules ([`PermissionGate::read_guard`]).
#[derive(Debug, Clone)]
pub struct ReadGuard {
    deny: Arc<Vec<Rule>>,
    session_deny: Arc<Mutex<Vec<Rule>>>,
    /// The roots paths are judged against (the session's, or a conversation's own).
    roots: Arc<roots::ConversationRoots>,
    /// The gate's conversations with roots of their own ([`Self::for_conversation`]).
    conversations: roots::RootsByConversation,
    data: Roots,
}

impl ReadGuard {
    /// Whether a deny rule (or session denial) forbids reading `path`.
    pub fn denied(&self, path: &std::path::Path) -> bool {
        read_denied_by(
            self.deny.iter(),
            &self.session_deny,
            &self.roots,
            &self.data,
            path,
        )
    }

    /// The same guard for `conversation`'s paths: in an isolated sub-agent's worktree, a deny
    /// rule on the project's path denies its copy too (`roots.rs`).
    pub fn for_conversation(&self, conversation: &str) -> ReadGuard {
        let mut guard = self.clone();
        if let Some(own) = lock(&self.conversations).get(conversation) {
            guard.roots = Arc::clone(own);
        }
        guard
    }

    /// A guard that denies nothing (tests, tools used outside a session).
    pub fn none() -> ReadGuard {
        ReadGuard {
            deny: Arc::default(),
            session_deny: Arc::default(),
            roots: Arc::new(roots::ConversationRoots::main(
                Roots::default(),
                std::path::Path::new("/"),
            )),
            conversations: Arc::default(),
            data: Roots::default(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl PermissionGate {
    /// Build the gate. Fails only for bypassPermissions as root outside a sandbox. Rules from
    /// the flags that cannot be parsed are skipped and listed in [`Self::diagnostics`].
    pub fn new(config: GateConfig<'_>) -> Result<PermissionGate, GateError> {
        if config.mode == PermissionMode::BypassPermissions
            && config.running_as_root
            && !config.sandboxed
        {
            return Err(GateError::BypassAsRoot);
        }
        let settings = config.settings;
        let mut diagnostics = Vec::new();
        let ctx = RuleContext {
            root: settings.project_root.clone(),
            cwd: config.project_dir.clone(),
            home: settings.home.clone(),
        };
        let cli_rules = |values: &[String], flag: &str, diags: &mut Vec<String>| {
            let mut out = Vec::new();
            for text in split_rule_list(values) {
                match Rule::parse(&text, &ctx) {
                    Ok(rule) => out.push(SourcedRule {
                        rule,
                        origin: Origin {
                            layer: Layer::Cli,
                            source: flag.to_string(),
                        },
                    }),
                    Err(e) => diags.push(format!("{flag} `{text}`: {e}; rule skipped")),
                }
            }
            out
        };
        let mut deny = cli_rules(&config.cli_deny, "--disallowedTools", &mut diagnostics);
        // A deny flag that cannot be read is as broken as a settings file that cannot.
        let mut settings_broken = diagnostics.clone();
        settings_broken.extend(settings.broken.iter().cloned());
        deny.extend(settings.permissions.deny.iter().cloned());
        let mut allow = cli_rules(&config.cli_allow, "--allowedTools", &mut diagnostics);
        allow.extend(settings.permissions.allow.iter().cloned());
        let mut additional_dirs = config.additional_dirs.clone();
        additional_dirs.extend(settings.additional_directories.iter().cloned());
        let mut dirs = vec![config.project_dir.clone()];
        dirs.extend(additional_dirs.iter().cloned());
        let working = Roots::new(&dirs);
        Ok(PermissionGate {
            mode: Arc::new(ModeCell::new(config.mode)),
            interactive: config.interactive,
            bypass_allowed: config.mode == PermissionMode::BypassPermissions,
            deny,
            ask: settings.permissions.ask.clone(),
            allow: Mutex::new(allow),
            rule_ctx: ctx.clone(),
            project_root: settings.project_root.clone(),
            project_dir: config.project_dir.clone(),
            additional_dirs,
            main_roots: Arc::new(roots::ConversationRoots::main(
                working.clone(),
                &config.project_dir,
            )),
            conversation_roots: Arc::default(),
            working,
            data: Roots::new(&[config.session_data_dir]),
            session_allow: Mutex::new(Vec::new()),
            turn_allow: Mutex::new(HashMap::new()),
            conversation_modes: Mutex::new(HashMap::new()),
            session_deny: Arc::default(),
            pending: Mutex::new(HashMap::new()),
            pre_tool_hooks: settings.hooks.has(HookEvent::PreToolUse),
            diagnostics,
            settings_broken,
            tool_env: settings
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            exec_env: crate::shell::exec_env::names_in(settings.env.keys().map(String::as_str)),
        })
    }

    /// Allow `rules` (a command's or skill's `allowed-tools`, once the person invoked or approved
    /// it) to the calls of `conversation` until [`Self::end_turn`] for it (not to its
    /// sub-agents, nor to the conversation that started it). Deny and ask rules and plan mode
    /// still apply, and these grants cover only paths inside the working directories and off
    /// protected paths (and commands naming only such paths); anything else is decided as
    /// without them. Returns the rules that do not parse, each with why.
    pub fn allow_for_turn(&self, conversation: &str, rules: &[String]) -> Vec<String> {
        let mut problems = Vec::new();
        let mut all = lock(&self.turn_allow);
        let turn = all.entry(conversation.to_string()).or_default();
        // Claude Code's lists are comma- or space-separated (`Bash(git add *) Read`).
        for text in &split_rule_list(rules) {
            match Rule::parse(text, &self.rule_ctx) {
                Ok(rule) => turn.push(rule),
                Err(e) => problems.push(format!("allowed-tools `{text}`: {e}; not allowed")),
            }
        }
        problems
    }

    /// Drop the grants of [`Self::allow_for_turn`] to `conversation`.
    pub fn end_turn(&self, conversation: &str) {
        lock(&self.turn_allow).remove(conversation);
    }

    /// Problems with the flag rules (the settings' own are in `LoadedSettings::diagnostics`).
    pub fn diagnostics(&self) -> &[String] {
        &self.diagnostics
    }

    /// The problems that put the gate in its fail-closed state (empty: it is not). Headless
    /// mode refuses to start with any; the TUI shows them as errors.
    pub fn settings_broken(&self) -> &[String] {
        &self.settings_broken
    }

    pub fn mode(&self) -> PermissionMode {
        self.mode.get()
    }

    pub fn set_mode(&self, mode: PermissionMode) {
        self.mode.set(mode);
    }

    /// Decide `conversation`'s calls in `mode` (a sub-agent's `permissionMode`) instead of the
    /// session's. Bypass is granted only when the session may bypass; otherwise the agent runs
    /// in default mode and the returned note says so.
    pub fn set_conversation_mode(
        &self,
        conversation: &str,
        mode: PermissionMode,
    ) -> Option<String> {
        let (mode, note) = if mode == PermissionMode::BypassPermissions && !self.bypass_allowed {
            (
                PermissionMode::Default,
                Some(
                    "its `permissionMode: bypassPermissions` needs a session started with \
                     bypass allowed (--dangerously-skip-permissions); it runs in default mode"
                        .to_string(),
                ),
            )
        } else {
            (mode, None)
        };
        lock(&self.conversation_modes).insert(conversation.to_string(), mode);
        note
    }

    /// The mode `conversation`'s calls are decided in: its own when a sub-agent's file gave
    /// one, else the session's. The session's bypass and plan modes win over any agent's: an
    /// agent file never takes a person out of plan mode, nor asks more in bypass mode.
    pub fn mode_for(&self, conversation: &str) -> PermissionMode {
        let session = self.mode();
        if matches!(
            session,
            PermissionMode::BypassPermissions | PermissionMode::Plan
        ) {
            return session;
        }
        lock(&self.conversation_modes)
            .get(conversation)
            .copied()
            .unwrap_or(session)
    }

    /// The shared mode cell (reads and writes go to the same mode as the gate's).
    pub fn mode_cell(&self) -> Arc<ModeCell> {
        self.mode.clone()
    }

    /// Whether a person can be asked (false in headless mode).
    pub fn is_interactive(&self) -> bool {
        self.interactive
    }

    pub fn bypass_allowed(&self) -> bool {
        self.bypass_allowed
    }

    /// Whether a tool is offered to the model at all (a bare deny rule hides it; `mcp__*`
    /// hides the MCP resource tools too).
    pub fn offers_tool(&self, tool: &dyn DynTool) -> bool {
        let resources = crate::tools::mcp_resources::is_resource_tool(tool.name());
        !self.deny.iter().any(|r| {
            (r.rule.is_bare() && r.rule.names_tool(tool.name(), tool.kind(), tool.mcp_name()))
                || (resources && r.rule.names_every_server())
        })
    }

    /// Whether a deny rule (or session denial) forbids reading `path`: for search tools to
    /// leave such files out of their results (Grep over a project must not show `.env`).
    pub fn read_denied(&self, path: &std::path::Path) -> bool {
        read_denied_by(
            self.deny.iter().map(|r| &r.rule),
            &self.session_deny,
            &self.main_roots,
            &self.data,
            path,
        )
    }

    /// The read-deny check on its own, for a tool that learns the paths it shows only as it
    /// runs (the LSP tool's returned locations): the same rules and session denials as
    /// [`Self::read_denied`], denials given later included.
    pub fn read_guard(&self) -> ReadGuard {
        ReadGuard {
            deny: Arc::new(self.deny.iter().map(|r| r.rule.clone()).collect()),
            session_deny: Arc::clone(&self.session_deny),
            roots: Arc::clone(&self.main_roots),
            conversations: Arc::clone(&self.conversation_roots),
            data: self.data.clone(),
        }
    }

    /// Apply the person's answer to `request`.
    pub fn apply_decision(
        &self,
        request: &PermissionRequest,
        decision: &Decision,
    ) -> DecisionEffect {
        let pending = lock(&self.pending).remove(&request.call_id);
        let (scope, deny_scope) = match pending {
            Some(p) => (p.scope, p.deny_scope),
            None => {
                // A request we did not build (or already answered): its shown rule, else the tool.
                let text = request
                    .saveable_rule
                    .clone()
                    .unwrap_or(request.tool.clone());
                let rules: Vec<Rule> = Rule::parse(&text, &self.rule_ctx).into_iter().collect();
                (rules.clone(), rules)
            }
        };
        if let Some(effect) = plan::answer(request, decision, &self.mode) {
            return effect;
        }
        if let Some(effect) = question::answer(request, decision) {
            return effect;
        }
        if let Some(effect) = conflict::answer(request, decision) {
            return effect;
        }
        let allow = |outcome| DecisionEffect {
            allow: true,
            outcome,
            message: None,
            new_mode: None,
        };
        let deny = |outcome, message: String| DecisionEffect {
            allow: false,
            outcome,
            message: Some(message),
            new_mode: None,
        };
        match decision {
            Decision::AllowOnce => allow(CallOutcome::AllowedOnce),
            Decision::AllowEdited { grant, .. } => {
                // The grant of the option chosen still holds for later calls; this call is
                // "allowed with your changes" either way.
                let mut effect = match grant {
                    None => allow(CallOutcome::AllowedEdited),
                    Some(Grant::Session) => self.apply_decision(request, &Decision::AllowSession),
                    Some(Grant::AllEditsSession) => {
                        self.apply_decision(request, &Decision::AllowAllEditsSession)
                    }
                    Some(Grant::Always) => self.apply_decision(request, &Decision::AlwaysAllow),
                };
                effect.outcome = CallOutcome::AllowedEdited;
                effect
            }
            Decision::AllowSession => {
                lock(&self.session_allow).extend(scope);
                allow(CallOutcome::AllowedForSession)
            }
            Decision::AllowAllEditsSession => {
                let edits = ToolKind::Edit.rule_word().unwrap_or_default();
                lock(&self.session_allow).extend(Rule::parse(edits, &self.rule_ctx));
                allow(CallOutcome::AllowedForSession)
            }
            Decision::AlwaysAllow => {
                let mut effect = allow(CallOutcome::AllowedAlways);
                match &request.saveable_rule {
                    Some(text) => {
                        match crate::config::local::save_allow_rule(&self.project_root, text) {
                            Ok(path) => {
                                if let Ok(rule) = Rule::parse(text, &self.rule_ctx) {
                                    lock(&self.allow).push(SourcedRule {
                                        rule,
                                        origin: Origin {
                                            layer: Layer::ProjectLocal,
                                            source: path.display().to_string(),
                                        },
                                    });
                                }
                            }
                            Err(e) => {
                                lock(&self.session_allow).extend(scope);
                                effect.message = Some(format!("The rule was not saved: {e}"));
                            }
                        }
                    }
                    None => {
                        lock(&self.session_allow).extend(scope);
                        effect.outcome = CallOutcome::AllowedForSession;
                    }
                }
                effect
            }
            // Plan and question requests are answered in `plan` and `question`; for any other
            // request these allow the call.
            // Conflict answers are read in `conflict`; for any other request they allow once.
            Decision::ApprovePlan { .. }
            | Decision::Answers { .. }
            | Decision::Overwrite
            | Decision::Reread => allow(CallOutcome::AllowedOnce),
            Decision::DenyOnce => deny(
                CallOutcome::Denied,
                "The user doesn't want to proceed with this tool use. The tool use was rejected. \
                 STOP what you are doing and wait for the user to tell you how to proceed."
                    .into(),
            ),
            Decision::DenySession => {
                let words = request
                    .session_scope
                    .clone()
                    .unwrap_or_else(|| format!("{} calls", request.tool));
                lock(&self.session_deny).extend(deny_scope);
                deny(
                    CallOutcome::DeniedForSession,
                    format!(
                        "The user denied this for the rest of the session ({words}). Do not \
                         retry it; find another way or ask the user how to proceed."
                    ),
                )
            }
            Decision::DenyWithFeedback { feedback } => deny(
                CallOutcome::Denied,
                format!(
                    "The user doesn't want to proceed with this tool use. The user said:\n{feedback}"
                ),
            ),
        }
    }
}
