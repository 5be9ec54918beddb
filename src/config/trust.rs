//! Folder trust as Claude Code records it: `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`
//! when that is set) → `projects["<absolute path>"].hasTrustDialogAccepted`. A folder is trusted
//! when it or one of its ancestors was accepted, so a folder a person trusted in Claude Code is
//! trusted here and the reverse. The same project entry keeps the approval of memory imports
//! from outside the project (`hasClaudeMdExternalIncludesApproved`).
//!
//! Reading fails closed: a file that cannot be read or parsed trusts nothing (and says why).
//! Writing keeps everything else in the file as it was (key order too) and is atomic; a file
//! that is not valid JSON is never overwritten.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Whether what a project's own files configure may run and widen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trust {
    /// Everything the project configures applies.
    Trusted,
    /// The default (fail closed). Only what narrows applies (deny and ask rules, a stricter mode); see
    /// [`super::untrusted`].
    #[default]
    Untrusted,
}

impl Trust {
    pub fn is_trusted(self) -> bool {
        self == Trust::Trusted
    }
}

/// The project entry key that records folder trust.
pub const TRUST_KEY: &str = "hasTrustDialogAccepted";
/// The project entry key that records the approval of memory imports outside the project.
pub const EXTERNAL_IMPORTS_KEY: &str = "hasClaudeMdExternalIncludesApproved";

/// A larger `~/.claude.json` is not read (Claude Code's own stays far below this).
const MAX_BYTES: u64 = 64 << 20;

/// Where Claude Code keeps its global state: `$CLAUDE_CONFIG_DIR/.claude.json`, else
/// `~/.claude.json`; `None` with neither a config dir nor a home.
pub fn claude_json_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    set("CLAUDE_CONFIG_DIR")
        .map(|d| d.join(".claude.json"))
        .or_else(|| set("HOME").map(|h| h.join(".claude.json")))
}

/// What the store records for a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recorded {
    /// The folder or an ancestor was trusted.
    pub trusted: bool,
    /// Memory imports from outside the project were approved for this folder.
    pub external_imports_approved: bool,
}

/// The trust store: `~/.claude.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    pub path: PathBuf,
}

impl TrustStore {
    pub fn new(path: PathBuf) -> TrustStore {
        TrustStore { path }
    }

    /// Whether `dir` (or one of its ancestors) was trusted. An unreadable or unparsable store
    /// trusts nothing: `Err` says why, for a notice.
    pub fn is_trusted(&self, dir: &Path) -> Result<bool, String> {
        self.lookup(dir).map(|r| r.trusted)
    }

    /// Whether memory imports from outside the project were approved for `dir` (this folder
    /// only: an ancestor's approval was given for other files).
    pub fn external_imports_approved(&self, dir: &Path) -> bool {
        self.lookup(dir).is_ok_and(|r| r.external_imports_approved)
    }

    /// Both answers for `dir`, from one read of the store.
    pub fn lookup(&self, dir: &Path) -> Result<Recorded, String> {
        let doc = self.read()?;
        Ok(Recorded {
            trusted: dir.ancestors().any(|a| project_flag(&doc, a, TRUST_KEY)),
            external_imports_approved: project_flag(&doc, dir, EXTERNAL_IMPORTS_KEY),
        })
    }

    /// Record `key: true` in `projects[dir]`, keeping everything else.
    pub fn record(&self, dir: &Path, key: &str) -> Result<(), String> {
        let mut doc = self.read()?;
        let Some(top) = doc.as_object_mut() else {
            return Err(format!("{}: not a JSON object; not changed", self.shown()));
        };
        let projects = top
            .entry("projects")
            .or_insert_with(|| Value::Object(Map::new()));
        let Some(projects) = projects.as_object_mut() else {
            return Err(format!(
                "{}: \"projects\" is not an object; not changed",
                self.shown()
            ));
        };
        let entry = projects
            .entry(dir.to_string_lossy().to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        let Some(entry) = entry.as_object_mut() else {
            return Err(format!(
                "{}: the entry for {} is not an object; not changed",
                self.shown(),
                dir.display()
            ));
        };
        entry.insert(key.to_string(), Value::Bool(true));
        let mut text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        text.push('\n');
        crate::files::atomic::write_atomic(&self.path, text.as_bytes())
            .map(|_| ())
            .map_err(|e| format!("{}: cannot write: {e}", self.shown()))
    }

    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// The document; a missing file is an empty one.
    fn read(&self) -> Result<Value, String> {
        use std::io::Read;
        let file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Value::Object(Map::new()));
            }
            Err(e) => return Err(format!("{}: cannot read: {e}", self.shown())),
        };
        let mut bytes = Vec::new();
        file.take(MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{}: cannot read: {e}", self.shown()))?;
        if bytes.len() as u64 > MAX_BYTES {
            return Err(format!(
                "{}: larger than {} MiB; not read",
                self.shown(),
                MAX_BYTES >> 20
            ));
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Object(Map::new()));
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(v @ Value::Object(_)) => Ok(v),
            Ok(_) => Err(format!("{}: not a JSON object", self.shown())),
            Err(e) => Err(format!("{}: not valid JSON ({e})", self.shown())),
        }
    }
}

