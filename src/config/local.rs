//! Writing the project's local settings: "always allow" rules to `.cairn/settings.local.json`,
//! and the answers about project MCP servers to Claude Code's `.claude/settings.local.json`
//! (where the notices about unapproved servers tell the person to look; both files are read).
//!
//! The file is read, the entry merged in (once), and the result written
//! atomically (temp file in the same directory, then rename), keeping every other key. A file
//! that is not valid JSON is never overwritten: the person's text is worth more than a rule.
//! A byte order mark at its start is accepted (and not written back).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

#[derive(Debug, thiserror::Error)]
pub enum SaveRuleError {
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("{path} is not a JSON object ({message}); fix it by hand, nothing was saved")]
    Invalid { path: PathBuf, message: String },
}

/// The file "always allow" writes to.
pub fn local_settings_path(project_root: &Path) -> PathBuf {
    project_root.join(".cairn").join("settings.local.json")
}

/// The file the answers about project MCP servers go to (Claude Code's).
pub fn mcp_choice_path(project_root: &Path) -> PathBuf {
    project_root.join(".claude").join("settings.local.json")
}

/// Add `rule` to `permissions.allow` of the project's local settings. Returns the file.
pub fn save_allow_rule(project_root: &Path, rule: &str) -> Result<PathBuf, SaveRuleError> {
    update(local_settings_path(project_root), |root| {
        in_object(root, "permissions", |perms| {
            push_unique(perms, "allow", rule)
        });
    })
}

/// An answer about a project MCP server (`.mcp.json`), as local settings remember it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpChoice {
    /// Added to `enabledMcpjsonServers` (and taken from `disabledMcpjsonServers`).
    Enable,
    /// `enableAllProjectMcpServers: true`.
    EnableAll,
    /// Added to `disabledMcpjsonServers`.
    Disable,
}

/// Remember `choice` for the project server `name` in the project's local settings (the
/// checked-in settings are never read for these keys). Returns the file.
pub fn save_mcp_choice(
    project_root: &Path,
    name: &str,
    choice: McpChoice,
) -> Result<PathBuf, SaveRuleError> {
    update(mcp_choice_path(project_root), |root| match choice {
        McpChoice::Enable => {
            // Turned on again after `/mcp` turned it off.
            if let Some(Value::Array(off)) = root.get_mut("disabledMcpjsonServers") {
                off.retain(|v| v.as_str() != Some(name));
            }
            push_unique(root, "enabledMcpjsonServers", name)
        }
        McpChoice::EnableAll => {
            root.insert("enableAllProjectMcpServers".into(), Value::Bool(true));
        }
        McpChoice::Disable => push_unique(root, "disabledMcpjsonServers", name),
    })
}

/// Run `change` on the object `root[key]` (made one, replacing whatever else was there).
fn in_object(
    root: &mut Map<String, Value>,
    key: &str,
    change: impl FnOnce(&mut Map<String, Value>),
) {
    let value = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    if let Value::Object(m) = value {
        change(m);
    }
}

/// Append `item` to the array `root[key]` unless it is there (a non-array is replaced).
fn push_unique(root: &mut Map<String, Value>, key: &str, item: &str) {
    let list = root.entry(key).or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    if let Value::Array(list) = list
        && !list.iter().any(|v| v.as_str() == Some(item))
    {
        list.push(Value::String(item.to_string()));
    }
}

/// Read the local settings file `path` (a missing or blank file is `{}`), let `change` edit
/// them, and write them back atomically. A file that is not a JSON object is left alone.
fn update(
    path: PathBuf,
    change: impl FnOnce(&mut Map<String, Value>),
) -> Result<PathBuf, SaveRuleError> {
    let io = |e: std::io::Error| SaveRuleError::Io {
        path: path.clone(),
        message: e.to_string(),
    };
    let read = crate::config::layers::read_regular(&path)
        .and_then(|b| String::from_utf8(b).map_err(std::io::Error::other));
    let mut root = match read {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(crate::config::layers::strip_bom(&text)) {
            Ok(Value::Object(m)) => m,
            Ok(_) => {
                return Err(SaveRuleError::Invalid {
                    path,
                    message: "not an object".into(),
                });
            }
            Err(e) => {
                return Err(SaveRuleError::Invalid {
                    path: path.clone(),
                    message: e.to_string(),
                });
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => return Err(io(e)),
    };
    change(&mut root);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut text =
        serde_json::to_string_pretty(&Value::Object(root)).map_err(|e| SaveRuleError::Io {
            path: path.clone(),
            message: e.to_string(),
        })?;
    text.push('\n');
    let tmp = dir.join(format!(".settings.local.json.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_choices_are_merged_into_claude_codes_local_settings_and_read_back_as_approval() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        let claude_local = root.join(".claude/settings.local.json");
        std::fs::write(
            &claude_local,
            r#"{"permissions": {"allow": ["Bash(ls)"]}, "model": "opus"}"#,
        )
        .unwrap();
        save_mcp_choice(root, "web", McpChoice::Enable).unwrap();
        save_mcp_choice(root, "web", McpChoice::Enable).unwrap();
        save_mcp_choice(root, "evil", McpChoice::Disable).unwrap();
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&claude_local).unwrap()).unwrap();
        assert_eq!(doc["enabledMcpjsonServers"], serde_json::json!(["web"]));
        assert_eq!(doc["disabledMcpjsonServers"], serde_json::json!(["evil"]));
        assert_eq!(doc["permissions"]["allow"], serde_json::json!(["Bash(ls)"]));
        assert_eq!(doc["model"], "opus");
        assert!(!local_settings_path(root).exists(), "nothing under .cairn");
        // "Always allow" rules still go to cairn's own file.
        save_allow_rule(root, "Read").unwrap();
        let own: Value =
            serde_json::from_str(&std::fs::read_to_string(local_settings_path(root)).unwrap())
                .unwrap();
        assert_eq!(own["permissions"]["allow"], serde_json::json!(["Read"]));
        let home = tempfile::tempdir().unwrap();
        let home_s = home.path().display().to_string();
        let env = |k: &str| (k == "HOME").then(|| home_s.clone());
        let settings =
            crate::config::load_settings(root, None, &env, crate::config::Trust::Trusted);
        assert_eq!(settings.mcp_approval.enabled, ["web"]);
        assert_eq!(settings.mcp_approval.disabled, ["evil"]);
        assert!(!settings.mcp_approval.enable_all);
        save_mcp_choice(root, "x", McpChoice::EnableAll).unwrap();
        let settings =
            crate::config::load_settings(root, None, &env, crate::config::Trust::Trusted);
        assert!(settings.mcp_approval.enable_all);
    }

    #[test]
    fn a_file_that_is_not_json_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::write(mcp_choice_path(root), "{ my notes").unwrap();
        let err = save_mcp_choice(root, "web", McpChoice::Enable).unwrap_err();
        assert!(err.to_string().contains("nothing was saved"), "{err}");
        assert_eq!(
            std::fs::read_to_string(mcp_choice_path(root)).unwrap(),
            "{ my notes"
        );
    }
}
