//! Writes to settings files by the model's file tools. A settings file holds the deny rules and
//! hooks that bound the model; a write that leaves it unparsable (the layer is then lost, and
//! the gate fails closed for the rest of the session) or that drops a deny rule is refused
//! before anything is written, in every permission mode, bypassPermissions included. The new
//! content is read exactly as the layers read a file ([`parse_source`] and the merge), so what
//! is refused is what loading would break.
//!
//! Which files: every file the settings layers read ([`super::LoadedSettings::files`]), and,
//! wherever they are, files shaped like one (`.claude/settings.json`,
//! `.claude/settings.local.json`, the same under `.cairn/`, `managed-settings.json` and
//! `managed-settings.d/*.json`), so another project's settings are guarded too.

use crate::files::paths::normalize_lexically;
use std::path::{Path, PathBuf};

use super::layers::{Layer, Origin, Problems, parse_source};
use super::settings::{LoadedSettings, merge_source};
use crate::rules::RuleContext;

/// The settings files of a session, for checking writes to them.
#[derive(Debug, Clone, Default)]
pub struct SettingsFiles {
    files: Vec<PathBuf>,
}

impl SettingsFiles {
    pub fn new(files: Vec<PathBuf>) -> SettingsFiles {
        let files = files.iter().map(|f| normalize_lexically(f)).collect();
        SettingsFiles { files }
    }

    /// Whether `path` is a settings file: one the layers read, or shaped like one.
    pub fn covers(&self, path: &Path) -> bool {
        let path = normalize_lexically(path);
        if self.files.contains(&path) || shaped_like_settings(&path) {
            return true;
        }
        // The same file reached through a symlinked directory.
        let resolved = path
            .parent()
            .and_then(|dir| std::fs::canonicalize(dir).ok())
            .zip(path.file_name())
            .map(|(dir, name)| dir.join(name));
        resolved.is_some_and(|r| {
            self.files
                .iter()
                .any(|f| f == &r || canonical_file(f).is_some_and(|c| c == r))
        })
    }

    /// Ok unless `path` is a settings file and replacing `before` with `after` would leave it
    /// unusable or drop deny rules (see the module docs); the error says which, for the model.
    pub fn check(&self, path: &Path, before: &str, after: &str) -> Result<(), String> {
        if !self.covers(path) {
            return Ok(());
        }
        check_replacement(&path.display().to_string(), before, after)
    }
}

/// The check of [`SettingsFiles::check`] for a file named `label`, whatever its path.
pub fn check_replacement(label: &str, before: &str, after: &str) -> Result<(), String> {
    let (new_rules, problems) = read(label, after);
    if !problems.broken.is_empty() {
        return Err(format!(
            "Refused: this would leave the settings file {label} unusable, and cairn would \
             lose its deny rules and hooks: {}. Nothing was written; write valid settings JSON.",
            problems.broken.join("; ")
        ));
    }
    let (old_rules, _) = read(label, before);
    let dropped: Vec<String> = old_rules
        .iter()
        .filter(|r| !new_rules.contains(r))
        .map(|r| format!("`{r}`"))
        .collect();
    if !dropped.is_empty() {
        return Err(format!(
            "Refused: this would remove the deny rule{} {} from the settings file {label}. \
             Deny rules are the user's to remove; nothing was written. Keep them, or ask the \
             user to remove them.",
            if dropped.len() == 1 { "" } else { "s" },
            dropped.join(", ")
        ));
    }
    Ok(())
}

/// The deny rules of one document and the problems loading it would have.
fn read(label: &str, text: &str) -> (Vec<String>, Problems) {
    let mut problems = Problems::default();
    let origin = Origin {
        layer: Layer::Project,
        source: label.to_string(),
    };
    let Some(source) = parse_source(text.to_string(), origin, &mut problems) else {
        return (Vec::new(), problems);
    };
    let dir = Path::new(label).parent().unwrap_or(Path::new("/"));
    let ctx = RuleContext {
        root: dir.to_path_buf(),
        cwd: dir.to_path_buf(),
        home: None,
    };
    let mut loaded = LoadedSettings::default();
    merge_source(&mut loaded, &source, &ctx, &mut problems);
    let deny = loaded
        .permissions
        .deny
        .iter()
        .map(|r| r.rule.text.clone())
        .collect();
    (deny, problems)
}

