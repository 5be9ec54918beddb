//! Which `git` invocations only read, by their words: harmless global options, a closed list of
//! subcommands, and for each the options known to only read (exact names: `--ext-diff`,
//! `--textconv`, `--output`, `-O`/`--open-files-in-pager` and anything unlisted fail). What the
//! repository's own configuration could make git run is checked separately
//! ([`super::git_config`]), since it depends on the directory the command runs in.

use super::grammars::exact;
use super::options::{Grammar, parse};

/// Global options before the subcommand that change nothing git runs. `-c`, `--config-env`,
/// `-C`, `--git-dir`, `--work-tree`, `--exec-path`, `-p`/`--paginate` are not among them.
const GLOBAL_SAFE: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-replace-objects",
];

/// Options shared by the diff machinery (log, show, diff): formatting only.
const DIFF_OPTS: &str = "patch no-patch unified= raw patch-with-raw patch-with-stat \
    numstat shortstat stat? compact-summary dirstat? summary name-only name-status \
    no-renames find-renames? find-copies? find-copies-harder irreversible-delete \
    diff-filter= minimal patience histogram diff-algorithm= anchored= indent-heuristic \
    no-indent-heuristic word-diff? word-diff-regex= color? no-color color-words? color-moved? \
    no-color-moved ignore-space-change ignore-all-space ignore-blank-lines \
    ignore-space-at-eol ignore-cr-at-eol function-context exit-code quiet check full-index \
    binary abbrev? no-prefix src-prefix= dst-prefix= line-prefix= relative? no-relative \
    text no-ext-diff no-textconv ignore-submodules? inter-hunk-context= stat-width= \
    stat-name-width= stat-count= stat-graph-width= merge-base cached staged no-index";

/// Options of the revision walk (log, show, shortlog).
const REV_OPTS: &str = "oneline graph all decorate? no-decorate max-count= skip= since= \
    after= until= before= author= committer= grep= all-match invert-grep \
    regexp-ignore-case basic-regexp extended-regexp fixed-strings perl-regexp format= \
    pretty? abbrev-commit no-abbrev-commit date= relative-date follow reverse merges \
    no-merges min-parents= max-parents= first-parent topo-order date-order \
    author-date-order branches? tags? remotes? left-right left-only right-only cherry-pick \
    cherry-mark cherry boundary no-walk? do-walk walk-reflogs ancestry-path? full-history \
    simplify-by-decoration simplify-merges dense sparse source parents children \
    use-mailmap mailmap no-mailmap log-size no-notes encoding= expand-tabs? no-expand-tabs \
    show-linear-break? count";

/// The grammar of a read-only subcommand, plus whether operands are allowed freely.
fn subcommand(sub: &str) -> Option<(Grammar<'static>, &'static str)> {
    const LOG_FLAGS: &str = "pusqzwbaRWDt";
    const LOG_VALUED: &str = "nSGUL";
    Some(match sub {
        "log" | "show" | "whatchanged" => (
            Grammar {
                digits: true,
                ..exact(LOG_FLAGS, LOG_VALUED, "")
            },
            "log",
        ),
        "diff" => (exact(LOG_FLAGS, "SGU", ""), "diff"),
        "shortlog" => (
            exact(
                "nsec",
                "w",
                "summary numbered email committer group= format= w?",
            ),
            "log",
        ),
        "status" => (
            exact(
                "sbvz",
                "",
                "short branch porcelain? long verbose untracked-files? ignored? \
                 ignore-submodules? column? no-column ahead-behind no-ahead-behind renames \
                 no-renames find-renames? show-stash null",
            ),
            "",
        ),
        "rev-parse" => (
            exact(
                "q",
                "",
                "show-toplevel show-prefix show-cdup git-dir git-common-dir absolute-git-dir \
                 is-inside-work-tree is-inside-git-dir is-bare-repository \
                 is-shallow-repository abbrev-ref? short? verify symbolic-full-name symbolic \
                 quiet show-superproject-working-tree path-format= git-path= \
                 show-object-format? all branches? tags? remotes?",
            ),
            "",
        ),
        "ls-files" => (
            exact(
                "cdoisukmtvfz",
                "xX",
                "cached deleted others ignored stage unmerged killed modified exclude= \
                 exclude-from= exclude-standard directory no-empty-directory full-name \
                 abbrev? error-unmatch eol deduplicate format=",
            ),
            "",
        ),
        "blame" => (
            exact(
                "bltsefnpcwMC",
                "L",
                "porcelain line-porcelain incremental root show-stats show-name show-number \
                 show-email date= abbrev= color-lines color-by-age no-progress minimal \
                 first-parent",
            ),
            "",
        ),
        "describe" => (
            exact(
                "",
                "",
                "all tags contains abbrev= candidates= exact-match debug long match= \
                 exclude= always first-parent dirty? broken?",
            ),
            "",
        ),
        "cat-file" => (exact("tsep", "", "allow-unknown-type follow-symlinks"), ""),
        "ls-tree" => (
            exact(
                "drtlz",
                "",
                "name-only name-status object-only long full-name full-tree abbrev? format=",
            ),
            "",
        ),
        "grep" => (
            exact(
                "iIwvhHnlLcozEFGPa",
                "efABCm",
                "cached untracked no-index exclude-standard no-exclude-standard text \
                 ignore-case word-regexp invert-match full-name extended-regexp \
                 basic-regexp fixed-strings perl-regexp line-number column \
                 files-with-matches name-only files-without-match null count color? \
                 no-color break heading show-function function-context after-context= \
                 before-context= context= threads= max-depth= max-count= only-matching \
                 quiet all-match and or not",
            ),
            "",
        ),
        "branch" => (
            exact(
                "arvl",
                "",
                "list all remotes show-current verbose contains= no-contains= merged= \
                 no-merged= sort= format= points-at= color? no-color column? no-column \
                 ignore-case abbrev= omit-empty",
            ),
            "list",
        ),
        "tag" => (
            exact(
                "l",
                "",
                "list sort= contains= no-contains= points-at= format= merged= no-merged= \
                 column? no-column ignore-case omit-empty",
            ),
            "list",
        ),
        "remote" => (exact("v", "", "verbose"), "remote"),
        _ => return None,
    })
}

