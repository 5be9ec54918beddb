//! The files Claude Code keeps its plugins in, read and written as it does, so that cairn and
//! Claude Code see the same state: under `~/.claude/plugins` (`$CLAUDE_CONFIG_DIR/plugins`),
//! `installed_plugins.json` (version 2: `{"version": 2, "plugins": {"name@marketplace":
//! [{"scope", "installPath", "version", "installedAt", "lastUpdated", "projectPath"?}]}}`),
//! `known_marketplaces.json` (`{"name": {"source": {"source": "directory", "path"},
//! "installLocation", "lastUpdated"}}`) and the copies in `cache/<marketplace>/<plugin>/<version>/`.
//! Writes keep every key cairn does not know, and are atomic. Files are bounded: a registry
//! over [`MAX_REGISTRY_BYTES`] is refused rather than read.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The most bytes a registry or settings file is read from.
pub const MAX_REGISTRY_BYTES: u64 = 4 * 1024 * 1024;

/// Where Claude Code keeps plugins: `$CLAUDE_CONFIG_DIR` (else `~/.claude`) and its `plugins/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginsHome {
    /// `~/.claude` (or `$CLAUDE_CONFIG_DIR`): the user settings file lives here.
    pub config_dir: PathBuf,
}

impl PluginsHome {
    /// From the environment; `None` with neither `CLAUDE_CONFIG_DIR` nor `HOME`.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Option<PluginsHome> {
        let set = |k: &str| env(k).filter(|v| !v.is_empty());
        let config_dir = match (set("CLAUDE_CONFIG_DIR"), set("HOME")) {
            (Some(dir), _) => PathBuf::from(dir),
            (None, Some(home)) => PathBuf::from(home).join(".claude"),
            (None, None) => return None,
        };
        Some(PluginsHome { config_dir })
    }
    pub fn dir(&self) -> PathBuf {
        self.config_dir.join("plugins")
    }
    pub fn installed_file(&self) -> PathBuf {
        self.dir().join("installed_plugins.json")
    }
    pub fn marketplaces_file(&self) -> PathBuf {
        self.dir().join("known_marketplaces.json")
    }
    pub fn cache_dir(&self) -> PathBuf {
        self.dir().join("cache")
    }
    /// The user's settings file (where `enabledPlugins` of the user scope lives).
    pub fn user_settings(&self) -> PathBuf {
        self.config_dir.join("settings.json")
    }
}

/// One installation of a plugin, as `installed_plugins.json` records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installation {
    /// `user`, `project` or `local`.
    pub scope: String,
    pub install_path: PathBuf,
    pub version: String,
    /// For the project and local scopes: the project it was installed for.
    pub project_path: Option<PathBuf>,
}

/// A JSON object file: `{}` when missing or blank; an error naming the file otherwise.
pub fn read_object(path: &Path) -> Result<Map<String, Value>, String> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut text = String::new();
    file.take(MAX_REGISTRY_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > MAX_REGISTRY_BYTES {
        return Err(format!(
            "{}: larger than {MAX_REGISTRY_BYTES} bytes; not read",
            path.display()
        ));
    }
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}')) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(format!("{}: not a JSON object", path.display())),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Write `doc` to `path` atomically (pretty, with a final newline), creating its folder.
pub fn write_object(path: &Path, doc: Map<String, Value>) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(doc))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    text.push('\n');
    crate::files::atomic::write_atomic(path, text.as_bytes())
        .map(|_| ())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Read `path`, let `change` edit it, write it back.
pub fn update_object(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<(), String>,
) -> Result<(), String> {
    let mut doc = read_object(path)?;
    change(&mut doc)?;
    write_object(path, doc)
}

/// Every installation in `installed_plugins.json`, by plugin id (a version 1 file, a flat map
/// of single entries, is read too). Entries that cannot be read are skipped.
pub fn installations(home: &PluginsHome) -> Result<Vec<(String, Installation)>, String> {
    let doc = read_object(&home.installed_file())?;
    let plugins = match doc.get("version").and_then(Value::as_u64) {
        Some(2..) => doc.get("plugins").and_then(Value::as_object).cloned(),
        _ => Some(doc.clone()),
    }
    .unwrap_or_default();
    let mut out = Vec::new();
    for (id, entries) in plugins {
        let list = match entries {
            Value::Array(items) => items,
            one @ Value::Object(_) => vec![one],
            _ => continue,
        };
        for entry in list {
            let text = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_string);
            let Some(path) = text("installPath") else {
                continue;
            };
            out.push((
                id.clone(),
                Installation {
                    scope: text("scope").unwrap_or_else(|| "user".into()),
                    install_path: PathBuf::from(path),
                    version: text("version").unwrap_or_else(|| "unknown".into()),
                    project_path: text("projectPath").map(PathBuf::from),
                },
            ));
        }
    }
    Ok(out)
}

/// The `plugins` map of a version 2 document (a version 1 one is upgraded in place).
fn plugins_map(doc: &mut Map<String, Value>) -> &mut Map<String, Value> {
    if doc.get("version").and_then(Value::as_u64) != Some(2) {
        let old: Map<String, Value> = std::mem::take(doc);
        let upgraded = old
            .into_iter()
            .filter(|(_, v)| v.is_object())
            .map(|(k, v)| (k, Value::Array(vec![v])))
            .collect();
        doc.insert("version".into(), Value::from(2));
        doc.insert("plugins".into(), Value::Object(upgraded));
    }
    if !doc.get("plugins").is_some_and(Value::is_object) {
        doc.insert("plugins".into(), Value::Object(Map::new()));
    }
    match doc.get_mut("plugins") {
        Some(Value::Object(m)) => m,
        // Just made an object above.
        _ => unreachable!("plugins is an object"),
    }
}

