//! Custom slash commands, as Claude Code reads them: Markdown files in `.claude/commands/` of the
//! project and of the user's home (and the `.cairn/` equivalents), subfolders making namespaces
//! (`frontend/component.md` is `/frontend:component`). The YAML frontmatter (`frontmatter.rs`)
//! gives `description`, `argument-hint`, `allowed-tools`, `model` and `disable-model-invocation`
//! (the model is offered every command through the Skill tool but those); the body is the prompt, with `$ARGUMENTS` and
//! `$1`..`$9` replaced by what follows the command, and each `` !`cmd` `` replaced by the
//! command's output (the core runs them as Bash calls, through the permission system, before
//! the arguments are filled in, so arguments never become commands). A command of the project
//! shadows a user command of the same name. A file whose frontmatter does not close is reported
//! and skipped. The discovery here (commands, skills, agents, output styles) reads a file only
//! when it resolves, after symlinks, inside the directory whose `.claude/` holds it — the
//! project for the project's, the home for the user's (`/proc`, `/sys`, `/dev` never): a file
//! or folder that is a symlink out of it is reported and skipped before it is opened.

pub mod agents;
pub mod frontmatter;
pub mod skills;

use std::path::{Path, PathBuf};

use crate::files::containment::{Refusal, resolve_inside};

/// One command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Without the slash (`frontend:component`).
    pub name: String,
    pub description: String,
    pub argument_hint: Option<String>,
    pub allowed_tools: Vec<String>,
    pub model: Option<String>,
    /// Only the person may run it: it is not offered to the model through the Skill tool.
    pub disable_model_invocation: bool,
    pub body: String,
    pub path: PathBuf,
}

/// What was found (each name once, the first found winning), and one line per file that could
/// not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<T> {
    pub items: Vec<T>,
    pub problems: Vec<String>,
}

impl<T> Default for Found<T> {
    fn default() -> Found<T> {
        Found {
            items: Vec::new(),
            problems: Vec::new(),
        }
    }
}

impl<T> Found<T> {
    /// Keep `item` unless one of the same name (`name_of`) was found first.
    pub(crate) fn add(&mut self, item: Result<T, String>, name_of: impl Fn(&T) -> &str) {
        match item {
            Ok(t) if self.items.iter().all(|i| name_of(i) != name_of(&t)) => self.items.push(t),
            Ok(_) => {}
            Err(e) => self.problems.push(e),
        }
    }
}

/// A directory holding files of one kind, and the directory they must resolve inside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Root {
    pub dir: PathBuf,
    /// The project directory for the project's files, the home for the user's: a file (or the
    /// directory itself) that is a symlink out of it is skipped, never read.
    pub bound: PathBuf,
}

impl Root {
    /// The text of `file` (a `what`, found under this root), read only when it resolves inside
    /// the bound; the refusal or the read error as a problem line otherwise.
    pub(crate) fn read(&self, file: &Path, what: &str) -> Result<String, String> {
        let real = resolve_inside(file, &self.bound)
            .map_err(|e| format!("{}: {what} skipped: {e}", file.display()))?;
        std::fs::read_to_string(&real).map_err(|e| format!("{}: {e}", file.display()))
    }
}

/// The directories holding `kind` (`commands`, `skills`): the project's `.claude/` and `.cairn/`,
/// then the user's.
fn roots(project: &Path, home: Option<&Path>, kind: &str) -> Vec<Root> {
    let mut bases = vec![project];
    bases.extend(home);
    bases
        .iter()
        .flat_map(|b| {
            [".claude", ".cairn"].map(|dot| Root {
                dir: b.join(dot).join(kind),
                bound: b.to_path_buf(),
            })
        })
        .collect()
}

/// The [`roots`] of `kind` that exist and resolve inside their bounds; one problem line for
/// each that resolves outside (it is not listed at all).
pub(crate) fn present_roots(
    project: &Path,
    home: Option<&Path>,
    kind: &str,
    problems: &mut Vec<String>,
) -> Vec<Root> {
    let mut out = Vec::new();
    for root in roots(project, home, kind) {
        match resolve_inside(&root.dir, &root.bound) {
            Ok(real) if real.is_dir() => out.push(root),
            Ok(_) | Err(Refusal::Missing { .. }) => {}
            Err(e) => problems.push(format!(
                "{}: {kind} folder skipped: {e}",
                root.dir.display()
            )),
        }
    }
    out
}

/// The Markdown files directly in `dir`, sorted (none when it cannot be read). Metadata only:
/// [`Root::read`] decides whether one may be read.
pub(crate) fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
}

