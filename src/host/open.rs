//! Building one session from its spec: the folder's trust, the settings, the model (or the
//! demo), the permission gate, memory, commands, skills, agents, MCP servers, and the core.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::agent::{AgentHandle, AgentSetup, SessionServices, start};
use crate::config::load_settings;
use crate::config::model::{ModelChoice, ModelSettings, NoCredentials, resolve};
use crate::config::snapshot::SessionSettings;
use crate::config::trust::Trust;
use crate::llm::auth::{DEFAULT_HELPER_TTL, HELPER_TTL_ENV, KeyHelper, parse_custom_headers};
use crate::llm::client::{ClientOptions, build_client};
use crate::permissions::{GateConfig, PermissionGate, running_as_root, starting_mode};
use crate::session::resume::{self, Resumed};

use super::demo::Demo;
use super::env::{env_var, ignored_endpoints, settings_env};
use super::folder::{FolderTrust, folder_trust, untrusted_notice};
use super::report::broken_settings_report;
use super::spec::{ClientKind, Resume, SessionSpec, TrustDecision};
use super::{SessionFacts, data_root, project_data_dir};

/// What keeps a session's outside parts alive: the demo's server and scratch project, the MCP
/// servers. Dropping it stops them.
#[derive(Default)]
pub(crate) struct KeepAlive {
    /// Held to be dropped with the session.
    #[allow(dead_code)]
    pub demo: Option<Demo>,
    pub mcp: Option<Arc<crate::mcp::McpManager>>,
    /// The session's language servers (started on first use; dropped with the session).
    #[allow(dead_code)]
    pub lsp: Option<Arc<crate::lsp::LspManager>>,
}

/// A session built and started, before the host wires its client.
pub(crate) struct Opened {
    pub agent: AgentHandle,
    pub notices: Vec<String>,
    pub facts: SessionFacts,
    pub keep: KeepAlive,
}

/// The folder's trust for `spec`: what `~/.claude.json` records, or vouched for by the spec.
pub(crate) fn spec_trust(spec: &SessionSpec) -> FolderTrust {
    let mut folder = folder_trust(&spec.cwd, spec.trust == TrustDecision::Trusted);
    folder.external_imports_approved |= spec.external_imports;
    folder
}

