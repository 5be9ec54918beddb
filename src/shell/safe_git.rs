//! `git` run by cairn itself on a repository it does not trust (a cloned project, a folder
//! handed over): a command with nothing of the caller's or the user's configuration and
//! nothing of the repository's that executes. The environment is cleared but for `PATH`; no
//! system or global config; `core.fsmonitor`, the untracked cache and hooks off
//! (`core.hooksPath=/dev/null`); no prompts, no optional locks. The repository's own config
//! can still name programs (filters, `core.pager`, …): callers check it with
//! [`super::git_config::check`] first and do not run git when it fails. This module builds the
//! command; it runs nothing.

use std::path::Path;
use std::process::{Command, Stdio};

/// `git -C dir …` with the protections above; the caller adds the subcommand and its
/// arguments, and chooses what to do with the output (stdin is closed).
pub fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.env_clear()
        .envs(std::env::var_os("PATH").map(|p| ("PATH", p)))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.untrackedCache=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .arg("-C")
        .arg(dir)
        .stdin(Stdio::null());
    cmd
}
