//! Where memory may come from, on real temp directories with real symlinks and a fake home: a
//! project's imports of `~/.ssh/id_rsa`, `../outside/secret.txt` and `/proc/self/environ`,
//! memory files that are symlinks out of the project, the user's memory within the home, an
//! ancestor above the project within its own directory, and a subdirectory's file after a Read.
//! The secret text never reaches the prompt section unless the person approved.

use std::os::unix::fs::symlink;

use super::*;

const KEY: &str = "SSH-PRIVATE-KEY-SECRET";
const SECRET: &str = "OUTSIDE-SECRET";

/// The tree with the secrets in place: `home/.ssh/id_rsa` and `work/outside/secret.txt`
/// (the project is `work/proj`).
fn secrets() -> Tree {
    let t = Tree::new();
    t.write("home/.ssh/id_rsa", KEY);
    t.write("work/outside/secret.txt", SECRET);
    std::fs::create_dir_all(t.root.join("work/proj/sub")).unwrap();
    t
}

fn approved(t: &Tree) -> Roots {
    Roots {
        external_imports_approved: true,
        ..t.roots()
    }
}

#[test]
fn project_imports_of_files_outside_the_project_wait_for_approval() {
    let t = secrets();
    t.write(
        "work/proj/CLAUDE.md",
        "Rules.\n@~/.ssh/id_rsa\n@../outside/secret.txt\n@docs/in.md\n",
    );
    t.write("work/proj/docs/in.md", "inside the project");
    let m = load(&t.roots());
    let prompt = render(&m);
    assert!(
        !prompt.contains(KEY) && !prompt.contains(SECRET),
        "{prompt}"
    );
    assert!(prompt.contains("inside the project"), "{prompt}");
    assert_eq!(
        m.external_imports,
        [
            t.root.join("home/.ssh/id_rsa"),
            t.root.join("work/outside/secret.txt")
        ]
    );
    let claude = t.root.join("work/proj/CLAUDE.md");
    assert_eq!(
        m.problems[0],
        format!(
            "{}: @~/.ssh/id_rsa not imported: {} is outside the project ({}); a file outside the \
             project is read only with your approval (external imports)",
            claude.display(),
            t.root.join("home/.ssh/id_rsa").display(),
            t.root.join("work/proj").display()
        )
    );
    assert!(m.problems[1].contains("@../outside/secret.txt not imported"));
    assert_eq!(m.problems.len(), 2, "{:?}", m.problems);

    // Approved: both load, and nothing is left to approve.
    let m = load(&approved(&t));
    let prompt = render(&m);
    assert!(prompt.contains(KEY) && prompt.contains(SECRET), "{prompt}");
    assert!(m.external_imports.is_empty() && m.problems.is_empty());
}

#[test]
fn proc_sys_and_dev_are_never_read_approved_or_not_managed_or_not() {
    let t = secrets();
    t.write("work/proj/AGENTS.md", "@/proc/self/environ\n@/sys/kernel");
    t.write("etc/CLAUDE.md", "managed @/proc/self/environ @/dev/stdin");
    symlink(
        "/proc/self/environ",
        t.root.join("work/proj/CLAUDE.local.md"),
    )
    .unwrap();
    for roots in [t.roots(), approved(&t)] {
        let m = load(&roots);
        let read: Vec<String> = names(&m, &t.root).into_iter().map(|n| n.0).collect();
        assert_eq!(read, ["etc/CLAUDE.md", "work/proj/AGENTS.md"]);
        let prompt = render(&m);
        assert!(!prompt.contains("PATH="), "{prompt}");
        assert!(m.external_imports.is_empty(), "{:?}", m.external_imports);
        let problems = m.problems.join("\n");
        assert_eq!(
            problems
                .matches("a system path (/proc, /sys, /dev), which is never read")
                .count(),
            5,
            "{problems}"
        );
        assert!(
            problems.contains("CLAUDE.local.md: not read: "),
            "{problems}"
        );
    }
}

