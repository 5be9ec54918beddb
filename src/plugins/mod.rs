//! Claude Code plugins: folders that bundle commands, agents, skills, hooks, MCP servers and
//! language servers (`.claude-plugin/plugin.json`, `commands/`, `agents/`, `skills/`,
//! `hooks/hooks.json`, `.mcp.json`, `.lsp.json`). This module finds the plugins a session
//! has — those installed in Claude Code's registry and turned on by `enabledPlugins`, and
//! those named with `--plugin-dir` — and reads what each contributes ([`components`]); the
//! host adds the parts to the session. It also installs, enables, disables and uninstalls
//! plugins from local marketplaces ([`marketplace`]), writing the files Claude Code writes
//! ([`registry`]). It never fetches anything: a marketplace or plugin that lives in a git
//! repository is refused with a plain message.
//!
//! Trust: a plugin turned on by the person's own settings (user, managed, `--settings`) or by
//! `--plugin-dir` is theirs and contributes everything. A plugin turned on by the project's
//! settings (`.claude/settings.json` or `settings.local.json`) is project configuration: in a
//! folder the person has not trusted it contributes only what the project's own `.claude/`
//! files could (commands, skills, agents: prompts, which grant nothing beyond the working
//! directories), and its hooks, MCP servers and language servers wait for trust (named in a
//! notice). A project's `false` always applies: turning a plugin off only narrows.

pub mod components;
pub mod listing;
pub mod manifest;
pub mod marketplace;
pub mod registry;

use std::path::{Path, PathBuf};

use crate::config::LoadedSettings;
use crate::config::layers::Layer;

pub use components::Parts;
use registry::Installation;
pub use registry::PluginsHome;

/// Who turned a plugin on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnabledBy {
    /// `enabledPlugins` in the person's settings (user, managed, command line): the file.
    Person(String),
    /// `enabledPlugins` in the project's settings: the file.
    Project(String),
    /// `--plugin-dir`.
    PluginDir,
}

/// One plugin of a session.
#[derive(Debug, Clone)]
pub struct Plugin {
    /// `name@marketplace` (`name@inline` for `--plugin-dir`).
    pub id: String,
    pub name: String,
    pub version: Option<String>,
    pub description: Option<String>,
    pub root: PathBuf,
    pub enabled_by: EnabledBy,
    pub parts: Parts,
    /// What an untrusted folder held back (hooks and servers), for the notice and listing.
    pub withheld: Vec<String>,
}

/// The session's plugins and what went wrong finding them.
#[derive(Debug, Clone, Default)]
pub struct PluginSet {
    pub plugins: Vec<Plugin>,
    /// Installed plugins that are off, by id.
    pub disabled: Vec<String>,
    pub problems: Vec<String>,
}

/// Find the session's plugins: `--plugin-dir`s first, then the installed plugins the
/// settings turn on, from Claude Code's registry in `home`. `env` is the settings'
/// environment (for `${VAR}` in MCP servers).
pub fn load(
    settings: &LoadedSettings,
    plugin_dirs: &[PathBuf],
    home: Option<&PluginsHome>,
    env: &dyn Fn(&str) -> Option<String>,
) -> PluginSet {
    let mut set = PluginSet::default();
    let trusted = settings.trust.is_trusted();
    for dir in plugin_dirs {
        let dir = settings.project_dir.join(dir);
        set.add(&dir, None, EnabledBy::PluginDir, trusted, env);
    }
    let Some(home) = home.filter(|_| !settings.enabled_plugins.is_empty()) else {
        return set;
    };
    let installed = match registry::installations(home) {
        Ok(list) => list,
        Err(e) => {
            set.problems.push(format!("plugins not loaded: {e}"));
            return set;
        }
    };
    for wanted in &settings.enabled_plugins {
        if !wanted.enabled {
            set.disabled.push(wanted.id.clone());
            continue;
        }
        let Some(inst) = choose(&installed, &wanted.id, &settings.project_root) else {
            set.problems.push(format!(
                "plugin {} is enabled in {} but not installed (cairn plugin install {})",
                wanted.id, wanted.source, wanted.id
            ));
            continue;
        };
        let by = if wanted.from_project() {
            EnabledBy::Project(wanted.source.clone())
        } else {
            EnabledBy::Person(wanted.source.clone())
        };
        let path = inst.install_path.clone();
        set.add(&path, Some(&wanted.id), by, trusted, env);
    }
    set
}

/// The installation of `id` a session in `project` uses: the project's own, else the user's.
fn choose<'a>(
    installed: &'a [(String, Installation)],
    id: &str,
    project: &Path,
) -> Option<&'a Installation> {
    let mine = || {
        installed
            .iter()
            .filter(|(i, _)| i == id)
            .map(|(_, inst)| inst)
    };
    mine()
        .find(|i| i.project_path.as_deref() == Some(project))
        .or_else(|| mine().find(|i| i.scope == "user"))
}

impl PluginSet {
    /// Read the plugin at `root` and keep it, unless one of its name is already here.
    fn add(
        &mut self,
        root: &Path,
        id: Option<&str>,
        by: EnabledBy,
        trusted: bool,
        env: &dyn Fn(&str) -> Option<String>,
    ) {
        let what = id.map_or_else(|| root.display().to_string(), str::to_string);
        if !root.is_dir() {
            self.problems.push(format!(
                "plugin {what}: {} is not a folder; not loaded",
                root.display()
            ));
            return;
        }
        let (manifest, problems) = match manifest::read(root) {
            Ok(read) => read,
            Err(e) => {
                self.problems
                    .push(format!("plugin {what}: {e}; not loaded"));
                return;
            }
        };
        self.problems.extend(problems);
        if self.plugins.iter().any(|p| p.name == manifest.name) {
            self.problems.push(format!(
                "plugin {what}: another plugin named {:?} is loaded; this one is not",
                manifest.name
            ));
            return;
        }
        let layer = match by {
            EnabledBy::Project(_) => Layer::Project,
            _ => Layer::User,
        };
        let mut parts = components::read(&manifest, root, layer, env, &mut self.problems);
        let mut withheld = Vec::new();
        if matches!(by, EnabledBy::Project(_)) && !trusted {
            withheld = components::server_lines(&parts);
            parts.hooks.clear();
            parts.broken_hooks.clear();
            parts.mcp.clear();
            parts.lsp.clear();
        }
        self.plugins.push(Plugin {
            id: id.map_or_else(|| format!("{}@inline", manifest.name), str::to_string),
            name: manifest.name.clone(),
            version: manifest.version.clone(),
            description: manifest.description.clone(),
            root: root.to_path_buf(),
            enabled_by: by,
            parts,
            withheld,
        });
    }

    /// The notice of what an untrusted folder's plugins held back, if any.
    pub fn untrusted_notice(&self) -> Option<String> {
        let held: Vec<String> = self
            .plugins
            .iter()
            .filter(|p| !p.withheld.is_empty())
            .map(|p| format!("{} ({})", p.id, p.withheld.join(", ")))
            .collect();
        (!held.is_empty()).then(|| {
            format!(
                "plugins the project's settings turn on run nothing until you trust this \
                 folder: {}",
                held.join("; ")
            )
        })
    }
}

#[cfg(test)]
mod tests;
