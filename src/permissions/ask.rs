//! What is missing for a call to be allowed ([`Gap`]), and the words and rules built from it:
//! the reason shown to the person, what "for this session" covers, the rule "always allow"
//! saves, and the message a headless run gives the model when no one can be asked.

use std::path::{Path, PathBuf};

use crate::shell::ShellCommand;
use crate::tools::ToolKind;

/// A rule of `kind`'s word (`Edit(spec)`); every kind this module writes rules for has one.
fn kind_rule(kind: ToolKind, spec: &str) -> String {
    kind.rule(spec).unwrap_or_default()
}

/// One thing no rule, mode or grant allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gap {
    /// A file read or write.
    Path {
        path: PathBuf,
        write: bool,
        why: PathWhy,
    },
    /// One simple command of a command line.
    Command(ShellCommand),
    /// A read-only git command that the repository's own configuration could make run a
    /// program (the reason says which setting).
    RepoConfig {
        cmd: ShellCommand,
        why: String,
    },
    /// A command read-only by its words that could not be confirmed read-only where it runs
    /// (a filename pattern matching an option, a program not found on `PATH`).
    Unverified {
        cmd: ShellCommand,
        why: String,
    },
    /// A command read-only by its words, run with settings `env` variables that change what
    /// it executes.
    ToolEnv {
        cmd: ShellCommand,
        vars: String,
    },
    /// Something in a command line that is never auto-allowed.
    Hazard(String),
    Host(String),
    Name(String),
    /// A tool with nothing more specific to grant.
    Tool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathWhy {
    NotAllowed,
    Outside,
    Protected,
}

/// Programs whose rule is the exact command, never a prefix: a prefix would allow too much.
const EXACT_ONLY: &[&str] = &[
    "rm", "rmdir", "mv", "cp", "chmod", "chown", "dd", "sudo", "su", "curl", "wget", "kill",
    "pkill", "killall", "shutdown", "reboot", "mkfs", "ssh", "scp", "rsync", "sh", "bash",
];
/// Programs whose first argument is a subcommand worth keeping in the prefix.
const SUBCOMMANDS: &[&str] = &[
    "git",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "cargo",
    "go",
    "docker",
    "kubectl",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "deno",
    "dotnet",
    "gradle",
    "mvn",
    "rustup",
    "brew",
    "helm",
    "terraform",
    "make",
];

/// The normalised rule pattern for a command: `npm test *`, `npm run build *`, or the exact
/// command for risky programs.
pub fn command_pattern(cmd: &ShellCommand) -> String {
    let w = &cmd.words;
    let program = cmd.program();
    if EXACT_ONLY.contains(&program) || w.is_empty() {
        return cmd.text();
    }
    let is_sub = |i: usize| w.get(i).is_some_and(|s| !s.starts_with('-'));
    if SUBCOMMANDS.contains(&program) && is_sub(1) {
        if matches!(program, "npm" | "pnpm" | "yarn" | "bun") && w[1] == "run" && is_sub(2) {
            return format!("{} run {} *", w[0], w[2]);
        }
        return format!("{} {} *", w[0], w[1]);
    }
    format!("{} *", w[0])
}

/// How a path is written in a rule relative to the project: `src/main.rs`, `./main.rs`
/// (a bare name would match at any depth), or `//abs/path` outside it.
pub fn path_in_rule(path: &Path, project_dir: &Path) -> String {
    match path.strip_prefix(project_dir) {
        Ok(rel) if !rel.as_os_str().is_empty() => {
            let rel = rel.to_string_lossy();
            if rel.contains('/') {
                rel.into_owned()
            } else {
                format!("./{rel}")
            }
        }
        _ => format!("/{}", path.display()),
    }
}

/// For a gap: the session rule, the rule "always allow" would save, and the scope in words.
/// None when nothing but a person's "yes, once" can allow it.
pub fn gap_rule(gap: &Gap, tool: &str, project_dir: &Path) -> Option<(String, String, String)> {
    let shown = |p: &Path| match p.strip_prefix(project_dir) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => p.display().to_string(),
    };
    match gap {
        Gap::Path {
            path,
            write,
            why: PathWhy::NotAllowed | PathWhy::Outside,
        } => {
            let family = if *write {
                ToolKind::Edit
            } else {
                ToolKind::Read
            };
            let verb = if *write { "edits to" } else { "reads of" };
            Some((
                kind_rule(family, &format!("/{}", path.display())),
                kind_rule(family, &path_in_rule(path, project_dir)),
                format!("{verb} {}", shown(path)),
            ))
        }
        // A protected path: a session grant for that exact file is possible, a saved rule is
        // not (it would never take effect).
        Gap::Path {
            path,
            why: PathWhy::Protected,
            ..
        } => Some((
            kind_rule(ToolKind::Edit, &format!("/{}", path.display())),
            String::new(),
            format!("edits to {}", shown(path)),
        )),
        Gap::Command(cmd)
        | Gap::RepoConfig { cmd, .. }
        | Gap::Unverified { cmd, .. }
        | Gap::ToolEnv { cmd, .. } => {
            let pattern = command_pattern(cmd);
            let rule = kind_rule(ToolKind::Execute, &pattern);
            Some((rule.clone(), rule, format!("commands matching `{pattern}`")))
        }
        Gap::Hazard(_) => None,
        Gap::Host(host) => {
            let rule = kind_rule(ToolKind::Fetch, &format!("domain:{host}"));
            Some((rule.clone(), rule, format!("fetches from {host}")))
        }
        Gap::Name(name) => {
            let rule = format!("{tool}({name})");
            Some((rule.clone(), rule, format!("{tool} {name}")))
        }
        Gap::Tool => Some((
            tool.to_string(),
            tool.to_string(),
            format!("all {tool} calls"),
        )),
    }
}

