//! Which simple shell commands only read. A closed list of programs, each with an option
//! grammar ([`super::grammars`], [`super::git`]): a command is read-only only when its program
//! is listed, every word is a plain literal, and every option it was given is known to be
//! safe for that program. Words that bash would evaluate (`test -v 'a[$(x)]'`, `printf -v`,
//! arithmetic operands of `[[ … -eq … ]]`) are refused. The check is on one already-split,
//! wrapper-stripped command; paths are the gate's business, and a repository's configuration
//! is checked by [`is_read_only_in`].

use std::path::Path;

use super::analysis::ShellCommand;
use super::options::parse;
use super::{git, git_config, grammars, sed, system};

/// `find` primaries that only test or print, with how many arguments each takes.
const FIND_PRIMARIES: &[(&str, usize)] = &[
    ("-name", 1),
    ("-iname", 1),
    ("-path", 1),
    ("-ipath", 1),
    ("-wholename", 1),
    ("-iwholename", 1),
    ("-lname", 1),
    ("-ilname", 1),
    ("-regex", 1),
    ("-iregex", 1),
    ("-regextype", 1),
    ("-type", 1),
    ("-xtype", 1),
    ("-maxdepth", 1),
    ("-mindepth", 1),
    ("-newer", 1),
    ("-anewer", 1),
    ("-cnewer", 1),
    ("-samefile", 1),
    ("-mtime", 1),
    ("-atime", 1),
    ("-ctime", 1),
    ("-mmin", 1),
    ("-amin", 1),
    ("-cmin", 1),
    ("-used", 1),
    ("-size", 1),
    ("-perm", 1),
    ("-user", 1),
    ("-group", 1),
    ("-uid", 1),
    ("-gid", 1),
    ("-links", 1),
    ("-inum", 1),
    ("-fstype", 1),
    ("-printf", 1),
    ("-print", 0),
    ("-print0", 0),
    ("-ls", 0),
    ("-prune", 0),
    ("-quit", 0),
    ("-empty", 0),
    ("-readable", 0),
    ("-writable", 0),
    ("-executable", 0),
    ("-nouser", 0),
    ("-nogroup", 0),
    ("-true", 0),
    ("-false", 0),
    ("-follow", 0),
    ("-xdev", 0),
    ("-mount", 0),
    ("-depth", 0),
    ("-daystart", 0),
    ("-noleaf", 0),
    ("-ignore_readdir_race", 0),
    ("-noignore_readdir_race", 0),
    ("-not", 0),
    ("-and", 0),
    ("-or", 0),
    ("-a", 0),
    ("-o", 0),
    ("!", 0),
    ("(", 0),
    (")", 0),
    (",", 0),
];

/// `test`/`[`/`[[` operators; `-v` and `-R` are absent (they evaluate array subscripts).
const TEST_OPERATORS: &[&str] = &[
    "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-L", "-k", "-p", "-r", "-s", "-S", "-t", "-u",
    "-w", "-x", "-O", "-G", "-N", "-z", "-n", "-o", "=", "==", "!=", "<", ">", "=~", "-nt", "-ot",
    "-ef", "!", "(", ")", "&&", "||",
];
/// Operators whose operands bash evaluates arithmetically inside `[[ ]]`.
const ARITHMETIC: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// Programs that only print, whatever their arguments.
const ANY_ARGS: &[&str] = &["echo", "true", "false", "whoami"];

/// Programs `xargs` may run: they open no file their arguments name, and no option of theirs
/// writes, so whatever `xargs` appends from its input, they only print.
const UNDER_XARGS: &[&str] = &["echo", "printf", "basename", "dirname", "true", "false"];

/// Programs whose operands may be filename patterns (each match is one more file to read).
const TAKE_PATTERNS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "wc",
    "diff",
    "stat",
    "du",
    "sort",
    "cut",
    "tr",
    "nl",
    "file",
    "tree",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "cmp",
    "comm",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "echo",
    "sed",
    "tac",
    "rev",
    "od",
    "column",
    "find",
];

/// Programs that take no operand (one would set something: `hostname NAME`).
const NO_OPERANDS: &[&str] = &["hostname", "uptime", "free"];

/// Bash builtins and keywords: `--help`/`--version` is no query of a program for them.
const BUILTINS: &[&str] = &[
    ".",
    ":",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "pushd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "times",
    "trap",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
    "coproc",
    "function",
    "select",
    "time",
];

/// xargs's options; `-a` reads a file of arguments, `-p`/`-o` talk to the terminal.
const XARGS: super::options::Grammar = super::options::Grammar {
    flags: "0rtx",
    valued: "nLPdsIE",
    long: "null no-run-if-empty verbose exit max-args= max-lines= max-procs= delimiter= \
           max-chars= replace? eof? show-limits help version !arg-file= !interactive \
           !open-tty !process-slot-var=",
    digits: false,
    abbrev: true,
};

