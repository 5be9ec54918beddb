//! Output styles, as Claude Code has them: a named block of instructions that changes how the
//! model answers, chosen by the settings' `outputStyle`. The built-ins are `default` (nothing
//! changes), `Explanatory` and `Learning`; the person's own are Markdown files in
//! `.claude/output-styles/*.md` (and `.cairn/output-styles/`) of the project, then of the home
//! directory, with frontmatter `name` (else the file stem), `description` and
//! `keep-coding-instructions` (default false: the style replaces the built-in "How to work"
//! section). Names match case-insensitively; a project file shadows a user file and both shadow
//! a built-in of the same name. This module finds and selects; `prompt` places the body.

use std::path::{Path, PathBuf};

use crate::commands::frontmatter;
use crate::commands::{Found, Root, present_roots};

/// The name of the style that changes nothing.
pub const DEFAULT_STYLE: &str = "default";

/// One style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputStyle {
    pub name: String,
    pub description: String,
    /// The instructions that go into the system prompt.
    pub body: String,
    /// Keep the built-in software-engineering instructions beside the style's.
    pub keep_coding_instructions: bool,
    /// The file it came from; `None` for a built-in.
    pub path: Option<PathBuf>,
}

const EXPLANATORY: &str = "\
You are in Explanatory mode: besides doing the task, help the user understand the codebase and \
the choices you make.

- Before and after writing code, add a short insight when it teaches something specific to \
this codebase or this change (a convention, a trade-off, why one approach beats another). \
Skip general programming knowledge the user surely has.
- Format each insight as:
  `★ Insight ─────────────────────────────────────`
  2-3 brief points
  `─────────────────────────────────────────────────`
- Keep insights in the conversation, never in the code or its comments, and keep them short: \
the task still comes first.";

const LEARNING: &str = "\
You are in Learning mode: help the user learn by doing, while still getting the task done.

- Do the routine parts yourself (boilerplate, wiring, repetitive edits). When a piece of 2-10 \
lines involves a real decision (a design choice, business logic, error handling, a key \
algorithm), leave it to the user: write the surrounding code, put a `TODO(human)` comment \
where their code goes, and stop.
- Then ask for it in a short section headed `● Learn by Doing`: the context (what is built \
and why this piece matters), the task (exactly what to write, in which file and function), \
and guidance (trade-offs to weigh, hints, not the answer). Ask for one piece at a time and \
wait for the user before going on.
- When they have written it, read it, say briefly what works and what could be better, and \
carry on.
- Add short insights on the codebase's conventions and your choices, as in Explanatory mode: \
`★ Insight ─────` followed by 2-3 points.";

/// The built-in styles other than `default`.
pub fn builtins() -> Vec<OutputStyle> {
    let builtin = |name: &str, description: &str, body: &str| OutputStyle {
        name: name.into(),
        description: description.into(),
        body: body.into(),
        keep_coding_instructions: true,
        path: None,
    };
    vec![
        builtin(
            "Explanatory",
            "Explains its implementation choices and the codebase as it works",
            EXPLANATORY,
        ),
        builtin(
            "Learning",
            "Asks you to write small, meaningful pieces yourself (TODO(human))",
            LEARNING,
        ),
    ]
}

/// The person's styles: the project's `.claude/output-styles` and `.cairn/output-styles`, then
/// the user's; each name (case-insensitively) once, the first found winning.
pub fn discover(project: &Path, home: Option<&Path>) -> Found<OutputStyle> {
    let mut out: Found<OutputStyle> = Found::default();
    for root in present_roots(project, home, "output-styles", &mut out.problems) {
        for file in crate::commands::markdown_files(&root.dir) {
            let style = read_style(&root, &file, &mut out.problems);
            if let Ok(s) = &style
                && out
                    .items
                    .iter()
                    .any(|o| o.name.eq_ignore_ascii_case(&s.name))
            {
                continue;
            }
            out.add(style, |s| s.name.as_str());
        }
    }
    out
}

fn read_style(root: &Root, file: &Path, notices: &mut Vec<String>) -> Result<OutputStyle, String> {
    let text = root.read(file, "output style")?;
    let (mut front, body) = frontmatter::parse(&text, file, "output style")?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A value that is not true or false is a notice, and the default (false).
    let keep = front.flag("keep-coding-instructions");
    let body = body.trim();
    if body.is_empty() {
        return Err(format!(
            "{}: the output style has no instructions after its frontmatter; skipped",
            file.display()
        ));
    }
    let style = OutputStyle {
        name: front.text("name").unwrap_or(stem),
        description: front.text("description").unwrap_or_default(),
        body: body.to_string(),
        keep_coding_instructions: keep.unwrap_or(false),
        path: Some(file.to_path_buf()),
    };
    notices.extend(front.finish(&["name", "description", "keep-coding-instructions"]));
    Ok(style)
}

/// The style a session uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selected {
    /// `None`: the default style (the prompt is as without styles).
    pub style: Option<OutputStyle>,
    /// Lines for the person: unreadable style files, an unknown name.
    pub notices: Vec<String>,
}

impl Selected {
    /// The name of the style in use, as the status line's JSON gives it.
    pub fn name(&self) -> &str {
        self.style
            .as_ref()
            .map_or(DEFAULT_STYLE, |s| s.name.as_str())
    }
}

