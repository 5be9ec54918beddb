//! Assembling a session from the command line and the environment: which model (or the demo),
//! which directories, the permission gate, retry knobs. Shared by the TUI and headless mode so
//! both start the same core the same way.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::agent::{AgentSetup, start};
use crate::cli::{Cli, ProviderArg};
use crate::config::LoadedSettings;
use crate::config::layers::Layer;
use crate::config::load_settings;
use crate::config::model::{
    Aliases, ModelChoice, ModelFlags, ModelPick, ModelSettings, NO_CREDENTIALS, resolve,
};
use crate::config::trust::Trust;
use crate::config::untrusted::UntrustedItem;
use crate::llm::ModelEndpoint;
use crate::llm::Provider;
use crate::llm::auth::{DEFAULT_HELPER_TTL, HELPER_TTL_ENV, KeyHelper, parse_custom_headers};
use crate::llm::client::{ClientOptions, build_client};
use crate::llm::retry::RetryPolicy;
use crate::llm::scripted::{Script, ScriptedServer};
use crate::permissions::{GateConfig, PermissionGate, running_as_root, starting_mode};
use crate::session::resume::{self, Resumed};

/// The built-in demo script and the sample project it works on.
pub const DEMO_SCRIPT: &str = include_str!("../assets/demo/tour.json");
const DEMO_FILES: &[(&str, &str)] = &[
    (
        "README.md",
        include_str!("../assets/demo/workspace/README.md"),
    ),
    (
        "greet.py",
        include_str!("../assets/demo/workspace/greet.py"),
    ),
];

/// The demo's scratch project; removed when the session ends.
pub struct DemoWorkspace(PathBuf);

impl Drop for DemoWorkspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A started session and what keeps it alive.
pub struct Started {
    pub handle: crate::agent::AgentHandle,
    /// Lines to tell the person before the session starts (e.g. "running the demo").
    pub notices: Vec<String>,
    /// The demo's scripted server and scratch project; dropping them stops the server and
    /// removes the project.
    pub demo_server: Option<(ScriptedServer, DemoWorkspace)>,
    /// Where the session works (the demo's scratch copy in demo mode).
    pub project_dir: PathBuf,
    /// cairn's data folder (history, transcripts, logs).
    pub data_root: PathBuf,
    /// `--resume` without an id in the TUI: open the session picker.
    pub pick_session: bool,
    /// Whether bypassPermissions is in the Shift+Tab cycle.
    pub bypass_allowed: bool,
    /// Settings problems that keep the gate closed to every call that is not read-only
    /// ([`PermissionGate::settings_broken`]); the TUI shows them as errors.
    pub settings_broken: Vec<String>,
    /// The settings' `statusLine`, for the TUI to run.
    pub status_line: Option<crate::config::appearance::StatusLineSetting>,
    /// The name of the output style in use (`default` when none).
    pub output_style: String,
    /// The session's JSONL transcript.
    pub transcript_path: PathBuf,
    /// The settings' `env`, for the commands cairn runs (the status line's).
    pub tool_env: Vec<(String, String)>,
    /// The session's MCP servers (connecting in the background); dropping it stops them.
    pub mcp: Option<Arc<crate::mcp::McpManager>>,
    /// The project root whose local settings keep the person's answers (approved servers).
    pub settings_root: PathBuf,
}

mod folder;
use folder::untrusted_notice;
pub use folder::{FolderTrust, folder_trust};

/// Keep large buffers in the heap between uses. glibc maps every allocation over its mmap
/// threshold fresh from the kernel and returns freed heap above its trim threshold, so each
/// edit of a 10 MiB file paid for new zeroed pages several times over (a third of its time).
/// Raising both thresholds keeps such buffers reusable; memory is still returned past 128 MiB.
/// The binary calls this first thing; benchmarks call it too, to measure what the binary does.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only adjusts glibc's malloc parameters; it is called before any other
    // thread exists, and both values are within the ranges glibc accepts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 20);
    }
}

