//! The settings a session runs with, read once: [`SessionSettings`] is built by the host from
//! the merged settings ([`LoadedSettings`]) and the environment when it opens a session, and
//! handed to the session (inside the agent's `SessionServices`); the session's parts read
//! their knobs from it and from nowhere else. A session key is declared here once
//! ([`SESSION_KEYS`]: its name, and whether an untrusted folder's settings may set it), read
//! from the settings files in `settings.rs`, and used where it acts.

use std::path::PathBuf;
use std::time::Duration;

use super::hooks::HooksConfig;
use super::settings::{LoadedSettings, threshold_pct};
use super::tool_search::{ToolSearchConfig, ToolSearchMode};
use crate::llm::retry::RetryPolicy;

/// A settings key that sets one of a session's knobs.
#[derive(Debug, Clone, Copy)]
pub struct SessionKey {
    /// The key in a settings file.
    pub name: &'static str,
    /// A preference that neither runs nor widens anything: an untrusted folder's settings
    /// keep it.
    pub untrusted_keeps: bool,
}

/// The top-level settings keys [`SessionSettings`] is read from (besides `env` and `hooks`).
pub const SESSION_KEYS: &[SessionKey] = &[
    SessionKey {
        name: "autoCompactThreshold",
        untrusted_keeps: true,
    },
    SessionKey {
        name: "toolSearch",
        untrusted_keeps: true,
    },
    SessionKey {
        name: "checkpointBudgetMB",
        untrusted_keeps: false,
    },
];

/// Auto-compaction starts when the last request used this share of the window (percent).
pub const DEFAULT_AUTO_COMPACT_PCT: u8 = 85;
/// The longest answer a request asks for, unless `CAIRN_MAX_TOKENS` says otherwise.
pub const DEFAULT_MAX_TOKENS: u32 = 16_384;

/// What a session's parts read from the settings and the environment.
#[derive(Debug, Clone)]
pub struct SessionSettings {
    /// Auto-compaction threshold, percent of the context window (0: never):
    /// `CAIRN_AUTOCOMPACT_PCT` (settings' `env` first), else `autoCompactThreshold`.
    pub auto_compact_pct: u8,
    /// Which tools are deferred and how requests carry them: `toolSearch` over
    /// `ENABLE_TOOL_SEARCH`; `CAIRN_TOOL_REFERENCES` (`1`/`0`) for the endpoint.
    pub tool_search: ToolSearchConfig,
    /// Record checkpoints of the working directories for `/rewind` (off with
    /// `CAIRN_CHECKPOINTS=off|0|false`).
    pub checkpoints: bool,
    /// The checkpoint store's size budget in bytes (`checkpointBudgetMB`); `None`: ten times
    /// the working tree, 50 MB to 1 GB.
    pub checkpoint_budget: Option<u64>,
    /// `CAIRN_MAX_TOKENS`.
    pub max_tokens: u32,
    /// `CAIRN_MAX_ATTEMPTS`, `CAIRN_RETRY_BASE_MS` and the other retry knobs.
    pub retry: RetryPolicy,
    /// The settings' `env`, for the commands tools and hooks run.
    pub env: Vec<(String, String)>,
    /// The hooks the settings configure.
    pub hooks: HooksConfig,
    /// The files the settings layers read: the file tools refuse writes that would break one.
    pub files: Vec<PathBuf>,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            auto_compact_pct: DEFAULT_AUTO_COMPACT_PCT,
            tool_search: ToolSearchConfig::default(),
            checkpoints: true,
            checkpoint_budget: None,
            max_tokens: DEFAULT_MAX_TOKENS,
            retry: RetryPolicy::default(),
            env: Vec::new(),
            hooks: HooksConfig::default(),
            files: Vec::new(),
        }
    }
}

