//! Where settings files live and how one is read: the layers (managed, `--settings`, project
//! local, project, user), the project root, and reading a file into JSON with diagnostics that
//! name the file and line. Reading never fails the program: a broken file becomes a diagnostic.
//! A file that exists but cannot be used (unreadable, not UTF-8, not JSON, not an object) is
//! also recorded as *broken* ([`Problems::broken`]): it may hold deny rules, so the permission
//! gate fails closed until it is fixed. A UTF-8 byte order mark at the start is accepted.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// A settings layer, highest precedence first (the derive order is the precedence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    Managed,
    /// `--settings`, `--allowedTools`, `--disallowedTools`.
    Cli,
    ProjectLocal,
    Project,
    User,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Managed => "managed",
            Layer::Cli => "command line",
            Layer::ProjectLocal => "project local",
            Layer::Project => "project",
            Layer::User => "user",
        }
    }
}

/// Where a value came from: the layer and the file (or flag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub layer: Layer,
    /// A file path, or the flag (`--settings (inline JSON)`, `--allowedTools`).
    pub source: String,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.layer.name(), self.source)
    }
}

/// The candidate files of every layer, in precedence order within each layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsPaths {
    pub managed: Vec<PathBuf>,
    pub project_local: Vec<PathBuf>,
    pub project: Vec<PathBuf>,
    pub user: Vec<PathBuf>,
}

impl SettingsPaths {
    /// The standard places, for a project root and an environment lookup.
    pub fn standard(project_root: &Path, env: &dyn Fn(&str) -> Option<String>) -> SettingsPaths {
        let mut managed = Vec::new();
        for dir in ["/etc/cairn", "/etc/claude-code"] {
            managed.extend(managed_files(Path::new(dir)));
        }
        SettingsPaths {
            managed,
            project_local: vec![
                project_root.join(".cairn/settings.local.json"),
                project_root.join(".claude/settings.local.json"),
            ],
            project: vec![
                project_root.join(".cairn/settings.json"),
                project_root.join(".claude/settings.json"),
            ],
            user: user_files(env),
        }
    }
}

/// `managed-settings.json` then `managed-settings.d/*.json` (sorted) of one directory.
pub fn managed_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.join("managed-settings.json")];
    if let Ok(entries) = std::fs::read_dir(dir.join("managed-settings.d")) {
        let mut extra: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        extra.sort();
        out.extend(extra);
    }
    out
}

fn non_empty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.is_empty())
}

/// `$XDG_CONFIG_HOME/cairn/settings.json` (or `~/.config/...`), then Claude's user settings.
fn user_files(env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let home = non_empty(env("HOME")).map(PathBuf::from);
    let mut out = Vec::new();
    match (non_empty(env("XDG_CONFIG_HOME")), &home) {
        (Some(xdg), _) => out.push(PathBuf::from(xdg).join("cairn/settings.json")),
        (None, Some(h)) => out.push(h.join(".config/cairn/settings.json")),
        (None, None) => {}
    }
    match (non_empty(env("CLAUDE_CONFIG_DIR")), &home) {
        (Some(dir), _) => out.push(PathBuf::from(dir).join("settings.json")),
        (None, Some(h)) => out.push(h.join(".claude/settings.json")),
        (None, None) => {}
    }
    out
}

/// The nearest ancestor of `dir` holding `.git`, `.cairn` or `.claude`; `dir` itself when none.
/// The home directory only counts when it is `dir` itself: `~/.claude` holds user settings,
/// not a project.
pub fn project_root(dir: &Path, home: Option<&Path>) -> PathBuf {
    for ancestor in dir.ancestors() {
        if Some(ancestor) == home && ancestor != dir {
            break;
        }
        if [".git", ".cairn", ".claude"]
            .iter()
            .any(|m| ancestor.join(m).exists())
        {
            return ancestor.to_path_buf();
        }
    }
    dir.to_path_buf()
}

/// One settings document, read and parsed.
#[derive(Debug, Clone)]
pub struct SettingsSource {
    pub origin: Origin,
    pub text: String,
    pub value: Value,
}