fn env_var(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// Where requests (and so the credentials) go: a repository's own settings may not set these.
const ENDPOINT_KEYS: &[&str] = &["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"];

/// The environment as the session sees it: the settings' `env` over the process's, except that
/// an endpoint set in a project's settings is ignored (a cloned repository must not be able to
/// send your API key to a server of its choosing).
/// `toolSearch` (settings) over `ENABLE_TOOL_SEARCH`, `auto` by default; whether the endpoint
/// takes deferred tools from `CAIRN_TOOL_REFERENCES` (`1`/`0`), else from its URL.
fn tool_search_config(settings: &LoadedSettings) -> crate::agent::deferral::ToolSearchConfig {
    use crate::agent::deferral::ToolSearchMode;
    let env = settings_env(settings);
    let mode = settings
        .tool_search
        .as_deref()
        .and_then(ToolSearchMode::parse)
        .or_else(|| env("ENABLE_TOOL_SEARCH").and_then(|v| ToolSearchMode::parse(&v)))
        .unwrap_or_default();
    let references = env("CAIRN_TOOL_REFERENCES").and_then(|v| match v.trim() {
        "1" | "true" => Some(true),
        "0" | "false" => Some(false),
        _ => None,
    });
    crate::agent::deferral::ToolSearchConfig { mode, references }
}

fn settings_env(settings: &LoadedSettings) -> impl Fn(&str) -> Option<String> + '_ {
    |key| {
        let from_project = ENDPOINT_KEYS.contains(&key) && project_env(settings, key);
        let set = settings.env.get(key).filter(|_| !from_project);
        set.cloned().or_else(|| env_var(key))
    }
}

/// Whether the settings' `env.KEY` came from the project's own settings files.
fn project_env(settings: &LoadedSettings, key: &str) -> bool {
    settings
        .origins
        .get(&format!("env.{key}"))
        .is_some_and(|o| matches!(o.layer, Layer::Project | Layer::ProjectLocal))
}

/// The notices for endpoint variables a project's settings tried to set.
fn ignored_endpoints(settings: &LoadedSettings) -> Vec<String> {
    ENDPOINT_KEYS
        .iter()
        .filter(|k| settings.env.contains_key(**k) && project_env(settings, k))
        .map(|k| {
            format!(
                "env.{k} in the project's settings is not used for the model endpoint (a \
                 repository must not redirect your credentials); set it in \
                 ~/.claude/settings.json or the environment"
            )
        })
        .collect()
}

fn model_flags(cli: &Cli) -> ModelFlags {
    ModelFlags {
        provider: cli.provider.map(|p| match p {
            ProviderArg::Anthropic => Provider::Anthropic,
            ProviderArg::Openai => Provider::OpenAi,
        }),
        model: cli.model.clone(),
        base_url: cli.base_url.clone(),
        demo: cli.demo,
    }
}

/// Where cairn keeps its data: `$CAIRN_DATA_DIR`, else the platform data dir.
pub fn data_root() -> PathBuf {
    if let Some(dir) = env_var("CAIRN_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    directories::ProjectDirs::from("dev", "cairn", "cairn")
        .map(|d| d.data_local_dir().to_path_buf())
        .unwrap_or_else(|| std::env::temp_dir().join("cairn"))
}

/// The per-project folder: the project path with non-alphanumerics replaced by '-'.
pub fn project_data_dir(root: &Path, project: &Path) -> PathBuf {
    let name: String = project
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    root.join("projects").join(name)
}

/// The retry policy: `CAIRN_MAX_ATTEMPTS` (default 8) and `CAIRN_RETRY_BASE_MS` (the first
/// backoff step, default 500 ms; tests make it short).
fn retry_policy() -> RetryPolicy {
    let mut policy = RetryPolicy::from_env(env_var);
    if let Some(ms) = env_var("CAIRN_RETRY_BASE_MS").and_then(|v| v.parse::<u64>().ok()) {
        policy.base_delay = Duration::from_millis(ms);
    }
    policy
}

/// Write the demo's sample project into a fresh scratch directory.
fn demo_workspace() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!(
        "cairn-demo-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_millis()
    ));
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the demo workspace {}", dir.display()))?;
    for (name, text) in DEMO_FILES {
        std::fs::write(dir.join(name), text)
            .with_context(|| format!("cannot write the demo file {name}"))?;
    }
    Ok(dir)
}

/// What `cairn config` prints: the merged settings for the current directory and where each
/// value came from.
pub fn describe_config(cli: &Cli) -> anyhow::Result<String> {
    let dir = std::env::current_dir().context("cannot read the current directory")?;
    let trust = folder_trust(cli, &dir).trust;
    let settings = load_settings(&dir, cli.settings.as_deref(), &env_var, trust);
    Ok(crate::config::render_config(&settings))
}

