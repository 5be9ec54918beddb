//! Which provider, model, endpoint and key to use: flags, then settings, then environment.
//! With no credentials at all the answer is the built-in demo.

use crate::llm::{ModelEndpoint, Provider};

/// The model-related command-line flags.
#[derive(Debug, Clone, Default)]
pub struct ModelFlags {
    pub provider: Option<Provider>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub demo: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ModelChoice {
    Real(ModelEndpoint),
    /// No credentials (or `--demo`): run the scripted demo model.
    Demo,
}

pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o";

/// Claude Code's model aliases and the model ids they stand for, each overridable by its
/// `ANTHROPIC_DEFAULT_*_MODEL` variable. `opusplan` plans with opus; outside plan mode it is
/// sonnet (cairn resolves it to opus for now: one model per session).
const ALIASES: &[(&str, &str, &str)] = &[
    ("opus", "ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-4-5"),
    (
        "sonnet",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "claude-sonnet-4-5",
    ),
    ("haiku", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5"),
    (
        "opusplan",
        "ANTHROPIC_DEFAULT_OPUS_MODEL",
        "claude-opus-4-5",
    ),
];

/// The model id an alias (`sonnet`) stands for; any other name unchanged.
pub fn resolve_alias(model: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    match ALIASES.iter().find(|(alias, _, _)| *alias == model) {
        Some((_, var, id)) => env(var)
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| id.to_string()),
        None => model.to_string(),
    }
}

/// Resolve from flags, the settings' `model`, and an environment lookup (a function so tests
/// need not touch the process environment).
pub fn resolve(
    flags: &ModelFlags,
    settings_model: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> ModelChoice {
    if flags.demo {
        return ModelChoice::Demo;
    }
    let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let anthropic_key = env("ANTHROPIC_API_KEY");
    let openai_key = env("OPENAI_API_KEY");
    let openai_base = env("OPENAI_BASE_URL");
    let provider = match flags.provider {
        Some(p) => p,
        None if anthropic_key.is_some() || env("ANTHROPIC_BASE_URL").is_some() => {
            Provider::Anthropic
        }
        None if openai_key.is_some() || openai_base.is_some() => Provider::OpenAi,
        None if flags.base_url.is_some() => Provider::Anthropic,
        None => return ModelChoice::Demo,
    };
    let (key, base, model_env, default_base, default_model) = match provider {
        Provider::Anthropic => (
            anthropic_key,
            env("ANTHROPIC_BASE_URL"),
            env("ANTHROPIC_MODEL"),
            "https://api.anthropic.com",
            DEFAULT_ANTHROPIC_MODEL,
        ),
        Provider::OpenAi => (
            openai_key,
            openai_base,
            env("OPENAI_MODEL"),
            "https://api.openai.com/v1",
            DEFAULT_OPENAI_MODEL,
        ),
    };
    let model = flags
        .model
        .clone()
        .or_else(|| settings_model.map(str::to_string))
        .or(model_env)
        .unwrap_or_else(|| default_model.to_string());
    let model = match provider {
        Provider::Anthropic => resolve_alias(&model, &env),
        Provider::OpenAi => model,
    };
    let base_url = flags
        .base_url
        .clone()
        .or(base)
        .unwrap_or_else(|| default_base.to_string());
    ModelChoice::Real(ModelEndpoint {
        provider,
        model,
        base_url: base_url.trim_end_matches('/').to_string(),
        api_key: key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn no_credentials_means_demo() {
        assert_eq!(
            resolve(&ModelFlags::default(), None, env(&[])),
            ModelChoice::Demo
        );
        assert_eq!(
            resolve(
                &ModelFlags::default(),
                None,
                env(&[("ANTHROPIC_API_KEY", "  ")])
            ),
            ModelChoice::Demo
        );
    }

    #[test]
    fn flags_beat_settings_beat_env() {
        let e = env(&[("ANTHROPIC_API_KEY", "k"), ("ANTHROPIC_MODEL", "env-model")]);
        let ModelChoice::Real(ep) = resolve(&ModelFlags::default(), None, &e) else {
            panic!("expected a real endpoint")
        };
        assert_eq!(ep.model, "env-model");
        assert_eq!(ep.base_url, "https://api.anthropic.com");
        let ModelChoice::Real(ep) = resolve(&ModelFlags::default(), Some("settings-model"), &e)
        else {
            panic!("expected a real endpoint")
        };
        assert_eq!(ep.model, "settings-model");
        let flags = ModelFlags {
            model: Some("flag-model".into()),
            ..Default::default()
        };
        let ModelChoice::Real(ep) = resolve(&flags, Some("settings-model"), &e) else {
            panic!("expected a real endpoint")
        };
        assert_eq!(ep.model, "flag-model");
    }

    #[test]
    fn openai_base_url_alone_selects_openai_for_ollama() {
        let e = env(&[("OPENAI_BASE_URL", "http://localhost:11434/v1/")]);
        let ModelChoice::Real(ep) = resolve(&ModelFlags::default(), None, e) else {
            panic!("expected a real endpoint")
        };
        assert_eq!(ep.provider, Provider::OpenAi);
        assert_eq!(ep.base_url, "http://localhost:11434/v1");
        assert_eq!(ep.api_key, None);
    }

    #[test]
    fn demo_flag_wins() {
        let flags = ModelFlags {
            demo: true,
            ..Default::default()
        };
        assert_eq!(
            resolve(&flags, None, env(&[("ANTHROPIC_API_KEY", "k")])),
            ModelChoice::Demo
        );
    }

    #[test]
    fn aliases_resolve_and_the_environment_overrides_them() {
        let e = env(&[("ANTHROPIC_API_KEY", "k")]);
        let flags = |m: &str| ModelFlags {
            model: Some(m.into()),
            ..ModelFlags::default()
        };
        let model_of =
            |f: &ModelFlags, e: &dyn Fn(&str) -> Option<String>| match resolve(f, None, e) {
                ModelChoice::Real(ep) => ep.model,
                ModelChoice::Demo => panic!("demo"),
            };
        assert_eq!(model_of(&flags("sonnet"), &e), "claude-sonnet-4-5");
        assert_eq!(model_of(&flags("haiku"), &e), "claude-haiku-4-5");
        assert_eq!(
            model_of(&flags("claude-3-haiku-20240307"), &e),
            "claude-3-haiku-20240307"
        );
        let e = env(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_DEFAULT_OPUS_MODEL", "my-opus"),
        ]);
        assert_eq!(model_of(&flags("opus"), &e), "my-opus");
        assert_eq!(model_of(&flags("opusplan"), &e), "my-opus");
    }
}
