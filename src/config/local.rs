//! Writing "always allow" rules to the project's `.cairn/settings.local.json`.
//!
//! The file is read, the rule merged into `permissions.allow` (once), and the result written
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
    #[error("{path} is not a JSON object ({message}); fix it by hand, the rule was not saved")]
    Invalid { path: PathBuf, message: String },
}

/// The file "always allow" writes to.
pub fn local_settings_path(project_root: &Path) -> PathBuf {
    project_root.join(".cairn").join("settings.local.json")
}

/// Add `rule` to `permissions.allow` of the project's local settings. Returns the file.
pub fn save_allow_rule(project_root: &Path, rule: &str) -> Result<PathBuf, SaveRuleError> {
    let path = local_settings_path(project_root);
    let io = |e: std::io::Error| SaveRuleError::Io {
        path: path.clone(),
        message: e.to_string(),
    };
    let mut root = match std::fs::read_to_string(&path) {
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
    let perms = root
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    if !perms.is_object() {
        *perms = Value::Object(Map::new());
    }
    if let Value::Object(perms) = perms {
        let allow = perms
            .entry("allow")
            .or_insert_with(|| Value::Array(Vec::new()));
        if !allow.is_array() {
            *allow = Value::Array(Vec::new());
        }
        if let Value::Array(list) = allow
            && !list.iter().any(|v| v.as_str() == Some(rule))
        {
            list.push(Value::String(rule.to_string()));
        }
    }
    let dir = path.parent().unwrap_or(project_root);
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