/// `projects[dir][key] == true`.
fn project_flag(doc: &Value, dir: &Path, key: &str) -> bool {
    doc.get("projects")
        .and_then(|p| p.get(dir.to_string_lossy().as_ref()))
        .and_then(|e| e.get(key))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(dir: &Path) -> TrustStore {
        TrustStore::new(dir.join(".claude.json"))
    }

    #[test]
    fn a_missing_store_trusts_nothing_and_recording_creates_it() {
        let home = tempfile::tempdir().unwrap();
        let s = store(home.path());
        let project = home.path().join("repo");
        assert_eq!(s.is_trusted(&project), Ok(false));
        s.record(&project, TRUST_KEY).unwrap();
        assert_eq!(s.is_trusted(&project), Ok(true));
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&s.path).unwrap()).unwrap();
        assert_eq!(
            doc["projects"][project.to_string_lossy().as_ref()][TRUST_KEY],
            Value::Bool(true)
        );
    }

    #[test]
    fn an_ancestor_trusted_in_claude_code_trusts_its_subfolders_not_its_parent() {
        let home = tempfile::tempdir().unwrap();
        let s = store(home.path());
        std::fs::write(
            &s.path,
            r#"{"numStartups": 3, "projects": {"/work/trusted": {"hasTrustDialogAccepted": true},
               "/work/declined": {"hasTrustDialogAccepted": false}}}"#,
        )
        .unwrap();
        assert_eq!(s.is_trusted(Path::new("/work/trusted")), Ok(true));
        assert_eq!(s.is_trusted(Path::new("/work/trusted/sub/dir")), Ok(true));
        assert_eq!(s.is_trusted(Path::new("/work")), Ok(false));
        assert_eq!(s.is_trusted(Path::new("/work/declined")), Ok(false));
        assert_eq!(s.is_trusted(Path::new("/work/trusted-not")), Ok(false));
    }

    #[test]
    fn recording_keeps_every_other_key_in_order() {
        let home = tempfile::tempdir().unwrap();
        let s = store(home.path());
        std::fs::write(
            &s.path,
            r#"{"zeta": 1, "projects": {"/a": {"allowedTools": [], "mcpServers": {}}}, "alpha": true}"#,
        )
        .unwrap();
        s.record(Path::new("/a"), TRUST_KEY).unwrap();
        s.record(Path::new("/b"), EXTERNAL_IMPORTS_KEY).unwrap();
        let text = std::fs::read_to_string(&s.path).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["zeta", "projects", "alpha"]);
        let a: Vec<&String> = doc["projects"]["/a"].as_object().unwrap().keys().collect();
        assert_eq!(a, ["allowedTools", "mcpServers", TRUST_KEY]);
        assert!(s.external_imports_approved(Path::new("/b")));
        assert!(!s.external_imports_approved(Path::new("/b/sub")));
        assert_eq!(s.is_trusted(Path::new("/b")), Ok(false));
    }

    #[test]
    fn a_broken_store_trusts_nothing_and_is_never_overwritten() {
        let home = tempfile::tempdir().unwrap();
        let s = store(home.path());
        std::fs::write(&s.path, "{ broken").unwrap();
        let err = s.is_trusted(Path::new("/a")).unwrap_err();
        assert!(err.contains("not valid JSON"), "{err}");
        assert!(s.record(Path::new("/a"), TRUST_KEY).is_err());
        assert_eq!(std::fs::read_to_string(&s.path).unwrap(), "{ broken");
        std::fs::write(&s.path, r#"{"projects": {"/a": true}}"#).unwrap();
        assert_eq!(s.is_trusted(Path::new("/a")), Ok(false));
        assert!(s.record(Path::new("/a"), TRUST_KEY).is_err());
    }

    #[test]
    fn the_config_dir_wins_over_home() {
        let env = |k: &str| match k {
            "HOME" => Some("/home/me".to_string()),
            "CLAUDE_CONFIG_DIR" => Some("/cfg".to_string()),
            _ => None,
        };
        assert_eq!(
            claude_json_path(&env),
            Some(PathBuf::from("/cfg/.claude.json"))
        );
        let env = |k: &str| (k == "HOME").then(|| "/home/me".to_string());
        assert_eq!(
            claude_json_path(&env),
            Some(PathBuf::from("/home/me/.claude.json"))
        );
        assert_eq!(claude_json_path(&|_| None), None);
    }
}