/// Why the person is asked, in one line.
pub fn gap_reason(gap: &Gap, tool: &str, project_dir: &Path) -> String {
    match gap {
        Gap::Path { path, write, why } => {
            let what = if *write { "writes" } else { "reads" };
            match why {
                PathWhy::Protected => format!(
                    "{tool} {what} {}, a protected path (shell, git or tool configuration, keys, secrets or dependencies)",
                    path.display()
                ),
                PathWhy::Outside => format!(
                    "{tool} {what} {}, outside the working directories",
                    path.display()
                ),
                PathWhy::NotAllowed => format!(
                    "{tool} {what} {} and no rule allows it",
                    path_in_rule(path, project_dir).trim_start_matches("./")
                ),
            }
        }
        Gap::Command(cmd) => format!("no rule allows the command `{}`", cmd.text()),
        Gap::RepoConfig { cmd, why } => format!(
            "`{}` would use this repository's git configuration, and {why}",
            cmd.text()
        ),
        Gap::Unverified { cmd, why } => {
            format!("`{}` only reads by its words, but {why}", cmd.text())
        }
        Gap::ToolEnv { cmd, vars } => format!(
            "`{}` would run with the settings' `env` setting {vars}, which changes what commands \
             run, so no command is allowed as read-only",
            cmd.text()
        ),
        Gap::Hazard(h) => format!("the command contains {h}, which is never auto-allowed"),
        Gap::Host(h) => format!("no rule allows fetching from {h}"),
        Gap::Name(n) => format!("no rule allows {tool} {n}"),
        Gap::Tool => format!("no rule allows {tool}"),
    }
}

/// The tool result when a call would ask but no one can answer.
pub fn headless_message(
    tool: &str,
    reason: &str,
    rules: &[String],
    dont_ask: bool,
    write: bool,
) -> String {
    let why = if dont_ask {
        "the permission mode is dontAsk, which denies anything no rule allows"
    } else {
        "no one can be asked in non-interactive mode"
    };
    let mut msg = format!("Permission to use {tool} was denied: {reason}, and {why}.");
    if rules.is_empty() {
        msg.push_str(
            " No rule can allow this; only a person can approve it in an interactive session \
             (or --permission-mode bypassPermissions).",
        );
    } else {
        let list = rules.join(" ");
        msg.push_str(&format!(
            " To allow it, run with --allowedTools \"{list}\" or add {} to permissions.allow \
             in .cairn/settings.json",
            rules
                .iter()
                .map(|r| format!("\"{r}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        if write {
            msg.push_str(" (or run with --permission-mode acceptEdits)");
        }
        msg.push('.');
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> ShellCommand {
        ShellCommand {
            words: s.split(' ').map(String::from).collect(),
            literal: true,
            dir: Default::default(),
            globs: Vec::new(),
            xargs: None,
        }
    }

    #[test]
    fn command_prefixes() {
        assert_eq!(command_pattern(&cmd("npm test")), "npm test *");
        assert_eq!(
            command_pattern(&cmd("npm run build --prod")),
            "npm run build *"
        );
        assert_eq!(command_pattern(&cmd("cargo test --lib x")), "cargo test *");
        assert_eq!(command_pattern(&cmd("rm -rf target")), "rm -rf target");
        assert_eq!(command_pattern(&cmd("pytest tests/")), "pytest *");
    }

    #[test]
    fn paths_in_rules() {
        let p = Path::new("/p");
        assert_eq!(path_in_rule(Path::new("/p/src/main.rs"), p), "src/main.rs");
        assert_eq!(path_in_rule(Path::new("/p/main.rs"), p), "./main.rs");
        assert_eq!(path_in_rule(Path::new("/etc/hosts"), p), "//etc/hosts");
    }
}
