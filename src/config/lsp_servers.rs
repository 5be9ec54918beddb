//! `lspServers`: the language servers the settings declare, in Claude Code's shape —
//! `{"name": {"command", "args", "extensionToLanguage", "env", "initializationOptions",
//! "settings", "startupTimeout"}}`. Any layer may declare servers; for one name the highest
//! layer wins whole (fields are not merged across layers). A malformed entry is a diagnostic
//! naming the file and line, and is skipped: losing a server only loses a tool's answers.
//! This module only reads values; starting servers is `crate::lsp`'s business. An untrusted
//! project's own `lspServers` never gets here (`untrusted.rs` takes it out before the merge).

use std::collections::BTreeMap;

use serde_json::Value;

use super::layers::{Problems, SettingsSource};

/// One declared server.
#[derive(Debug, Clone, PartialEq)]
pub struct LspServerSetting {
    /// The key it was declared under.
    pub name: String,
    /// The program to run (looked up on PATH when it has no `/`).
    pub command: String,
    pub args: Vec<String>,
    /// File extensions (with their dot, `.py`) to LSP language ids (`python`).
    pub extension_to_language: BTreeMap<String, String>,
    /// Variables added to the server's environment.
    pub env: BTreeMap<String, String>,
    /// Sent as `initializationOptions` in `initialize`.
    pub initialization_options: Option<Value>,
    /// Answered to the server's `workspace/configuration` requests and sent with
    /// `workspace/didChangeConfiguration`.
    pub settings: Option<Value>,
    /// How long `initialize` may take, in milliseconds.
    pub startup_timeout_ms: Option<u64>,
    /// The file it came from.
    pub source: String,
}

/// The servers of every layer, highest layer's first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LspServers(pub Vec<LspServerSetting>);

impl LspServers {
    /// Read `lspServers` from one settings document (documents come highest layer first); a
    /// name a higher layer declared is kept as that layer said.
    pub fn merge(&mut self, src: &SettingsSource, diags: &mut Problems) {
        let Some(value) = src.value.get("lspServers") else {
            return;
        };
        let Some(map) = value.as_object() else {
            diags.push(src.diagnostic(
                "\"lspServers\"",
                "`lspServers` must be an object of servers by name; ignored",
            ));
            return;
        };
        for (name, entry) in map {
            if self.0.iter().any(|s| &s.name == name) {
                continue;
            }
            match parse(name, entry, &src.origin.source) {
                Ok(server) => self.0.push(server),
                Err(why) => diags.push(src.diagnostic(
                    &format!("\"{name}\""),
                    &format!("`lspServers.{name}`: {why}; server ignored"),
                )),
            }
        }
    }
}

/// One server entry, `name: {...}`, as the settings (or a plugin's `.lsp.json`) declare it.
pub fn parse(name: &str, entry: &Value, source: &str) -> Result<LspServerSetting, String> {
    let obj = entry.as_object().ok_or("must be an object")?;
    let command = obj
        .get("command")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .ok_or("`command` must be a non-empty string")?;
    let args = match obj.get("args") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| a.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or("`args` must be a list of strings")?,
        Some(_) => return Err("`args` must be a list of strings".into()),
    };
    let strings = |key: &str| -> Result<BTreeMap<String, String>, String> {
        match obj.get(key) {
            None => Ok(BTreeMap::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect::<Option<BTreeMap<_, _>>>()
                .ok_or_else(|| format!("`{key}` must map names to strings")),
            Some(_) => Err(format!("`{key}` must be an object")),
        }
    };
    let extension_to_language = strings("extensionToLanguage")?
        .into_iter()
        .map(|(ext, lang)| {
            let ext = ext.trim().to_string();
            let ext = if ext.starts_with('.') {
                ext
            } else {
                format!(".{ext}")
            };
            (ext, lang)
        })
        .collect::<BTreeMap<_, _>>();
    if extension_to_language.is_empty() {
        return Err("`extensionToLanguage` must name at least one file extension".into());
    }
    let startup_timeout_ms = match obj.get("startupTimeout") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or("`startupTimeout` must be a number of milliseconds")?,
        ),
    };
    Ok(LspServerSetting {
        name: name.to_string(),
        command: command.to_string(),
        args,
        extension_to_language,
        env: strings("env")?,
        initialization_options: obj.get("initializationOptions").cloned(),
        settings: obj.get("settings").cloned(),
        startup_timeout_ms,
        source: source.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::layers::{Layer, Origin};

    fn source(text: &str) -> SettingsSource {
        SettingsSource {
            origin: Origin {
                layer: Layer::User,
                source: "/h/.claude/settings.json".into(),
            },
            text: text.into(),
            value: serde_json::from_str(text).unwrap(),
        }
    }

    #[test]
    fn servers_are_read_and_a_higher_layer_keeps_its_name() {
        let mut servers = LspServers::default();
        let mut diags = Problems::default();
        servers.merge(
            &source(
                r#"{"lspServers": {"py": {"command": "pyright-langserver", "args": ["--stdio"],
                "extensionToLanguage": {".py": "python", "pyi": "python"},
                "startupTimeout": 5000, "settings": {"python": {}}}}}"#,
            ),
            &mut diags,
        );
        servers.merge(
            &source(r#"{"lspServers": {"py": {"command": "other", "extensionToLanguage": {".py": "python"}}}}"#),
            &mut diags,
        );
        assert!(diags.notes.is_empty(), "{diags:?}");
        assert_eq!(servers.0.len(), 1);
        let py = &servers.0[0];
        assert_eq!(py.command, "pyright-langserver");
        assert_eq!(py.args, ["--stdio"]);
        assert_eq!(
            py.extension_to_language.get(".pyi").map(String::as_str),
            Some("python")
        );
        assert_eq!(py.startup_timeout_ms, Some(5000));
    }

    #[test]
    fn a_malformed_server_is_a_diagnostic_with_its_line() {
        let mut servers = LspServers::default();
        let mut diags = Problems::default();
        servers.merge(
            &source("{\"lspServers\": {\n\"bad\": {\"command\": \"\"}}}"),
            &mut diags,
        );
        assert!(servers.0.is_empty());
        assert_eq!(
            diags.notes,
            [
                "/h/.claude/settings.json:2: `lspServers.bad`: `command` must be a non-empty \
              string; server ignored"
            ]
        );
    }
}