/// Open a session as `spec` says.
pub(crate) async fn open_session(spec: &SessionSpec) -> anyhow::Result<Opened> {
    let folder = spec_trust(spec);
    let interactive = spec.client.interactive();
    let mut notices = Vec::new();
    let mut project_dir = spec.cwd.clone();
    let settings_arg = spec.settings.as_deref();
    let mut settings = load_settings(&project_dir, settings_arg, &env_var, folder.trust);
    // Problems with the person's own settings are reported in demo mode too.
    let mut diagnostics = settings.diagnostics.clone();
    let choice = {
        // The settings' `env` applies before the model is chosen, as in Claude Code.
        let env = settings_env(&settings);
        let model_settings = ModelSettings {
            model: settings.model.clone(),
            key_helper: settings.api_key_helper.as_ref().map(|command| KeyHelper {
                command: command.clone(),
                cwd: project_dir.clone(),
                ttl: env(HELPER_TTL_ENV)
                    .and_then(|v| v.trim().parse().ok())
                    .map_or(DEFAULT_HELPER_TTL, Duration::from_millis),
            }),
        };
        notices.extend(ignored_endpoints(&settings));
        for var in ["ANTHROPIC_CUSTOM_HEADERS", "OPENAI_CUSTOM_HEADERS"] {
            if let Some(text) = env(var) {
                notices.extend(parse_custom_headers(var, &text).1);
            }
        }
        resolve(&spec.model, &model_settings, env)
    };
    let (endpoint, pick, aliases, demo) = match choice {
        ModelChoice::Real(ep, pick, aliases) => (*ep, pick, aliases, None),
        ModelChoice::NoCredentials if spec.client != ClientKind::Tui => {
            return Err(NoCredentials.into());
        }
        ModelChoice::Demo | ModelChoice::NoCredentials => {
            let demo = Demo::start()?;
            project_dir = demo.dir.clone();
            // cairn wrote the scratch project itself: there is nothing in it to distrust.
            settings = load_settings(&project_dir, settings_arg, &env_var, Trust::Trusted);
            for d in &settings.diagnostics {
                if !diagnostics.contains(d) {
                    diagnostics.push(d.clone());
                }
            }
            notices.push(demo.notice());
            let (ep, pick) = (demo.endpoint.clone(), demo.pick.clone());
            (ep, pick, Default::default(), Some(demo))
        }
    };
    let client = build_client(&endpoint, &ClientOptions::from_env(settings_env(&settings)))
        .map_err(|e| anyhow::anyhow!("cannot set up the model client: {e}"))?;
    let plugins = session_plugins(spec, &mut settings, demo.is_some());
    // The broken ones are shown on their own, as errors.
    notices.extend(
        diagnostics
            .into_iter()
            .filter(|d| !settings.broken.contains(d)),
    );
    let mode = starting_mode(spec.permission_mode.as_deref(), &settings)
        .map_err(|e| anyhow::anyhow!(e))?;
    let data_root = data_root();
    let project_data = project_data_dir(&data_root, &project_dir);
    let (resume, pick_session) = session_to_resume(spec, &project_data)?;
    let (session_id, transcript_path) = match &resume {
        Some(r) if !spec.fork => (r.session_id.clone(), r.path.clone()),
        _ => {
            let id = AgentSetup::new_session_id();
            let path = project_data.join(format!("{id}.jsonl"));
            (id, path)
        }
    };
    let data_dir = project_data.join(&session_id);
    let gate = PermissionGate::new(GateConfig {
        settings: &settings,
        cli_allow: spec.allowed_tools.clone(),
        cli_deny: spec.disallowed_tools.clone(),
        mode,
        interactive,
        project_dir: project_dir.clone(),
        additional_dirs: spec.additional_dirs.clone(),
        session_data_dir: data_dir.clone(),
        running_as_root: running_as_root(),
        sandboxed: env_var("IS_SANDBOX").is_some_and(|v| v == "1"),
    })?;
    let settings_broken = gate.settings_broken().to_vec();
    if !interactive && !settings_broken.is_empty() {
        // Headless: no one would see the refusals in time; stop before the first request.
        anyhow::bail!("{}", broken_settings_report(&settings_broken));
    }
    notices.extend(
        gate.diagnostics()
            .iter()
            .filter(|d| !settings_broken.contains(d))
            .cloned(),
    );
    let bypass_allowed = gate.bypass_allowed();
    // The demo's scratch project has none of the person's memory files but the user one.
    // External imports count as approved only in a trusted folder whose approval is recorded
    // (asking is the client's part: `pending_external_imports`).
    let memory = crate::memory::load(&if demo.is_some() {
        crate::memory::Roots::standard(
            settings.home.clone(),
            settings.project_root.clone(),
            project_dir.clone(),
        )
    } else {
        folder.memory_roots(settings.home.clone(), &project_dir)
    });
    notices.extend(memory.problems.iter().map(|p| format!("memory file: {p}")));
    let mut commands = crate::commands::discover(&project_dir, settings.home.as_deref());
    notices.extend(
        commands
            .problems
            .iter()
            .map(|p| format!("slash command: {p}")),
    );
    let mut skills = crate::commands::skills::discover(&project_dir, settings.home.as_deref());
    notices.extend(skills.problems.iter().map(|p| format!("skill: {p}")));
    let mut agents = crate::commands::agents::discover(&project_dir, settings.home.as_deref());
    notices.extend(agents.problems.iter().map(|p| format!("agent: {p}")));
    if !settings.trust.is_trusted() {
        let lost =
            crate::agent::subagent_scope::without_untrusted_hooks(&mut agents.items, &project_dir);
        notices.extend(lost.into_iter().map(|p| format!("agent: {p}")));
        let lost = crate::agent::subagent_servers::without_untrusted_servers(
            &mut agents.items,
            &project_dir,
        );
        notices.extend(lost.into_iter().map(|p| format!("agent: {p}")));
    }
    notices.extend(plugins.problems.iter().map(|p| format!("plugin: {p}")));
    notices.extend(plugins.untrusted_notice());
    let mut plugin_servers = Vec::new();
    for p in &plugins.plugins {
        let parts = p.parts.clone();
        parts
            .commands
            .into_iter()
            .for_each(|c| commands.add(Ok(c), |c| &c.name));
        parts
            .skills
            .into_iter()
            .for_each(|s| skills.add(Ok(s), |s| &s.name));
        // As in Claude Code, a plugin's agents run no hooks or MCP servers of their own.
        parts.agents.into_iter().for_each(|mut a| {
            a.hooks = None;
            let lost = crate::agent::subagent_servers::without_plugin_servers(&mut a);
            notices.extend(lost.map(|p| format!("agent: {p}")));
            agents.add(Ok(a), |a| &a.name)
        });
        plugin_servers.extend(parts.mcp);
    }
    let style = crate::agent::output_style::select(
        settings.appearance.output_style.as_deref(),
        &project_dir,
        settings.home.as_deref(),
    );
    notices.extend(style.notices.iter().cloned());
    let late_tools = crate::tools::LateTools::default();
    if !settings.trust.is_trusted() {
        let servers = crate::mcp::session::project_servers(&project_dir, &settings, &spec.mcp);
        notices.extend(untrusted_notice(&settings, &servers, interactive));
    }
    // The demo's scratch project runs no MCP servers.
    let mcp = demo.is_none().then(|| {
        let roots: Vec<PathBuf> = spec
            .additional_dirs
            .iter()
            .map(|d| project_dir.join(d))
            .collect();
        let (manager, lines) = crate::mcp::session::start_with(
            &project_dir,
            &roots,
            &settings,
            &spec.mcp,
            spec.mcp_servers
                .iter()
                .cloned()
                .chain(plugin_servers)
                .collect(),
            late_tools.clone(),
            Some(project_data.join("mcp-logs")),
        );
        notices.extend(lines);
        // The TUI asks about the waiting servers; that question is its only warning.
        if spec.client != ClientKind::Tui {
            let waiting = manager.unapproved();
            let names = waiting.iter().map(|s| s.name.as_str());
            notices.extend(crate::mcp::session::approval_notices(names));
        }
        Arc::new(manager)
    });
    // Language servers: none start here; the LSP tool starts them on first use.
    let (lsp, lsp_notices) = crate::lsp::LspManager::from_settings(&settings, data_dir.join("lsp"));
    notices.extend(lsp_notices);
    let lsp = Arc::new(lsp);
    let lsp_tool: crate::tools::ToolHandle = Arc::new(crate::lsp::tool::LspTool::new(
        Arc::clone(&lsp),
        gate.read_guard(),
    ));
    let web_search = search_service(&settings, &endpoint, &client, &mut notices);
    let small_model = crate::session::small_model::SmallModel {
        client: Arc::clone(&client),
        model: small_model_id(&settings, &endpoint, &aliases),
    };
    let session_settings = SessionSettings::read(&settings, &env_var);
    let tool_env = session_settings.env.clone();
    let services = SessionServices {
        aliases,
        memory,
        commands: commands.items,
        skills: skills.items,
        agents: agents.items,
        agent_servers: mcp.as_deref().map(crate::mcp::run_servers::starter_for),
        output_style: style.style.clone(),
        demo: demo.is_some(),
        web_search,
        small_model: Some(small_model),
        // `-p` ends with its answer: background work ending later wakes no one.
        wake_when_idle: spec.client != ClientKind::Headless,
        offers_overwrite: spec.client.shows_conflicts(),
        ..SessionServices::new(
            Arc::clone(&client),
            gate,
            session_settings,
            &project_dir,
            Some(&transcript_path),
        )
    };
    let setup = AgentSetup {
        services,
        model: pick,
        additional_dirs: spec
            .additional_dirs
            .iter()
            .map(|d| project_dir.join(d))
            .chain(settings.additional_directories.iter().cloned())
            .collect(),
        data_dir,
        transcript_path: Some(transcript_path.clone()),
        session_id,
        project_dir: project_dir.clone(),
        max_turns: spec.max_turns,
        extra_tools: vec![lsp_tool],
        late_tools,
        resume,
        fork: spec.fork,
        mode_from_flag: spec.permission_mode.is_some(),
        client_files: spec.client_files.clone(),
        client_terminal: spec.client_terminal.clone(),
    };
    let facts = SessionFacts {
        project_dir,
        project_root: settings.project_root.clone(),
        sessions_dir: project_data,
        data_root,
        transcript_path,
        pick_session,
        bypass_allowed,
        settings_broken,
        status_line: settings.appearance.status_line.clone(),
        output_style: style.name().to_string(),
        api_key_source: if demo.is_some() {
            "none".into()
        } else {
            endpoint.key_source().into()
        },
        tool_env,
        demo: demo.is_some(),
        plugins: crate::plugins::listing::infos(&plugins),
        plugin_problems: plugins.problems.clone(),
    };
    Ok(Opened {
        agent: start(setup),
        notices,
        facts,
        keep: KeepAlive {
            demo,
            mcp,
            lsp: Some(lsp),
        },
    })
}