impl SettingsSource {
    /// The 1-based line where `needle` first appears in the text (for diagnostics); a quoted
    /// JSON key (`"PreToolUse"`) is looked for bare too, as YAML (an agent's hooks) writes it.
    pub fn line_of(&self, needle: &str) -> Option<usize> {
        let bare = needle
            .strip_prefix('"')
            .and_then(|n| n.strip_suffix('"'))
            .filter(|n| !n.is_empty());
        self.text
            .find(needle)
            .or_else(|| bare.and_then(|n| self.text.find(n)))
            .map(|at| self.text[..at].matches('\n').count() + 1)
    }

    /// `file:line: message` (or `file: message` when the line is unknown).
    pub fn diagnostic(&self, needle: &str, message: &str) -> String {
        match self.line_of(needle) {
            Some(line) => format!("{}:{line}: {message}", self.origin.source),
            None => format!("{}: {message}", self.origin.source),
        }
    }
}

/// What went wrong while reading and merging settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problems {
    /// Every problem, `file:line: what is wrong`, in the order found.
    pub notes: Vec<String>,
    /// The problems that may have hidden a restriction (a deny or ask rule, a PreToolUse
    /// hook): each is also in `notes`. Any of these puts the gate in its fail-closed state.
    pub broken: Vec<String>,
}

impl Problems {
    /// A problem that only loses something harmless to lose (a model name, an allow rule).
    pub fn push(&mut self, message: String) {
        self.notes.push(message);
    }

    /// A problem that may have lost a restriction.
    pub fn broken(&mut self, message: String) {
        self.notes.push(message.clone());
        self.broken.push(message);
    }
}

/// Editors on some systems save a UTF-8 byte order mark; JSON parsers reject it.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Read a file; `None` when it does not exist (silently) or cannot be used (a broken problem:
/// a file that exists may hold deny rules).
pub fn read_source(path: &Path, layer: Layer, problems: &mut Problems) -> Option<SettingsSource> {
    let text = match read_regular(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let line = e.as_bytes()[..at].iter().filter(|b| **b == b'\n').count() + 1;
                problems.broken(format!(
                    "{}:{line}: settings are not valid UTF-8 (byte {at}); the file cannot be used",
                    path.display()
                ));
                return None;
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            problems.broken(format!(
                "{}: cannot read settings: {e}; the file cannot be used",
                path.display()
            ));
            return None;
        }
    };
    parse_source(
        text,
        Origin {
            layer,
            source: path.display().to_string(),
        },
        problems,
    )
}

/// The most bytes a settings file may have (Claude Code's are a few KiB).
const MAX_SETTINGS_BYTES: u64 = 16 << 20;

/// The bytes of `path` when it is a regular file of at most [`MAX_SETTINGS_BYTES`]: a FIFO
/// would block the start forever and a device (a link to `/dev/zero`) would never end, and a
/// repository can hold either.
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, Read};
    if !std::fs::metadata(path)?.is_file() {
        return Err(Error::other("not a regular file (a FIFO or a device?)"));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_SETTINGS_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SETTINGS_BYTES {
        return Err(Error::other(format!(
            "larger than {} MiB",
            MAX_SETTINGS_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// Parse a settings document; a JSON error or a non-object is a broken problem. An empty
/// document is no settings at all (a fresh `touch`ed file), not a problem.
pub fn parse_source(
    text: String,
    origin: Origin,
    problems: &mut Problems,
) -> Option<SettingsSource> {
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    if text.trim().is_empty() {
        return None;
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(value @ Value::Object(_)) => Some(SettingsSource {
            origin,
            text,
            value,
        }),
        Ok(_) => {
            problems.broken(format!(
                "{}:1: settings must be a JSON object; the file cannot be used",
                origin.source
            ));
            None
        }
        Err(e) => {
            problems.broken(format!(
                "{}:{}:{}: invalid JSON: {}; the file cannot be used",
                origin.source,
                e.line(),
                e.column(),
                strip_position(&e.to_string())
            ));
            None
        }
    }
}

/// serde_json appends " at line L column C"; the diagnostic already says where.
fn strip_position(message: &str) -> &str {
    message
        .find(" at line ")
        .map_or(message, |at| &message[..at])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_file_that_is_a_fifo_or_a_device_is_broken_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("settings.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let zero = dir.path().join("settings.local.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        for path in [&fifo, &zero] {
            let mut problems = Problems::default();
            assert!(read_source(path, Layer::Project, &mut problems).is_none());
            assert_eq!(problems.broken.len(), 1, "{:?}", problems);
            assert!(
                problems.broken[0].contains("not a regular file"),
                "{:?}",
                problems
            );
        }
    }
}
