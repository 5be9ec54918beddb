//! Trusting a test project as a person does once: `projects[<path>].hasTrustDialogAccepted`
//! in `<home>/.claude.json` (Claude Code's record, which cairn reads). Harnesses that run the
//! binary on a project whose settings they mean to apply call this first.
#![allow(dead_code)]

use std::path::Path;

/// Record `project` (as the binary will see it: canonical) as trusted under `home`, keeping
/// whatever else `<home>/.claude.json` holds.
pub fn trust_folder(home: &Path, project: &Path) {
    let project = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    let path = home.join(".claude.json");
    let mut doc: serde_json::Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    doc["projects"][project.to_string_lossy().as_ref()]["hasTrustDialogAccepted"] =
        serde_json::Value::Bool(true);
    std::fs::write(&path, doc.to_string()).unwrap();
}
