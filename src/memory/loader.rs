//! Loading one memory file and what it imports, within its [`Bound`]: every file is resolved
//! through its symlinks and checked (system paths never; outside the bound only with the
//! person's approval, or never) before it is opened. Cycles, depth, size and encoding problems
//! become lines of [`Memory::problems`]; nothing here panics on any file.

use std::path::{Path, PathBuf};

use super::{MAX_FILE_BYTES, MAX_IMPORT_DEPTH, Memory, MemoryFile, Scope};
use crate::files::containment::{Refusal, resolve_inside, resolve_real};

/// Where the files a memory file names — itself, through a symlink, and its `@path` imports,
/// at any depth — may resolve. `/proc`, `/sys` and `/dev` are refused whatever the bound.
#[derive(Debug, Clone)]
pub(super) enum Bound {
    /// Anywhere else: managed memory, the administrator's.
    Anywhere,
    /// Inside `root`. Outside it, a file the person may approve (`approvable`: files a project
    /// names, "external imports") or one that is refused (user memory outside the home).
    Inside {
        root: PathBuf,
        /// How the root is named in problems ("the project").
        what: &'static str,
        approvable: bool,
    },
}

/// How a file came to be loaded: for the wording of its problems.
enum Named<'a> {
    /// A memory file found in its place (it may be a symlink).
    Found,
    /// `@target` in `importer`.
    Import { importer: &'a Path, target: &'a str },
}

impl Named<'_> {
    fn problem(&self, path: &Path, why: &str) -> String {
        match self {
            Named::Found => format!("{}: not read: {why}", path.display()),
            Named::Import { importer, target } => {
                format!("{}: @{target} not imported: {why}", importer.display())
            }
        }
    }
}

pub(super) struct Loader {
    pub(super) memory: Memory,
    /// Every file loaded (real paths): each is loaded once.
    seen: Vec<PathBuf>,
    /// The files whose imports are being followed (real paths): a cycle returns to one.
    chain: Vec<PathBuf>,
    home: Option<PathBuf>,
    /// The person approved files outside the project that project files name.
    approved: bool,
}

impl Loader {
    pub(super) fn new(home: Option<PathBuf>, approved: bool) -> Loader {
        Loader {
            memory: Memory::default(),
            seen: Vec::new(),
            chain: Vec::new(),
            home,
            approved,
        }
    }

    /// Add the memory file at `path` (and, after it, what it imports) unless already loaded
    /// or refused by `bound`.
    pub(super) fn add_found(&mut self, path: &Path, scope: Scope, bound: &Bound) {
        if let Some(real) = self.admit(path, &Named::Found, bound) {
            self.add(path, real, scope, bound);
        }
    }

    /// `path` resolved, when `bound` lets it be read; otherwise the problem is noted (and an
    /// external file the person could approve is listed) and `None` comes back. Only metadata
    /// is looked at.
    fn admit(&mut self, path: &Path, named: &Named<'_>, bound: &Bound) -> Option<PathBuf> {
        let checked = match bound {
            Bound::Anywhere => resolve_real(path),
            Bound::Inside { root, .. } => resolve_inside(path, root),
        };
        let why = match checked {
            Ok(real) if real.is_file() => return Some(real),
            Ok(_) => "not a regular file".to_string(),
            Err(Refusal::Missing { .. }) => "no such file".to_string(),
            Err(Refusal::Outside { resolved, root, .. }) => {
                match self.outside(resolved, &root, bound) {
                    Ok(real) => return Some(real),
                    Err(why) => why,
                }
            }
            Err(other) => other.to_string(),
        };
        self.memory.problems.push(named.problem(path, &why));
        None
    }

    /// A file outside its bound: read when the person approved files outside the project,
    /// else why not (an approvable one is listed for the person to approve).
    fn outside(
        &mut self,
        resolved: PathBuf,
        root: &Path,
        bound: &Bound,
    ) -> Result<PathBuf, String> {
        let (what, approvable) = match bound {
            Bound::Inside {
                what, approvable, ..
            } => (*what, *approvable),
            Bound::Anywhere => ("the places memory may come from", false),
        };
        if !resolved.is_file() {
            return Err(format!("{} is not a regular file", resolved.display()));
        }
        if approvable && self.approved {
            return Ok(resolved);
        }
        let why = format!(
            "{} is outside {what} ({})",
            resolved.display(),
            root.display()
        );
        if !approvable {
            return Err(why);
        }
        if !self.memory.external_imports.contains(&resolved) {
            self.memory.external_imports.push(resolved);
        }
        Err(format!(
            "{why}; a file outside the project is read only with your approval (external imports)"
        ))
    }

    /// Load `real` (as `path`), then follow its imports.
    fn add(&mut self, path: &Path, real: PathBuf, scope: Scope, bound: &Bound) {
        if self.seen.contains(&real) {
            return;
        }
        self.seen.push(real.clone());
        let text = match read(&real) {
            Ok(t) => t,
            Err(e) => {
                self.memory
                    .problems
                    .push(format!("{}: {e}", path.display()));
                return;
            }
        };
        let imports = super::imports(&text);
        self.memory.files.push(MemoryFile {
            path: path.to_path_buf(),
            scope,
            text,
        });
        self.chain.push(real);
        let base = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        for target in imports {
            let named = Named::Import {
                importer: path,
                target: &target,
            };
            let Some(resolved) = resolve(&target, &base, self.home.as_deref()) else {
                let why = "the home directory is unknown";
                self.memory.problems.push(named.problem(path, why));
                continue;
            };
            if self.chain.len() > MAX_IMPORT_DEPTH {
                let why = format!("imports nest at most {MAX_IMPORT_DEPTH} deep");
                self.memory.problems.push(named.problem(path, &why));
                continue;
            }
            let Some(real) = self.admit(&resolved, &named, bound) else {
                continue;
            };
            if self.chain.contains(&real) {
                let why = "it imports back (a cycle)";
                self.memory.problems.push(named.problem(path, why));
            } else {
                self.add(&resolved, real, Scope::Imported, bound);
            }
        }
        self.chain.pop();
    }
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

/// An import's target as a path: relative to the importing file's directory, `~/` in the home
/// (`None` when the home is unknown), or absolute. Lexical: the bound decides afterwards what
/// it really is.
fn resolve(target: &str, base: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(rest) = target.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    let p = Path::new(target);
    Some(if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    })
}