/// The session's plugins (none for the demo); their hooks and language servers join the
/// settings' (after them: the person's own win a name), and a PreToolUse hook a plugin lost
/// closes the gate as one the settings lost does.
fn session_plugins(
    spec: &SessionSpec,
    settings: &mut crate::config::LoadedSettings,
    demo: bool,
) -> crate::plugins::PluginSet {
    if demo {
        return Default::default();
    }
    let home = crate::plugins::PluginsHome::from_env(&env_var);
    let set = crate::plugins::load(
        settings,
        &spec.plugin_dirs,
        home.as_ref(),
        &settings_env(settings),
    );
    for p in &set.plugins {
        settings.hooks.groups.extend(p.parts.hooks.iter().cloned());
        settings.broken.extend(p.parts.broken_hooks.iter().cloned());
        for server in &p.parts.lsp {
            if settings.lsp_servers.0.iter().all(|s| s.name != server.name) {
                settings.lsp_servers.0.push(server.clone());
            }
        }
    }
    set
}

/// The session the spec resumes, read; and whether the person is to pick one (`--resume`
/// without an id, in the TUI).
fn session_to_resume(
    spec: &SessionSpec,
    project_data: &Path,
) -> anyhow::Result<(Option<Resumed>, bool)> {
    let path: PathBuf = match &spec.resume {
        Resume::Id(id) if !id.trim().is_empty() => resume::find(project_data, id.trim())?,
        Resume::Id(_) | Resume::Pick if spec.client == ClientKind::Headless => anyhow::bail!(
            "--resume needs a session id with -p (or use --continue for the most recent one)"
        ),
        Resume::Id(_) | Resume::Pick => return Ok((None, true)),
        Resume::Continue => resume::latest(project_data)?,
        Resume::New if spec.fork => {
            anyhow::bail!("--fork-session goes with --continue or --resume")
        }
        Resume::New => return Ok((None, false)),
    };
    Ok((Some(resume::load(&path)?), false))
}

