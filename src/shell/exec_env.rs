//! Environment variables that change what a command executes. A command that only reads by
//! its words (`ls`, `git status`, `grep`) still runs whatever its environment tells the shell,
//! the loader or the program to run: `BASH_ENV` is sourced by every non-interactive bash,
//! `PATH=./bin:…` makes `ls` the repository's `./bin/ls`, `LD_PRELOAD` loads a library into
//! every program, `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_0=core.fsmonitor` makes `git status` run a
//! program, `HOME` moves `~/.gitconfig` and `~/.jq` into the repository. This module names that
//! class, once; the permission gate withdraws the read-only allowance when the settings' `env`
//! sets any of it, and the shell analysis treats a `NAME=value` prefix of the class as a
//! hazard. It decides nothing by itself.
//!
//! The class, by who reads the variable:
//! - the shell: `BASH_ENV`, `ENV` (sourced at startup), `ZDOTDIR` (zsh's `.zshenv`),
//!   `SHELLOPTS`/`BASHOPTS` (e.g. `xtrace`, whose `PS4` is expanded with command substitution),
//!   `PS4`, `PROMPT_COMMAND`, `IFS`, `GLOBIGNORE`, `CDPATH`, `BASH_FUNC_*` (exported functions:
//!   `BASH_FUNC_ls%%` replaces `ls`), `BASH_LOADABLES_PATH`, `INPUTRC`, `SHELL` (what programs
//!   run commands with), `HOME` and `XDG_CONFIG_HOME` (where every program finds its own
//!   configuration: `~/.gitconfig`, `~/.jq`, `~/.config/git/config`);
//! - program lookup and the dynamic loader: `PATH`, `LD_*`, `DYLD_*`, `GCONV_PATH` (glibc loads
//!   iconv modules from it);
//! - git: every `GIT_*` variable except a few that only describe data (the config variables
//!   `GIT_CONFIG_*`, `GIT_CONFIG_PARAMETERS`, `GIT_EXEC_PATH`, `GIT_SSH*`, `GIT_PAGER`,
//!   `GIT_EDITOR`, `GIT_EXTERNAL_DIFF`, `GIT_ASKPASS`, `GIT_PROXY_COMMAND`, `GIT_TEMPLATE_DIR`,
//!   which repository is used (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_COMMON_DIR`,
//!   `GIT_CEILING_DIRECTORIES`, …) and `GIT_TRACE*`, which write files);
//! - pagers, editors and helpers other programs start: any name ending in `PAGER`, `EDITOR` or
//!   `ASKPASS` (`PAGER`, `MANPAGER`, `EDITOR`, `VISUAL`, `SSH_ASKPASS`, …), `VISUAL`, `BROWSER`,
//!   `LESSOPEN`, `LESSCLOSE`, `LESS` (options, `+!cmd` included), `LESSKEY`, `MANOPT`,
//!   `RIPGREP_CONFIG_PATH` (an rg configuration can name a `--pre` program);
//! - language runtimes (for read-only tools that are scripts): `PYTHONSTARTUP`, `PYTHONPATH`,
//!   `PYTHONHOME`, `PYTHONWARNINGS` (imports the named categories), `NODE_OPTIONS`
//!   (`--require`), `NODE_PATH`, `PERL5OPT`, `PERL5LIB`, `PERLLIB`, `PERL5DB`, `RUBYOPT`,
//!   `RUBYLIB`, `JAVA_TOOL_OPTIONS`, `_JAVA_OPTIONS`, `JDK_JAVA_OPTIONS`, `LUA_INIT`, `LUA_PATH`,
//!   `LUA_CPATH`.

/// Exact names in the class.
const NAMES: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "ZDOTDIR",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "IFS",
    "GLOBIGNORE",
    "CDPATH",
    "BASH_LOADABLES_PATH",
    "INPUTRC",
    "SHELL",
    "HOME",
    "XDG_CONFIG_HOME",
    "PATH",
    "GCONV_PATH",
    "VISUAL",
    "BROWSER",
    "LESSOPEN",
    "LESSCLOSE",
    "LESS",
    "LESSKEY",
    "MANOPT",
    "RIPGREP_CONFIG_PATH",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONWARNINGS",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "PERL5DB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "LUA_INIT",
    "LUA_PATH",
    "LUA_CPATH",
];

/// Prefixes of names in the class (`GIT_` with the exceptions below).
const PREFIXES: &[&str] = &["LD_", "DYLD_", "BASH_FUNC_", "GIT_"];

/// Suffixes of names in the class: the programs other programs start.
const SUFFIXES: &[&str] = &["PAGER", "EDITOR", "ASKPASS"];

/// `GIT_*` variables that only describe data or turn something off.
const GIT_DATA: &[&str] = &[
    "GIT_TERMINAL_PROMPT",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_OPTIONAL_LOCKS",
    "GIT_FLUSH",
    "GIT_ADVICE",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_MERGE_VERBOSITY",
    "GIT_HTTP_USER_AGENT",
];

/// Whether setting `name` can change what a command executes (see the module docs).
pub fn changes_execution(name: &str) -> bool {
    if NAMES.contains(&name) || SUFFIXES.iter().any(|s| name.ends_with(s)) {
        return true;
    }
    PREFIXES
        .iter()
        .any(|p| name.starts_with(p) && !(*p == "GIT_" && GIT_DATA.contains(&name)))
}

/// The names of `env` in the class, in order.
pub fn names_in<'a>(env: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    env.into_iter()
        .filter(|n| changes_execution(n))
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_class() {
        for name in [
            "BASH_ENV",
            "ENV",
            "PATH",
            "IFS",
            "SHELLOPTS",
            "BASHOPTS",
            "PS4",
            "PROMPT_COMMAND",
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "DYLD_INSERT_LIBRARIES",
            "BASH_FUNC_ls%%",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_KEY_0",
            "GIT_CONFIG_VALUE_0",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_GLOBAL",
            "GIT_CONFIG_SYSTEM",
            "GIT_CONFIG_NOSYSTEM",
            "GIT_EXEC_PATH",
            "GIT_SSH",
            "GIT_SSH_COMMAND",
            "GIT_PAGER",
            "GIT_EDITOR",
            "GIT_EXTERNAL_DIFF",
            "GIT_ASKPASS",
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_TRACE",
            "GIT_TRACE2_EVENT",
            "PAGER",
            "MANPAGER",
            "EDITOR",
            "VISUAL",
            "SSH_ASKPASS",
            "LESSOPEN",
            "LESSCLOSE",
            "PYTHONSTARTUP",
            "PYTHONPATH",
            "NODE_OPTIONS",
            "PERL5OPT",
            "RUBYOPT",
            "HOME",
            "XDG_CONFIG_HOME",
            "RIPGREP_CONFIG_PATH",
        ] {
            assert!(changes_execution(name), "{name}");
        }
        for name in [
            "RUST_LOG",
            "NODE_ENV",
            "LANG",
            "TERM",
            "GIT_TERMINAL_PROMPT",
            "GIT_AUTHOR_NAME",
            "CI",
            "MY_PATH_HINT",
            "ANTHROPIC_API_KEY",
        ] {
            assert!(!changes_execution(name), "{name}");
        }
        assert_eq!(
            names_in(["RUST_LOG", "PATH", "CI", "GIT_CONFIG_COUNT"]),
            ["PATH", "GIT_CONFIG_COUNT"]
        );
    }
}
