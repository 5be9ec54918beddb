//! Which simple shell commands only read. A closed list: anything not named here, or named
//! with an option that writes (`find -delete`, `sort -o`, `git branch -D`), is not read-only.
//! The check is on one already-split, wrapper-stripped command; paths are the gate's business.

use super::analysis::ShellCommand;

/// Commands that never write, whatever their options.
const PLAIN: &[&str] = &[
    "ls",
    "cat",
    "echo",
    "pwd",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "wc",
    "which",
    "diff",
    "stat",
    "du",
    "df",
    "cd",
    "file",
    "tree",
    "true",
    "false",
    "test",
    "[",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "whoami",
    "id",
    "uname",
    "printenv",
    "nl",
    "cut",
    "tr",
    "cmp",
    "comm",
    "column",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "type",
    "printf",
    "jq",
    "env",
];

/// `find` actions that run or write something.
const FIND_WRITES: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Read-only git subcommands; `branch`, `tag` and `remote` only when listing.
const GIT_READ: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "blame",
    "describe",
    "shortlog",
    "reflog",
    "grep",
    "cat-file",
    "ls-tree",
];

pub fn is_read_only_command(cmd: &ShellCommand) -> bool {
    if !cmd.literal {
        return false;
    }
    let args = &cmd.words[1.min(cmd.words.len())..];
    match cmd.program() {
        "env" | "printenv" => args.is_empty() || cmd.program() == "printenv",
        "find" => !args.iter().any(|a| FIND_WRITES.contains(&a.as_str())),
        // `sort -o FILE` writes; `--compress-program` runs a program.
        "sort" => !args.iter().any(|a| {
            a.starts_with("-o") || a.starts_with("--output") || a.starts_with("--compress")
        }),
        "uniq" => args.iter().filter(|a| !a.starts_with('-')).count() <= 1,
        "date" => !args.iter().any(|a| a == "-s" || a.starts_with("--set")),
        "command" => matches!(args.first().map(String::as_str), Some("-v" | "-V")),
        "git" => git_read_only(args),
        // `tree -o FILE` and `file -C` write; `rg --pre CMD` runs a program.
        "tree" => !args.iter().any(|a| a.starts_with("-o")),
        "file" => !args.iter().any(|a| a == "-C" || a == "--compile"),
        "rg" => !args.iter().any(|a| a.starts_with("--pre")),
        p => PLAIN.contains(&p),
    }
}

fn git_read_only(args: &[String]) -> bool {
    let Some(sub) = args.first() else {
        return false;
    };
    let rest = &args[1..];
    if rest
        .iter()
        .any(|a| a.starts_with("--output") || a == "-o" || a == "--ext-diff")
    {
        return false;
    }
    let listing = |allowed: &[&str]| rest.iter().all(|a| allowed.contains(&a.as_str()));
    match sub.as_str() {
        "branch" => listing(&[
            "-a",
            "-r",
            "-v",
            "-vv",
            "--list",
            "--all",
            "--remotes",
            "--show-current",
            "-l",
        ]),
        "tag" => listing(&["-l", "--list"]),
        "remote" => listing(&["-v", "--verbose"]),
        s => GIT_READ.contains(&s),
    }
}
