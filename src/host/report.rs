//! What a client shows before or beside a session, read without starting anything: the trust
//! question's report of what a folder configures, whether the TUI would run the demo, and the
//! text for settings too broken to trust.

use crate::config::load_settings;
use crate::config::model::{ModelChoice, ModelSettings, resolve};
use crate::config::trust::Trust;
use crate::config::untrusted::UntrustedItem;
use crate::llm::auth::{DEFAULT_HELPER_TTL, KeyHelper};

use super::env::{env_var, settings_env};
use super::spec::SessionSpec;

/// What the trust question shows: what the folder configures that would run or widen.
#[derive(Debug, Clone, Default)]
pub struct TrustReport {
    /// From the project's settings files.
    pub items: Vec<UntrustedItem>,
    /// The project's `.mcp.json` servers.
    pub mcp_servers: Vec<String>,
}

/// Read (only read) what the folder of `spec` configures, for the trust question.
pub fn trust_report(spec: &SessionSpec) -> TrustReport {
    let settings = load_settings(
        &spec.cwd,
        spec.settings.as_deref(),
        &env_var,
        Trust::Untrusted,
    );
    TrustReport {
        mcp_servers: crate::mcp::session::project_servers(&spec.cwd, &settings, &spec.mcp),
        items: settings.untrusted,
    }
}

/// Whether the TUI would run the demo (no credentials, or `--demo`): the demo works in a
/// scratch project of its own, so the folder's trust is not asked. Reads settings, runs
/// nothing.
pub fn runs_demo(spec: &SessionSpec) -> bool {
    let settings = load_settings(
        &spec.cwd,
        spec.settings.as_deref(),
        &env_var,
        Trust::Trusted,
    );
    let env = settings_env(&settings);
    let model_settings = ModelSettings {
        model: settings.model.clone(),
        key_helper: settings.api_key_helper.as_ref().map(|command| KeyHelper {
            command: command.clone(),
            cwd: spec.cwd.clone(),
            ttl: DEFAULT_HELPER_TTL,
        }),
    };
    !matches!(
        resolve(&spec.model, &model_settings, env),
        ModelChoice::Real(..)
    )
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
