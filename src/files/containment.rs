//! Where a file that something else names may be read from. A repository is untrusted: its
//! `CLAUDE.md`, its `@path` imports, its skills, agents, commands and output styles name files,
//! and a name (or a symlink on the way) can point anywhere — `~/.ssh/id_rsa`,
//! `../outside/secret.txt`, `/proc/self/environ`. [`resolve_inside`] resolves the name through
//! every symlink (the kernel's own `realpath`) and accepts it only when the real path lies
//! inside an allowed root (itself resolved) and is not a system path (`/proc`, `/sys`, `/dev`,
//! which are never read from a name, whatever the root). It only looks at metadata: callers
//! read the resolved path afterwards, so a refused target is never opened.

use std::path::{Path, PathBuf};

/// Pseudo-filesystems whose files describe the machine and its processes (environments,
/// memory, devices): never read because a file named them.
pub const SYSTEM_DIRS: [&str; 3] = ["/proc", "/sys", "/dev"];

/// Why a named file is not read. The messages are meant for the person (notices).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{} does not exist", path.display())]
    Missing { path: PathBuf },
    #[error("{} cannot be resolved: {message}", path.display())]
    Unresolved { path: PathBuf, message: String },
    #[error(
        "{} resolves to {}, a system path (/proc, /sys, /dev), which is never read",
        path.display(),
        resolved.display()
    )]
    System { path: PathBuf, resolved: PathBuf },
    #[error("{} resolves to {}, outside {}", path.display(), resolved.display(), root.display())]
    Outside {
        path: PathBuf,
        resolved: PathBuf,
        root: PathBuf,
    },
}

/// `path` resolved through every symlink, refused when it is a system path. `path` must exist.
pub fn resolve_real(path: &Path) -> Result<PathBuf, Refusal> {
    let resolved = path.canonicalize().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) {
            Refusal::Missing {
                path: path.to_path_buf(),
            }
        } else {
            Refusal::Unresolved {
                path: path.to_path_buf(),
                message: e.to_string(),
            }
        }
    })?;
    if is_system_path(&resolved) {
        return Err(Refusal::System {
            path: path.to_path_buf(),
            resolved,
        });
    }
    Ok(resolved)
}

/// `path` resolved through every symlink, accepted only when the real path lies inside `root`
/// (resolved too; a root that cannot be resolved is taken as written) and is not a system
/// path. No file is opened.
pub fn resolve_inside(path: &Path, root: &Path) -> Result<PathBuf, Refusal> {
    let resolved = resolve_real(path)?;
    let real_root = real_root(root);
    if resolved.starts_with(&real_root) {
        Ok(resolved)
    } else {
        Err(Refusal::Outside {
            path: path.to_path_buf(),
            resolved,
            root: real_root,
        })
    }
}

/// `root` through its symlinks, as written when it cannot be resolved (a missing home).
pub fn real_root(root: &Path) -> PathBuf {
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

/// Whether a resolved path lies in `/proc`, `/sys` or `/dev` (component-wise: `/devices` is
/// not `/dev`).
pub fn is_system_path(resolved: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|d| resolved.starts_with(d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Tree {
        _tmp: tempfile::TempDir,
        root: PathBuf,
    }

    fn tree() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for dir in ["proj/sub", "outside"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("proj/sub/in.md"), "in").unwrap();
        std::fs::write(root.join("outside/secret.txt"), "secret").unwrap();
        Tree { _tmp: tmp, root }
    }

    #[test]
    fn a_file_inside_is_accepted_with_its_real_path() {
        let t = tree();
        let proj = t.root.join("proj");
        assert_eq!(
            resolve_inside(&proj.join("sub/../sub/in.md"), &proj),
            Ok(proj.join("sub/in.md"))
        );
        // A link that stays inside is fine, and the real path is what comes back.
        symlink("sub/in.md", proj.join("link.md")).unwrap();
        assert_eq!(
            resolve_inside(&proj.join("link.md"), &proj),
            Ok(proj.join("sub/in.md"))
        );
    }

    #[test]
    fn dot_dot_and_symlinks_out_of_the_root_are_refused() {
        let t = tree();
        let proj = t.root.join("proj");
        let secret = t.root.join("outside/secret.txt");
        let outside = |p: &Path| Refusal::Outside {
            path: p.to_path_buf(),
            resolved: secret.clone(),
            root: proj.clone(),
        };
        let dotdot = proj.join("../outside/secret.txt");
        assert_eq!(resolve_inside(&dotdot, &proj), Err(outside(&dotdot)));
        symlink(&secret, proj.join("CLAUDE.md")).unwrap();
        let link = proj.join("CLAUDE.md");
        assert_eq!(resolve_inside(&link, &proj), Err(outside(&link)));
        // A directory link on the way counts too.
        symlink(t.root.join("outside"), proj.join("dir")).unwrap();
        let through = proj.join("dir/secret.txt");
        assert_eq!(resolve_inside(&through, &proj), Err(outside(&through)));
        // A sibling whose name starts like the root is not inside it.
        std::fs::create_dir_all(t.root.join("project")).unwrap();
        std::fs::write(t.root.join("project/x"), "x").unwrap();
        assert!(matches!(
            resolve_inside(&t.root.join("project/x"), &proj),
            Err(Refusal::Outside { .. })
        ));
    }

    #[test]
    fn system_paths_are_refused_even_through_a_link_and_inside_a_root_of_slash() {
        let t = tree();
        let proj = t.root.join("proj");
        let environ = Path::new("/proc/self/environ");
        assert!(matches!(
            resolve_inside(environ, Path::new("/")),
            Err(Refusal::System { .. })
        ));
        symlink(environ, proj.join("env.md")).unwrap();
        let err = resolve_inside(&proj.join("env.md"), &proj).unwrap_err();
        assert!(matches!(err, Refusal::System { .. }), "{err:?}");
        assert!(err.to_string().contains("never read"), "{err}");
        assert!(is_system_path(Path::new("/sys/kernel")));
        assert!(is_system_path(Path::new("/dev")));
        assert!(!is_system_path(Path::new("/devices/x")));
    }

    #[test]
    fn a_missing_file_is_missing() {
        let t = tree();
        let proj = t.root.join("proj");
        let gone = proj.join("gone.md");
        assert_eq!(
            resolve_inside(&gone, &proj),
            Err(Refusal::Missing { path: gone })
        );
        // A dangling link, too.
        symlink(t.root.join("nowhere"), proj.join("dangling")).unwrap();
        assert!(matches!(
            resolve_inside(&proj.join("dangling"), &proj),
            Err(Refusal::Missing { .. })
        ));
    }
}
