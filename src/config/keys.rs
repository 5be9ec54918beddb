//! Which settings keys cairn reads, which Claude Code keys it knows but does not act on, and the
//! report of every other key: a person switching from Claude Code learns at start which of
//! their settings have no effect here, instead of finding out by surprise. An unknown key
//! under `permissions` may be a misspelt `deny`, so it counts as broken (the gate fails closed).

use super::layers::{Problems, SettingsSource};
use super::snapshot::SESSION_KEYS;

/// Top-level keys cairn reads, besides the session's knobs ([`SESSION_KEYS`]).
pub const READ: &[&str] = &[
    "$schema",
    "model",
    "env",
    "permissions",
    "hooks",
    "apiKeyHelper",
    "statusLine",
    "outputStyle",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "webSearch",
    "smallModel",
    "lspServers",
    "enabledPlugins",
];

/// Keys of `permissions` cairn reads.
pub const PERMISSIONS_READ: &[&str] = &[
    "allow",
    "ask",
    "deny",
    "additionalDirectories",
    "defaultMode",
];

/// Claude Code settings cairn knows and does not use (yet): reported as having no effect.
pub const NOT_USED: &[&str] = &[
    "alwaysThinkingEnabled",
    "awsAuthRefresh",
    "awsCredentialExport",
    "cleanupPeriodDays",
    "companyAnnouncements",
    "disableAllHooks",
    "allowedMcpServers",
    "deniedMcpServers",
    "extraKnownMarketplaces",
    "forceLoginMethod",
    "forceLoginOrgUUID",
    "includeCoAuthoredBy",
    "otelHeadersHelper",
    "sandbox",
    "spinnerTipsEnabled",
    "subagentStatusLine",
    "useEnterpriseMcpConfigOnly",
];

/// Keys of `permissions` Claude Code has and cairn does not use.
pub const PERMISSIONS_NOT_USED: &[&str] = &["disableBypassPermissionsMode"];

/// Report the keys of one settings document that cairn does not read.
pub fn report_unread(src: &SettingsSource, problems: &mut Problems) {
    let Some(top) = src.value.as_object() else {
        return;
    };
    let read: Vec<&str> = READ
        .iter()
        .copied()
        .chain(SESSION_KEYS.iter().map(|k| k.name))
        .collect();
    for key in top.keys() {
        report(src, key, key, &read, NOT_USED, problems);
    }
    if let Some(perms) = top.get("permissions").and_then(|p| p.as_object()) {
        for key in perms.keys() {
            let shown = format!("permissions.{key}");
            report(
                src,
                key,
                &shown,
                PERMISSIONS_READ,
                PERMISSIONS_NOT_USED,
                problems,
            );
        }
    }
}

fn report(
    src: &SettingsSource,
    key: &str,
    shown: &str,
    read: &[&str],
    not_used: &[&str],
    problems: &mut Problems,
) {
    if read.contains(&key) {
        return;
    }
    let needle = format!("\"{key}\"");
    if not_used.contains(&key) {
        let message =
            format!("`{shown}` is a Claude Code setting cairn does not use; it has no effect");
        problems.push(src.diagnostic(&needle, &message));
        return;
    }
    let message = format!(
        "unknown setting `{shown}`; ignored (cairn reads: {})",
        read.join(", ")
    );
    // A misspelt key under `permissions` may be a lost `deny` or `ask`: fail closed.
    if shown.starts_with("permissions.") {
        problems.broken(src.diagnostic(&needle, &message));
    } else {
        problems.push(src.diagnostic(&needle, &message));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::layers::{Layer, Origin, parse_source};

    #[test]
    fn unread_keys_are_named_with_their_line_and_what_is_read() {
        let text = "{\n  \"model\": \"opus\",\n  \"cleanupPeriodDays\": 20,\n  \"modle\": \"x\",\n  \"permissions\": {\"allow\": [], \"disableBypassPermissionsMode\": \"disable\", \"alow\": []}\n}";
        let mut problems = Problems::default();
        let origin = Origin {
            layer: Layer::Project,
            source: "/p/.claude/settings.json".into(),
        };
        let src = parse_source(text.into(), origin, &mut problems).unwrap();
        report_unread(&src, &mut problems);
        assert_eq!(
            problems.notes,
            [
                "/p/.claude/settings.json:3: `cleanupPeriodDays` is a Claude Code setting cairn \
                 does not use; it has no effect",
                "/p/.claude/settings.json:4: unknown setting `modle`; ignored (cairn reads: \
                 $schema, model, env, permissions, hooks, apiKeyHelper, statusLine, outputStyle, \
                 enableAllProjectMcpServers, enabledMcpjsonServers, disabledMcpjsonServers, \
                 webSearch, smallModel, lspServers, enabledPlugins, autoCompactThreshold, \
                 toolSearch, checkpointBudgetMB)",
                "/p/.claude/settings.json:5: `permissions.disableBypassPermissionsMode` is a \
                 Claude Code setting cairn does not use; it has no effect",
                "/p/.claude/settings.json:5: unknown setting `permissions.alow`; ignored \
                 (cairn reads: allow, ask, deny, additionalDirectories, defaultMode)",
            ]
        );
        assert_eq!(problems.broken, problems.notes[3..]);
    }
}
