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
}
