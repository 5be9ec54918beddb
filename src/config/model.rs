//! Which provider, model, endpoint and key to use: flags, then settings, then environment.
//! With no credentials at all the TUI runs the built-in demo and `-p` refuses.

use crate::llm::auth::{KeyHelper, Login, parse_custom_headers};
use crate::llm::{ModelEndpoint, Provider};

/// The model-related command-line flags.
#[derive(Debug, Clone, Default)]
pub struct ModelFlags {
    pub provider: Option<Provider>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub demo: bool,
}

pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o";

/// Claude Code's model aliases and the model ids they stand for, each overridable by its
/// `ANTHROPIC_DEFAULT_*_MODEL` variable. `opusplan` is not here: it is opus while planning and
/// sonnet otherwise ([`Aliases::pick`]).
const ALIASES: &[(&str, &str, &str)] = &[
    ("opus", "ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-4-5"),
    (
        "sonnet",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "claude-sonnet-4-5",
    ),
    ("haiku", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5"),
];

/// The names a person may type for a model (`/model`, `--model`, settings), in the order the
/// `/model` picker shows them.
pub const ALIAS_NAMES: &[&str] = &["opus", "sonnet", "haiku", "opusplan"];

/// The aliases with the environment's overrides applied; empty for providers that have none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aliases(Vec<(String, String)>);

/// The model a name stands for: `id` normally, `plan_id` while in plan mode (`opusplan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPick {
    /// What the person asked for (`opusplan`, `sonnet`, `claude-opus-4-5`).
    pub name: String,
    pub id: String,
    pub plan_id: Option<String>,
}

impl ModelPick {
    /// A model id used as is.
    pub fn plain(id: &str) -> ModelPick {
        ModelPick {
            name: id.to_string(),
            id: id.to_string(),
            plan_id: None,
        }
    }

    /// The id to send in the given mode.
    pub fn id_for(&self, planning: bool) -> &str {
        match &self.plan_id {
            Some(plan) if planning => plan,
            _ => &self.id,
        }
    }
}

impl Aliases {
    /// Anthropic's aliases, `ANTHROPIC_DEFAULT_*_MODEL` applied.
    pub fn anthropic(env: &dyn Fn(&str) -> Option<String>) -> Aliases {
        Aliases(
            ALIASES
                .iter()
                .map(|(alias, var, id)| {
                    let id = env(var)
                        .filter(|v| !v.trim().is_empty())
                        .unwrap_or_else(|| id.to_string());
                    (alias.to_string(), id)
                })
                .collect(),
        )
    }

    /// The names `/model` offers and what each stands for; empty without aliases.
    pub fn choices(&self) -> Vec<(String, String)> {
        if self.0.is_empty() {
            return Vec::new();
        }
        ALIAS_NAMES
            .iter()
            .map(|name| {
                let pick = self.pick(name);
                let what = match &pick.plan_id {
                    Some(plan) => format!("{plan} in plan mode, {} otherwise", pick.id),
                    None => pick.id.clone(),
                };
                (name.to_string(), what)
            })
            .collect()
    }

    fn id(&self, alias: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(a, _)| a == alias)
            .map(|(_, id)| id.as_str())
    }

    /// The alias of the fast, cheap model (Claude Code's Explore uses it), when there is one.
    pub fn fast(&self) -> Option<&'static str> {
        self.id("haiku").map(|_| "haiku")
    }

    /// What `name` stands for: an alias's model, `opusplan`'s pair, or `name` itself.
    pub fn pick(&self, name: &str) -> ModelPick {
        let name = name.trim();
        if name == "opusplan"
            && let (Some(opus), Some(sonnet)) = (self.id("opus"), self.id("sonnet"))
        {
            return ModelPick {
                name: name.to_string(),
                id: sonnet.to_string(),
                plan_id: Some(opus.to_string()),
            };
        }
        match self.id(name) {
            Some(id) => ModelPick {
                name: name.to_string(),
                id: id.to_string(),
                plan_id: None,
            },
            None => ModelPick::plain(name),
        }
    }
}

/// What the settings say about the model and the credentials.
#[derive(Debug, Clone, Default)]
pub struct ModelSettings {
    pub model: Option<String>,
    /// `apiKeyHelper`, with the directory it runs in and its time to live.
    pub key_helper: Option<KeyHelper>,
}

