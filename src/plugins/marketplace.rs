//! Marketplaces and installing from them, as `claude plugin …` does, for marketplaces whose
//! files are on this machine: `marketplace add PATH` (a folder holding
//! `.claude-plugin/marketplace.json`, or that file), `install NAME@MARKETPLACE` (the plugin's
//! folder copied to `cache/<marketplace>/<plugin>/<version>/`, recorded in
//! `installed_plugins.json`, and turned on in the scope's settings), `enable`, `disable`,
//! `uninstall`. A marketplace Claude Code cloned from git is installed from its clone. What
//! would need the network — a GitHub or git marketplace not cloned yet, a plugin whose source
//! is a repository — is refused with a message saying so; nothing is fetched.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::registry::{self, Installation, PluginsHome};

/// Where an install, enable or disable writes: Claude Code's scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallScope {
    /// `~/.claude/settings.json`.
    User,
    /// The project's `.claude/settings.json` (shared with the repository).
    Project,
    /// The project's `.claude/settings.local.json`.
    Local,
}

impl InstallScope {
    pub fn name(self) -> &'static str {
        match self {
            InstallScope::User => "user",
            InstallScope::Project => "project",
            InstallScope::Local => "local",
        }
    }

    /// The settings file whose `enabledPlugins` this scope writes.
    pub fn settings_file(self, home: &PluginsHome, project_root: &Path) -> PathBuf {
        match self {
            InstallScope::User => home.user_settings(),
            InstallScope::Project => project_root.join(".claude/settings.json"),
            InstallScope::Local => project_root.join(".claude/settings.local.json"),
        }
    }

    fn project(self, project_root: &Path) -> Option<PathBuf> {
        (self != InstallScope::User).then(|| project_root.to_path_buf())
    }
}

const NETWORK: &str = "cairn does not download plugins; install it with `claude plugin …` \
                       (cairn then loads it), or clone it and add the local folder with \
                       `cairn plugin marketplace add PATH`";

/// Whether a marketplace argument names something remote (`owner/repo`, a URL, a git address).
fn remote(arg: &str) -> bool {
    arg.contains("://")
        || arg.starts_with("git@")
        || arg.ends_with(".git")
        || (!arg.starts_with('.')
            && !arg.starts_with('/')
            && !arg.starts_with('~')
            && arg.matches('/').count() == 1
            && !Path::new(arg).exists())
}

/// The marketplace file of a folder or the file itself.
fn marketplace_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(".claude-plugin").join("marketplace.json")
    } else {
        path.to_path_buf()
    }
}

/// `cairn plugin marketplace add PATH`: the line to print.
pub fn add(home: &PluginsHome, arg: &str, cwd: &Path) -> Result<String, String> {
    if remote(arg) {
        return Err(format!(
            "{arg} is a remote marketplace: adding it needs the network. {NETWORK}"
        ));
    }
    let path = crate::files::paths::expand_path(arg, cwd).map_err(|e| e.to_string())?;
    let file = marketplace_file(&path);
    let doc = registry::read_object(&file)?;
    if doc.is_empty() {
        return Err(format!("{}: no marketplace here", file.display()));
    }
    let name = doc
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| super::manifest::valid_name(n))
        .ok_or_else(|| format!("{}: `name` must be a kebab-case name", file.display()))?;
    let root = match file.parent().and_then(Path::parent) {
        Some(root) if file.parent().is_some_and(|d| d.ends_with(".claude-plugin")) => root,
        _ => file.parent().unwrap_or(&path),
    };
    let root = root
        .canonicalize()
        .map_err(|e| format!("{}: {e}", root.display()))?;
    registry::record_directory_marketplace(home, name, &root)?;
    let count = doc
        .get("plugins")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    Ok(format!(
        "Added marketplace {name} ({count} plugins) from {}",
        root.display()
    ))
}

/// The folder of a known marketplace on this machine.
fn location(home: &PluginsHome, market: &str) -> Result<PathBuf, String> {
    let known = registry::marketplaces(home)?;
    let m = known.iter().find(|m| m.name == market).ok_or_else(|| {
        format!(
            "no marketplace named {market:?} (add one with `cairn plugin marketplace add PATH`)"
        )
    })?;
    let dir = match m.source.get("source").and_then(Value::as_str) {
        Some("directory") => m
            .source
            .get("path")
            .and_then(Value::as_str)
            .map(PathBuf::from),
        _ => None,
    }
    .or_else(|| m.install_location.clone())
    .filter(|d| d.is_dir());
    dir.ok_or_else(|| {
        format!("marketplace {market} is not on this machine (its source is remote): {NETWORK}")
    })
}

/// Split `name@marketplace`.
pub fn split_id(id: &str) -> Result<(&str, &str), String> {
    id.split_once('@')
        .filter(|(n, m)| !n.is_empty() && !m.is_empty())
        .ok_or_else(|| format!("{id:?}: name the plugin as NAME@MARKETPLACE"))
}

