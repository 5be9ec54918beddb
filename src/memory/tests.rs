//! Memory files on real temp directories: order, scopes, imports (relative, `~/`, absolute,
//! depth, cycles, missing, not from code), and the prompt section. Where files may come from
//! (real symlinks, a fake home): `containment.rs`.

use super::*;

pub(super) struct Tree {
    _tmp: tempfile::TempDir,
    pub(super) root: PathBuf,
}

impl Tree {
    pub(super) fn new() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        Tree { _tmp: tmp, root }
    }
    pub(super) fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    pub(super) fn roots(&self) -> Roots {
        Roots {
            managed: self.root.join("etc/CLAUDE.md"),
            home: Some(self.root.join("home")),
            cwd: self.root.join("work/proj/sub"),
            project_root: self.root.join("work/proj"),
            external_imports_approved: false,
        }
    }
}

pub(super) fn names(m: &Memory, root: &Path) -> Vec<(String, Scope)> {
    m.files
        .iter()
        .map(|f| {
            (
                f.path.strip_prefix(root).unwrap().display().to_string(),
                f.scope,
            )
        })
        .collect()
}

#[test]
fn files_load_in_order_outermost_first_and_local_last() {
    let t = Tree::new();
    t.write("etc/CLAUDE.md", "managed");
    t.write("home/.claude/CLAUDE.md", "user");
    t.write("work/CLAUDE.md", "outer");
    t.write("work/proj/CLAUDE.md", "project");
    t.write("work/proj/.claude/CLAUDE.md", "dot claude");
    t.write("work/proj/AGENTS.md", "agents");
    t.write("work/proj/CLAUDE.local.md", "local");
    t.write("work/proj/sub/CLAUDE.md", "sub");
    std::fs::create_dir_all(t.root.join("work/proj/sub")).unwrap();
    let m = load(&t.roots());
    assert_eq!(
        names(&m, &t.root),
        [
            ("etc/CLAUDE.md".into(), Scope::Managed),
            ("home/.claude/CLAUDE.md".into(), Scope::User),
            ("work/CLAUDE.md".into(), Scope::Project),
            ("work/proj/CLAUDE.md".into(), Scope::Project),
            ("work/proj/.claude/CLAUDE.md".into(), Scope::Project),
            ("work/proj/AGENTS.md".into(), Scope::Project),
            ("work/proj/sub/CLAUDE.md".into(), Scope::Project),
            ("work/proj/CLAUDE.local.md".into(), Scope::Local),
        ]
    );
    assert!(m.problems.is_empty(), "{:?}", m.problems);
    let prompt = render(&m);
    assert!(prompt.starts_with("# Memory\n"));
    assert!(prompt.find("managed").unwrap() < prompt.find("local").unwrap());
}

#[test]
fn imports_are_followed_and_problems_reported() {
    let t = Tree::new();
    t.write(
        "work/proj/CLAUDE.md",
        "See @docs/style.md and @prefs.md.\n`@not/this.md` and\n```\n@nor/this.md\n```\n@missing.md\n",
    );
    t.write("work/proj/docs/style.md", "style, and @../CLAUDE.md again");
    t.write("work/proj/prefs.md", "prefs");
    std::fs::create_dir_all(t.root.join("work/proj/sub")).unwrap();
    let m = load(&t.roots());
    assert_eq!(
        names(&m, &t.root),
        [
            ("work/proj/CLAUDE.md".into(), Scope::Project),
            ("work/proj/docs/style.md".into(), Scope::Imported),
            ("work/proj/prefs.md".into(), Scope::Imported),
        ]
    );
    let problems = m.problems.join("\n");
    assert!(
        problems.contains("@missing.md not imported: no such file"),
        "{problems}"
    );
    assert!(
        problems.contains("@../CLAUDE.md not imported: it imports back (a cycle)"),
        "{problems}"
    );
    assert!(
        !problems.contains("not/this.md") && !problems.contains("nor/this.md"),
        "{problems}"
    );
}

#[test]
fn imports_stop_at_five_levels() {
    let t = Tree::new();
    for i in 0..7 {
        t.write(
            &format!("work/proj/m{i}.md"),
            &format!("level {i} @m{}.md", i + 1),
        );
    }
    t.write("work/proj/CLAUDE.md", "@m0.md");
    std::fs::create_dir_all(t.root.join("work/proj/sub")).unwrap();
    let m = load(&t.roots());
    assert_eq!(m.files.len(), 1 + MAX_IMPORT_DEPTH);
    assert!(
        m.problems.iter().any(|p| p.contains("at most 5 deep")),
        "{:?}",
        m.problems
    );
}

#[test]
fn no_memory_is_no_section() {
    assert_eq!(render(&Memory::default()), "");
}

#[test]
fn a_read_below_the_working_directory_names_the_directories_and_files_on_its_way() {
    let t = Tree::new();
    let cwd = t.root.join("work/proj");
    t.write("work/proj/CLAUDE.md", "top: read at start");
    t.write("work/proj/api/CLAUDE.md", "api rules");
    t.write("work/proj/api/v2/AGENTS.md", "v2 rules @notes.md");
    t.write("work/proj/api/v2/notes.md", "notes");
    let file = t.write("work/proj/api/v2/handler.rs", "fn h() {}");
    let dirs = nested_dirs(&file, &cwd);
    assert_eq!(dirs, [cwd.join("api"), cwd.join("api/v2")]);
    let found: Vec<PathBuf> = dirs.iter().flat_map(|d| files_in(d)).collect();
    let rel: Vec<String> = found
        .iter()
        .map(|p| p.strip_prefix(&cwd).unwrap().display().to_string())
        .collect();
    assert_eq!(rel, ["api/CLAUDE.md", "api/v2/AGENTS.md"]);
    assert!(nested_dirs(&t.root.join("elsewhere/x.rs"), &cwd).is_empty());
    let m = load_file(&found[1], &t.roots());
    assert_eq!(m.files.len(), 2, "the file and its import");
}

#[path = "containment_tests.rs"]
mod containment;
