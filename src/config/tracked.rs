//! Whether git tracks a file: a "local" settings file that the repository carries is the
//! repository's content, not the person's answers, so it is read as shared project settings
//! (approvals in it do not count).
//!
//! The repository is untrusted, so git runs with nothing of it that executes: no system or
//! global config, `core.fsmonitor` off, no hooks (`shell::safe_git`), no prompts, no optional locks, none of the caller's
//! `GIT_*` variables, and a time limit. Anything but a clear answer counts as tracked (fail
//! closed: the file then approves nothing).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(5);

/// Whether git tracks `file` in the repository at `root`. `Ok(false)` when `root` is not a
/// git work tree's top (no `.git` there); `Err` (to be treated as tracked) when git could not
/// say.
pub fn is_tracked(root: &Path, file: &Path) -> Result<bool, String> {
    // A `.git` file (a worktree's `gitdir:` pointer) or a directory with a HEAD is a
    // repository for git to judge; anything else (none, an empty marker directory) is not.
    let dot_git = root.join(".git");
    let is_file = std::fs::symlink_metadata(&dot_git).is_ok_and(|m| m.is_file());
    if !is_file && std::fs::symlink_metadata(dot_git.join("HEAD")).is_err() {
        return Ok(false);
    }
    let rel = file.strip_prefix(root).unwrap_or(file);
    let mut cmd = crate::shell::safe_git::command(root);
    cmd.args(["ls-files", "--error-unmatch", "--"])
        .arg(rel)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "cannot run git to see whether it tracks {}: {e}",
            rel.display()
        )
    })?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return match status.code() {
                    Some(0) => Ok(true),
                    Some(1) => Ok(false),
                    _ => Err(format!(
                        "git could not say whether it tracks {} ({status})",
                        rel.display()
                    )),
                };
            }
            Ok(None) if started.elapsed() < LIMIT => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "git did not say within {}s whether it tracks {}",
                    LIMIT.as_secs(),
                    rel.display()
                ));
            }
            Err(e) => return Err(format!("waiting for git: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn tracked_untracked_and_no_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".claude")).unwrap();
        let local = root.join(".claude/settings.local.json");
        std::fs::write(&local, "{}").unwrap();
        assert_eq!(is_tracked(root, &local), Ok(false), "not a repository");
        std::fs::create_dir(root.join(".git")).unwrap();
        assert_eq!(
            is_tracked(root, &local),
            Ok(false),
            "an empty marker directory"
        );
        std::fs::remove_dir(root.join(".git")).unwrap();
        git(root, &["init", "-q"]);
        assert_eq!(is_tracked(root, &local), Ok(false), "untracked");
        git(root, &["add", ".claude/settings.local.json"]);
        git(root, &["commit", "-qm", "x"]);
        assert_eq!(is_tracked(root, &local), Ok(true), "tracked");
    }

    #[test]
    fn the_repository_config_runs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        let marker = root.join("pwned");
        let hook = format!("touch {}", marker.display());
        git(root, &["config", "core.fsmonitor", &hook]);
        git(root, &["config", "core.pager", &hook]);
        std::fs::write(root.join("f"), "x").unwrap();
        git(root, &["-c", "core.fsmonitor=false", "add", "f"]);
        let _ = std::fs::remove_file(&marker);
        assert_eq!(is_tracked(root, &root.join("f")), Ok(true));
        assert!(!marker.exists(), "the repository's fsmonitor ran");
    }
}
