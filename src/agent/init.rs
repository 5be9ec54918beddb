//! `/init`: the person asks for a CLAUDE.md. The prompt is replaced by a built-in instruction
//! before it goes to the model, in the TUI and in `-p` alike; the model then works with its
//! ordinary tools (and the ordinary permission checks for the write).

/// The instruction `/init` stands for.
pub const INIT_PROMPT: &str = "\
Please analyze this codebase and create a CLAUDE.md file in the project root, which will be \
given to future sessions of a coding agent working in this repository.

What to add:
1. The commands that will be commonly used: how to build, lint and test, and how to run a single \
test.
2. The high-level architecture and structure of the code, the big picture that takes reading \
several files to understand.

Usage notes:
- If there is already a CLAUDE.md (or AGENTS.md), suggest improvements to it instead of \
starting over.
- Do not repeat yourself, and do not list every component or file: those are easy to find.
- Do not invent sections such as \"Common development tasks\" or \"Tips\" unless the repository's \
own documents say such things.
- Include the important parts of README.md, CONTRIBUTING.md, and rules in .cursor/rules/, \
.cursorrules or .github/copilot-instructions.md when they exist.
- Begin the file with:

```
# CLAUDE.md

This file gives guidance to coding agents working with the code in this repository.
```";

/// The prompt to send for what the person typed: `/init` (with nothing after it but words to
/// add) becomes the instruction; anything else is unchanged.
pub fn expand(prompt: &str) -> Option<String> {
    let rest = prompt.trim().strip_prefix("/init")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let extra = rest.trim();
    Some(if extra.is_empty() {
        INIT_PROMPT.to_string()
    } else {
        format!("{INIT_PROMPT}\n\nThe user adds: {extra}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_init_itself_expands() {
        assert_eq!(expand("/init").as_deref(), Some(INIT_PROMPT));
        assert!(
            expand("  /init focus on the tests")
                .unwrap()
                .ends_with("The user adds: focus on the tests")
        );
        assert_eq!(expand("/initialize"), None);
        assert_eq!(expand("please /init"), None);
    }
}
