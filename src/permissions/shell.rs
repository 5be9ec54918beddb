//! Shell command classification for permissions. This is a conservative placeholder: the
//! permission-system work replaces it with a real analyser of the same signature. It errs
//! towards "not read-only": a false "no" only costs a prompt, a false "yes" would skip one.

/// True only for a single simple command that can only read: no shell metacharacters, and a
/// first word from a short list of read-only programs (or `find` without actions, or a
/// read-only `git` subcommand).
pub fn is_read_only(command: &str) -> bool {
    const META: &[char] = &[';', '&', '|', '<', '>', '$', '`', '(', ')', '\n', '\r'];
    if command.contains(META) {
        return false;
    }
    let mut words = command.split_whitespace();
    let Some(first) = words.next() else {
        return false;
    };
    match first {
        "ls" | "cat" | "head" | "tail" | "wc" | "grep" | "rg" | "pwd" | "which" | "stat" | "du"
        | "echo" => true,
        "find" => !command.split_whitespace().any(|w| {
            matches!(
                w,
                "-exec"
                    | "-execdir"
                    | "-delete"
                    | "-ok"
                    | "-okdir"
                    | "-fprint"
                    | "-fprintf"
                    | "-fls"
                    | "-fprint0"
            )
        }),
        "git" => match words.next() {
            Some("status" | "log" | "diff" | "show") => true,
            // `git branch NAME`, `-d`, `-m`... change branches; only listing reads.
            Some("branch") => words.all(|w| {
                matches!(
                    w,
                    "-a" | "-r" | "-v" | "-vv" | "--all" | "--list" | "--remotes"
                )
            }),
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::is_read_only;

    #[test]
    fn plain_reads_are_read_only() {
        for c in [
            "ls -la",
            "cat README.md",
            "git status",
            "git log -5",
            "find . -name '*.rs'",
        ] {
            assert!(is_read_only(c), "{c}");
        }
    }

    #[test]
    fn anything_else_is_not() {
        for c in [
            "",
            "rm -rf x",
            "ls; rm x",
            "echo hi > f",
            "cat $(which x)",
            "find . -delete",
            "find . -exec rm {} +",
            "git push",
            "git branch -D main",
            "git",
            "ls\nrm x",
            "lsof",
        ] {
            assert!(!is_read_only(c), "{c}");
        }
    }
}
