//! The merged settings of a session: every layer read, checked and merged, each value with the
//! layer it came from, and every problem as a diagnostic (`file:line: what is wrong`).
//!
//! Merge rules: scalars (`model`, `permissions.defaultMode`, each `env` key) — the highest
//! layer wins; lists (`permissions.allow/ask/deny`, `additionalDirectories`) and hooks —
//! every layer contributes. A bad value or rule is skipped alone with a diagnostic.
//!
//! Failing closed: a file that exists but cannot be used, and any problem that may have lost
//! a restriction (`permissions` not an object; a `deny` or `ask` list or rule that cannot be
//! read; a broken `hooks` object or PreToolUse hook), is also listed in
//! [`LoadedSettings::broken`], and the permission gate then refuses every call that is not
//! read-only. Problems that can only lose a permission or a preference (`model`, `env`, an
//! `allow` rule, `defaultMode`, `additionalDirectories`, other hook events) stay diagnostics:
//! losing them never lets anything run that would not have run.
//! Loading never fails and never reads the real environment: the caller passes a lookup.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::hooks::{HooksConfig, parse_hooks};
use super::layers::{
    Layer, Origin, Problems, SettingsPaths, SettingsSource, parse_source, project_root, read_source,
};
use super::trust::Trust;
use super::untrusted::UntrustedItem;
use crate::files::paths::expand_path;
use crate::protocol::PermissionMode;
use crate::rules::{Rule, RuleContext};

/// A rule and where it was written.
#[derive(Debug, Clone)]
pub struct SourcedRule {
    pub rule: Rule,
    pub origin: Origin,
}

#[derive(Debug, Clone, Default)]
pub struct PermissionRules {
    pub allow: Vec<SourcedRule>,
    pub ask: Vec<SourcedRule>,
    pub deny: Vec<SourcedRule>,
}

/// Everything read from the layers.
#[derive(Debug, Clone, Default)]
pub struct LoadedSettings {
    /// The nearest ancestor with `.git`, `.cairn` or `.claude` (`/path` rules anchor here).
    pub project_root: PathBuf,
    /// Where cairn started (`path` and `./path` rules anchor here).
    pub project_dir: PathBuf,
    pub home: Option<PathBuf>,
    pub model: Option<String>,
    /// `apiKeyHelper`: a shell command whose output is the API key.
    pub api_key_helper: Option<String>,
    /// `autoCompactThreshold`, as a percent of the context window (0: never).
    pub auto_compact_pct: Option<u8>,
    /// `toolSearch`: `auto`, `auto:N`, `always` or `never`, checked.
    pub tool_search: Option<String>,
    /// `checkpointBudgetMB`: the `/rewind` store's size budget, in MB.
    pub checkpoint_budget_mb: Option<u64>,
    /// `webSearch`: the search service WebSearch asks (see [`super::web_search`]).
    pub web_search: Option<super::web_search::WebSearchSetting>,
    /// `smallModel`: the fast model tools ask for other providers than Anthropic.
    pub small_model: Option<String>,
    pub default_mode: Option<PermissionMode>,
    pub permissions: PermissionRules,
    /// Absolute, `~` expanded.
    pub additional_directories: Vec<PathBuf>,
    /// Parallel to `additional_directories`.
    pub additional_directory_origins: Vec<Origin>,
    pub hooks: HooksConfig,
    pub env: BTreeMap<String, String>,
    /// `statusLine` and `outputStyle`.
    pub appearance: super::appearance::Appearance,
    /// `lspServers`, highest layer's first; `enabledPlugins` (`super::plugins`).
    pub lsp_servers: super::lsp_servers::LspServers,
    pub enabled_plugins: Vec<super::plugins::EnabledPlugin>,
    /// Where each scalar came from: `model`, `defaultMode`, `env.KEY`.
    pub origins: BTreeMap<String, Origin>,
    /// Every settings document that was read, highest layer first.
    pub sources: Vec<Origin>,
    /// Every file the layers read or would read if it existed (writes to them are checked:
    /// [`super::settings_write`]).
    pub files: Vec<PathBuf>,
    pub diagnostics: Vec<String>,
    /// The diagnostics that may have hidden a deny rule, an ask rule or a PreToolUse hook
    /// (each is also in `diagnostics`). Not empty: the gate fails closed.
    pub broken: Vec<String>,
    /// MCP approval of the project's `.mcp.json` servers (approvals are not read from a
    /// checked-in project settings file: a repository must not approve its own servers;
    /// refusals are).
    pub mcp_approval: McpApprovalSettings,
    /// Whether the folder is trusted: untrusted, the project's settings only narrow.
    pub trust: Trust,
    /// What the project's settings configure that was not applied because the folder is not
    /// trusted (empty when trusted).
    pub untrusted: Vec<UntrustedItem>,
}

