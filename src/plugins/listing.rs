//! Plugins as people read them: for `/plugin` (through the host, as
//! [`crate::protocol::PluginInfo`]) and `cairn plugin list`, each plugin with where it came
//! from and what it contributes.

use crate::protocol::PluginInfo;

use super::components::server_lines;
use super::{EnabledBy, Parts, Plugin, PluginSet};

/// What `parts` contributes, one line per kind.
pub fn contribution_lines(parts: &Parts) -> Vec<String> {
    let mut out = Vec::new();
    let mut named = |what: &str, names: Vec<String>| {
        if !names.is_empty() {
            out.push(format!("{what}: {}", names.join(", ")));
        }
    };
    named(
        "commands",
        parts
            .commands
            .iter()
            .map(|c| format!("/{}", c.name))
            .collect(),
    );
    named(
        "skills",
        parts.skills.iter().map(|s| s.name.clone()).collect(),
    );
    named(
        "agents",
        parts.agents.iter().map(|a| a.name.clone()).collect(),
    );
    out.extend(server_lines(parts));
    out
}

/// One plugin for a client.
pub fn info(p: &Plugin) -> PluginInfo {
    let from = match &p.enabled_by {
        EnabledBy::Person(file) => format!("enabled in {file}"),
        EnabledBy::Project(file) => format!("enabled by the project in {file}"),
        EnabledBy::PluginDir => "--plugin-dir".to_string(),
    };
    let version = p
        .version
        .as_deref()
        .map(|v| format!(" v{v}"))
        .unwrap_or_default();
    let mut contributes = contribution_lines(&p.parts);
    contributes.extend(
        p.withheld
            .iter()
            .map(|w| format!("waiting for folder trust: {w}")),
    );
    PluginInfo {
        id: p.id.clone(),
        detail: format!("{version} ({from}) {}", p.root.display())
            .trim()
            .to_string(),
        description: p.description.clone().unwrap_or_default(),
        contributes,
    }
}

/// Every plugin of a set, for a client.
pub fn infos(set: &PluginSet) -> Vec<PluginInfo> {
    set.plugins.iter().map(info).collect()
}

/// The set as text: each plugin and its parts, then the disabled ones and the problems.
pub fn text(set: &PluginSet) -> String {
    let mut out = String::new();
    if set.plugins.is_empty() {
        out.push_str("No plugins loaded.\n");
    }
    for p in infos(set) {
        out.push_str(&format!("{} {}\n", p.id, p.detail));
        if !p.description.is_empty() {
            out.push_str(&format!("  {}\n", p.description));
        }
        for line in &p.contributes {
            out.push_str(&format!("  {line}\n"));
        }
    }
    for id in &set.disabled {
        out.push_str(&format!("{id} (disabled)\n"));
    }
    for problem in &set.problems {
        out.push_str(&format!("problem: {problem}\n"));
    }
    out
}
