//! The environment as a session sees it: the settings' `env` over the process's (an endpoint
//! a project's settings set is ignored). The knobs read from it are the session's settings
//! snapshot (`config::snapshot`).

use crate::config::LoadedSettings;
use crate::config::layers::Layer;

pub(crate) fn env_var(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// Where requests (and so the credentials) go: a repository's own settings may not set these.
const ENDPOINT_KEYS: &[&str] = &["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"];

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