impl SessionSettings {
    /// The snapshot of `settings` with the process's environment `process_env`. The knobs
    /// settings may also set through their `env` (`CAIRN_AUTOCOMPACT_PCT`,
    /// `ENABLE_TOOL_SEARCH`, `CAIRN_TOOL_REFERENCES`) look there first.
    pub fn read(
        settings: &LoadedSettings,
        process_env: &dyn Fn(&str) -> Option<String>,
    ) -> SessionSettings {
        let env = |key: &str| settings.env.get(key).cloned().or_else(|| process_env(key));
        let auto_compact_pct = env("CAIRN_AUTOCOMPACT_PCT")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .and_then(threshold_pct)
            .or(settings.auto_compact_pct)
            .unwrap_or(DEFAULT_AUTO_COMPACT_PCT);
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
        let mut retry = RetryPolicy::from_env(process_env);
        if let Some(ms) = process_env("CAIRN_RETRY_BASE_MS").and_then(|v| v.parse::<u64>().ok()) {
            retry.base_delay = Duration::from_millis(ms);
        }
        SessionSettings {
            auto_compact_pct,
            tool_search: ToolSearchConfig { mode, references },
            checkpoints: checkpoints_enabled(process_env("CAIRN_CHECKPOINTS").as_deref()),
            checkpoint_budget: settings
                .checkpoint_budget_mb
                .map(|mb| mb.saturating_mul(1_000_000)),
            max_tokens: process_env("CAIRN_MAX_TOKENS")
                .and_then(|v| v.parse().ok())
                .unwrap_or(DEFAULT_MAX_TOKENS),
            retry,
            env: settings
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            hooks: settings.hooks.clone(),
            files: settings.files.clone(),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read(settings: &LoadedSettings, vars: &[(&str, &str)]) -> SessionSettings {
        let lookup = |k: &str| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        };
        SessionSettings::read(settings, &lookup)
    }

    #[test]
    fn the_auto_compact_threshold_comes_from_the_environment_then_the_settings() {
        let mut settings = LoadedSettings::default();
        assert_eq!(read(&settings, &[]).auto_compact_pct, 85);
        settings.auto_compact_pct = Some(70);
        assert_eq!(read(&settings, &[]).auto_compact_pct, 70);
        assert_eq!(
            read(&settings, &[("CAIRN_AUTOCOMPACT_PCT", "0.5")]).auto_compact_pct,
            50
        );
        // The settings' `env` counts as the environment, over the process's.
        settings
            .env
            .insert("CAIRN_AUTOCOMPACT_PCT".into(), "40".into());
        assert_eq!(
            read(&settings, &[("CAIRN_AUTOCOMPACT_PCT", "0.5")]).auto_compact_pct,
            40
        );
        // A value that is not a threshold is passed over.
        settings
            .env
            .insert("CAIRN_AUTOCOMPACT_PCT".into(), "300".into());
        assert_eq!(read(&settings, &[]).auto_compact_pct, 70);
    }

    #[test]
    fn knobs_read_from_the_process_environment_and_the_settings() {
        let mut settings = LoadedSettings {
            tool_search: Some("never".into()),
            checkpoint_budget_mb: Some(3),
            ..LoadedSettings::default()
        };
        settings
            .env
            .insert("CAIRN_TOOL_REFERENCES".into(), "0".into());
        let snap = read(
            &settings,
            &[
                ("ENABLE_TOOL_SEARCH", "always"),
                ("CAIRN_CHECKPOINTS", "Off"),
                ("CAIRN_MAX_TOKENS", "2048"),
                ("CAIRN_RETRY_BASE_MS", "7"),
            ],
        );
        assert_eq!(
            snap.tool_search,
            ToolSearchConfig {
                mode: ToolSearchMode::Never,
                references: Some(false)
            }
        );
        assert!(!snap.checkpoints);
        assert_eq!(snap.checkpoint_budget, Some(3_000_000));
        assert_eq!(snap.max_tokens, 2048);
        assert_eq!(snap.retry.base_delay, Duration::from_millis(7));
        assert_eq!(
            snap.env,
            [("CAIRN_TOOL_REFERENCES".to_string(), "0".to_string())]
        );
        let defaults = read(&LoadedSettings::default(), &[("CAIRN_CHECKPOINTS", "yes")]);
        assert!(defaults.checkpoints);
        assert_eq!(defaults.max_tokens, DEFAULT_MAX_TOKENS);
        assert_eq!(defaults.tool_search, ToolSearchConfig::default());
    }
}