/// `enableAllProjectMcpServers`, `enabledMcpjsonServers`, `disabledMcpjsonServers`, merged
/// over the layers (the flag is on when any layer turns it on; the lists are unions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpApprovalSettings {
    pub enable_all: bool,
    pub enabled: Vec<String>,
    pub disabled: Vec<String>,
    /// Set when a `disabledMcpjsonServers` could not be read (not a list of names): the
    /// refusals it meant are unknown, so no project server starts. Says where and why.
    pub blocked: Option<String>,
}

impl LoadedSettings {
    /// The context rules written in settings resolve against.
    pub fn rule_context(&self) -> RuleContext {
        RuleContext {
            root: self.project_root.clone(),
            cwd: self.project_dir.clone(),
            home: self.home.clone(),
        }
    }
}

/// Load and merge every layer for a session started in `project_dir`. `cli_settings` is the
/// `--settings` value (a file path or inline JSON); `env` looks up HOME, XDG_CONFIG_HOME and
/// CLAUDE_CONFIG_DIR. In an untrusted folder the project's own files only narrow
/// ([`super::untrusted`]).
pub fn load_settings(
    project_dir: &Path,
    cli_settings: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    trust: Trust,
) -> LoadedSettings {
    let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let root = project_root(project_dir, home.as_deref());
    let paths = SettingsPaths::standard(&root, env);
    load_settings_from(&paths, project_dir, cli_settings, env, trust)
}

/// As [`load_settings`], with the candidate files given (tests use this for managed files).
pub fn load_settings_from(
    paths: &SettingsPaths,
    project_dir: &Path,
    cli_settings: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    trust: Trust,
) -> LoadedSettings {
    let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let mut loaded = LoadedSettings {
        project_root: project_root(project_dir, home.as_deref()),
        project_dir: project_dir.to_path_buf(),
        home,
        trust,
        ..LoadedSettings::default()
    };
    let mut diagnostics = Problems::default();
    let mut sources = Vec::new();
    for path in &paths.managed {
        sources.extend(read_source(path, Layer::Managed, &mut diagnostics));
    }
    if let Some(cli) = cli_settings.map(str::trim).filter(|s| !s.is_empty()) {
        if cli.starts_with('{') {
            let origin = Origin {
                layer: Layer::Cli,
                source: "--settings (inline JSON)".into(),
            };
            sources.extend(parse_source(cli.to_string(), origin, &mut diagnostics));
        } else {
            let path = expand_path(cli, project_dir).unwrap_or_else(|_| PathBuf::from(cli));
            loaded.files.push(path.clone());
            match read_source(&path, Layer::Cli, &mut diagnostics) {
                Some(s) => sources.push(s),
                // Named on purpose, so it is meant to apply: its rules are missing.
                None if !path.exists() => diagnostics.broken(format!(
                    "--settings {cli}: no such file (and not inline JSON)"
                )),
                None => {}
            }
        }
    }
    for (layer, files) in [
        (Layer::ProjectLocal, &paths.project_local),
        (Layer::Project, &paths.project),
        (Layer::User, &paths.user),
    ] {
        for path in files {
            let layer = match layer {
                Layer::ProjectLocal => local_layer(&loaded.project_root, path, &mut diagnostics),
                other => other,
            };
            let Some(mut src) = read_source(path, layer, &mut diagnostics) else {
                continue;
            };
            if !trust.is_trusted() && matches!(layer, Layer::Project | Layer::ProjectLocal) {
                loaded.untrusted.extend(super::untrusted::narrow(&mut src));
            }
            sources.push(src);
        }
    }
    loaded.files.extend(
        [
            &paths.managed,
            &paths.project_local,
            &paths.project,
            &paths.user,
        ]
        .into_iter()
        .flatten()
        .cloned(),
    );
    let ctx = loaded.rule_context();
    for src in &sources {
        merge_source(&mut loaded, src, &ctx, &mut diagnostics);
        super::web_search::read(src, &mut loaded.web_search, &mut diagnostics);
        super::plugins::merge(&mut loaded.enabled_plugins, src, &mut diagnostics);
        super::web_search::read_small_model(src, &mut loaded.small_model, &mut diagnostics);
        super::keys::report_unread(src, &mut diagnostics);
        loaded.sources.push(src.origin.clone());
    }
    loaded.diagnostics = diagnostics.notes;
    loaded.broken = diagnostics.broken;
    loaded
}

