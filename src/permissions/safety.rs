//! Path safety: the facts the gate needs about one path before any rule may allow it.
//!
//! A path is checked as given, through each symlink hop, and as finally resolved (for a new
//! file: its deepest existing ancestor resolved plus the rest). It is inside the working
//! directories only when every one of those is; it is protected when any of them has a
//! protected directory or file name (below the working directory it is in). Null bytes and
//! unresolvable chains (cycles, too many hops) are errors: such a call is refused. A path a
//! shell command names is also resolved as the kernel does (`link/../x` is the parent of the
//! link's target, not `x`), since no `..` in it is ever removed lexically by the shell.

use std::path::{Component, Path, PathBuf};

use crate::files::paths::{expand_path, resolve_symlink_chain};

/// Directories whose contents configure tools, run code or hold keys and installed
/// dependencies: never auto-approved for writes.
pub const PROTECTED_DIRS: &[&str] = &[
    ".git",
    ".vscode",
    ".idea",
    ".claude",
    ".cairn",
    ".cargo",
    ".husky",
    ".ssh",
    ".gnupg",
    "node_modules",
];
/// Files that configure shells and tools: never auto-approved for writes.
pub const PROTECTED_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".gitconfig",
    ".gitmodules",
    ".npmrc",
    ".mcp.json",
    ".claude.json",
    ".ripgreprc",
];

/// What the gate knows about one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathFacts {
    /// The path as given, every symlink hop, and the resolved path (deduplicated).
    pub candidates: Vec<PathBuf>,
    /// Every candidate is inside a working directory.
    pub inside: bool,
    /// Every candidate is inside the session's data directory (spill files).
    pub in_data_dir: bool,
    /// Some candidate is a protected file or lies in a protected directory.
    pub protected: bool,
    /// The candidates as rules see them: the same, except in a conversation working in its
    /// own copy of the project (an isolated sub-agent's worktree), where a candidate inside
    /// the copy is the project's path it stands for ([`super::roots`]).
    pub rule_candidates: Vec<PathBuf>,
    /// Inside the project but outside the conversation's own copy of it: the real tree an
    /// isolated sub-agent must not write to without the person's say-so.
    pub shadowed: bool,
}

impl PathFacts {
    /// What a deny or ask rule is matched against: every candidate, as given and as rules
    /// see it (a rule on the project's path also blocks its copy in a worktree).
    pub fn blocking_candidates(&self) -> impl Iterator<Item = &PathBuf> {
        self.candidates.iter().chain(
            self.rule_candidates
                .iter()
                .filter(|c| !self.candidates.contains(c)),
        )
    }
}

/// Directories to compare against: as given and canonicalised (a working dir may itself be
/// reached through a symlink, e.g. /tmp on macOS).
#[derive(Debug, Clone, Default)]
pub struct Roots(Vec<PathBuf>);

impl Roots {
    pub fn new<'a>(dirs: impl IntoIterator<Item = &'a PathBuf>) -> Roots {
        let mut out = Vec::new();
        for d in dirs {
            let d = normalize_lexically(d);
            if let Ok(real) = std::fs::canonicalize(&d)
                && !out.contains(&real)
            {
                out.push(real);
            }
            if !out.contains(&d) {
                out.push(d);
            }
        }
        Roots(out)
    }

    /// The root containing `p`, if any.
    pub fn containing(&self, p: &Path) -> Option<&Path> {
        self.0
            .iter()
            .filter(|r| p.starts_with(r))
            .max_by_key(|r| r.components().count())
            .map(PathBuf::as_path)
    }

    pub fn extend(&mut self, other: &Roots) {
        for r in &other.0 {
            if !self.0.contains(r) {
                self.0.push(r.clone());
            }
        }
    }
}

/// Remove `.` and resolve `..` without touching the disk (`/..` stays `/`).
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// Gather the facts for an absolute path.
pub fn path_facts(path: &Path, working: &Roots, data: &Roots) -> Result<PathFacts, String> {
    if path.to_string_lossy().contains('\0') {
        return Err(format!(
            "The path {:?} contains a null byte; such paths are refused.",
            path.to_string_lossy()
        ));
    }
    if !path.is_absolute() {
        return Err(format!(
            "The path {} is not absolute; give an absolute path.",
            path.display()
        ));
    }
    let path = normalize_lexically(path);
    let chain = resolve_symlink_chain(&path).map_err(|e| {
        format!(
            "The path {} cannot be resolved safely ({e}); it is refused.",
            path.display()
        )
    })?;
    let mut candidates = chain.hops;
    if !candidates.contains(&chain.resolved) {
        candidates.push(chain.resolved);
    }
    let inside = candidates.iter().all(|c| working.containing(c).is_some());
    let in_data_dir = candidates.iter().all(|c| data.containing(c).is_some());
    let protected = candidates.iter().any(|c| is_protected(c, working));
    Ok(PathFacts {
        rule_candidates: candidates.clone(),
        candidates,
        inside,
        in_data_dir,
        protected,
        shadowed: false,
    })
}

