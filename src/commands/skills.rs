//! Skills, as Claude Code reads them: a directory with a `SKILL.md` under `.claude/skills/` of
//! the project or of the user's home (and the `.cairn/` equivalents). The YAML frontmatter gives
//! `name`, `description` (else the body's first line), `argument-hint`, `allowed-tools`,
//! `model`, `disable-model-invocation` (only the person runs it: not in the Skill tool's
//! listing) and `user-invocable` (`false`: only the model loads it, no `/name`); the body is
//! what the model reads when it uses the skill. A skill answers to its `name` and to its
//! directory's name (`project-spec/` with `name: spec` is `/spec` and `/project-spec`, in the
//! Skill tool too). Fields Claude Code documents that cairn does not act on (`context`,
//! `agent`, `hooks`, `effort`) are named in a notice; a file whose frontmatter does not close
//! or is not YAML is reported with its file and line and skipped.

use std::path::{Path, PathBuf};

use super::frontmatter;
use super::{Found, Invocable, Root, first_line, present_roots};

/// The frontmatter fields of skills and commands (Claude Code's, and the Agent Skills
/// standard's `license`, `compatibility`, `metadata`, `version`).
pub const KNOWN_FIELDS: &[&str] = &[
    "name",
    "description",
    "argument-hint",
    "allowed-tools",
    "model",
    "disable-model-invocation",
    "user-invocable",
    "effort",
    "context",
    "agent",
    "hooks",
    "license",
    "compatibility",
    "metadata",
    "version",
];

/// Fields Claude Code acts on that cairn does not (yet): named in a notice when given.
const NOT_APPLIED: &[&str] = &["context", "agent", "hooks", "effort"];

/// One skill.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    /// The name of its directory: the skill answers to it too.
    pub dir_name: String,
    pub description: String,
    pub argument_hint: Option<String>,
    pub allowed_tools: Vec<String>,
    pub model: Option<String>,
    /// Only the person may run it (`/name`): not offered to the model.
    pub disable_model_invocation: bool,
    /// The person may run it as `/name` (`user-invocable`, default true).
    pub user_invocable: bool,
    pub body: String,
    /// The skill's directory (relative files in the body are read from here).
    pub dir: PathBuf,
}

impl Skill {
    /// Whether `name` is this skill's name or its directory's.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.dir_name == name
    }
}

/// Skills of the project first, then of the user; a name is taken once.
pub fn discover(project: &Path, home: Option<&Path>) -> Found<Skill> {
    let mut out = Found::default();
    for root in present_roots(project, home, "skills", &mut out.problems) {
        let Ok(entries) = std::fs::read_dir(&root.dir) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for dir in dirs {
            let file = dir.join("SKILL.md");
            if !file.is_file() {
                continue;
            }
            // A skill folder (or its SKILL.md) linked out of the root's bound is not read.
            let skill = read_skill(&root, &dir, &file, &mut out.problems);
            out.add(skill, |s| s.name.as_str());
        }
    }
    out
}

pub(crate) fn read_skill(
    root: &Root,
    dir: &Path,
    file: &Path,
    notices: &mut Vec<String>,
) -> Result<Skill, String> {
    let text = root.read(file, "skill")?;
    let (mut front, body) = frontmatter::parse(&text, file, "skill")?;
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let description = front
        .text("description")
        .unwrap_or_else(|| first_line(body));
    if description.is_empty() {
        return Err(format!(
            "{}:1: no `description` in the frontmatter and no text after it; skill skipped",
            file.display()
        ));
    }
    let Invocable {
        argument_hint,
        allowed_tools,
        model,
        disable_model_invocation,
    } = Invocable::read(&mut front);
    let skill = Skill {
        name: front.text("name").unwrap_or_else(|| dir_name.clone()),
        dir_name,
        description,
        argument_hint,
        allowed_tools,
        model,
        disable_model_invocation,
        user_invocable: front.flag("user-invocable").unwrap_or(true),
        body: body.trim().to_string(),
        dir: dir.to_path_buf(),
    };
    front.not_applied(NOT_APPLIED, "skill");
    notices.extend(front.finish(KNOWN_FIELDS));
    Ok(skill)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skills_are_found_with_their_facts_and_broken_ones_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let (proj, home) = (tmp.path().join("proj"), tmp.path().join("home"));
        let write = |p: PathBuf, t: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        };
        write(
            proj.join(".claude/skills/pdf/SKILL.md"),
            "---\nname: pdf-tools\ndescription: Work with PDF files\nallowed-tools: Read, Bash\n---\n# PDF\nUse scripts/fill.py.\n",
        );
        write(
            home.join(".claude/skills/notes/SKILL.md"),
            "---\ndescription: Keep notes\n---\nWrite notes.\n",
        );
        write(home.join(".claude/skills/bad/SKILL.md"), "---\n---\n\n");
        let found = discover(&proj, Some(&home));
        let names: Vec<&str> = found.items.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pdf-tools", "notes"]);
        assert_eq!(found.items[0].allowed_tools, ["Read", "Bash"]);
        assert_eq!(found.items[0].body, "# PDF\nUse scripts/fill.py.");
        assert!(found.items[0].dir.ends_with("skills/pdf"));
        assert_eq!(found.problems.len(), 1);
        assert!(
            found.problems[0].contains("bad/SKILL.md:1: no `description`"),
            "{:?}",
            found.problems
        );
    }
}
