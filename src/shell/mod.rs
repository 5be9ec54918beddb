//! Shell command analysis, shared by the Bash tool and the permission gate: what a command
//! line runs, writes and reads, and in which directories ([`analysis`], [`cwd`]); which simple
//! commands only read ([`readonly`], by the option grammars of [`grammars`], [`git`], [`sed`]
//! and [`system`], with the repository's configuration checked by [`git_config`] — and git run by cairn
//! itself on such a repository, [`safe_git`] — and filename
//! patterns expanded by [`glob`]); and the environment the
//! commands of tools and hooks get ([`env_policy`]), and which of its variables change what
//! a command executes ([`exec_env`]); the seam to a client's terminals ([`client`]). This module decides no permission and
//! knows nothing of tools or the gate; it turns command text into facts those two act on.

pub mod analysis;
pub mod client;
pub mod cwd;
pub mod env_policy;
pub mod exec_env;
pub mod git;
pub mod git_config;
pub mod glob;
pub mod grammars;
pub mod options;
pub mod readonly;
pub mod safe_git;
pub mod sed;
pub mod system;
mod words;

pub use analysis::{Dirs, Redirect, ShellAnalysis, ShellCommand, analyze, path_arguments};

/// Whether the command only reads, judged by its text: every part is a known read-only
/// command with only known-safe options, no output redirection to a file, and no hazard.
/// Paths and the repository's git configuration are not checked here (the gate does that,
/// with [`readonly::is_read_only_in`]).
pub fn is_read_only(command: &str) -> bool {
    let a = analyze(command);
    a.hazards.is_empty()
        && a.file_writes().next().is_none()
        && !a.commands.is_empty()
        && a.commands.iter().all(readonly::is_read_only_command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_classification() {
        for ro in [
            "ls -la",
            "cat a | grep x | wc -l",
            "git status && git log --oneline -5",
            "find . -name '*.rs'",
            "cd src && ls",
            "git branch",
            "echo hi 2>/dev/null",
            "[[ -f x && 1 -eq 1 ]] && cat x",
            "[ -d src ] || ls",
            "sort -rn -k2 f | uniq -c",
            "git --no-pager log --oneline -5",
        ] {
            assert!(is_read_only(ro), "{ro}");
        }
        for rw in [
            "rm x",
            "ls && rm -rf x",
            "echo x > f",
            "find . -delete",
            "find . -exec rm {} ;",
            "git push",
            "git branch -D x",
            "echo $(rm x)",
            "sort -o out in",
            "sort -ro out in",
            "sort --outp=out in",
            "sort --co=sh in",
            "git grep -Osh x",
            "git grep --open-files-in-pager=sh x",
            "git reflog expire --expire=now --all",
            "git reflog delete HEAD@{0}",
            "printf -v 'a[$(id)]' x",
            "test -v 'a[$(id)]'",
            "[ -v 'a[$(id)]' ]",
            "[[ -v 'a[$(id)]' ]]",
            "[[ 'a[$(id)]' -eq 0 ]]",
            "ls && [[ 'a[$(id)]' -eq 0 ]]",
            "ls; (( a[$(id)] ))",
            "for ((i=0;i<1;i++)); do ls; done",
            "GIT_EXTERNAL_DIFF=x git diff",
            "PAGER=x git log",
            "LESSOPEN='|x %s' git log",
            "printenv",
            "env",
            "printenv ANTHROPIC_API_KEY",
            "find . | xargs cat",
            "env -C .git cat config",
            "",
        ] {
            assert!(!is_read_only(rw), "{rw}");
        }
    }
}
