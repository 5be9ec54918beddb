//! The frontmatter corpus: every YAML form Claude Code's docs and real packages use, read into
//! each kind's struct from real files; wrong shapes as notices with file:line, never widening.

use std::path::{Path, PathBuf};

use super::*;
use crate::commands::{agents, discover, skills};
use crate::protocol::PermissionMode;

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn parsed(text: &str) -> (Front, String) {
    let (front, body) = parse(text, Path::new("/x/f.md"), "skill").unwrap();
    (front, body.to_string())
}

#[test]
fn lists_in_every_form_read_the_same() {
    for text in [
        "---\ntools: Read, Grep, Bash(git add *)\n---\n",
        "---\ntools: Read Grep Bash(git add *)\n---\n",
        "---\ntools:\n  - Read\n  - Grep\n  - Bash(git add *)\n---\n",
        "---\ntools:\n- Read\n- Grep\n- \"Bash(git add *)\"\n---\n",
        "---\ntools: [Read, Grep, \"Bash(git add *)\"]\n---\n",
        "---\n# the tools it needs\ntools: [Read, Grep, 'Bash(git add *)'] # no writes\n---\n",
    ] {
        let (mut front, _) = parsed(text);
        assert_eq!(
            front.names("tools", "none"),
            ToolList::Listed(vec!["Read".into(), "Grep".into(), "Bash(git add *)".into()]),
            "{text}"
        );
        assert!(front.finish(&["tools"]).is_empty(), "{text}");
    }
    let (mut front, _) = parsed("---\ntools: []\n---\n");
    assert_eq!(front.names("tools", "none"), ToolList::Listed(Vec::new()));
    let (mut front, _) = parsed("---\nname: x\n---\n");
    assert_eq!(front.names("tools", "none"), ToolList::Absent);
}

#[test]
fn folded_literal_and_quoted_strings_are_their_values() {
    let text = "---\n\
        description: >-\n  Writes the spec\n  for a project.\n\
        argument-hint: |\n  [name]\n  [goal]\n\
        name: \"say \\\"hi\\\"\\tnow\"\n\
        model: 'it''s'\n\
        other: 42\n\
        ---\nBody.\n";
    let (mut front, body) = parsed(text);
    assert_eq!(
        front.text("description").as_deref(),
        Some("Writes the spec for a project.")
    );
    assert_eq!(
        front.text("argument-hint").as_deref(),
        Some("[name]\n[goal]")
    );
    assert_eq!(front.text("name").as_deref(), Some("say \"hi\"\tnow"));
    assert_eq!(front.text("model").as_deref(), Some("it's"));
    assert_eq!(front.text("other").as_deref(), Some("42"));
    assert_eq!(body, "Body.\n");
}

#[test]
fn wrong_shapes_are_notices_with_file_and_line() {
    let text = "---\nname: x\ndescription:\n  nested: map\ntools: {Read: yes}\nflag: maybe\nturns: -1\nextra: 1\n---\n";
    let (front, _) = parse(text, Path::new("/p/agent.md"), "agent").unwrap();
    let mut front = front;
    assert_eq!(front.text("description"), None);
    assert_eq!(
        front.names("tools", "the agent gets no tools"),
        ToolList::Unreadable
    );
    assert_eq!(front.flag("flag"), None);
    assert_eq!(front.count("turns"), None);
    let notices = front.finish(&["name", "description", "tools", "flag", "turns"]);
    assert_eq!(
        notices,
        [
            "/p/agent.md:4: `description` should be text, not a mapping; ignored",
            "/p/agent.md:5: `tools` should be a list of names, not a mapping; the agent gets no \
             tools",
            "/p/agent.md:6: `flag` should be true or false, not text; ignored",
            "/p/agent.md:7: `turns` should be a whole number, not a number; ignored",
            "/p/agent.md:8: unknown frontmatter field `extra` ignored",
        ]
    );
    // A list holding something that is not a name is unreadable as a whole.
    let (mut front, _) = parsed("---\ntools:\n  - Read\n  - {Write: true}\n---\n");
    assert_eq!(front.names("tools", "none"), ToolList::Unreadable);
}