/// Whether an entry is the installation of `scope` (for `project`: for `project`).
fn same_place(entry: &Value, scope: &str, project: Option<&Path>) -> bool {
    let text = |k: &str| entry.get(k).and_then(Value::as_str);
    text("scope").unwrap_or("user") == scope
        && (scope == "user" || text("projectPath").map(Path::new) == project)
}

/// Record an installation of `id`, replacing the one of the same scope (and project).
pub fn record_installation(
    home: &PluginsHome,
    id: &str,
    inst: &Installation,
) -> Result<(), String> {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    update_object(&home.installed_file(), |doc| {
        let plugins = plugins_map(doc);
        let list = plugins
            .entry(id.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        if !list.is_array() {
            *list = Value::Array(Vec::new());
        }
        let Value::Array(items) = list else {
            return Ok(());
        };
        let project = inst.project_path.as_deref();
        let installed_at = items
            .iter()
            .find(|e| same_place(e, &inst.scope, project))
            .and_then(|e| e.get("installedAt").cloned())
            .unwrap_or_else(|| Value::from(now.clone()));
        items.retain(|e| !same_place(e, &inst.scope, project));
        let mut entry = Map::new();
        entry.insert("scope".into(), Value::from(inst.scope.clone()));
        if let Some(p) = project {
            entry.insert("projectPath".into(), Value::from(p.display().to_string()));
        }
        let path = inst.install_path.display().to_string();
        entry.insert("installPath".into(), Value::from(path));
        entry.insert("version".into(), Value::from(inst.version.clone()));
        entry.insert("installedAt".into(), installed_at);
        entry.insert("lastUpdated".into(), Value::from(now));
        items.push(Value::Object(entry));
        Ok(())
    })
}

/// Remove the installation of `id` in `scope` (and project); the removed entry's install path,
/// and whether another installation still uses it.
pub fn remove_installation(
    home: &PluginsHome,
    id: &str,
    scope: &str,
    project: Option<&Path>,
) -> Result<(PathBuf, bool), String> {
    let mut removed = None;
    update_object(&home.installed_file(), |doc| {
        let plugins = plugins_map(doc);
        let Some(Value::Array(items)) = plugins.get_mut(id) else {
            return Err(format!("{id} is not installed"));
        };
        let Some(at) = items.iter().position(|e| same_place(e, scope, project)) else {
            return Err(format!("{id} is not installed in the {scope} scope"));
        };
        let entry = items.remove(at);
        removed = entry
            .get("installPath")
            .and_then(Value::as_str)
            .map(PathBuf::from);
        if items.is_empty() {
            plugins.remove(id);
        }
        Ok(())
    })?;
    let path = removed.unwrap_or_default();
    let still_used = installations(home)?
        .iter()
        .any(|(_, i)| i.install_path == path);
    Ok((path, still_used))
}

/// A marketplace `known_marketplaces.json` knows: its name, its source object and where its
/// files are on this machine.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownMarketplace {
    pub name: String,
    pub source: Value,
    pub install_location: Option<PathBuf>,
}

pub fn marketplaces(home: &PluginsHome) -> Result<Vec<KnownMarketplace>, String> {
    let doc = read_object(&home.marketplaces_file())?;
    Ok(doc
        .into_iter()
        .map(|(name, v)| KnownMarketplace {
            source: v.get("source").cloned().unwrap_or(Value::Null),
            install_location: v
                .get("installLocation")
                .and_then(Value::as_str)
                .map(PathBuf::from),
            name,
        })
        .collect())
}

/// Record a local directory marketplace as Claude Code does.
pub fn record_directory_marketplace(
    home: &PluginsHome,
    name: &str,
    dir: &Path,
) -> Result<(), String> {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let path = dir.display().to_string();
    update_object(&home.marketplaces_file(), |doc| {
        doc.insert(
            name.to_string(),
            serde_json::json!({
                "source": {"source": "directory", "path": path},
                "installLocation": path,
                "lastUpdated": now,
            }),
        );
        Ok(())
    })
}

pub fn remove_marketplace(home: &PluginsHome, name: &str) -> Result<(), String> {
    update_object(&home.marketplaces_file(), |doc| {
        doc.remove(name)
            .map(|_| ())
            .ok_or_else(|| format!("no marketplace named {name:?}"))
    })
}

/// Set (`Some`) or remove (`None`) `enabledPlugins[id]` in a settings file, keeping the rest.
pub fn set_enabled(settings_file: &Path, id: &str, on: Option<bool>) -> Result<(), String> {
    update_object(settings_file, |doc| {
        let map = doc
            .entry("enabledPlugins")
            .or_insert_with(|| Value::Object(Map::new()));
        if !map.is_object() {
            return Err(format!(
                "{}: `enabledPlugins` is not an object; not changed",
                settings_file.display()
            ));
        }
        if let Value::Object(m) = map {
            match on {
                Some(b) => {
                    m.insert(id.to_string(), Value::Bool(b));
                }
                None => {
                    m.remove(id);
                }
            }
        }
        Ok(())
    })
}