/// The layer of a project "local" settings file: one that git tracks is the repository's
/// content and is read as shared project settings (its approvals do not count); one git cannot
/// answer for counts as tracked.
fn local_layer(root: &Path, path: &Path, diags: &mut Problems) -> Layer {
    if std::fs::symlink_metadata(path).is_err() {
        return Layer::ProjectLocal;
    }
    let reason = match super::tracked::is_tracked(root, path) {
        Ok(false) => return Layer::ProjectLocal,
        Ok(true) => "git tracks it".to_string(),
        Err(e) => e,
    };
    diags.push(format!(
        "{}: read as the project's shared settings, not your local answers ({reason}); \
         approvals in it are ignored",
        path.display()
    ));
    Layer::Project
}

fn merge_mcp_approval(into: &mut McpApprovalSettings, src: &SettingsSource, diags: &mut Problems) {
    let obj = &src.value;
    let keys = [
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "disabledMcpjsonServers",
    ];
    // A list of server names, or `Err` with the diagnostic when the value is anything else.
    let names = |key: &str, v: &serde_json::Value, then: &str| -> Result<Vec<String>, String> {
        v.as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|i| i.as_str().map(String::from))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| {
                src.diagnostic(
                    &format!("\"{key}\""),
                    &format!("`{key}` must be a list of server names; {then}"),
                )
            })
    };
    // Refusing only narrows, so a disabled list counts from every layer, a repository's too;
    // one that cannot be read fails closed: no project server starts.
    if let Some(v) = obj.get(keys[2]) {
        match names(
            keys[2],
            v,
            "no server of the project's .mcp.json starts until it is fixed",
        ) {
            Ok(list) => into.disabled.extend(list),
            Err(message) => {
                into.blocked.get_or_insert_with(|| message.clone());
                diags.push(message);
            }
        }
    }
    if src.origin.layer == Layer::Project {
        for key in keys[..2].iter().filter(|k| obj.get(**k).is_some()) {
            diags.push(src.diagnostic(
                &format!("\"{key}\""),
                &format!(
                    "`{key}` in a project's shared settings is ignored (a repository must not \
                     approve its own MCP servers); put it in .claude/settings.local.json"
                ),
            ));
        }
        return;
    }
    if let Some(v) = obj.get(keys[0]) {
        match v.as_bool() {
            Some(b) => into.enable_all |= b,
            None => diags.push(src.diagnostic(
                "\"enableAllProjectMcpServers\"",
                "`enableAllProjectMcpServers` must be true or false; it approves nothing",
            )),
        }
    }
    // A malformed approval list approves nothing (not even the names it does hold).
    if let Some(v) = obj.get(keys[1]) {
        match names(keys[1], v, "it approves nothing") {
            Ok(list) => into.enabled.extend(list),
            Err(message) => diags.push(message),
        }
    }
}

