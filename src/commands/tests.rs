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