/// Whether `git <args>` only reads, judged by its words alone.
pub fn is_read_only(args: &[String]) -> bool {
    let mut i = 0;
    while args
        .get(i)
        .is_some_and(|a| GLOBAL_SAFE.contains(&a.as_str()))
    {
        i += 1;
    }
    let Some(sub) = args.get(i) else {
        return false;
    };
    let rest = &args[i + 1..];
    if sub == "reflog" {
        return reflog(rest);
    }
    let Some((g, kind)) = subcommand(sub) else {
        return false;
    };
    let long = match kind {
        "log" => format!("{REV_OPTS} {DIFF_OPTS} {}", g.long),
        "diff" => format!("{DIFF_OPTS} {}", g.long),
        _ => g.long.to_string(),
    };
    let g = Grammar { long: &long, ..g };
    let Ok(parsed) = parse(&g, rest) else {
        return false;
    };
    match kind {
        // `git branch NAME` creates a branch; only `--list`/`-l` take patterns.
        "list" => parsed.operands.is_empty() || parsed.has("list") || parsed.has("l"),
        // `git remote show` talks to the remote; only listing and `get-url` stay local.
        "remote" => {
            parsed.operands.is_empty()
                || (parsed.operands.len() == 2 && parsed.operands[0] == "get-url")
        }
        _ => true,
    }
}

/// `git reflog [show] …` reads; `expire`, `delete`, `drop`, `write` change the reflog.
fn reflog(rest: &[String]) -> bool {
    match rest.first().map(String::as_str) {
        Some("expire" | "delete" | "drop" | "write") => false,
        Some("exists") => rest.len() == 2 && !rest[1].starts_with('-'),
        Some("show") => is_read_only(&prefixed("log", &rest[1..])),
        _ => is_read_only(&prefixed("log", rest)),
    }
}

fn prefixed(sub: &str, rest: &[String]) -> Vec<String> {
    std::iter::once(sub.to_string())
        .chain(rest.iter().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ro(s: &str) -> bool {
        let words: Vec<String> = s.split_whitespace().map(String::from).collect();
        is_read_only(&words)
    }

    #[test]
    fn subcommands_and_options() {
        for yes in [
            "status",
            "status --short -b",
            "--no-pager log --oneline -5 -- src",
            "log -p -n 3 main..HEAD",
            "diff --cached --stat",
            "show HEAD:src/main.rs",
            "grep -n foo -- '*.rs'",
            "branch -a",
            "branch --list 'feat*'",
            "reflog",
            "reflog show -3",
            "remote -v",
            "rev-parse --show-toplevel",
        ] {
            assert!(ro(yes), "{yes}");
        }
        for no in [
            "reflog expire --expire=now --all",
            "reflog delete HEAD@{0}",
            "grep -Osh foo",
            "grep --open-files-in-pager=sh foo",
            "grep -O sh foo",
            "log --output=x",
            "log --outp=x",
            "diff --ext-diff",
            "diff --textconv",
            "-c core.pager=sh log",
            "-C /tmp status",
            "--git-dir=/x status",
            "-p log",
            "branch newbranch",
            "branch -D main",
            "tag v1",
            "remote show origin",
            "remote add x y",
            "push",
            "",
        ] {
            assert!(!ro(no), "{no}");
        }
    }
}