/// Whether `cmd`, judged by its words alone, only reads. Filename patterns make a command
/// not literal: see [`is_read_only_as_written`] for those.
pub fn is_read_only_command(cmd: &ShellCommand) -> bool {
    if let Some(x) = &cmd.xargs {
        let own = parse(&XARGS, &x[1..]).is_ok_and(|p| p.operands.is_empty());
        return own && UNDER_XARGS.contains(&cmd.program()) && words_only_read(cmd, &[]);
    }
    cmd.literal && words_only_read(cmd, &[])
}

/// For a command literal but for filename patterns: whether it only reads as written (each
/// pattern an operand), for a program whose operands may be patterns. What the patterns
/// match is checked apart (`super::glob::expand`), where the command runs.
pub fn is_read_only_as_written(cmd: &ShellCommand) -> bool {
    if cmd.literal || cmd.xargs.is_some() {
        return is_read_only_command(cmd);
    }
    let patterns: Vec<&str> = cmd
        .globs
        .iter()
        .filter_map(|(i, _)| cmd.words.get(*i).map(String::as_str))
        .collect();
    !patterns.is_empty()
        && TAKE_PATTERNS.contains(&cmd.program())
        && words_only_read(cmd, &patterns)
}

/// `PROGRAM --version` or `PROGRAM --help` and nothing else, for a program found by name (not
/// a path, not a builtin) that no grammar here describes: read-only once the gate has found
/// it on `PATH` outside the project ([`find_on_path`]).
pub fn is_version_query(cmd: &ShellCommand) -> bool {
    let [name, flag] = cmd.words.as_slice() else {
        return false;
    };
    cmd.literal
        && matches!(flag.as_str(), "--version" | "--help")
        && !name.contains('/')
        && !name.is_empty()
        && !BUILTINS.contains(&name.as_str())
        && !known(name)
}

fn known(program: &str) -> bool {
    ANY_ARGS.contains(&program)
        || grammars::grammar(program).is_some()
        || matches!(
            program,
            "find" | "test" | "[" | "[[" | "printf" | "git" | "sed" | "ps" | "lsof" | "xargs"
        )
}

/// Where `PATH` (as the command would get it) finds `program`: the first executable file of
/// that name. A relative or empty entry before it (the current directory) is refused.
pub fn find_on_path(program: &str, path: Option<&str>) -> Result<std::path::PathBuf, String> {
    let path = path.ok_or("PATH is not set")?;
    for dir in path.split(':') {
        if !dir.starts_with('/') {
            return Err(format!("PATH holds the relative directory `{dir}`"));
        }
        let candidate = Path::new(dir).join(program);
        let executable = std::fs::metadata(&candidate).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        });
        if executable {
            return Ok(candidate);
        }
    }
    Err(format!("`{program}` is not on PATH"))
}

/// The words check, with `patterns` the words that are filename patterns (never a script).
fn words_only_read(cmd: &ShellCommand, patterns: &[&str]) -> bool {
    let args = &cmd.words[1.min(cmd.words.len())..];
    let program = cmd.program();
    match program {
        p if ANY_ARGS.contains(&p) => true,
        _ if is_version_query(cmd) => true,
        "find" => find(args),
        "test" | "[" | "[[" => test_expression(args),
        // bash's printf has one option, `-v VAR`, which assigns (and evaluates subscripts).
        "printf" => args
            .first()
            .is_some_and(|a| !a.starts_with('-') || a == "--"),
        "command" => {
            matches!(args.first().map(String::as_str), Some("-v" | "-V"))
                && args[1..].iter().all(|a| !a.starts_with('-'))
        }
        "git" => git::is_read_only(args),
        "sed" => sed::is_read_only(args, patterns),
        "ps" => system::ps(args),
        "lsof" => system::lsof(args),
        // Bare `xargs` runs `echo`.
        "xargs" => parse(&XARGS, args).is_ok_and(|p| p.operands.is_empty()),
        _ => {
            let Some(g) = grammars::grammar(program) else {
                return false;
            };
            let Ok(parsed) = parse(g, args) else {
                return false;
            };
            match program {
                // `uniq IN OUT` writes OUT.
                "uniq" => parsed.operands.len() <= 1,
                // `date MMDDhhmm` sets the clock.
                "date" => parsed.operands.iter().all(|o| o.starts_with('+')),
                "cd" => parsed.operands.len() <= 1,
                p if NO_OPERANDS.contains(&p) => parsed.operands.is_empty(),
                // jq can read the environment and import modules from anywhere.
                "jq" => !parsed.operands.iter().any(|o| {
                    let o = o.to_ascii_lowercase();
                    ["env", "import", "include", "$__prog"]
                        .iter()
                        .any(|bad| o.contains(bad))
                }),
                _ => true,
            }
        }
    }
}

