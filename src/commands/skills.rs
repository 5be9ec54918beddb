//! Skills, as Claude Code reads them: a directory with a `SKILL.md` under `.claude/skills/` of
//! the project or of the user's home (and the `.cairn/` equivalents). The frontmatter gives
//! `name` (else the directory's name), `description`, `allowed-tools` and `model`; the body is
//! what the model reads when it uses the skill. A skill without a description, or whose
//! frontmatter does not close, is reported with its file and line and skipped.

use std::path::{Path, PathBuf};

use super::{Found, Root, front_and_body, present_roots};

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub allowed_tools: Vec<String>,
    pub model: Option<String>,
    pub body: String,
    /// The skill's directory (relative files in the body are read from here).
    pub dir: PathBuf,
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
            out.add(read_skill(&root, &dir, &file), |s| s.name.as_str());
        }
    }
    out
}

fn read_skill(root: &Root, dir: &Path, file: &Path) -> Result<Skill, String> {
    let text = root.read(file, "skill")?;
    let (front, body) = front_and_body(&text, file, "skill")?;
    let field = |key: &str| front.get(key);
    let Some(description) = field("description") else {
        return Err(format!(
            "{}:1: no `description` in the frontmatter; skill skipped",
            file.display()
        ));
    };
    let name = field("name").unwrap_or_else(|| {
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    Ok(Skill {
        name,
        description,
        allowed_tools: front.list("allowed-tools"),
        model: field("model"),
        body: body.trim().to_string(),
        dir: dir.to_path_buf(),
    })
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
        write(
            home.join(".claude/skills/bad/SKILL.md"),
            "no frontmatter at all\n",
        );
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
