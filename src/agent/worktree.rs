//! `isolation: worktree`: a sub-agent run in a temporary git worktree of the project, as in
//! Claude Code — an isolated copy of the repository at `.claude/worktrees/<agent>-<id>` (at
//! the repository's top; a `.gitignore` of `*` there keeps the copies out of the project's
//! status and searches) on a new branch `worktree-agent-<id>` made from `HEAD`. When the run
//! ends the worktree is removed, with its branch, if the agent changed nothing (no output
//! from `git status --porcelain --ignored`, `HEAD` still the starting commit); otherwise it
//! is kept and the result names its path and branch.
//!
//! The repository is untrusted: before git runs at all its configuration is checked
//! ([`git_config::check`]: no `core.fsmonitor`, filters, hooks, includes, …), and a
//! repository that fails the check refuses the isolated run rather than run git there; git
//! itself runs through [`safe_git`] with a time limit. No git, or not a git repository with
//! a commit: the run is refused with a message saying so — it never silently runs in the real
//! tree. The permission side (the worktree as the conversation's working root) is
//! `permissions::roots`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::subagent_scope::path_component;
use crate::shell::{git_config, safe_git};

/// How long creating the worktree (a checkout of the project) may take.
const ADD_LIMIT: Duration = Duration::from_secs(120);
/// How long any other git command may take.
const LIMIT: Duration = Duration::from_secs(30);

/// One isolated run's worktree.
#[derive(Debug)]
pub(crate) struct AgentWorktree {
    /// The repository's top directory (the project's, or one of its parents).
    top: PathBuf,
    /// The worktree's top directory.
    pub path: PathBuf,
    /// Where the agent works: the project's place in the worktree (its top, unless the
    /// project is a subdirectory of its repository).
    pub workdir: PathBuf,
    pub branch: String,
    /// The commit it started from.
    base: String,
    /// Ended ([`Self::finish`]); otherwise dropping it ends it on a task of its own.
    done: bool,
}