/// As [`is_read_only_command`], and, for git, the repository git would find from `dir` has
/// no configuration that could run a program, nor does the environment `env` looks up give it
/// any.
pub fn is_read_only_in(
    cmd: &ShellCommand,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> bool {
    is_read_only_command(cmd) && (cmd.program() != "git" || git_config::check(dir, env).is_ok())
}

fn find(args: &[String]) -> bool {
    let mut i = 0;
    // Leading options, then starting points, then the expression.
    while args
        .get(i)
        .is_some_and(|a| matches!(a.as_str(), "-H" | "-L" | "-P"))
    {
        i += 1;
    }
    while args
        .get(i)
        .is_some_and(|a| !a.starts_with('-') && !matches!(a.as_str(), "!" | "(" | ")" | ","))
    {
        i += 1;
    }
    while let Some(a) = args.get(i) {
        let Some((_, n)) = FIND_PRIMARIES.iter().find(|(p, _)| p == a) else {
            return false;
        };
        i += 1 + n;
    }
    i == args.len()
}

fn test_expression(args: &[String]) -> bool {
    for (i, a) in args.iter().enumerate() {
        if a == "-v" || a == "-R" {
            return false;
        }
        if ARITHMETIC.contains(&a.as_str()) {
            let int = |w: Option<&String>| {
                w.is_some_and(|w| {
                    let digits = w.strip_prefix('-').unwrap_or(w);
                    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
                })
            };
            if !(int(i.checked_sub(1).and_then(|j| args.get(j))) && int(args.get(i + 1))) {
                return false;
            }
        } else if a.starts_with('-') && a.len() > 1 && !TEST_OPERATORS.contains(&a.as_str()) {
            // An unknown operator may be an operand (`[ -x = -x ]`); refuse to guess.
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(words: &[&str]) -> ShellCommand {
        ShellCommand {
            words: words.iter().map(|w| w.to_string()).collect(),
            literal: true,
            dir: Default::default(),
            globs: Vec::new(),
            xargs: None,
        }
    }

    #[test]
    fn options_must_all_be_known_safe() {
        for yes in [
            &["ls", "-la", "--color=auto", "src"][..],
            &["sort", "-rn", "-k2", "f"],
            &["sort", "--rev", "f"],
            &["head", "-20", "f"],
            &["grep", "-rn", "-e", "x", "--include=*.rs", "."],
            &["find", ".", "-name", "*.rs", "-type", "f", "-print"],
            &["test", "-f", "x"],
            &["[", "1", "-eq", "2", "]"],
            &["printf", "%s\\n", "x"],
            &["jq", "-r", ".name", "package.json"],
            &["uniq", "-c", "f"],
            &["date", "+%s"],
            &["sed", "-n", "1p", "f"],
            &["seq", "5"],
            &["od", "-c", "f"],
            &["column", "-t", "f"],
            &["hostname"],
            &["free", "-m"],
            &["ps", "aux"],
            &["lsof", "-i"],
            &["python3", "--version"],
            &["node", "--help"],
        ] {
            assert!(is_read_only_command(&cmd(yes)), "{yes:?}");
        }
        for no in [
            &["sort", "-o", "out", "in"][..],
            &["sort", "-ro", "out", "in"],
            &["sort", "--outp=out", "in"],
            &["sort", "--co=sh", "in"],
            &["sort", "-T", "/tmp", "in"],
            &["rg", "--pre", "sh", "x"],
            &["rg", "--pre=sh", "x"],
            &["tree", "-o", "out"],
            &["file", "-C", "-m", "x"],
            &["find", ".", "-delete"],
            &["find", ".", "-exec", "rm", "{}", ";"],
            &["find", ".", "-fprint", "x"],
            &["test", "-v", "a[$(id)]"],
            &["[", "-v", "a[$(id)]", "]"],
            &["[[", "a[$(id)]", "-eq", "0", "]]"],
            &["printf", "-v", "a[$(id)]", "x"],
            &["printf", "-va[$(id)]", "x"],
            &["uniq", "in", "out"],
            &["date", "0101000026"],
            &["jq", "-n", "env"],
            &["jq", "-n", "$ENV"],
            &["sort", "--files0-from=list"],
            &["wc", "--files0", "list"],
            &["file", "-f", "list"],
            &["env"],
            &["printenv"],
            &["printenv", "ANTHROPIC_API_KEY"],
            &["sed", "-n", "1p", "-i", "f"],
            &["hostname", "evil"],
            &["./x", "--version"],
            &["python3", "--version", "--eval"],
            &["source", "--help"],
            &["ls", "--bogus"],
        ] {
            assert!(!is_read_only_command(&cmd(no)), "{no:?}");
        }
    }
}