/// `cairn plugin install NAME@MARKETPLACE`: copy, record, enable; the line to print.
pub fn install(
    home: &PluginsHome,
    id: &str,
    scope: InstallScope,
    project_root: &Path,
) -> Result<String, String> {
    let (name, market) = split_id(id)?;
    let root = location(home, market)?;
    let file = marketplace_file(&root);
    let doc = registry::read_object(&file)?;
    let entry = doc
        .get("plugins")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
        .ok_or_else(|| format!("marketplace {market} has no plugin named {name:?}"))?;
    let source = match entry.get("source") {
        Some(Value::String(rel)) => {
            let base = doc
                .get("metadata")
                .and_then(|m| m.get("pluginRoot"))
                .and_then(Value::as_str)
                .map_or_else(|| root.clone(), |r| root.join(r));
            let dir = base.join(rel);
            let real = dir
                .canonicalize()
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            let real_root = root.canonicalize().map_err(|e| e.to_string())?;
            if !real.starts_with(&real_root) {
                return Err(format!(
                    "{name}: its source {rel:?} is outside the marketplace; not installed"
                ));
            }
            real
        }
        Some(other) => {
            let kind = other
                .get("source")
                .and_then(Value::as_str)
                .unwrap_or("remote");
            return Err(format!(
                "{name}@{market} comes from a {kind} source: installing it needs the network. {NETWORK}"
            ));
        }
        None => {
            return Err(format!(
                "{name}@{market}: the marketplace gives no `source`"
            ));
        }
    };
    let (manifest, _) = super::manifest::read(&source)?;
    let version = manifest
        .version
        .or_else(|| {
            entry
                .get("version")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| "unknown".into());
    if !super::manifest::valid_name(&version.replace(['.', '+'], "-").to_lowercase()) {
        return Err(format!("{name}: version {version:?} cannot name a folder"));
    }
    let dest = home.cache_dir().join(market).join(name).join(&version);
    if dest.exists() {
        std::fs::remove_dir_all(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    copy_tree(&source, &dest)?;
    let inst = Installation {
        scope: scope.name().into(),
        install_path: dest.clone(),
        version: version.clone(),
        project_path: scope.project(project_root),
    };
    registry::record_installation(home, id, &inst)?;
    let settings = scope.settings_file(home, project_root);
    registry::set_enabled(&settings, id, Some(true))?;
    Ok(format!(
        "Installed {id} v{version} ({} scope) into {}; enabled in {}",
        scope.name(),
        dest.display(),
        settings.display()
    ))
}

/// `cairn plugin enable|disable ID`: set `enabledPlugins[id]` in the scope's settings.
pub fn set_enabled(
    home: &PluginsHome,
    id: &str,
    on: bool,
    scope: InstallScope,
    project_root: &Path,
) -> Result<String, String> {
    split_id(id)?;
    let installed = registry::installations(home)?;
    if on && installed.iter().all(|(i, _)| i != id) {
        return Err(format!("{id} is not installed (cairn plugin install {id})"));
    }
    let settings = scope.settings_file(home, project_root);
    registry::set_enabled(&settings, id, Some(on))?;
    let word = if on { "Enabled" } else { "Disabled" };
    Ok(format!("{word} {id} in {}", settings.display()))
}

/// `cairn plugin uninstall ID`: forget the scope's installation, its `enabledPlugins` entry,
/// and its cached copy when no other installation uses it.
pub fn uninstall(
    home: &PluginsHome,
    id: &str,
    scope: InstallScope,
    project_root: &Path,
) -> Result<String, String> {
    split_id(id)?;
    let project = scope.project(project_root);
    let (path, still_used) =
        registry::remove_installation(home, id, scope.name(), project.as_deref())?;
    let settings = scope.settings_file(home, project_root);
    registry::set_enabled(&settings, id, None)?;
    let cache = home.cache_dir();
    if !still_used && path.starts_with(&cache) && path.is_dir() {
        std::fs::remove_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(format!("Uninstalled {id} ({} scope)", scope.name()))
}

/// The known marketplaces, one line each.
pub fn list_marketplaces(home: &PluginsHome) -> Result<String, String> {
    let known = registry::marketplaces(home)?;
    if known.is_empty() {
        return Ok("No marketplaces.\n".into());
    }
    Ok(known
        .iter()
        .map(|m| {
            let kind = m
                .source
                .get("source")
                .and_then(Value::as_str)
                .unwrap_or("?");
            let at = m
                .install_location
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            format!("{} ({kind}) {at}\n", m.name)
        })
        .collect())
}

/// Copy a plugin's folder (dotfiles too, `.git` not); symlinks are copied as links (reading
/// them later is bounded to the plugin's folder).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let err = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(to).map_err(|e| err(to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| err(from, e))? {
        let entry = entry.map_err(|e| err(from, e))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_name() == ".git" {
            continue;
        }
        let kind = entry.file_type().map_err(|e| err(&src, e))?;
        if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(|e| err(&src, e))?;
            std::os::unix::fs::symlink(target, &dst).map_err(|e| err(&dst, e))?;
        } else if kind.is_file() {
            std::fs::copy(&src, &dst).map_err(|e| err(&src, e))?;
        }
    }
    Ok(())
}