/// The search service WebSearch asks: the settings' `webSearch` when set, else the Anthropic
/// API's own server-side search; none for other providers (the tool then says how to set one).
fn search_service(
    settings: &crate::config::LoadedSettings,
    endpoint: &crate::llm::ModelEndpoint,
    client: &Arc<dyn crate::llm::ModelClient>,
    notices: &mut Vec<String>,
) -> Option<Arc<dyn crate::session::search::SearchBackend>> {
    use crate::tools::web_search::backends::HttpSearch;
    use crate::tools::web_search::provider::ProviderSearch;
    if let Some(setting) = &settings.web_search {
        return match HttpSearch::new(setting, &settings_env(settings)) {
            Ok(service) => Some(Arc::new(service)),
            Err(e) => {
                notices.push(e);
                None
            }
        };
    }
    (endpoint.provider == crate::llm::Provider::Anthropic).then(|| {
        Arc::new(ProviderSearch::new(
            Arc::clone(client),
            endpoint.model.clone(),
        )) as Arc<dyn crate::session::search::SearchBackend>
    })
}

/// The small, fast model tools ask (WebFetch's reader): `ANTHROPIC_SMALL_FAST_MODEL`, else the
/// haiku alias (`ANTHROPIC_DEFAULT_HAIKU_MODEL` respected) for the Anthropic API; for other
/// providers the `smallModel` setting; else the session's own model.
fn small_model_id(
    settings: &crate::config::LoadedSettings,
    endpoint: &crate::llm::ModelEndpoint,
    aliases: &crate::config::model::Aliases,
) -> String {
    let env = settings_env(settings);
    if endpoint.provider == crate::llm::Provider::Anthropic {
        if let Some(model) = env("ANTHROPIC_SMALL_FAST_MODEL").filter(|m| !m.trim().is_empty()) {
            return model.trim().to_string();
        }
        if let Some(alias) = aliases.fast() {
            return aliases.pick(alias).id;
        }
    }
    settings
        .small_model
        .clone()
        .unwrap_or_else(|| endpoint.model.clone())
}