pub(super) fn merge_source(
    loaded: &mut LoadedSettings,
    src: &SettingsSource,
    ctx: &RuleContext,
    diags: &mut Problems,
) {
    let obj = &src.value;
    if let Some(model) = obj.get("model") {
        match model.as_str() {
            Some(m) if loaded.model.is_none() => {
                loaded.model = Some(m.to_string());
                loaded.origins.insert("model".into(), src.origin.clone());
            }
            Some(_) => {}
            None => diags.push(src.diagnostic("\"model\"", "`model` must be a string; ignored")),
        }
    }
    if let Some(helper) = obj.get("apiKeyHelper") {
        match helper.as_str().map(str::trim).filter(|h| !h.is_empty()) {
            // A repository's settings must not run commands just by being opened.
            Some(_) if matches!(src.origin.layer, Layer::Project | Layer::ProjectLocal) => diags
                .push(src.diagnostic(
                    "\"apiKeyHelper\"",
                    "`apiKeyHelper` in a project's settings is ignored (a repository could run \
                     any command with it); put it in ~/.claude/settings.json",
                )),
            Some(h) if loaded.api_key_helper.is_none() => {
                loaded.api_key_helper = Some(h.to_string());
                loaded
                    .origins
                    .insert("apiKeyHelper".into(), src.origin.clone());
            }
            Some(_) => {}
            None => diags.push(src.diagnostic(
                "\"apiKeyHelper\"",
                "`apiKeyHelper` must be a command (a string); ignored",
            )),
        }
    }
    if let Some(value) = obj.get("autoCompactThreshold") {
        match value.as_f64().and_then(threshold_pct) {
            Some(pct) if loaded.auto_compact_pct.is_none() => {
                loaded.auto_compact_pct = Some(pct);
                loaded
                    .origins
                    .insert("autoCompactThreshold".into(), src.origin.clone());
            }
            Some(_) => {}
            None => diags.push(src.diagnostic(
                "\"autoCompactThreshold\"",
                "`autoCompactThreshold` must be a percent (0 to 100) or a fraction (0 to 1); \
                 ignored",
            )),
        }
    }
    if let Some(value) = obj.get("checkpointBudgetMB") {
        match value.as_u64().filter(|&mb| mb > 0) {
            Some(mb) if loaded.checkpoint_budget_mb.is_none() => {
                loaded.checkpoint_budget_mb = Some(mb);
                loaded
                    .origins
                    .insert("checkpointBudgetMB".into(), src.origin.clone());
            }
            Some(_) => {}
            None => diags.push(src.diagnostic(
                "\"checkpointBudgetMB\"",
                "`checkpointBudgetMB` must be a whole number of megabytes above 0; ignored",
            )),
        }
    }
    if let Some(value) = obj.get("toolSearch") {
        let valid = value
            .as_str()
            .filter(|v| super::tool_search::ToolSearchMode::parse(v).is_some());
        match valid {
            Some(v) if loaded.tool_search.is_none() => {
                loaded.tool_search = Some(v.to_string());
                loaded
                    .origins
                    .insert("toolSearch".into(), src.origin.clone());
            }
            Some(_) => {}
            None => diags.push(src.diagnostic(
                "\"toolSearch\"",
                "`toolSearch` must be \"auto\", \"auto:N\" (a percent), \"always\" or \"never\"; \
                 ignored",
            )),
        }
    }
    if let Some(env) = obj.get("env") {
        match env.as_object() {
            Some(map) => {
                for (k, v) in map {
                    let value = match v {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                        _ => {
                            diags.push(src.diagnostic(
                                &format!("\"{k}\""),
                                &format!("`env.{k}` must be a string; ignored"),
                            ));
                            continue;
                        }
                    };
                    if !loaded.env.contains_key(k) {
                        loaded.env.insert(k.clone(), value);
                        loaded
                            .origins
                            .insert(format!("env.{k}"), src.origin.clone());
                    }
                }
            }
            None => diags.push(src.diagnostic("\"env\"", "`env` must be an object; ignored")),
        }
    }
    if let Some(hooks) = obj.get("hooks") {
        loaded.hooks.groups.extend(parse_hooks(src, hooks, diags));
    }
    loaded.appearance.merge(src, &mut loaded.origins, diags);
    loaded.lsp_servers.merge(src, diags);
    merge_mcp_approval(&mut loaded.mcp_approval, src, diags);
    let Some(perms) = obj.get("permissions") else {
        return;
    };
    if !perms.is_object() {
        diags.broken(src.diagnostic(
            "\"permissions\"",
            "`permissions` must be an object; ignored",
        ));
        return;
    }
    if let Some(mode) = perms.get("defaultMode") {
        match mode.as_str().and_then(PermissionMode::parse) {
            Some(m) if loaded.default_mode.is_none() => {
                loaded.default_mode = Some(m);
                loaded
                    .origins
                    .insert("defaultMode".into(), src.origin.clone());
            }
            Some(_) => {}
            None => diags.push(src.diagnostic(
                "\"defaultMode\"",
                &format!(
                    "`permissions.defaultMode` {mode} is not one of default, acceptEdits, plan, \
                     bypassPermissions, dontAsk; ignored"
                ),
            )),
        }
    }
    for key in ["allow", "ask", "deny"] {
        for text in string_list(src, perms, key, diags) {
            match Rule::parse(&text, ctx) {
                Ok(rule) => {
                    let list = match key {
                        "allow" => &mut loaded.permissions.allow,
                        "ask" => &mut loaded.permissions.ask,
                        _ => &mut loaded.permissions.deny,
                    };
                    if !list.iter().any(|r| r.rule.text == rule.text) {
                        list.push(SourcedRule {
                            rule,
                            origin: src.origin.clone(),
                        });
                    }
                }
                Err(e) => {
                    let message = src.diagnostic(
                        &format!("\"{}", text.replace('"', "\\\"")),
                        &format!("permissions.{key}: `{text}`: {e}; rule skipped"),
                    );
                    if key == "allow" {
                        diags.push(message);
                    } else {
                        diags.broken(message);
                    }
                }
            }
        }
    }
    for dir in string_list(src, perms, "additionalDirectories", diags) {
        match expand_path(&dir, &loaded.project_root) {
            Ok(p) if !loaded.additional_directories.contains(&p) => {
                loaded.additional_directories.push(p);
                loaded.additional_directory_origins.push(src.origin.clone());
            }
            Ok(_) => {}
            Err(e) => diags.push(src.diagnostic(
                &dir,
                &format!("additionalDirectories: `{dir}`: {e}; ignored"),
            )),
        }
    }
}