/// Start a session as the command line says. `interactive` is false for headless mode;
/// `folder` is the folder's trust ([`folder_trust`], with the person's answers to the questions).
pub async fn start_session(
    cli: &Cli,
    interactive: bool,
    folder: &FolderTrust,
) -> anyhow::Result<Started> {
    let trust = folder.trust;
    let flags = model_flags(cli);
    let mut notices = Vec::new();
    let mut project_dir = std::env::current_dir().context("cannot read the current directory")?;
    let mut settings = load_settings(&project_dir, cli.settings.as_deref(), &env_var, trust);
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
        if let Some(text) = env("ANTHROPIC_CUSTOM_HEADERS") {
            notices.extend(parse_custom_headers(&text).1);
        }
        resolve(&flags, &model_settings, env)
    };
    let (endpoint, pick, aliases, demo_server) = match choice {
        ModelChoice::Real(ep, pick, aliases) => (*ep, pick, aliases, None),
        ModelChoice::NoCredentials if !interactive => anyhow::bail!("{NO_CREDENTIALS}"),
        ModelChoice::Demo | ModelChoice::NoCredentials => {
            let script = Script::from_json(DEMO_SCRIPT).context("the demo script is broken")?;
            let server = ScriptedServer::start(script)
                .context("cannot start the demo model server on 127.0.0.1")?;
            project_dir = demo_workspace()?;
            // cairn wrote the scratch project itself: there is nothing in it to distrust.
            settings = load_settings(
                &project_dir,
                cli.settings.as_deref(),
                &env_var,
                Trust::Trusted,
            );
            for d in &settings.diagnostics {
                if !diagnostics.contains(d) {
                    diagnostics.push(d.clone());
                }
            }
            notices.push(format!(
                "Running the built-in DEMO (a scripted model on {}) in a scratch copy at {}. \
                 Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, or apiKeyHelper in \
                 settings), or OPENAI_API_KEY / OPENAI_BASE_URL, to use a real model.",
                server.addr(),
                project_dir.display()
            ));
            let ep = ModelEndpoint {
                provider: Provider::Anthropic,
                model: "cairn-demo".into(),
                base_url: server.anthropic_base_url(),
                api_key: Some("demo".into()),
                login: Default::default(),
            };
            let pick = ModelPick::plain(&ep.model);
            (
                ep,
                pick,
                Aliases::default(),
                Some((server, DemoWorkspace(project_dir.clone()))),
            )
        }
    };
    let client = build_client(&endpoint, &ClientOptions::from_env(settings_env(&settings)))
        .map_err(|e| anyhow::anyhow!("cannot set up the model client: {e}"))?;
    // The broken ones are shown on their own, as errors.
    notices.extend(
        diagnostics
            .into_iter()
            .filter(|d| !settings.broken.contains(d)),
    );
    let mode =
        starting_mode(cli.permission_mode.as_deref(), &settings).map_err(|e| anyhow::anyhow!(e))?;
    let project_data = project_data_dir(&data_root(), &project_dir);
    let (resume, pick_session) = session_to_resume(cli, interactive, &project_data)?;
    let (session_id, transcript_path) = match &resume {
        Some(r) if !cli.fork_session => (r.session_id.clone(), r.path.clone()),
        _ => {
            let id = AgentSetup::new_session_id();
            let path = project_data.join(format!("{id}.jsonl"));
            (id, path)
        }
    };
    let data_dir = project_data.join(&session_id);
    let gate = PermissionGate::new(GateConfig {
        settings: &settings,
        cli_allow: cli.allowed_tools.clone(),
        cli_deny: cli.disallowed_tools.clone(),
        mode,
        interactive,
        project_dir: project_dir.clone(),
        additional_dirs: cli.add_dir.clone(),
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
    let memory = crate::memory::load(&if demo_server.is_some() {
        crate::memory::Roots::standard(
            settings.home.clone(),
            settings.project_root.clone(),
            project_dir.clone(),
        )
    } else {
        folder.memory_roots(settings.home.clone(), &project_dir)
    });
    notices.extend(memory.problems.iter().map(|p| format!("memory file: {p}")));
    let commands = crate::commands::discover(&project_dir, settings.home.as_deref());
    notices.extend(
        commands
            .problems
            .iter()
            .map(|p| format!("slash command: {p}")),
    );
    let skills = crate::commands::skills::discover(&project_dir, settings.home.as_deref());
    notices.extend(skills.problems.iter().map(|p| format!("skill: {p}")));
    let agents = crate::commands::agents::discover(&project_dir, settings.home.as_deref());
    notices.extend(agents.problems.iter().map(|p| format!("agent: {p}")));
    let style = crate::agent::output_style::select(
        settings.appearance.output_style.as_deref(),
        &project_dir,
        settings.home.as_deref(),
    );
    notices.extend(style.notices.iter().cloned());
    let tool_env: Vec<(String, String)> = settings
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let late_tools = crate::tools::LateTools::default();
    // The demo's scratch project runs no MCP servers.
    if !settings.trust.is_trusted() {
        let servers =
            crate::mcp::session::project_servers(&project_dir, &settings, &mcp_flags(cli));
        notices.extend(untrusted_notice(&settings, &servers, interactive));
    }
    let mcp = demo_server.is_none().then(|| {
        let (manager, lines) = crate::mcp::session::start(
            &project_dir,
            &settings,
            &mcp_flags(cli),
            late_tools.clone(),
        );
        notices.extend(lines);
        Arc::new(manager)
    });
    let setup = AgentSetup {
        client: Arc::clone(&client),
        model: pick,
        aliases,
        additional_dirs: cli
            .add_dir
            .iter()
            .map(|d| project_dir.join(d))
            .chain(settings.additional_directories.iter().cloned())
            .collect(),
        data_dir,
        transcript_path: Some(transcript_path.clone()),
        session_id,
        project_dir: project_dir.clone(),
        gate,
        hooks: settings.hooks.clone(),
        max_turns: cli.max_turns,
        retry: retry_policy(),
        max_tokens: env_var("CAIRN_MAX_TOKENS")
            .and_then(|v| v.parse().ok())
            .unwrap_or(16_384),
        demo: demo_server.is_some(),
        extra_tools: Vec::new(),
        late_tools,
        tool_env: tool_env.clone(),
        settings_files: settings.files.clone(),
        memory,
        resume,
        auto_compact_pct: settings_env(&settings)("CAIRN_AUTOCOMPACT_PCT")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .and_then(crate::config::settings::threshold_pct)
            .or(settings.auto_compact_pct)
            .unwrap_or(crate::agent::compact::DEFAULT_THRESHOLD_PCT),
        fork: cli.fork_session,
        mode_from_flag: cli.permission_mode.is_some(),
        commands: commands.items,
        skills: skills.items,
        agents: agents.items,
        output_style: style.style.clone(),
        tool_search: tool_search_config(&settings),
        checkpoints: checkpoints_enabled(env_var("CAIRN_CHECKPOINTS").as_deref()),
        checkpoint_budget: settings
            .checkpoint_budget_mb
            .map(|mb| mb.saturating_mul(1_000_000)),
    };
    Ok(Started {
        handle: start(setup),
        notices,
        demo_server,
        project_dir,
        data_root: data_root(),
        pick_session,
        bypass_allowed,
        settings_broken,
        status_line: settings.appearance.status_line.clone(),
        output_style: style.name().to_string(),
        transcript_path,
        tool_env,
        mcp,
        settings_root: settings.project_root.clone(),
    })
}

/// What the trust question shows: what the folder configures that would run or widen.
#[derive(Debug, Clone, Default)]
pub struct TrustReport {
    /// From the project's settings files.
    pub items: Vec<UntrustedItem>,
    /// The project's `.mcp.json` servers.
    pub mcp_servers: Vec<String>,
}

/// Read (only read) what the folder `dir` configures, for the trust question.
pub fn trust_report(cli: &Cli, dir: &Path) -> TrustReport {
    let settings = load_settings(dir, cli.settings.as_deref(), &env_var, Trust::Untrusted);
    TrustReport {
        mcp_servers: crate::mcp::session::project_servers(dir, &settings, &mcp_flags(cli)),
        items: settings.untrusted,
    }
}

/// Whether the TUI would run the demo (no credentials, or `--demo`): the demo works in a
/// scratch project of its own, so the folder's trust is not asked. Reads settings, runs
/// nothing.
pub fn runs_demo(cli: &Cli, dir: &Path) -> bool {
    let settings = load_settings(dir, cli.settings.as_deref(), &env_var, Trust::Trusted);
    let env = settings_env(&settings);
    let flags = model_flags(cli);
    let model_settings = ModelSettings {
        model: settings.model.clone(),
        key_helper: settings.api_key_helper.as_ref().map(|command| KeyHelper {
            command: command.clone(),
            cwd: dir.to_path_buf(),
            ttl: DEFAULT_HELPER_TTL,
        }),
    };
    !matches!(resolve(&flags, &model_settings, env), ModelChoice::Real(..))
}

/// Whether `/rewind` checkpoints are recorded: `CAIRN_CHECKPOINTS` set to `off`, `0` or `false`
/// turns them off (a CI run that never rewinds saves their disk writes).
fn checkpoints_enabled(value: Option<&str>) -> bool {
    !value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "0" | "false"
        )
    })
}

