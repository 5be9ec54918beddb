//! What the change journal checks besides its events (`journal.rs`): whether a filesystem
//! reports every change as an event at all, and the files outside the watched tree whose
//! content decides what the walker ignores — stamped (identity, size, times) before every
//! checkpoint, so a change to any of them forces a full scan.

use std::ffi::{CString, OsStr};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file's identity, size, times and mode, to notice it changed; `None`: absent.
pub type Stamp = Option<(u64, u64, u64, i64, i64, i64, i64, u32)>;

/// Whether changes under `path` raise inotify events whoever makes them: not on network or
/// FUSE filesystems, whose other clients' (or server's) changes raise none.
pub fn reports_changes(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a writable, zeroed `statfs`.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    // The magic numbers of linux/magic.h; `f_type`'s width differs between targets.
    #[allow(clippy::unnecessary_cast)]
    let kind = st.f_type as u32;
    !matches!(
        kind,
        0x6969 // NFS
            | 0x517B // SMB
            | 0xFF53_4D42 // CIFS
            | 0xFE53_4D42 // SMB2
            | 0x6573_5546 // FUSE
            | 0x0102_1997 // 9P
            | 0x00C3_6400 // Ceph
            | 0x5346_414F // AFS
            | 0x6B41_4653 // kAFS
            | 0x7375_7245 // Coda
            | 0x564C // NCP
            | 0x0116_1970 // GFS2
            | 0x7461_636F // OCFS2
    )
}

/// The files outside the watched tree whose content decides what the walker ignores, each
/// with its stamp now.
pub fn ignore_inputs(roots: &[PathBuf], git_dirs: &[PathBuf]) -> Vec<(PathBuf, Stamp)> {
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut dot_gits: Vec<PathBuf> = git_dirs.to_vec();
    for root in roots {
        dot_gits.push(root.join(".git"));
        for dir in root.ancestors().skip(1) {
            paths.push(dir.join(".gitignore"));
            paths.push(dir.join(".ignore"));
            dot_gits.push(dir.join(".git"));
        }
    }
    for g in dot_gits {
        paths.extend(git_exclude_inputs(&g));
    }
    paths.extend(global_inputs());
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .map(|p| {
            let s = stamp(&p);
            (p, s)
        })
        .collect()
}

/// A `.git` entry and the exclude files it leads to (a worktree's `.git` file names its git
/// directory, which may name a common one).
fn git_exclude_inputs(dot_git: &Path) -> Vec<PathBuf> {
    let mut out = vec![dot_git.to_path_buf(), dot_git.join("info/exclude")];
    let parent = dot_git.parent().unwrap_or(dot_git);
    if let Ok(text) = fs::read_to_string(dot_git)
        && let Some(rest) = text.trim().strip_prefix("gitdir:")
    {
        let gitdir = parent.join(rest.trim());
        out.push(gitdir.join("info/exclude"));
        out.push(gitdir.join("commondir"));
        if let Ok(common) = fs::read_to_string(gitdir.join("commondir")) {
            out.push(gitdir.join(common.trim()).join("info/exclude"));
        }
    }
    out
}

/// Git's global config files and the global excludes file they name (or the default one).
fn global_inputs() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let mut configs = Vec::new();
    if let Some(h) = &home {
        configs.push(h.join(".gitconfig"));
    }
    let mut out = Vec::new();
    if let Some(x) = &xdg {
        configs.push(x.join("git/config"));
        out.push(x.join("git/ignore"));
    }
    for c in &configs {
        let Ok(text) = fs::read_to_string(c) else {
            continue;
        };
        for line in text.lines() {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            if !key.trim().eq_ignore_ascii_case("excludesfile") {
                continue;
            }
            let value = value.trim().trim_matches('"');
            let path = match (value.strip_prefix("~/"), &home) {
                (Some(rest), Some(h)) => h.join(rest),
                _ => PathBuf::from(OsStr::new(value)),
            };
            out.push(path);
        }
    }
    out.extend(configs);
    out
}

fn stamp(path: &Path) -> Stamp {
    let m = fs::metadata(path).ok()?;
    Some((
        m.dev(),
        m.ino(),
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
        m.mode(),
    ))
}