/// Pick the style `wanted` (the settings' `outputStyle`) among the person's and the built-ins.
pub fn select(wanted: Option<&str>, project: &Path, home: Option<&Path>) -> Selected {
    let Some(wanted) = wanted.map(str::trim).filter(|w| !w.is_empty()) else {
        return Selected::default();
    };
    if wanted.eq_ignore_ascii_case(DEFAULT_STYLE) {
        return Selected::default();
    }
    let found = discover(project, home);
    let mut notices: Vec<String> = found
        .problems
        .iter()
        .map(|p| format!("output style: {p}"))
        .collect();
    let mut all = found.items;
    all.extend(builtins());
    if let Some(style) = all.iter().find(|s| s.name.eq_ignore_ascii_case(wanted)) {
        return Selected {
            style: Some(style.clone()),
            notices,
        };
    }
    let mut names = vec![DEFAULT_STYLE.to_string()];
    for s in &all {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(&s.name)) {
            names.push(s.name.clone());
        }
    }
    notices.push(format!(
        "outputStyle \"{wanted}\" is not a known output style; using the default. Available: {}",
        names.join(", ")
    ));
    Selected {
        style: None,
        notices,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn finds_project_and_user_styles_with_their_frontmatter() {
        let dir = tempfile::tempdir().unwrap();
        let (project, home) = (dir.path().join("p"), dir.path().join("h"));
        write(
            &project.join(".claude/output-styles/terse.md"),
            "---\nname: Terse Reviewer\ndescription: short answers\nkeep-coding-instructions: \
             true\n---\nAnswer in one sentence.\n",
        );
        write(
            &home.join(".cairn/output-styles/pirate.md"),
            "Talk like a pirate.\n",
        );
        write(
            &home.join(".claude/output-styles/shadowed.md"),
            "---\nname: terse reviewer\n---\nFrom the user.\n",
        );
        write(&project.join(".claude/output-styles/notes.txt"), "ignored");
        let found = discover(&project, Some(&home));
        assert!(found.problems.is_empty(), "{:?}", found.problems);
        let names: Vec<&str> = found.items.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Terse Reviewer", "pirate"]);
        let terse = &found.items[0];
        assert_eq!(terse.description, "short answers");
        assert_eq!(terse.body, "Answer in one sentence.");
        assert!(terse.keep_coding_instructions);
        assert!(!found.items[1].keep_coding_instructions);
    }

    #[test]
    fn selection_is_case_insensitive_and_files_shadow_built_ins() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        assert_eq!(select(None, &project, None), Selected::default());
        assert_eq!(select(Some("Default"), &project, None).name(), "default");
        let explanatory = select(Some("explanatory"), &project, None);
        assert_eq!(explanatory.name(), "Explanatory");
        let style = explanatory.style.unwrap();
        assert!(style.keep_coding_instructions && style.body.contains("Insight"));
        assert!(
            select(Some("LEARNING"), &project, None)
                .style
                .is_some_and(|s| s.body.contains("TODO(human)"))
        );
        write(
            &project.join(".claude/output-styles/learning.md"),
            "My own learning style.",
        );
        let mine = select(Some("Learning"), &project, None).style.unwrap();
        assert_eq!(mine.body, "My own learning style.");
        assert!(mine.path.is_some() && !mine.keep_coding_instructions);
    }

    #[test]
    fn an_unknown_name_or_a_broken_file_is_a_notice() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        write(&project.join(".claude/output-styles/haiku.md"), "In 5-7-5.");
        write(
            &project.join(".claude/output-styles/broken.md"),
            "---\nname: broken\n",
        );
        write(
            &project.join(".claude/output-styles/odd.md"),
            "---\nkeep-coding-instructions: maybe\n---\nx",
        );
        let picked = select(Some("Socratic"), &project, None);
        assert_eq!(picked.style, None);
        assert_eq!(picked.name(), "default");
        let last = picked.notices.last().unwrap();
        assert!(
            last.ends_with("Available: default, haiku, odd, Explanatory, Learning"),
            "{last}"
        );
        assert!(last.contains("\"Socratic\""));
        assert!(picked.notices.iter().any(|n| n.contains("not closed")));
        assert!(
            picked.notices.iter().any(|n| n.contains(
                "odd.md:2: `keep-coding-instructions` should be true or false, not text; ignored"
            )),
            "{:?}",
            picked.notices
        );
    }

    #[test]
    fn a_style_file_linked_out_of_the_project_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (project, home) = (root.join("p"), root.join("h"));
        write(&root.join("outside/style.md"), "OUTSIDE-SECRET");
        write(&home.join(".claude/output-styles/calm.md"), "Stay calm.");
        let styles = project.join(".claude/output-styles");
        std::fs::create_dir_all(&styles).unwrap();
        std::os::unix::fs::symlink(root.join("outside/style.md"), styles.join("evil.md")).unwrap();
        let picked = select(Some("evil"), &project, Some(&home));
        assert_eq!(picked.style, None);
        let notices = picked.notices.join("\n");
        assert!(
            notices.contains(&format!(
                "output style: {}: output style skipped: {} resolves to {}, outside {}",
                styles.join("evil.md").display(),
                styles.join("evil.md").display(),
                root.join("outside/style.md").display(),
                project.display()
            )),
            "{notices}"
        );
        assert!(!notices.contains("OUTSIDE-SECRET"), "{notices}");
        // The user's own styles still load.
        assert_eq!(select(Some("calm"), &project, Some(&home)).name(), "calm");
    }
}
