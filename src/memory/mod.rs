//! Memory files, as Claude Code reads them: the person's standing instructions, loaded once when
//! a session starts and placed in the system prompt (so the cached prefix never moves). In order:
//! managed (`/etc/claude-code/CLAUDE.md`), user (`~/.claude/CLAUDE.md`), then for each directory
//! from the outermost ancestor of the working directory down to it: `CLAUDE.md`,
//! `.claude/CLAUDE.md` and `AGENTS.md` (Codex's name; both are read when both exist), and last
//! the `CLAUDE.local.md` files. `@path` lines import other files (relative to the importing
//! file, `~/` or absolute), five levels deep at most, never from inside code; a missing file or
//! a cycle is reported and skipped. Memory files of directories below the working directory are
//! not read at start: [`nested_dirs`] and [`files_in`] name those a Read of a file there brings
//! in, [`load_file`] loads one under the session's [`Roots`], and the Read tool passes them to
//! the model as a reminder. Nothing here panics on any file.
//!
//! Where a file may come from (every file resolved through its symlinks before it is opened;
//! `/proc`, `/sys` and `/dev` never): files of the project root and below, and what they import,
//! stay inside the project root — a file outside it is an "external import", read only when
//! the person approved them for the project ([`Roots::external_imports_approved`]), otherwise
//! listed in [`Memory::external_imports`]; the user's memory stays inside the home directory; a
//! memory file of a directory above the project root stays inside that directory (the person's
//! `~/CLAUDE.md` may import from anywhere in the home, while a repository's own `CLAUDE.md`,
//! above a nested project, may not); managed memory may name any other file.

mod loader;

use std::path::{Path, PathBuf};

use loader::{Bound, Loader};

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
    /// Files outside the project that project memory names (imports, or a memory file that is a
    /// symlink out of the project), skipped because the person has not approved external
    /// imports for this project; resolved paths, each once. Empty when approved.
    pub external_imports: Vec<PathBuf>,
    /// The roots this memory was loaded under: a subdirectory's memory files, read later,
    /// follow the same rules. `None` (a memory built by hand): the session's project directory
    /// is the project, nothing outside it approved.
    pub roots: Option<Roots>,
}

/// Where to look, and where what is found may lead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// The managed file (normally `/etc/claude-code/CLAUDE.md`).
    pub managed: PathBuf,
    pub home: Option<PathBuf>,
    /// The working directory the session starts in.
    pub cwd: PathBuf,
    /// The project root (`config::layers::project_root` of `cwd`): project memory files and
    /// their imports must resolve inside it.
    pub project_root: PathBuf,
    /// The person approved, for this project, imports of files outside it (Claude Code's
    /// `hasClaudeMdExternalIncludesApproved`). Default false.
    pub external_imports_approved: bool,
}

impl Roots {
    /// The standard managed file; nothing outside the project approved.
    pub fn standard(home: Option<PathBuf>, project_root: PathBuf, cwd: PathBuf) -> Roots {
        Roots {
            managed: PathBuf::from("/etc/claude-code/CLAUDE.md"),
            home,
            cwd,
            project_root,
            external_imports_approved: false,
        }
    }

    /// Files of the project (and below) name only files inside it, or approved outside ones.
    fn project_bound(&self) -> Bound {
        Bound::Inside {
            root: self.project_root.clone(),
            what: "the project",
            approvable: true,
        }
    }

    /// The bound of the memory files of `dir`: the project's for the project root and below;
    /// `dir` itself for a directory above it (the person's own, but possibly a repository
    /// holding a nested project).
    fn bound_of(&self, dir: &Path) -> Bound {
        if dir.starts_with(&self.project_root) {
            self.project_bound()
        } else {
            Bound::Inside {
                root: dir.to_path_buf(),
                what: "the directory of the memory file",
                approvable: true,
            }
        }
    }
}

/// Load every memory file `roots` leads to, imports included.
pub fn load(roots: &Roots) -> Memory {
    let mut candidates: Vec<(PathBuf, Scope, Bound)> =
        vec![(roots.managed.clone(), Scope::Managed, Bound::Anywhere)];
    if let Some(home) = &roots.home {
        let bound = Bound::Inside {
            root: home.clone(),
            what: "your home directory",
            approvable: false,
        };
        candidates.push((home.join(".claude/CLAUDE.md"), Scope::User, bound));
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
            candidates.push((dir.join(name), Scope::Project, roots.bound_of(dir)));
        }
    }
    for dir in &dirs {
        let local = dir.join("CLAUDE.local.md");
        candidates.push((local, Scope::Local, roots.bound_of(dir)));
    }
    let mut loader = Loader::new(roots.home.clone(), roots.external_imports_approved);
    for (path, scope, bound) in candidates {
        // Metadata only: a link is followed to see that something is there, not opened.
        if path.is_file() {
            loader.add_found(&path, scope, &bound);
        }
    }
    let mut memory = loader.memory;
    memory.roots = Some(roots.clone());
    memory
}

/// One memory file of a directory below the working directory, and what it imports, under the
/// session's `roots`: it and its imports stay inside the project unless approved.
pub fn load_file(path: &Path, roots: &Roots) -> Memory {
    let mut loader = Loader::new(roots.home.clone(), roots.external_imports_approved);
    loader.add_found(path, Scope::Project, &roots.project_bound());
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
/// `CLAUDE.local.md`). Metadata only: [`load_file`] decides whether one may be read.
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