/// The session `--continue` / `--resume ID` names, read; and whether the person is to pick one
/// (`--resume` without an id, in the TUI).
fn session_to_resume(
    cli: &Cli,
    interactive: bool,
    project_data: &Path,
) -> anyhow::Result<(Option<Resumed>, bool)> {
    let path = match (cli.resume.as_deref(), cli.continue_session) {
        (Some(id), _) if !id.trim().is_empty() => resume::find(project_data, id.trim())?,
        (Some(_), _) if !interactive => anyhow::bail!(
            "--resume needs a session id with -p (or use --continue for the most recent one)"
        ),
        (Some(_), _) => return Ok((None, true)),
        (None, true) => resume::latest(project_data)?,
        (None, false) if cli.fork_session => {
            anyhow::bail!("--fork-session goes with --continue or --resume")
        }
        (None, false) => return Ok((None, false)),
    };
    Ok((Some(resume::load(&path)?), false))
}

/// `cairn checkpoints du|gc` for the project in the current directory.
pub fn checkpoints_command(
    cli: &Cli,
    action: &crate::cli::CheckpointsAction,
) -> anyhow::Result<String> {
    use crate::cli::CheckpointsAction;
    use crate::session::store_report;
    let project_dir = std::env::current_dir().context("cannot read the current directory")?;
    let trust = folder_trust(cli, &project_dir).trust;
    let settings = load_settings(&project_dir, cli.settings.as_deref(), &env_var, trust);
    let data = project_data_dir(&data_root(), &project_dir);
    let budget = |flag: &Option<u64>| {
        flag.or(settings.checkpoint_budget_mb)
            .map(|mb| mb.saturating_mul(1_000_000))
    };
    Ok(match action {
        CheckpointsAction::Du { budget_mb } => {
            store_report::du(&data, &project_dir, budget(budget_mb))
        }
        CheckpointsAction::Gc { budget_mb } => {
            store_report::gc(&data, &project_dir, budget(budget_mb))
        }
    })
}

