//! Shell command analysis, shared by the Bash tool and the permission gate: what a command
//! line runs, writes and reads ([`analysis`]), and which simple commands only read
//! ([`readonly`]). This module decides no permission and knows nothing of tools or the gate;
//! it turns command text into facts those two act on.

pub mod analysis;
pub mod readonly;

pub use analysis::{ShellAnalysis, ShellCommand, analyze, path_arguments};

/// Whether the command only reads: every part is a known read-only command, no output
/// redirection to a file, and no hazard. Paths are not checked here (the gate does that).
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
            "",
        ] {
            assert!(!is_read_only(rw), "{rw}");
        }
    }
}