impl ModelSettings {
    /// Only a model (tests).
    pub fn model(model: &str) -> ModelSettings {
        ModelSettings {
            model: Some(model.to_string()),
            ..ModelSettings::default()
        }
    }
}

/// The resolved endpoint (or the demo) and the model it starts with.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelChoice {
    Real(Box<ModelEndpoint>, ModelPick, Aliases),
    /// `--demo`: run the scripted demo model.
    Demo,
    /// No credentials of any kind.
    NoCredentials,
}

/// Resolve from flags, the settings, and an environment lookup (a function so tests need not
/// touch the process environment; the caller applies the settings' `env` to it first).
pub fn resolve(
    flags: &ModelFlags,
    settings: &ModelSettings,
    env: impl Fn(&str) -> Option<String>,
) -> ModelChoice {
    if flags.demo {
        return ModelChoice::Demo;
    }
    let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let anthropic_key = env("ANTHROPIC_API_KEY");
    let auth_token = env("ANTHROPIC_AUTH_TOKEN");
    let openai_key = env("OPENAI_API_KEY");
    let openai_base = env("OPENAI_BASE_URL");
    let anthropic_login = anthropic_key.is_some()
        || auth_token.is_some()
        || settings.key_helper.is_some()
        || env("ANTHROPIC_BASE_URL").is_some();
    let provider = match flags.provider {
        Some(p) => p,
        None if anthropic_login => Provider::Anthropic,
        None if openai_key.is_some() || openai_base.is_some() => Provider::OpenAi,
        None if flags.base_url.is_some() => Provider::Anthropic,
        None => return ModelChoice::NoCredentials,
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
    let name = flags
        .model
        .clone()
        .or_else(|| settings.model.clone())
        .or(model_env)
        .unwrap_or_else(|| default_model.to_string());
    let headers = |var: &str| parse_custom_headers(var, &env(var).unwrap_or_default()).0;
    let (aliases, login) = match provider {
        Provider::Anthropic => {
            let login = Login {
                auth_token,
                key_helper: settings.key_helper.clone(),
                headers: headers("ANTHROPIC_CUSTOM_HEADERS"),
            };
            (Aliases::anthropic(&env), login)
        }
        // OpenRouter's `HTTP-Referer`/`X-Title` and the like.
        Provider::OpenAi => (
            Aliases::default(),
            Login {
                headers: headers("OPENAI_CUSTOM_HEADERS"),
                ..Login::default()
            },
        ),
    };
    let pick = aliases.pick(&name);
    let base_url = flags
        .base_url
        .clone()
        .or(base)
        .unwrap_or_else(|| default_base.to_string());
    let endpoint = ModelEndpoint {
        provider,
        model: pick.id.clone(),
        base_url: base_url.trim_end_matches('/').to_string(),
        api_key: key,
        login,
    };
    ModelChoice::Real(Box::new(endpoint), pick, aliases)
}

/// What to tell someone who ran `cairn -p` with no credentials.
pub const NO_CREDENTIALS: &str = "no model credentials: set ANTHROPIC_API_KEY (or \
ANTHROPIC_AUTH_TOKEN, or `apiKeyHelper` in settings), or OPENAI_API_KEY / OPENAI_BASE_URL for an \
OpenAI-compatible server. To try cairn without a model, pass --demo.";

/// A session could not start because no credentials are set ([`NO_CREDENTIALS`] says so):
/// a typed error, so an editor can be told `auth_required` rather than a generic failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoCredentials;

impl std::fmt::Display for NoCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(NO_CREDENTIALS)
    }
}

