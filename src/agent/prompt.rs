//! System-prompt assembly: identity and rules (or the output style in their place), the person's
//! memory files, the environment, each tool's own guidance, and the section naming deferred tools. Built once per session (it must stay byte-identical between
//! requests so prompt caching works); nothing here does I/O except the cheap `.git` probe.

use std::path::Path;

use super::output_style::OutputStyle;
use crate::tools::ToolRegistry;

const IDENTITY: &str = "\
You are cairn, a coding agent working in the user's terminal. You help with software \
engineering tasks: reading and explaining code, fixing bugs, adding features, refactoring, \
running tests.";

/// The built-in software-engineering instructions; an output style without
/// `keep-coding-instructions` replaces them.
const HOW_TO_WORK: &str = "\
# How to work
- Be concise. Your output is shown in a terminal; use GitHub-flavoured Markdown sparingly.
- Use the tools to look before you act: read a file before editing it, search before guessing.
- Prefer editing existing files to creating new ones. Keep changes minimal and in the style of \
the surrounding code.
- When several independent reads or searches are needed, call those tools together in one \
message: they run in parallel.
- Never invent file contents, command output or URLs. If a tool fails, read the error: it says \
what to do next.
- Tool calls may be denied by the user. If a call is denied, do not retry it unchanged; adjust \
or ask the user.
- Do not commit, push, or delete data unless the user asks for it.";

/// Facts about where the session runs.
#[derive(Debug, Clone)]
pub struct Environment {
    pub cwd: String,
    pub platform: String,
    pub date: String,
    pub is_git_repo: bool,
    pub model: String,
}

impl Environment {
    pub fn detect(cwd: &Path, model: &str) -> Environment {
        Environment {
            cwd: cwd.display().to_string(),
            platform: std::env::consts::OS.to_string(),
            date: chrono::Local::now().format("%Y-%m-%d").to_string(),
            is_git_repo: cwd.ancestors().any(|d| d.join(".git").exists()),
            model: model.to_string(),
        }
    }
}

/// The whole system prompt for a session; `memory` is the section of the memory files (may be
/// empty); `style` the output style, `None` for the default.
pub fn system_prompt(
    env: &Environment,
    memory: &str,
    style: Option<&OutputStyle>,
    tools: &ToolRegistry,
    deferred_section: &str,
) -> String {
    let mut out = String::with_capacity(8 * 1024 + memory.len());
    out.push_str(IDENTITY);
    if style.is_none_or(|s| s.keep_coding_instructions) {
        out.push_str("\n\n");
        out.push_str(HOW_TO_WORK);
    }
    if let Some(style) = style {
        out.push_str(&format!(
            "\n\n# Output style: {}\n{}",
            style.name,
            style.body.trim()
        ));
    }
    if !memory.is_empty() {
        out.push_str(
            "

",
        );
        out.push_str(memory.trim_end());
    }
    environment_and_tools(&mut out, env, tools);
    out.push_str(deferred_section);
    out
}

/// The system prompt of a sub-agent: its role (a custom agent's body, or the built-in one),
/// the memory files, the environment and its tools' guidance.
pub fn subagent_prompt(
    role: &str,
    env: &Environment,
    memory: &str,
    tools: &ToolRegistry,
) -> String {
    let mut out = String::with_capacity(4 * 1024 + memory.len());
    out.push_str(role.trim());
    out.push_str(
        "\n\nYou work for another agent, which gave you the task below. It sees only your final \
         answer, not your tool calls: end with a concise report of what you found or did, with \
         the file paths and facts it needs.",
    );
    if !memory.is_empty() {
        out.push_str("\n\n");
        out.push_str(memory.trim_end());
    }
    environment_and_tools(&mut out, env, tools);
    out
}

/// The environment section and each tool's guidance.
fn environment_and_tools(out: &mut String, env: &Environment, tools: &ToolRegistry) {
    out.push_str("\n\n# Environment\n");
    out.push_str(&format!(
        "<env>\nWorking directory: {}\nIs directory a git repo: {}\nPlatform: {}\n\
         Today's date: {}\nModel: {}\n</env>\n",
        env.cwd,
        if env.is_git_repo { "Yes" } else { "No" },
        env.platform,
        env.date,
        env.model
    ));
    let guidance: Vec<(String, String)> = tools
        .iter()
        .map(|t| (t.name().to_string(), t.prompt()))
        .filter(|(_, p)| !p.trim().is_empty())
        .collect();
    if !guidance.is_empty() {
        out.push_str("\n# Tools\n");
        for (name, prompt) in guidance {
            out.push_str(&format!("\n## {name}\n{}\n", prompt.trim()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_names_the_environment_and_deferred_tools() {
        let env = Environment {
            cwd: "/work/project".into(),
            platform: "linux".into(),
            date: "2026-11-21".into(),
            is_git_repo: true,
            model: "m".into(),
        };
        let p = system_prompt(
            &env,
            "# Memory\nuse tabs",
            None,
            &ToolRegistry::default(),
            "\n# Deferred tools\n- NotebookEdit: edit a notebook\n",
        );
        assert!(p.contains("\n\n# Memory\nuse tabs\n\n# Environment"));
        assert!(p.starts_with("You are cairn"));
        assert!(p.contains("Working directory: /work/project"));
        assert!(p.contains("Is directory a git repo: Yes"));
        assert!(p.contains("Today's date: 2026-11-21"));
        assert!(p.ends_with("</env>\n\n# Deferred tools\n- NotebookEdit: edit a notebook\n"));
        let without = system_prompt(&env, "", None, &ToolRegistry::default(), "");
        assert!(!without.contains("Deferred tools") && !without.contains("# Memory"));
    }

    fn env() -> Environment {
        Environment {
            cwd: "/p".into(),
            platform: "linux".into(),
            date: "2026-11-23".into(),
            is_git_repo: false,
            model: "m".into(),
        }
    }

    fn style(keep: bool) -> OutputStyle {
        OutputStyle {
            name: "Pirate".into(),
            description: String::new(),
            body: "Talk like a pirate.\n".into(),
            keep_coding_instructions: keep,
            path: None,
        }
    }

    #[test]
    fn the_default_style_keeps_the_coding_instructions_and_adds_nothing() {
        let p = system_prompt(&env(), "", None, &ToolRegistry::default(), "");
        assert!(p.starts_with(&format!("{IDENTITY}\n\n{HOW_TO_WORK}\n\n# Environment")));
        assert!(!p.contains("# Output style"));
    }

    #[test]
    fn a_style_replaces_how_to_work_unless_it_keeps_the_coding_instructions() {
        let tools = ToolRegistry::default();
        let replacing = system_prompt(&env(), "# Memory\nm", Some(&style(false)), &tools, "");
        assert!(replacing.starts_with(&format!(
            "{IDENTITY}\n\n# Output style: Pirate\nTalk like a pirate.\n\n# Memory\nm"
        )));
        assert!(!replacing.contains("# How to work"));
        let keeping = system_prompt(&env(), "", Some(&style(true)), &tools, "");
        assert!(keeping.contains(&format!(
            "{HOW_TO_WORK}\n\n# Output style: Pirate\nTalk like a pirate.\n\n# Environment"
        )));
        // Built once per session, the same bytes every time (prompt caching).
        let again = system_prompt(&env(), "", Some(&style(true)), &tools, "");
        assert_eq!(keeping, again);
        let learning = super::super::output_style::builtins().remove(1);
        let with_builtin = system_prompt(&env(), "", Some(&learning), &tools, "");
        assert!(with_builtin.contains("# How to work") && with_builtin.contains("TODO(human)"));
    }
}