fn shaped_like_settings(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let dir = path
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    (matches!(dir, ".claude" | ".cairn") && matches!(name, "settings.json" | "settings.local.json"))
        || name == "managed-settings.json"
        || (dir == "managed-settings.d" && name.ends_with(".json"))
}

fn canonical_file(path: &Path) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(path.parent()?).ok()?;
    Some(dir.join(path.file_name()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WITH_DENY: &str =
        "{\n  \"permissions\": {\n    \"deny\": [\"Bash(curl *)\", \"Read(./.env)\"]\n  }\n}\n";

    #[test]
    fn unparsable_content_is_refused_with_where() {
        let err = check_replacement("/p/.claude/settings.json", WITH_DENY, "{\n  \"a\": 1,\n}")
            .unwrap_err();
        assert_eq!(
            err,
            "Refused: this would leave the settings file /p/.claude/settings.json unusable, and \
             cairn would lose its deny rules and hooks: /p/.claude/settings.json:3:1: invalid \
             JSON: trailing comma; the file cannot be used. Nothing was written; \
             write valid settings JSON."
        );
        assert!(check_replacement("f", "", "[1]").is_err());
        assert!(check_replacement("f", "", "{\"permissions\": {\"deny\": \"Bash\"}}").is_err());
        assert!(check_replacement("f", "", "{\"permissions\": []}").is_err());
    }

    #[test]
    fn dropping_a_deny_rule_is_refused_by_name() {
        let kept = "{\"permissions\": {\"deny\": [\"Read(./.env)\", \"Bash(curl *)\"], \
                    \"allow\": [\"Bash(ls)\"]}, \"model\": \"x\"}";
        assert_eq!(check_replacement("f", WITH_DENY, kept), Ok(()));
        let err = check_replacement(
            "/p/.claude/settings.json",
            WITH_DENY,
            "{\"permissions\": {\"deny\": [\"Read(./.env)\"]}}",
        )
        .unwrap_err();
        assert_eq!(
            err,
            "Refused: this would remove the deny rule `Bash(curl *)` from the settings file \
             /p/.claude/settings.json. Deny rules are the user's to remove; nothing was \
             written. Keep them, or ask the user to remove them."
        );
        let err = check_replacement("f", WITH_DENY, "").unwrap_err();
        assert!(
            err.contains("the deny rules `Bash(curl *)`, `Read(./.env)` from"),
            "{err}"
        );
        // A file that was already broken had no rules in force; fixing it is fine.
        assert_eq!(check_replacement("f", "{oops", "{}"), Ok(()));
        assert_eq!(check_replacement("f", "", "{}"), Ok(()));
    }

    #[test]
    fn which_files_are_settings() {
        let files = SettingsFiles::new(vec![PathBuf::from("/home/u/.config/cairn/settings.json")]);
        for yes in [
            "/home/u/.config/cairn/settings.json",
            "/home/u/.config/cairn/./settings.json",
            "/p/.claude/settings.json",
            "/p/.claude/settings.local.json",
            "/p/sub/.cairn/settings.json",
            "/etc/claude-code/managed-settings.json",
            "/etc/claude-code/managed-settings.d/10-x.json",
        ] {
            assert!(files.covers(Path::new(yes)), "{yes}");
        }
        for no in [
            "/p/settings.json",
            "/p/.claude/agents/x.md",
            "/p/.vscode/settings.json",
            "/p/.claude/settings.json.bak",
        ] {
            assert!(!files.covers(Path::new(no)), "{no}");
        }
        assert_eq!(
            files.check(Path::new("/p/a.json"), WITH_DENY, "{oops"),
            Ok(())
        );
    }
}
