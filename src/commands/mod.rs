//! Custom slash commands, as Claude Code reads them: Markdown files in `.claude/commands/` of the
//! project and of the user's home (and the `.cairn/` equivalents), subfolders making namespaces
//! (`frontend/component.md` is `/frontend:component`). YAML frontmatter gives `description`,
//! `argument-hint`, `allowed-tools` and `model`; the body is the prompt, with `$ARGUMENTS` and
//! `$1`..`$9` replaced by what follows the command. A command of the project shadows a user
//! command of the same name. A file whose frontmatter does not close is reported and skipped.

pub mod skills;

use std::path::{Path, PathBuf};

/// One command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Without the slash (`frontend:component`).
    pub name: String,
    pub description: String,
    pub argument_hint: Option<String>,
    pub allowed_tools: Vec<String>,
    pub model: Option<String>,
    pub body: String,
    pub path: PathBuf,
}

/// The commands found, and one line per file that could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commands {
    pub commands: Vec<CustomCommand>,
    pub problems: Vec<String>,
}

/// Commands of the project (`project/.claude/commands`, `.cairn/commands`), then of the user.
pub fn discover(project: &Path, home: Option<&Path>) -> Commands {
    let mut roots = vec![
        project.join(".claude/commands"),
        project.join(".cairn/commands"),
    ];
    if let Some(home) = home {
        roots.push(home.join(".claude/commands"));
        roots.push(home.join(".cairn/commands"));
    }
    let mut out = Commands::default();
    for root in roots {
        let mut files = Vec::new();
        collect(&root, &mut files, 0);
        files.sort();
        for file in files {
            match read_command(&root, &file) {
                Ok(cmd) if out.commands.iter().all(|c| c.name != cmd.name) => {
                    out.commands.push(cmd)
                }
                Ok(_) => {}
                Err(e) => out.problems.push(e),
            }
        }
    }
    out.commands.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() && depth < 4 => collect(&path, out, depth + 1),
            Ok(t) if t.is_file() && path.extension().is_some_and(|e| e == "md") => out.push(path),
            _ => {}
        }
    }
}

fn read_command(root: &Path, file: &Path) -> Result<CustomCommand, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let rel = file.strip_prefix(root).unwrap_or(file).with_extension("");
    let name = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(":");
    let (front, body) = frontmatter(&text).map_err(|line| {
        format!(
            "{}:{line}: the frontmatter (from `---`) is not closed; command skipped",
            file.display()
        )
    })?;
    let field = |key: &str| {
        front
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let description = field("description").unwrap_or_else(|| {
        body.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .chars()
            .take(80)
            .collect()
    });
    Ok(CustomCommand {
        name,
        description,
        argument_hint: field("argument-hint"),
        allowed_tools: field("allowed-tools")
            .map(|v| {
                v.split(',')
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty())
                    .collect()
            })
            .unwrap_or_default(),
        model: field("model"),
        body: body.to_string(),
        path: file.to_path_buf(),
    })
}

/// The `key: value` pairs of a frontmatter block.
pub type Fields = Vec<(String, String)>;

/// `key: value` pairs of a leading `---` block, and the rest. Err(line of the opening `---`)
/// when the block never closes.
pub fn frontmatter(text: &str) -> Result<(Fields, &str), usize> {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok((Vec::new(), text));
    };
    let mut pairs = Vec::new();
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let trimmed = line.trim_end();
        if trimmed == "---" {
            return Ok((pairs, &rest[offset..]));
        }
        if let Some((k, v)) = trimmed.split_once(':') {
            let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
            pairs.push((k.trim().to_string(), v.to_string()));
        }
    }
    Err(1)
}

/// The prompt for `/name args` when `name` is one of `commands`; `None` otherwise.
pub fn expand(commands: &[CustomCommand], prompt: &str) -> Option<String> {
    let rest = prompt.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let cmd = commands.iter().find(|c| c.name == name)?;
    Some(fill(&cmd.body, args.trim()))
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
