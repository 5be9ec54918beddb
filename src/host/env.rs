//! The environment as a session sees it: the settings' `env` over the process's (an endpoint
//! a project's settings set is ignored), and the knobs read from it (tool search, retries,
//! checkpoints).

use std::time::Duration;

use crate::config::LoadedSettings;
use crate::config::layers::Layer;
use crate::llm::retry::RetryPolicy;

pub(crate) fn env_var(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// Where requests (and so the credentials) go: a repository's own settings may not set these.
const ENDPOINT_KEYS: &[&str] = &["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"];

/// `toolSearch` (settings) over `ENABLE_TOOL_SEARCH`, `auto` by default; whether the endpoint
/// takes deferred tools from `CAIRN_TOOL_REFERENCES` (`1`/`0`), else from its URL.
pub(crate) fn tool_search_config(
    settings: &LoadedSettings,
) -> crate::agent::deferral::ToolSearchConfig {
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

/// The environment as the session sees it: the settings' `env` over the process's, except that
/// an endpoint set in a project's settings is ignored (a cloned repository must not be able to
/// send your API key to a server of its choosing).
pub(crate) fn settings_env(settings: &LoadedSettings) -> impl Fn(&str) -> Option<String> + '_ {
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
pub(crate) fn ignored_endpoints(settings: &LoadedSettings) -> Vec<String> {
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

/// The retry policy: `CAIRN_MAX_ATTEMPTS` (default 8) and `CAIRN_RETRY_BASE_MS` (the first
/// backoff step, default 500 ms; tests make it short).
pub(crate) fn retry_policy() -> RetryPolicy {
    let mut policy = RetryPolicy::from_env(env_var);
    if let Some(ms) = env_var("CAIRN_RETRY_BASE_MS").and_then(|v| v.parse::<u64>().ok()) {
        policy.base_delay = Duration::from_millis(ms);
    }
    policy
}

/// Whether `/rewind` checkpoints are recorded: `CAIRN_CHECKPOINTS` set to `off`, `0` or `false`
/// turns them off (a CI run that never rewinds saves their disk writes).
pub(crate) fn checkpoints_enabled(value: Option<&str>) -> bool {
    !value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "0" | "false"
        )
    })
}
