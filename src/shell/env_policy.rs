//! The environment of the commands cairn starts for tools and hooks.
//!
//! A child inherits cairn's environment, minus the model-provider credentials cairn itself
//! was started with (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, …): a command the model runs has
//! no business with them, and `printenv` would hand them to the model. `CDPATH` is dropped
//! too, since it changes where `cd` leads and the analysis of write paths assumes plain `cd`.
//! Then the settings' `env` is added: naming a credential there (with its value) is how a
//! person gives it back to tools on purpose, and `CAIRN_TOOL_CREDENTIALS=inherit` in cairn's
//! own environment keeps them all. The same policy serves the Bash tool (foreground and
//! background) and hooks.

use std::ffi::OsString;

/// Credentials of the model providers cairn reads, by exact name.
pub const CREDENTIALS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "CAIRN_API_KEY",
];

/// Set to `inherit` in cairn's environment to let tools and hooks see the credentials.
pub const OPT_IN_VAR: &str = "CAIRN_TOOL_CREDENTIALS";

/// Variables never passed on from cairn's environment besides the credentials.
const DROPPED: &[&str] = &["CDPATH"];

/// What to remove from the inherited environment and what to set, for a child.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildEnv {
    pub remove: Vec<String>,
    pub set: Vec<(String, String)>,
}

/// The plan for a child, given the parent's variable names, whether the person opted in, and
/// the settings' `env`. Pure, so it can be tested without touching the process environment.
pub fn plan<'a>(
    parent: impl IntoIterator<Item = &'a str>,
    inherit_credentials: bool,
    settings_env: &[(String, String)],
) -> ChildEnv {
    let explicit = |name: &str| settings_env.iter().any(|(k, _)| k == name);
    let remove = parent
        .into_iter()
        .filter(|name| {
            let credential = !inherit_credentials && CREDENTIALS.contains(name);
            (credential || DROPPED.contains(name)) && !explicit(name)
        })
        .map(String::from)
        .collect();
    ChildEnv {
        remove,
        set: settings_env.to_vec(),
    }
}

/// The value `name` has in the environment of a command cairn starts with `settings_env`:
/// the settings' value, else cairn's own unless the policy removes it (the opt-in to keep
/// credentials aside: a lookup for the checks, which never need one).
pub fn tool_var(settings_env: &[(String, String)], name: &str) -> Option<String> {
    if let Some((_, v)) = settings_env.iter().rev().find(|(k, _)| k == name) {
        return Some(v.clone());
    }
    if CREDENTIALS.contains(&name) || DROPPED.contains(&name) {
        return None;
    }
    std::env::var(name).ok()
}

/// Apply the policy to a command about to start, from cairn's own environment.
pub fn apply(cmd: &mut tokio::process::Command, settings_env: &[(String, String)]) {
    let names: Vec<OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    let names: Vec<&str> = names.iter().filter_map(|k| k.to_str()).collect();
    let inherit = std::env::var(OPT_IN_VAR).is_ok_and(|v| v == "inherit");
    let plan = plan(names, inherit, settings_env);
    for name in &plan.remove {
        cmd.env_remove(name);
    }
    cmd.envs(plan.set.iter().map(|(k, v)| (k, v)));
}

/// The policy for a command started in a client's terminal (`shell::client`), whose
/// environment cairn cannot see: every name the policy would drop is to be removed (by the
/// command's shell, with `unset`), unless the settings name it or the person opted in.
pub fn for_client(settings_env: &[(String, String)]) -> ChildEnv {
    let inherit = std::env::var(OPT_IN_VAR).is_ok_and(|v| v == "inherit");
    let names = CREDENTIALS.iter().chain(DROPPED).copied();
    plan(names, inherit, settings_env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_removed_unless_named_or_inherited() {
        let parent = [
            "PATH",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "CDPATH",
            "HOME",
        ];
        let p = plan(parent, false, &[]);
        assert_eq!(
            p.remove,
            vec!["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CDPATH"]
        );
        let settings = vec![("OPENAI_API_KEY".to_string(), "sk-tools".to_string())];
        let p = plan(parent, false, &settings);
        assert_eq!(p.remove, vec!["ANTHROPIC_API_KEY", "CDPATH"]);
        assert_eq!(p.set, settings);
        let p = plan(parent, true, &[]);
        assert_eq!(p.remove, vec!["CDPATH"]);
    }
}
