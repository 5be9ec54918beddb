//! The `webSearch` and `smallModel` settings (the services tools ask beside the session's model).
//! `webSearch`: which search service the WebSearch tool asks when the provider's
//! own search is not used (`{"provider": "searxng" | "brave" | "tavily", "url": ...,
//! "apiKeyEnv": ...}`). The highest layer that sets it wins. A key is read from the variable
//! `apiKeyEnv` names only when the setting comes from the person's own settings (user,
//! managed, `--settings`): a repository must not be able to send a key of yours to a server
//! of its choosing, nor name a model provider's credential at all.

use serde_json::Value;

use super::layers::{Layer, Problems, SettingsSource};
pub use crate::session::search::{SearchProvider, WebSearchSetting};

/// Variables that hold a model provider's credentials: never sent to a search service.
const PROVIDER_CREDENTIALS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
];

/// Read `webSearch` from one settings document into `slot` (left alone when a higher layer
/// already set it).
pub(super) fn read(
    src: &SettingsSource,
    slot: &mut Option<WebSearchSetting>,
    diags: &mut Problems,
) {
    let Some(value) = src.value.get("webSearch") else {
        return;
    };
    if slot.is_some() {
        return;
    }
    let wrong = |msg: &str| src.diagnostic("\"webSearch\"", msg);
    let Some(obj) = value.as_object() else {
        diags.push(wrong(
            "`webSearch` must be an object ({\"provider\": \"searxng\", \"url\": ...}); ignored",
        ));
        return;
    };
    let Some(provider) = obj
        .get("provider")
        .and_then(Value::as_str)
        .and_then(SearchProvider::parse)
    else {
        diags.push(wrong(
            "`webSearch.provider` must be \"searxng\", \"brave\" or \"tavily\"; ignored",
        ));
        return;
    };
    let url = obj.get("url").and_then(Value::as_str).map(str::to_string);
    if provider == SearchProvider::Searxng && url.is_none() {
        diags.push(wrong("`webSearch.url` is needed for searxng; ignored"));
        return;
    }
    let mut api_key_env = obj
        .get("apiKeyEnv")
        .and_then(Value::as_str)
        .map(str::to_string);
    let own = !matches!(src.origin.layer, Layer::Project | Layer::ProjectLocal);
    if let Some(name) = &api_key_env {
        if !own {
            diags.push(wrong(
                "`webSearch.apiKeyEnv` is not read from a project's settings (a repository \
                 must not send your keys to a server it names); set it in \
                 ~/.claude/settings.json",
            ));
            api_key_env = None;
        } else if PROVIDER_CREDENTIALS.contains(&name.as_str()) {
            diags.push(wrong(&format!(
                "`webSearch.apiKeyEnv` may not name {name}: a model provider's credential is \
                 never sent to a search service; ignored"
            )));
            api_key_env = None;
        }
    }
    *slot = Some(WebSearchSetting {
        provider,
        url,
        api_key_env,
        source: src.origin.source.clone(),
    });
}

/// Read `smallModel` (the fast model tools ask, for providers without a haiku alias) from one
/// settings document into `slot` (left alone when a higher layer already set it).
pub(super) fn read_small_model(
    src: &SettingsSource,
    slot: &mut Option<String>,
    diags: &mut Problems,
) {
    let Some(value) = src.value.get("smallModel") else {
        return;
    };
    match value.as_str().map(str::trim).filter(|m| !m.is_empty()) {
        Some(model) if slot.is_none() => *slot = Some(model.to_string()),
        Some(_) => {}
        None => diags.push(src.diagnostic(
            "\"smallModel\"",
            "`smallModel` must be a model id (a string); ignored",
        )),
    }
}