/// Runs git in `dir` (after checking the repository's configuration there) with `args`; its
/// trimmed standard output, or why it failed.
async fn git(dir: &Path, args: &[&str], limit: Duration) -> Result<String, String> {
    git_config::check(dir, &|_| None).map_err(|why| {
        format!(
            "the repository's git configuration could make git run programs ({why}), so cairn \
             does not run git there"
        )
    })?;
    let mut cmd = tokio::process::Command::from(safe_git::command(dir));
    cmd.args(args).kill_on_drop(true);
    let run = tokio::time::timeout(limit, cmd.output());
    let output = match run.await {
        Err(_) => {
            return Err(format!(
                "`git {}` did not finish within {}s",
                args.join(" "),
                limit.as_secs()
            ));
        }
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("git is not installed (or not on PATH)".into());
        }
        Ok(Err(e)) => return Err(format!("cannot run git: {e}")),
        Ok(Ok(output)) => output,
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(format!(
            "`git {}` failed ({}): {}",
            args.join(" "),
            output.status,
            first.trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// `<top>/.claude/worktrees`, made when missing, with a `.gitignore` of `*` in it (the
/// project's own status and searches then leave the copies out; git never looks at it from
/// inside a worktree). Refused when `.claude` or `.claude/worktrees` is a symbolic link: a
/// repository could point it anywhere.
fn worktrees_dir(top: &Path) -> Result<PathBuf, String> {
    let dir = top.join(".claude/worktrees");
    for d in [top.join(".claude"), dir.clone()] {
        if std::fs::symlink_metadata(&d).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "{} is a symbolic link; the worktree is not made through it",
                d.display()
            ));
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let ignore = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(".gitignore"));
    if let Ok(mut file) = ignore {
        use std::io::Write;
        // Best effort: without it the copies only show in the project's `git status`.
        let _ = file.write_all(b"*\n");
    }
    Ok(dir)
}

impl AgentWorktree {
    /// A new worktree of the repository holding `project` for agent `agent`, or why there
    /// cannot be one (the Agent call fails with it).
    pub async fn create(project: &Path, agent: &str) -> Result<AgentWorktree, String> {
        let top = git(project, &["rev-parse", "--show-toplevel"], LIMIT)
            .await
            .map_err(|why| {
                if why.contains("not a git repository") {
                    format!(
                        "{} is not in a git repository; `isolation: worktree` needs one",
                        project.display()
                    )
                } else {
                    why
                }
            })?;
        let top = PathBuf::from(top);
        let base = git(&top, &["rev-parse", "--verify", "HEAD^{commit}"], LIMIT)
            .await
            .map_err(|_| {
                "the repository has no commit yet, and a worktree is a copy of one".to_string()
            })?;
        let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
        let parent = worktrees_dir(&top)?;
        let path = parent.join(format!("{}-{id}", path_component(agent)));
        let branch = format!("worktree-agent-{id}");
        let target = path.to_string_lossy().into_owned();
        git(
            &top,
            &["worktree", "add", "--quiet", "-b", &branch, &target, &base],
            ADD_LIMIT,
        )
        .await?;
        let canonical_project = std::fs::canonicalize(project).unwrap_or(project.to_path_buf());
        let canonical_top = std::fs::canonicalize(&top).unwrap_or(top.clone());
        let workdir = match canonical_project.strip_prefix(&canonical_top) {
            Ok(rel) if !rel.as_os_str().is_empty() => path.join(rel),
            _ => path.clone(),
        };
        let tree = AgentWorktree {
            top,
            path,
            workdir,
            branch,
            base,
            done: false,
        };
        // A project directory git does not track has no place in the copy yet.
        if let Err(e) = std::fs::create_dir_all(&tree.workdir) {
            let why = format!("cannot make {}: {e}", tree.workdir.display());
            tree.finish().await;
            return Err(why);
        }
        Ok(tree)
    }

    /// What the agent left: `Ok(true)` when the worktree has changes or new commits.
    async fn changed(&self) -> Result<bool, String> {
        let status = git(
            &self.path,
            &[
                "status",
                "--porcelain",
                "--ignored",
                "--untracked-files=all",
            ],
            LIMIT,
        )
        .await?;
        if !status.is_empty() {
            return Ok(true);
        }
        let head = git(
            &self.path,
            &["rev-parse", "--verify", "HEAD^{commit}"],
            LIMIT,
        )
        .await?;
        Ok(head != self.base)
    }

    /// A copy to end on a task of its own, this one counting as ended.
    fn handed_over(&mut self) -> AgentWorktree {
        self.done = true;
        AgentWorktree {
            top: self.top.clone(),
            path: self.path.clone(),
            workdir: self.workdir.clone(),
            branch: self.branch.clone(),
            base: self.base.clone(),
            done: false,
        }
    }

    /// End the run's worktree: removed with its branch when the agent changed nothing, else
    /// kept. What to tell the model and the person (empty when it was removed).
    pub async fn finish(mut self) -> String {
        self.done = true;
        let kept = |why: &str| {
            format!(
                "\n\nThe agent worked in an isolated git worktree, kept {why}: {} (branch {}).",
                self.path.display(),
                self.branch
            )
        };
        match self.changed().await {
            Ok(true) => return kept("with its changes"),
            Ok(false) => {}
            Err(why) => return kept(&format!("as it could not be checked for changes ({why})")),
        }
        let target = self.path.to_string_lossy().into_owned();
        if let Err(why) = git(&self.top, &["worktree", "remove", &target], LIMIT).await {
            return kept(&format!("as it could not be removed ({why})"));
        }
        if let Err(why) = git(&self.top, &["branch", "-D", &self.branch], LIMIT).await {
            return format!(
                "\n\nThe agent's worktree had no changes and was removed; its branch {} was \
                 not deleted: {why}",
                self.branch
            );
        }
        String::new()
    }
}

impl Drop for AgentWorktree {
    /// A run dropped before it ended (the person interrupted the Agent call): its worktree
    /// is ended all the same — removed when unchanged, else left for the person — off the
    /// dropping task.
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let tree = self.handed_over();
            runtime.spawn(async move {
                tree.finish().await;
            });
        }
    }
}
