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
use super::{git, git_config, grammars};

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

/// Whether `cmd`, judged by its words alone, only reads.
pub fn is_read_only_command(cmd: &ShellCommand) -> bool {
    if !cmd.literal {
        return false;
    }
    let args = &cmd.words[1.min(cmd.words.len())..];
    let program = cmd.program();
    match program {
        p if ANY_ARGS.contains(&p) => true,
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
            &["sed", "-n", "1p", "f"],
            &["ls", "--bogus"],
        ] {
            assert!(!is_read_only_command(&cmd(no)), "{no:?}");
        }
    }
}
