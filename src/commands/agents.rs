//! Custom sub-agents, as Claude Code reads them: Markdown files in `.claude/agents/` of the
//! project or of the user's home (and the `.cairn/` equivalents). The frontmatter gives `name`
//! (else the file's stem), `description` (when to use it; required), `tools` (a comma list;
//! omitted: every tool) and `model`; the body is the agent's system prompt. A file without a
//! description, or whose frontmatter does not close, is reported with its file and line and
//! skipped; the project's agent wins over the user's of the same name.

use std::path::{Path, PathBuf};

use super::{Found, Root, front_and_body, markdown_files, present_roots};

/// One custom agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDef {
    pub name: String,
    pub description: String,
    /// The tools it may use; `None`: all of the session's (but Agent itself).
    pub tools: Option<Vec<String>>,
    pub model: Option<String>,
    /// Its system prompt.
    pub prompt: String,
    pub path: PathBuf,
}

/// Agents of the project first, then of the user; a name is taken once.
pub fn discover(project: &Path, home: Option<&Path>) -> Found<AgentDef> {
    let mut out = Found::default();
    for root in present_roots(project, home, "agents", &mut out.problems) {
        for file in markdown_files(&root.dir) {
            out.add(read_agent(&root, &file), |a| a.name.as_str());
        }
    }
    out
}

fn read_agent(root: &Root, file: &Path) -> Result<AgentDef, String> {
    let text = root.read(file, "agent")?;
    let (front, body) = front_and_body(&text, file, "agent")?;
    let Some(description) = front.get("description") else {
        return Err(format!(
            "{}:1: no `description` in the frontmatter; agent skipped",
            file.display()
        ));
    };
    let name = front.get("name").unwrap_or_else(|| {
        file.file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let tools = front.get("tools").map(|_| front.list("tools"));
    Ok(AgentDef {
        name,
        description,
        tools,
        model: front.get("model").filter(|m| m != "inherit"),
        prompt: body.trim().to_string(),
        path: file.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_found_with_their_tools_and_broken_ones_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let (proj, home) = (tmp.path().join("proj"), tmp.path().join("home"));
        let write = |p: PathBuf, t: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        };
        write(
            proj.join(".claude/agents/reviewer.md"),
            "---\nname: code-reviewer\ndescription: Reviews diffs\ntools: Read, Grep, Glob\nmodel: haiku\n---\nYou review code.\n",
        );
        write(
            home.join(".claude/agents/helper.md"),
            "---\ndescription: Helps\nmodel: inherit\n---\nYou help.\n",
        );
        write(home.join(".claude/agents/broken.md"), "no frontmatter\n");
        let found = discover(&proj, Some(&home));
        let names: Vec<&str> = found.items.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["code-reviewer", "helper"]);
        let reviewer = &found.items[0];
        assert_eq!(
            reviewer.tools.as_deref(),
            Some(&["Read".to_string(), "Grep".into(), "Glob".into()][..])
        );
        assert_eq!(reviewer.model.as_deref(), Some("haiku"));
        assert_eq!(reviewer.prompt, "You review code.");
        assert_eq!(found.items[1].tools, None);
        assert_eq!(found.items[1].model, None);
        assert_eq!(found.problems.len(), 1);
        assert!(found.problems[0].contains("broken.md:1: no `description`"));
    }
}