/// Commands of the project (`project/.claude/commands`, `.cairn/commands`), then of the user.
pub fn discover(project: &Path, home: Option<&Path>) -> Found<CustomCommand> {
    let mut out = Found::default();
    for root in present_roots(project, home, "commands", &mut out.problems) {
        let mut files = Vec::new();
        collect(&root.dir, &mut files, 0);
        files.sort();
        for file in files {
            let command = read_command(&root, &file, &mut out.problems);
            out.add(command, |c| c.name.as_str());
        }
    }
    out.items.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

pub(crate) fn collect(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() && depth < 4 => collect(&path, out, depth + 1),
            // A linked file is listed (and read only when it resolves inside the bound); a
            // linked folder is not walked.
            Ok(t)
                if (t.is_file() || t.is_symlink() && path.is_file())
                    && path.extension().is_some_and(|e| e == "md") =>
            {
                out.push(path)
            }
            _ => {}
        }
    }
}

pub(crate) fn read_command(
    root: &Root,
    file: &Path,
    notices: &mut Vec<String>,
) -> Result<CustomCommand, String> {
    let text = root.read(file, "command")?;
    let rel = file
        .strip_prefix(&root.dir)
        .unwrap_or(file)
        .with_extension("");
    let name = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(":");
    let (mut front, body) = frontmatter::parse(&text, file, "command")?;
    let description = front
        .text("description")
        .unwrap_or_else(|| first_line(body));
    let Invocable {
        argument_hint,
        allowed_tools,
        model,
        disable_model_invocation,
    } = Invocable::read(&mut front);
    let command = CustomCommand {
        name,
        description,
        argument_hint,
        allowed_tools,
        model,
        disable_model_invocation,
        body: body.to_string(),
        path: file.to_path_buf(),
    };
    notices.extend(front.finish(skills::KNOWN_FIELDS));
    Ok(command)
}

/// The frontmatter fields commands and skills share.
pub(crate) struct Invocable {
    pub argument_hint: Option<String>,
    pub allowed_tools: Vec<String>,
    pub model: Option<String>,
    pub disable_model_invocation: bool,
}

impl Invocable {
    /// Read from `front`; an unreadable `allowed-tools` allows nothing.
    pub(crate) fn read(front: &mut frontmatter::Front) -> Invocable {
        Invocable {
            argument_hint: front.text("argument-hint"),
            allowed_tools: front
                .names("allowed-tools", "nothing is allowed without asking")
                .names(),
            model: front.text("model"),
            disable_model_invocation: front.flag("disable-model-invocation").unwrap_or(false),
        }
    }
}

/// The first non-empty line of `body`, up to 80 characters (a description when none is given).
pub(crate) fn first_line(body: &str) -> String {
    body.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim()
        .chars()
        .take(80)
        .collect()
}

pub use crate::suggest::closest_names;

/// `/name args` split into the name and the (trimmed) arguments; `None` without the slash, or
/// when what follows it cannot be a command's name (`/etc/hosts is wrong`, `/ hello`, `/*`):
/// that is an ordinary prompt.
pub fn invocation(prompt: &str) -> Option<(&str, &str)> {
    let rest = prompt.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let command_like = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    command_like.then(|| (name, args.trim()))
}

/// The command `/name args` invokes, and its arguments; `None` when `name` is not one of
/// `commands`.
pub fn find<'c, 'p>(
    commands: &'c [CustomCommand],
    prompt: &'p str,
) -> Option<(&'c CustomCommand, &'p str)> {
    let (name, args) = invocation(prompt)?;
    let cmd = commands.iter().find(|c| c.name == name)?;
    Some((cmd, args))
}

/// A part of a command's body: text, or a `` !`cmd` `` whose output takes its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    Text(&'a str),
    Shell(&'a str),
}

/// `body` cut at its `` !`cmd` `` parts (an empty command is text).
pub fn pieces(body: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find("!`") {
        let after = &rest[start + 2..];
        let Some(len) = after.find('`').filter(|&n| !after[..n].trim().is_empty()) else {
            break;
        };
        if start > 0 {
            out.push(Piece::Text(&rest[..start]));
        }
        out.push(Piece::Shell(after[..len].trim()));
        rest = &after[len + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

/// `body` with `$ARGUMENTS` and `$1`..`$9` filled in; arguments a body does not use are added
/// at the end, as Claude Code does.
pub fn fill(body: &str, args: &str) -> String {
    let words: Vec<&str> = args.split_whitespace().collect();
    let mut used = body.contains("$ARGUMENTS");
    let mut out = body.replace("$ARGUMENTS", args);
    for n in (1..=9).rev() {
        let key = format!("${n}");
        if out.contains(&key) {
            used = true;
            out = out.replace(&key, words.get(n - 1).copied().unwrap_or(""));
        }
    }
    if !used && !args.is_empty() {
        out = format!("{}\n\nARGUMENTS: {args}", out.trim_end());
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests;