#[test]
fn text_that_is_not_yaml_or_never_closes_skips_the_file_with_its_line() {
    let err = parse(
        "---\nname: x\ndescription: [unclosed\n---\n",
        Path::new("/p/s.md"),
        "skill",
    )
    .err()
    .unwrap();
    assert!(err.starts_with("/p/s.md:"), "{err}");
    assert!(
        err.contains("not valid YAML") && err.ends_with("; skill skipped"),
        "{err}"
    );
    let err = parse("---\nname: x\n", Path::new("/p/s.md"), "skill")
        .err()
        .unwrap();
    assert_eq!(
        err,
        "/p/s.md:1: the frontmatter (from `---`) is not closed; skill skipped"
    );
    // No frontmatter, an empty one, CRLF line ends and a BOM.
    assert_eq!(parsed("Just a body.\n").1, "Just a body.\n");
    assert_eq!(parsed("---\n---\nBody\n").1, "Body\n");
    let (mut front, body) = parsed("\u{feff}---\r\nname: crlf\r\n---\r\nBody\r\n");
    assert_eq!(front.text("name").as_deref(), Some("crlf"));
    assert_eq!(body, "Body\r\n");
}

#[test]
fn an_unquoted_colon_in_a_value_is_read_as_text_with_a_notice() {
    let (mut front, body) = parse(
        "---\nname: review\ndescription: Use when: the user asks for a review\n---\nB\n",
        Path::new("/p/SKILL.md"),
        "skill",
    )
    .unwrap();
    assert_eq!(
        front.text("description").as_deref(),
        Some("Use when: the user asks for a review")
    );
    assert_eq!(body, "B\n");
    assert_eq!(
        front.finish(&["name", "description"]),
        ["/p/SKILL.md:3: a value with `: ` in it should be quoted in YAML; read as text"]
    );
}

/// The bug this module was written for: an agent whose `tools` is a YAML block list was given
/// every tool (Write and Edit included); one whose list cannot be read must get none.
#[test]
fn an_agent_tools_block_list_is_its_tools_and_an_unreadable_one_gives_none() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    write(
        &proj,
        ".claude/agents/reader.md",
        "---\nname: reader\ndescription: Reads\ntools:\n  - Read\n  - Grep\n---\nRead only.\n",
    );
    write(
        &proj,
        ".claude/agents/flow.md",
        "---\nname: flow\ndescription: >-\n  Greps\n  things\ntools: [Read, Grep]\ndisallowedTools: Grep\ncolor: cyan\n---\nx\n",
    );
    write(
        &proj,
        ".claude/agents/odd.md",
        "---\nname: odd\ndescription: Odd\ntools:\n  Read: true\n---\nx\n",
    );
    write(
        &proj,
        ".claude/agents/inherit.md",
        "---\nname: inherit\ndescription: All but writes\ndisallowedTools: [Write, Edit]\npermissionMode: plan\nmaxTurns: 5\nskills: [a, b]\nbackground: true\nisolation: worktree\n---\nx\n",
    );
    write(
        &proj,
        ".claude/agents/boxed.md",
        "---\nname: boxed\ndescription: Boxed\nisolation: sandbox\n---\nx\n",
    );
    let found = agents::discover(&proj, None);
    let by = |n: &str| found.items.iter().find(|a| a.name == n).unwrap();
    let reader = by("reader");
    assert_eq!(
        reader.tools.as_deref(),
        Some(&["Read".into(), "Grep".into()][..])
    );
    assert!(reader.may_use("Read", &[]) && !reader.may_use("Write", &[]));
    assert!(!reader.may_use("Edit", &[]) && !reader.may_use("Bash", &[]));
    let flow = by("flow");
    assert_eq!(flow.description, "Greps things");
    assert_eq!(flow.color.as_deref(), Some("cyan"));
    assert!(flow.may_use("Read", &[]) && !flow.may_use("Grep", &[]));
    let odd = by("odd");
    assert_eq!(odd.tools.as_deref(), Some(&[][..]));
    assert!(!odd.may_use("Read", &[]) && !odd.may_use("Write", &[]));
    let inherit = by("inherit");
    assert!(inherit.may_use("Bash", &[]) && !inherit.may_use("Write", &[]));
    assert_eq!(inherit.permission_mode, Some(PermissionMode::Plan));
    assert_eq!(inherit.max_turns, Some(5));
    assert_eq!(inherit.skills, ["a", "b"]);
    assert!(inherit.background);
    assert!(inherit.worktree, "isolation: worktree");
    assert!(!reader.worktree);
    let problems = found.problems.join("\n");
    assert!(
        problems.contains(&format!(
            "{}:5: `tools` should be a list of names, not a mapping; the agent gets no tools",
            proj.join(".claude/agents/odd.md").display()
        )),
        "{problems}"
    );
    assert!(
        !problems.contains("inherit.md: cairn does not apply"),
        "{problems}"
    );
    assert!(!by("boxed").worktree);
    assert!(
        problems.contains(&format!(
            "{}:4: `isolation` should be worktree, not text; the agent runs in the project itself",
            proj.join(".claude/agents/boxed.md").display()
        )),
        "{problems}"
    );
}