impl std::error::Error for NoCredentials {}

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

    fn real(choice: ModelChoice) -> (ModelEndpoint, ModelPick) {
        match choice {
            ModelChoice::Real(ep, pick, _) => (*ep, pick),
            other => panic!("expected a real endpoint, got {other:?}"),
        }
    }

    fn none() -> ModelSettings {
        ModelSettings::default()
    }

    #[test]
    fn no_credentials_are_said_so() {
        assert_eq!(
            resolve(&ModelFlags::default(), &none(), env(&[])),
            ModelChoice::NoCredentials
        );
        assert_eq!(
            resolve(
                &ModelFlags::default(),
                &none(),
                env(&[("ANTHROPIC_API_KEY", "  ")])
            ),
            ModelChoice::NoCredentials
        );
    }

    #[test]
    fn flags_beat_settings_beat_env() {
        let e = env(&[("ANTHROPIC_API_KEY", "k"), ("ANTHROPIC_MODEL", "env-model")]);
        let (ep, _) = real(resolve(&ModelFlags::default(), &none(), &e));
        assert_eq!(ep.model, "env-model");
        assert_eq!(ep.base_url, "https://api.anthropic.com");
        let settings = ModelSettings::model("settings-model");
        let (ep, _) = real(resolve(&ModelFlags::default(), &settings, &e));
        assert_eq!(ep.model, "settings-model");
        let flags = ModelFlags {
            model: Some("flag-model".into()),
            ..Default::default()
        };
        let (ep, _) = real(resolve(&flags, &settings, &e));
        assert_eq!(ep.model, "flag-model");
    }

    #[test]
    fn openai_base_url_alone_selects_openai_for_ollama() {
        let e = env(&[("OPENAI_BASE_URL", "http://localhost:11434/v1/")]);
        let (ep, _) = real(resolve(&ModelFlags::default(), &none(), e));
        assert_eq!(ep.provider, Provider::OpenAi);
        assert_eq!(ep.base_url, "http://localhost:11434/v1");
        assert_eq!(ep.api_key, None);
    }

    #[test]
    fn a_login_token_or_a_key_helper_selects_anthropic_with_custom_headers() {
        let e = env(&[
            ("ANTHROPIC_AUTH_TOKEN", "tok"),
            ("ANTHROPIC_CUSTOM_HEADERS", "X-A: 1\nbroken"),
        ]);
        let (ep, _) = real(resolve(&ModelFlags::default(), &none(), e));
        assert_eq!(ep.provider, Provider::Anthropic);
        assert_eq!(ep.api_key, None);
        assert_eq!(ep.login.auth_token.as_deref(), Some("tok"));
        assert_eq!(ep.login.headers, [("X-A".to_string(), "1".to_string())]);
        let helper = KeyHelper {
            command: "echo k".into(),
            cwd: "/".into(),
            ttl: crate::llm::auth::DEFAULT_HELPER_TTL,
        };
        let settings = ModelSettings {
            key_helper: Some(helper.clone()),
            ..none()
        };
        let (ep, _) = real(resolve(&ModelFlags::default(), &settings, env(&[])));
        assert_eq!(ep.provider, Provider::Anthropic);
        assert_eq!(ep.login.key_helper, Some(helper));
    }

    #[test]
    fn demo_flag_wins() {
        let flags = ModelFlags {
            demo: true,
            ..Default::default()
        };
        assert_eq!(
            resolve(&flags, &none(), env(&[("ANTHROPIC_API_KEY", "k")])),
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
        let pick_of = |f: &ModelFlags, e: &dyn Fn(&str) -> Option<String>| {
            real(resolve(f, &ModelSettings::default(), e)).1
        };
        assert_eq!(pick_of(&flags("sonnet"), &e).id, "claude-sonnet-4-5");
        assert_eq!(pick_of(&flags("haiku"), &e).id, "claude-haiku-4-5");
        assert_eq!(
            pick_of(&flags("claude-3-haiku-20240307"), &e).id,
            "claude-3-haiku-20240307"
        );
        let plan = pick_of(&flags("opusplan"), &e);
        assert_eq!(plan.id_for(false), "claude-sonnet-4-5");
        assert_eq!(plan.id_for(true), "claude-opus-4-5");
        let e = env(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_DEFAULT_OPUS_MODEL", "my-opus"),
        ]);
        assert_eq!(pick_of(&flags("opus"), &e).id, "my-opus");
        assert_eq!(pick_of(&flags("opusplan"), &e).id_for(true), "my-opus");
        // OpenAI-compatible servers have no aliases: a model named `opus` is sent as is.
        let e = env(&[("OPENAI_API_KEY", "k")]);
        assert_eq!(pick_of(&flags("opus"), &e).id, "opus");
    }
}