/// A threshold as a percent: `85` or `0.85` (a fraction up to 1); 0 turns it off.
pub fn threshold_pct(value: f64) -> Option<u8> {
    let pct = if value > 0.0 && value <= 1.0 {
        value * 100.0
    } else {
        value
    };
    (0.0..=100.0).contains(&pct).then(|| pct.round() as u8)
}

/// `permissions.<key>` as a list of strings; wrong types are reported and skipped (as broken
/// for `deny` and `ask`, whose loss would let calls through).
fn string_list(
    src: &SettingsSource,
    perms: &Value,
    key: &str,
    diags: &mut Problems,
) -> Vec<String> {
    let restricts = key == "deny" || key == "ask";
    let report = |diags: &mut Problems, message: String| {
        if restricts {
            diags.broken(message);
        } else {
            diags.push(message);
        }
    };
    let Some(v) = perms.get(key) else {
        return Vec::new();
    };
    let Some(items) = v.as_array() else {
        report(
            diags,
            src.diagnostic(
                &format!("\"{key}\""),
                &format!("`permissions.{key}` must be a list of strings; ignored"),
            ),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items {
        match item.as_str() {
            Some(s) => out.push(s.to_string()),
            None => report(
                diags,
                src.diagnostic(
                    &format!("\"{key}\""),
                    &format!("`permissions.{key}` holds {item}, which is not a string; skipped"),
                ),
            ),
        }
    }
    out
}

/// The merged settings for `cairn config`: each value with the layer it came from.
pub fn render_config(loaded: &LoadedSettings) -> String {
    let mut out = String::new();
    let from = |key: &str| {
        loaded
            .origins
            .get(key)
            .map_or(String::new(), |o| format!("  ({o})"))
    };
    let _ = writeln!(out, "project root: {}", loaded.project_root.display());
    if !loaded.trust.is_trusted() {
        let _ = writeln!(
            out,
            "folder trust: not trusted (the project's settings only narrow; not applied:{})",
            if loaded.untrusted.is_empty() {
                " nothing"
            } else {
                ""
            }
        );
        for item in &loaded.untrusted {
            let _ = writeln!(out, "  {}: {}  ({})", item.what, item.detail, item.source);
        }
    }
    let _ = writeln!(
        out,
        "model: {}{}",
        loaded.model.as_deref().unwrap_or("(not set)"),
        from("model")
    );
    if let Some(helper) = &loaded.api_key_helper {
        let _ = writeln!(out, "apiKeyHelper: {helper}{}", from("apiKeyHelper"));
    }
    let _ = writeln!(
        out,
        "permissions.defaultMode: {}{}",
        loaded.default_mode.map_or("(not set)", |m| m.as_str()),
        from("defaultMode")
    );
    for (name, list) in [
        ("allow", &loaded.permissions.allow),
        ("ask", &loaded.permissions.ask),
        ("deny", &loaded.permissions.deny),
    ] {
        let _ = writeln!(
            out,
            "permissions.{name}:{}",
            if list.is_empty() { " (none)" } else { "" }
        );
        for r in list {
            let _ = writeln!(out, "  {}  ({})", r.rule.text, r.origin);
        }
    }
    let _ = writeln!(
        out,
        "additionalDirectories:{}",
        if loaded.additional_directories.is_empty() {
            " (none)"
        } else {
            ""
        }
    );
    for (d, o) in loaded
        .additional_directories
        .iter()
        .zip(&loaded.additional_directory_origins)
    {
        let _ = writeln!(out, "  {}  ({o})", d.display());
    }
    let _ = writeln!(
        out,
        "env:{}",
        if loaded.env.is_empty() { " (none)" } else { "" }
    );
    for (k, v) in &loaded.env {
        let _ = writeln!(out, "  {k}={v}{}", from(&format!("env.{k}")));
    }
    for (key, value) in [
        (
            "statusLine",
            loaded
                .appearance
                .status_line
                .as_ref()
                .map(|s| s.command.as_str()),
        ),
        ("outputStyle", loaded.appearance.output_style.as_deref()),
    ] {
        let _ = writeln!(out, "{key}: {}{}", value.unwrap_or("(not set)"), from(key));
    }
    let _ = writeln!(
        out,
        "hooks:{}",
        if loaded.hooks.groups.is_empty() {
            " (none)"
        } else {
            ""
        }
    );
    for g in &loaded.hooks.groups {
        for c in &g.commands {
            let matcher = if g.matcher.is_empty() {
                "*"
            } else {
                &g.matcher
            };
            let _ = writeln!(
                out,
                "  {} [{matcher}] {} (timeout {}s)  ({})",
                g.event.name(),
                c.command,
                c.timeout.as_secs(),
                g.origin
            );
        }
    }
    let _ = writeln!(
        out,
        "files read:{}",
        if loaded.sources.is_empty() {
            " (none)"
        } else {
            ""
        }
    );
    for s in &loaded.sources {
        let _ = writeln!(out, "  {s}");
    }
    if !loaded.diagnostics.is_empty() {
        let _ = writeln!(out, "problems:");
        for d in &loaded.diagnostics {
            let _ = writeln!(out, "  {d}");
        }
    }
    out
}