#[test]
fn memory_files_that_are_symlinks_out_of_the_project_are_not_read() {
    let t = secrets();
    let proj = t.root.join("work/proj");
    symlink(
        t.root.join("work/outside/secret.txt"),
        proj.join("CLAUDE.md"),
    )
    .unwrap();
    symlink(
        t.root.join("home/.ssh/id_rsa"),
        proj.join("CLAUDE.local.md"),
    )
    .unwrap();
    // A link that stays inside the project is fine.
    t.write("work/proj/docs/agents.md", "agents inside");
    symlink("docs/agents.md", proj.join("AGENTS.md")).unwrap();
    // A directory link on the way counts too.
    t.write("work/outside/dot-claude/CLAUDE.md", SECRET);
    symlink(
        t.root.join("work/outside/dot-claude"),
        proj.join("sub/.claude"),
    )
    .unwrap();
    let m = load(&t.roots());
    let read: Vec<String> = names(&m, &t.root).into_iter().map(|n| n.0).collect();
    assert_eq!(read, ["work/proj/AGENTS.md"]);
    let prompt = render(&m);
    assert!(
        !prompt.contains(KEY) && !prompt.contains(SECRET),
        "{prompt}"
    );
    assert_eq!(
        m.external_imports,
        [
            t.root.join("work/outside/secret.txt"),
            t.root.join("work/outside/dot-claude/CLAUDE.md"),
            t.root.join("home/.ssh/id_rsa")
        ]
    );
    assert!(
        m.problems[0].starts_with(&format!("{}: not read: ", proj.join("CLAUDE.md").display())),
        "{:?}",
        m.problems
    );
    // Approved: read, under the names they were found by.
    let m = load(&approved(&t));
    let read: Vec<String> = names(&m, &t.root).into_iter().map(|n| n.0).collect();
    assert_eq!(
        read,
        [
            "work/proj/CLAUDE.md",
            "work/proj/AGENTS.md",
            "work/proj/sub/.claude/CLAUDE.md",
            "work/proj/CLAUDE.local.md"
        ]
    );
}

#[test]
fn user_memory_imports_from_the_home_only() {
    let t = secrets();
    t.write(
        "home/.claude/CLAUDE.md",
        "user @~/notes/style.md @../../work/outside/secret.txt",
    );
    t.write("home/notes/style.md", "user style");
    for roots in [t.roots(), approved(&t)] {
        let m = load(&roots);
        let prompt = render(&m);
        assert!(prompt.contains("user style"), "{prompt}");
        assert!(!prompt.contains(SECRET), "{prompt}");
        // Not the project's to approve: refused, not listed.
        assert!(m.external_imports.is_empty());
        assert!(
            m.problems[0].contains("is outside your home directory"),
            "{:?}",
            m.problems
        );
    }
}

#[test]
fn an_ancestor_above_the_project_names_files_inside_its_own_directory() {
    let t = secrets();
    // `work/` holds the project: its memory may import what `work/` holds, not the home's.
    t.write("work/CLAUDE.md", "@outside/secret.txt\n@~/.ssh/id_rsa");
    let m = load(&t.roots());
    let prompt = render(&m);
    assert!(prompt.contains(SECRET), "{prompt}");
    assert!(!prompt.contains(KEY), "{prompt}");
    assert_eq!(m.external_imports, [t.root.join("home/.ssh/id_rsa")]);
    assert!(m.problems[0].contains("outside the directory of the memory file"));
}

#[test]
fn a_subdirectory_memory_file_after_a_read_stays_inside_the_project() {
    let t = secrets();
    let proj = t.root.join("work/proj");
    t.write("work/proj/api/CLAUDE.md", "api @../../outside/secret.txt");
    symlink(t.root.join("home/.ssh/id_rsa"), proj.join("api/AGENTS.md")).unwrap();
    t.write("work/proj/api/x.rs", "");
    let files: Vec<PathBuf> = nested_dirs(&proj.join("api/x.rs"), &proj)
        .iter()
        .flat_map(|d| files_in(d))
        .collect();
    assert_eq!(files.len(), 2);
    let mut roots = t.roots();
    roots.cwd = proj.clone();
    let loaded: Vec<Memory> = files.iter().map(|f| load_file(f, &roots)).collect();
    let text: String = loaded.iter().map(render).collect();
    assert!(text.contains("api "), "{text}");
    assert!(!text.contains(SECRET) && !text.contains(KEY), "{text}");
    let external: Vec<&PathBuf> = loaded.iter().flat_map(|m| &m.external_imports).collect();
    assert_eq!(external.len(), 2, "{external:?}");
    roots.external_imports_approved = true;
    let text: String = files
        .iter()
        .map(|f| render(&load_file(f, &roots)))
        .collect();
    assert!(text.contains(SECRET) && text.contains(KEY), "{text}");
}

#[test]
fn a_home_import_without_a_home_is_not_guessed() {
    let t = secrets();
    t.write("work/proj/CLAUDE.md", "rules @~/.ssh/id_rsa");
    // `~/…` taken as a relative name would resolve against the process's directory.
    t.write("work/proj/~/.ssh/id_rsa", KEY);
    let roots = Roots {
        home: None,
        ..approved(&t)
    };
    let m = load(&roots);
    assert_eq!(m.files.len(), 1);
    assert!(!render(&m).contains(KEY));
    assert!(
        m.problems[0].ends_with("@~/.ssh/id_rsa not imported: the home directory is unknown"),
        "{:?}",
        m.problems
    );
}
