//! Custom commands from real temp directories: names and namespaces, frontmatter, shadowing,
//! arguments, and a broken file reported.

use super::*;

/// The prompt `/name args` becomes, `` !`cmd` `` parts left as written.
fn expand(commands: &[CustomCommand], prompt: &str) -> Option<String> {
    find(commands, prompt).map(|(cmd, args)| fill(&cmd.body, args))
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn commands_are_found_named_and_filled() {
    let tmp = tempfile::tempdir().unwrap();
    let (proj, home) = (tmp.path().join("proj"), tmp.path().join("home"));
    write(
        &proj,
        ".claude/commands/greet.md",
        "---\ndescription: Greet someone\nargument-hint: <name>\nallowed-tools: Read, Grep\nmodel: haiku\n---\nSay hello to $1, warmly. ($ARGUMENTS)\n",
    );
    write(
        &proj,
        ".claude/commands/frontend/component.md",
        "Make a component.\n",
    );
    write(
        &home,
        ".claude/commands/greet.md",
        "the user's greet, shadowed\n",
    );
    write(
        &home,
        ".claude/commands/broken.md",
        "---\ndescription: never closed\n",
    );
    let found = discover(&proj, Some(&home));
    let names: Vec<&str> = found.items.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["frontend:component", "greet"]);
    let greet = &found.items[1];
    assert_eq!(greet.description, "Greet someone");
    assert_eq!(greet.argument_hint.as_deref(), Some("<name>"));
    assert_eq!(greet.allowed_tools, ["Read", "Grep"]);
    assert_eq!(greet.model.as_deref(), Some("haiku"));
    assert_eq!(found.items[0].description, "Make a component.");
    assert_eq!(found.problems.len(), 1);
    assert!(
        found.problems[0].contains("broken.md:1: the frontmatter"),
        "{:?}",
        found.problems
    );
    assert_eq!(
        expand(&found.items, "/greet Ada Lovelace").as_deref(),
        Some("Say hello to Ada, warmly. (Ada Lovelace)")
    );
    assert_eq!(
        expand(&found.items, "/frontend:component Button").as_deref(),
        Some("Make a component.\n\nARGUMENTS: Button")
    );
    assert_eq!(expand(&found.items, "/nope"), None);
    assert_eq!(expand(&found.items, "greet Ada"), None);
}

#[test]
fn shell_parts_are_cut_out_of_a_body() {
    assert_eq!(
        pieces("Status: !`git status --short`\nLog: !` git log -1 `!"),
        [
            Piece::Text("Status: "),
            Piece::Shell("git status --short"),
            Piece::Text("\nLog: "),
            Piece::Shell("git log -1"),
            Piece::Text("!"),
        ]
    );
    assert_eq!(
        pieces("no shell, `code` and !`` and !`open"),
        [Piece::Text("no shell, `code` and !`` and !`open")]
    );
    assert_eq!(pieces(""), []);
}

/// Project and home in a temp dir, and outside both files shaped like a skill, an agent and a
/// command, each holding a secret.
fn linked_setup() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (proj, home, out) = (root.join("proj"), root.join("home"), root.join("outside"));
    let front = "---\nname: evil\ndescription: OUTSIDE-SECRET\n---\nOUTSIDE-SECRET body\n";
    for rel in [
        "skill/SKILL.md",
        "agent.md",
        "command.md",
        "folder/evil/SKILL.md",
    ] {
        write(&out, rel, front);
    }
    for base in [&proj, &home] {
        std::fs::create_dir_all(base).unwrap();
    }
    (tmp, proj, home, out)
}

#[test]
fn skills_agents_commands_and_styles_linked_out_of_their_root_are_not_read() {
    use std::os::unix::fs::symlink;
    let (_tmp, proj, home, out) = linked_setup();
    let link = |target: &Path, at: &Path| {
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        symlink(target, at).unwrap();
    };
    // The project: a skill folder, an agent and a command linked out; a whole skills folder
    // linked out; and a skill linked to a folder inside the project, which is fine.
    link(&out.join("skill"), &proj.join(".claude/skills/evil"));
    link(&out.join("agent.md"), &proj.join(".claude/agents/evil.md"));
    link(
        &out.join("command.md"),
        &proj.join(".claude/commands/evil.md"),
    );
    link(&out.join("folder"), &proj.join(".cairn/skills"));
    write(
        &proj,
        "tools/fmt/SKILL.md",
        "---\ndescription: Format\n---\nformat it",
    );
    link(&proj.join("tools/fmt"), &proj.join(".claude/skills/fmt"));
    // The home: linked inside the home is fine, out of it is not.
    write(
        &home,
        "dotfiles/notes/SKILL.md",
        "---\ndescription: Notes\n---\nnotes",
    );
    link(
        &home.join("dotfiles/notes"),
        &home.join(".claude/skills/notes"),
    );
    link(&out.join("agent.md"), &home.join(".claude/agents/evil.md"));

    let skills = skills::discover(&proj, Some(&home));
    let names: Vec<&str> = skills.items.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fmt", "notes"]);
    let problems = skills.problems.join("\n");
    assert!(
        problems.contains(&format!(
            "{}: skill skipped: {} resolves to {}, outside {}",
            proj.join(".claude/skills/evil/SKILL.md").display(),
            proj.join(".claude/skills/evil/SKILL.md").display(),
            out.join("skill/SKILL.md").display(),
            proj.display()
        )),
        "{problems}"
    );
    assert!(
        problems.contains(&format!(
            "{}: skills folder skipped",
            proj.join(".cairn/skills").display()
        )),
        "{problems}"
    );
    let agents = agents::discover(&proj, Some(&home));
    assert!(agents.items.is_empty(), "{:?}", agents.items);
    assert_eq!(agents.problems.len(), 2, "{:?}", agents.problems);
    let commands = discover(&proj, Some(&home));
    assert!(commands.items.is_empty(), "{:?}", commands.items);
    assert!(commands.problems[0].contains("command skipped"));
    // Nothing of the outside files came through.
    let all = format!("{skills:?}{agents:?}{commands:?}");
    assert!(!all.contains("OUTSIDE-SECRET"), "{all}");
}