/// `target` as the shell would open it from `base`, not yet normalised: `..` is kept so that
/// [`shell_path_facts`] can resolve it through symlinks. `~` and `~/x` are the home directory.
pub fn shell_path(base: &Path, target: &str) -> Result<PathBuf, String> {
    if target.contains('\0') {
        return Err("the path contains a null byte".into());
    }
    if target.is_empty() {
        return Ok(base.to_path_buf());
    }
    if target == "~" || target.starts_with("~/") {
        return expand_path(target, base).map_err(|e| e.to_string());
    }
    let p = Path::new(target);
    Ok(if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    })
}

/// [`path_facts`] for a path a shell command names: as given (normalised) and, when it has a
/// `..`, as the kernel resolves it (the longest existing prefix canonicalised, the rest
/// appended). Every candidate of both must be inside for the path to count as inside.
pub fn shell_path_facts(raw: &Path, working: &Roots, data: &Roots) -> Result<PathFacts, String> {
    let mut facts = path_facts(raw, working, data)?;
    let Some(physical) = physical_path(raw) else {
        return Ok(facts);
    };
    if facts.candidates.contains(&physical) {
        return Ok(facts);
    }
    let more = path_facts(&physical, working, data)?;
    for c in more.candidates {
        if !facts.candidates.contains(&c) {
            facts.rule_candidates.push(c.clone());
            facts.candidates.push(c);
        }
    }
    facts.inside &= more.inside;
    facts.in_data_dir &= more.in_data_dir;
    facts.protected |= more.protected;
    Ok(facts)
}

fn physical_path(raw: &Path) -> Option<PathBuf> {
    let comps: Vec<Component<'_>> = raw.components().collect();
    if !comps.contains(&Component::ParentDir) {
        return None;
    }
    (1..=comps.len()).rev().find_map(|n| {
        let prefix: PathBuf = comps[..n].iter().collect();
        let mut out = std::fs::canonicalize(&prefix).ok()?;
        for c in &comps[n..] {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other.as_os_str()),
            }
        }
        Some(out)
    })
}

/// Whether a path names a protected file or lies in a protected directory; only components
/// below the working directory holding it count (a project may itself live under `.cargo`).
pub fn is_protected(path: &Path, working: &Roots) -> bool {
    let rel = working
        .containing(path)
        .and_then(|root| path.strip_prefix(root).ok())
        .unwrap_or(path);
    let names: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let Some((file, dirs)) = names.split_last() else {
        return false;
    };
    PROTECTED_FILES.contains(&file.as_str())
        || is_env_file(file)
        || PROTECTED_DIRS.contains(&file.as_str())
        || dirs.iter().any(|d| PROTECTED_DIRS.contains(&d.as_str()))
}

/// `.env` and `.env.*` (`.env.local`, `.env.production`): files of secrets.
fn is_env_file(name: &str) -> bool {
    name == ".env" || name.starts_with(".env.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_after_a_symlink_is_resolved_as_the_kernel_does() {
        let outside = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let deep = outside.path().join("a");
        std::fs::create_dir(&deep).unwrap();
        std::os::unix::fs::symlink(&deep, project.path().join("link")).unwrap();
        let roots = Roots::new(&[project.path().to_path_buf()]);
        let raw = shell_path(project.path(), "link/../x").unwrap();
        // Lexically `project/x`; really `outside/x`.
        assert!(path_facts(&raw, &roots, &Roots::default()).unwrap().inside);
        let facts = shell_path_facts(&raw, &roots, &Roots::default()).unwrap();
        assert!(!facts.inside, "{facts:?}");
    }

    #[test]
    fn protected_names_below_the_working_dir() {
        let roots = Roots::new(&[PathBuf::from("/home/u/.cargo/proj")]);
        assert!(!is_protected(
            Path::new("/home/u/.cargo/proj/src/a.rs"),
            &roots
        ));
        assert!(is_protected(
            Path::new("/home/u/.cargo/proj/.git/config"),
            &roots
        ));
        assert!(is_protected(Path::new("/home/u/.bashrc"), &roots));
        assert!(is_protected(
            Path::new("/home/u/.cargo/proj/.vscode"),
            &roots
        ));
        for sensitive in [
            ".env",
            ".env.local",
            "web/node_modules/x/index.js",
            ".ssh/config",
        ] {
            let path = Path::new("/home/u/.cargo/proj").join(sensitive);
            assert!(is_protected(&path, &roots), "{sensitive}");
        }
        assert!(is_protected(
            Path::new("/home/u/.gnupg/pubring.kbx"),
            &roots
        ));
        assert!(!is_protected(
            Path::new("/home/u/.cargo/proj/src/env.rs"),
            &roots
        ));
    }
}
