//! The facts the gate keeps about one simple command of a command line ([`CommandItem`]):
//! its path arguments resolved in every directory it may run in, and whether it only reads
//! there. Filename patterns are expanded where the command runs, so the option grammars and
//! the path checks see the names the program will get; a git command's repository
//! configuration is checked; `PROGRAM --version` needs the program on `PATH`, outside the
//! project. Decides nothing about rules or modes ([`super::decide`] does).

use std::path::Path;

use super::PermissionGate;
use super::roots::ConversationRoots;
use super::safety::{path_facts, shell_path, shell_path_facts};
use crate::shell::{Dirs, ShellCommand, env_policy, git_config, glob, path_arguments, readonly};

pub(super) struct CommandItem {
    pub cmd: ShellCommand,
    /// Its path-like arguments, resolved against every directory the command may run in.
    pub args: Vec<Result<super::safety::PathFacts, String>>,
    /// A known read-only command in every directory it may run in.
    pub read_only: bool,
    /// Why a git command read-only by its words is not, given the repository it would run in.
    pub concern: Option<String>,
    /// Why a command read-only by its words could not be confirmed so where it runs.
    pub unverified: Option<String>,
    /// The settings' `env` variables that change what it executes, when it would otherwise
    /// be read-only (`PATH, BASH_ENV`).
    pub exec_env: Option<String>,
}

impl PermissionGate {
    /// A command with its path arguments resolved in every directory it may run in, and
    /// whether it is read-only there (for git: the repository's configuration included).
    /// `roots`: where the calling conversation works.
    pub(super) fn command_item(
        &self,
        cmd: ShellCommand,
        cwd: &Path,
        roots: &ConversationRoots,
    ) -> CommandItem {
        let mut args = Vec::new();
        let mut dirs = Vec::new();
        let mut unverified = None;
        // Every expansion of its patterns only reads too.
        let mut expansions_read = true;
        match &cmd.dir {
            Dirs::Unknown(why) => args.push(Err(format!(
                "the directory it runs in is only known when it runs ({why})"
            ))),
            Dirs::Known(known) => {
                for d in known {
                    match shell_path(cwd, d) {
                        Ok(base) => {
                            let run = if cmd.globs.is_empty() {
                                cmd.clone()
                            } else {
                                match glob::expand(&cmd, &base) {
                                    Ok(run) => {
                                        expansions_read &= readonly::is_read_only_command(&run);
                                        run
                                    }
                                    Err(why) => {
                                        unverified.get_or_insert(why);
                                        cmd.clone()
                                    }
                                }
                            };
                            for a in path_arguments(&run) {
                                args.push(shell_path(&base, &a).and_then(|p| {
                                    shell_path_facts(&p, &roots.working, &self.data)
                                        .map(|f| roots.apply(f))
                                }));
                            }
                            dirs.push(base);
                        }
                        Err(e) => args.push(Err(e)),
                    }
                }
            }
        }
        let by_words = readonly::is_read_only_as_written(&cmd) && expansions_read;
        // Variables that make any command run something else: no read-only allowance at all.
        let exec_env = (by_words && !self.exec_env.is_empty()).then(|| self.exec_env.join(", "));
        let env = |name: &str| env_policy::tool_var(&self.tool_env, name);
        let concern = match cmd.program() {
            "git" if by_words && exec_env.is_none() => {
                dirs.iter().find_map(|d| git_config::check(d, &env).err())
            }
            _ => None,
        };
        if by_words && readonly::is_version_query(&cmd) {
            unverified = unverified.or_else(|| self.program_concern(cmd.program(), roots));
        }
        let unverified = unverified.filter(|_| by_words);
        let read_only = by_words
            && exec_env.is_none()
            && concern.is_none()
            && unverified.is_none()
            && !dirs.is_empty()
            && matches!(cmd.dir, Dirs::Known(_));
        CommandItem {
            cmd,
            args,
            read_only,
            concern,
            unverified,
            exec_env,
        }
    }

    /// Why running `program` by name is not known to start a program from outside the
    /// project (None when it is).
    fn program_concern(&self, program: &str, roots: &ConversationRoots) -> Option<String> {
        let path = env_policy::tool_var(&self.tool_env, "PATH");
        match readonly::find_on_path(program, path.as_deref()) {
            Err(why) => Some(why),
            Ok(found) => match path_facts(&found, &roots.working, &self.data) {
                Err(why) => Some(why),
                Ok(facts) => facts
                    .candidates
                    .iter()
                    .any(|c| {
                        // The session's directories count too (an isolated agent's project).
                        roots.working.containing(c).is_some()
                            || self.working.containing(c).is_some()
                    })
                    .then(|| {
                        format!(
                            "`{}` is a program inside the working directories",
                            found.display()
                        )
                    }),
            },
        }
    }
}