/// `cairn mcp list|get`.
pub async fn mcp_command(
    cli: &Cli,
    action: &crate::cli::McpAction,
) -> anyhow::Result<std::process::ExitCode> {
    let project_dir = std::env::current_dir().context("cannot read the current directory")?;
    let trust = folder_trust(cli, &project_dir).trust;
    let settings = load_settings(&project_dir, cli.settings.as_deref(), &env_var, trust);
    let flags = mcp_flags(cli);
    match action {
        crate::cli::McpAction::List => {
            print!(
                "{}",
                crate::mcp::listing::list(&project_dir, &settings, &flags).await
            );
        }
        crate::cli::McpAction::Get { name } => {
            match crate::mcp::listing::get(&project_dir, &settings, &flags, name).await {
                Some(text) => print!("{text}"),
                None => anyhow::bail!("no MCP server named {name:?} (see `cairn mcp list`)"),
            }
        }
        edit => println!(
            "{}",
            crate::mcp::listing::edit(&project_dir, &settings, edit)?
        ),
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// `--mcp-config` and `--strict-mcp-config`.
pub fn mcp_flags(cli: &Cli) -> crate::mcp::session::McpFlags {
    crate::mcp::session::McpFlags {
        configs: cli.mcp_config.clone(),
        strict: cli.strict_mcp_config,
    }
}

/// What to tell the person when settings are broken: every problem, and what to do.
pub fn broken_settings_report(problems: &[String]) -> String {
    let mut out = String::from(
        "settings could not be read completely, so deny rules, ask rules or PreToolUse hooks \
         may be missing:",
    );
    for p in problems {
        out.push_str("\n  ");
        out.push_str(p);
    }
    out.push_str(
        "\nFix or remove the file named above (`cairn config` lists every problem), then run \
         cairn again. Until then cairn refuses every tool call that could change something.",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_folder_name_replaces_non_alphanumerics() {
        let p = project_data_dir(Path::new("/data"), Path::new("/home/me/my.repo"));
        assert_eq!(p, PathBuf::from("/data/projects/-home-me-my-repo"));
    }

    #[test]
    fn demo_script_and_files_are_embedded() {
        assert!(DEMO_SCRIPT.contains("\"turns\""));
        assert!(
            DEMO_FILES
                .iter()
                .any(|(n, t)| *n == "greet.py" && t.contains("TODO"))
        );
    }
}
