//! Memory files, as Claude Code reads them: the person's standing instructions, loaded once when
//! a session starts and placed in the system prompt (so the cached prefix never moves). In order:
//! managed (`/etc/claude-code/CLAUDE.md`), user (`~/.claude/CLAUDE.md`), then for each directory
//! from the outermost ancestor of the working directory down to it: `CLAUDE.md`,
//! `.claude/CLAUDE.md` and `AGENTS.md` (Codex's name; both are read when both exist), and last
//! the `CLAUDE.local.md` files. `@path` lines import other files (relative to the importing
//! file, `~/` or absolute), five levels deep at most, never from inside code; a missing file or
//! a cycle is reported and skipped. Memory files of directories below the working directory are
//! not read at start: [`nested_dirs`] and [`files_in`] name those a Read of a file there brings in, and the
//! Read tool passes them to the model as a reminder. Nothing here panics on any file.

use std::path::{Path, PathBuf};

/// Imports nest at most this deep.
pub const MAX_IMPORT_DEPTH: usize = 5;
/// A memory file larger than this is skipped (reported).
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Where a memory file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Managed,
    User,
    Project,
    Local,
    /// Imported (`@path`) by another memory file.
    Imported,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Managed => "managed",
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Imported => "imported",
        }
    }
}

/// One loaded file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    pub path: PathBuf,
    pub scope: Scope,
    pub text: String,
}

/// The memory of a session, and what could not be loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Memory {
    pub files: Vec<MemoryFile>,
    /// One line each: file and what is wrong.
    pub problems: Vec<String>,
}

/// Where to look.
#[derive(Debug, Clone)]
pub struct Roots {
    /// The managed file (normally `/etc/claude-code/CLAUDE.md`).
    pub managed: PathBuf,
    pub home: Option<PathBuf>,
    /// The working directory the session starts in.
    pub cwd: PathBuf,
}

impl Roots {
    pub fn standard(home: Option<PathBuf>, cwd: PathBuf) -> Roots {
        Roots {
            managed: PathBuf::from("/etc/claude-code/CLAUDE.md"),
            home,
            cwd,
        }
    }
}

/// Load every memory file `roots` leads to, imports included.
pub fn load(roots: &Roots) -> Memory {
    let mut candidates: Vec<(PathBuf, Scope)> = vec![(roots.managed.clone(), Scope::Managed)];
    if let Some(home) = &roots.home {
        candidates.push((home.join(".claude/CLAUDE.md"), Scope::User));
    }
    // Outermost first; the filesystem root itself is not searched.
    let mut dirs: Vec<&Path> = roots
        .cwd
        .ancestors()
        .filter(|d| d.parent().is_some())
        .collect();
    dirs.reverse();
    for dir in &dirs {
        for name in ["CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md"] {
            candidates.push((dir.join(name), Scope::Project));
        }
    }
    for dir in &dirs {
        candidates.push((dir.join("CLAUDE.local.md"), Scope::Local));
    }
    let mut loader = Loader {
        memory: Memory::default(),
        seen: Vec::new(),
        chain: Vec::new(),
        home: roots.home.clone(),
    };
    for (path, scope) in candidates {
        if path.is_file() {
            loader.add(&path, scope);
        }
    }
    loader.memory
}

/// One memory file and what it imports (for a subdirectory's file, read when first needed).
pub fn load_file(path: &Path, home: Option<&Path>) -> Memory {
    let mut loader = Loader {
        memory: Memory::default(),
        seen: Vec::new(),
        chain: Vec::new(),
        home: home.map(Path::to_path_buf),
    };
    loader.add(path, Scope::Project);
    loader.memory
}

/// The directories strictly below `cwd` on the way to `file`, outermost first: their memory
/// files were not read at start. Nothing when `file` is not below `cwd`. No I/O.
pub fn nested_dirs(file: &Path, cwd: &Path) -> Vec<PathBuf> {
    let Some(rel) = file.parent().and_then(|p| p.strip_prefix(cwd).ok()) else {
        return Vec::new();
    };
    let mut dir = cwd.to_path_buf();
    rel.components()
        .map(|part| {
            dir.push(part);
            dir.clone()
        })
        .collect()
}

/// The memory files `dir` holds itself (`CLAUDE.md`, `.claude/CLAUDE.md`, `AGENTS.md`,
/// `CLAUDE.local.md`).
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    [
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        "AGENTS.md",
        "CLAUDE.local.md",
    ]
    .iter()
    .map(|name| dir.join(name))
    .filter(|p| p.is_file())
    .collect()
}

struct Loader {
    memory: Memory,
    /// Every file loaded (canonical paths): each is loaded once.
    seen: Vec<PathBuf>,
    /// The files whose imports are being followed: a cycle returns to one of them.
    chain: Vec<PathBuf>,
    home: Option<PathBuf>,
}

impl Loader {
    /// Add `path` (and, after it, what it imports) unless already loaded.
    fn add(&mut self, path: &Path, scope: Scope) {
        let key = canonical(path);
        if self.seen.contains(&key) {
            return;
        }
        self.seen.push(key.clone());
        let text = match read(path) {
            Ok(t) => t,
            Err(e) => {
                self.memory
                    .problems
                    .push(format!("{}: {e}", path.display()));
                return;
            }
        };
        let imports = imports(&text);
        self.memory.files.push(MemoryFile {
            path: path.to_path_buf(),
            scope,
            text,
        });
        self.chain.push(key);
        let base = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        for target in imports {
            let problem = |why: &str| format!("{}: @{target} not imported: {why}", path.display());
            let resolved = resolve(&target, &base, self.home.as_deref());
            if self.chain.contains(&canonical(&resolved)) {
                self.memory
                    .problems
                    .push(problem("it imports back (a cycle)"));
            } else if !resolved.is_file() {
                self.memory.problems.push(problem("no such file"));
            } else if self.chain.len() > MAX_IMPORT_DEPTH {
                let why = format!("imports nest at most {MAX_IMPORT_DEPTH} deep");
                self.memory.problems.push(problem(&why));
            } else {
                self.add(&resolved, Scope::Imported);
            }
        }
        self.chain.pop();
    }
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{} KB, over the {} KB a memory file may have; skipped",
            meta.len().div_ceil(1024),
            MAX_FILE_BYTES / 1024
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text; skipped".to_string())
}

fn resolve(target: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    if let Some(rest) = target.strip_prefix("~/") {
        return home.map_or_else(|| PathBuf::from(target), |h| h.join(rest));
    }
    let p = Path::new(target);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// The `@path` imports of `text`, in order: a word starting with `@` outside fenced code blocks
/// and inline code spans.
pub fn imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        // Drop inline code spans: text between pairs of backticks.
        let mut prose = String::with_capacity(line.len());
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                prose.push_str(part);
                prose.push(' ');
            }
        }
        for word in prose.split_whitespace() {
            if let Some(target) = word.strip_prefix('@') {
                let target = target.trim_end_matches([',', '.', ';', ':', ')']);
                if !target.is_empty() && !out.iter().any(|t| t == target) {
                    out.push(target.to_string());
                }
            }
        }
    }
    out
}

/// The memory as a section of the system prompt (empty when there is none).
pub fn render(memory: &Memory) -> String {
    if memory.files.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "# Memory\nThe user's standing instructions, from their memory files (CLAUDE.md, \
         AGENTS.md). They take precedence over your defaults: follow them.\n",
    );
    for f in &memory.files {
        out.push_str(&format!(
            "\n## {} ({})\n{}\n",
            f.path.display(),
            f.scope.name(),
            f.text.trim_end()
        ));
    }
    out
}

#[cfg(test)]
mod tests;