#[test]
fn skills_and_commands_read_every_documented_field() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    write(
        &proj,
        ".claude/skills/project-spec/SKILL.md",
        "---\nname: spec\ndescription: >-\n  Write a project spec.\nargument-hint: \"[idea]\"\nallowed-tools:\n  - Read\n  - Write\nmodel: haiku\ndisable-model-invocation: true\nlicense: MIT\n---\nSpec for $ARGUMENTS\n",
    );
    write(
        &proj,
        ".claude/skills/quiet/SKILL.md",
        "---\ndescription: Background knowledge\nuser-invocable: false\ncontext: fork\n---\nKnow this.\n",
    );
    write(
        &proj,
        ".claude/commands/ship.md",
        "---\ndescription: 'Ship it: \"now\"'\nallowed-tools: [\"Bash(git push *)\", Read]\ndisable-model-invocation: true\nargument-hint: <branch>\n---\nPush $1\n",
    );
    let found = skills::discover(&proj, None);
    let spec = &found.items[0];
    assert_eq!(
        (spec.name.as_str(), spec.dir_name.as_str()),
        ("spec", "project-spec")
    );
    assert!(spec.answers_to("spec") && spec.answers_to("project-spec"));
    assert_eq!(spec.description, "Write a project spec.");
    assert_eq!(spec.argument_hint.as_deref(), Some("[idea]"));
    assert_eq!(spec.allowed_tools, ["Read", "Write"]);
    assert!(spec.disable_model_invocation && spec.user_invocable);
    let quiet = &found.items[1];
    assert!(!quiet.user_invocable && !quiet.disable_model_invocation);
    assert_eq!(
        found.problems,
        [format!(
            "{}: cairn does not apply the skill's `context` yet",
            proj.join(".claude/skills/quiet/SKILL.md").display()
        )]
    );
    let commands = discover(&proj, None);
    let ship = &commands.items[0];
    assert_eq!(ship.description, "Ship it: \"now\"");
    assert_eq!(ship.allowed_tools, ["Bash(git push *)", "Read"]);
    assert!(ship.disable_model_invocation);
    assert_eq!(ship.argument_hint.as_deref(), Some("<branch>"));
    assert!(commands.problems.is_empty(), "{:?}", commands.problems);
}

#[test]
fn names_split_at_commas_and_spaces_outside_parentheses() {
    assert_eq!(
        split_names("Bash(git add *) Read,Grep ,  mcp__x__y"),
        ["Bash(git add *)", "Read", "Grep", "mcp__x__y"]
    );
    assert!(split_names(" , ").is_empty());
}
