use super::*;
use std::os::unix::fs::symlink;

use proptest::prelude::*;
use tempfile::TempDir;

/// A temp dir with its real path (macOS and some CI put /tmp behind a symlink).
fn real_tmp() -> (TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let real = std::fs::canonicalize(tmp.path()).unwrap();
    (tmp, real)
}

#[test]
fn expand_relative_against_cwd() {
    let cwd = Path::new("/work/proj");
    assert_eq!(
        expand_path("src/main.rs", cwd).unwrap(),
        PathBuf::from("/work/proj/src/main.rs")
    );
    assert_eq!(
        expand_path("./a/../b/./c.txt", cwd).unwrap(),
        PathBuf::from("/work/proj/b/c.txt")
    );
    assert_eq!(
        expand_path("../../../../x", cwd).unwrap(),
        PathBuf::from("/x")
    );
}

#[test]
fn expand_trims_and_keeps_absolute() {
    let cwd = Path::new("/w");
    assert_eq!(
        expand_path("  /etc/hosts \n", cwd).unwrap(),
        PathBuf::from("/etc/hosts")
    );
    assert_eq!(expand_path("/", cwd).unwrap(), PathBuf::from("/"));
    assert_eq!(expand_path("/a//b/", cwd).unwrap(), PathBuf::from("/a/b"));
}

#[test]
fn expand_tilde() {
    let home = home_dir().unwrap();
    let cwd = Path::new("/w");
    assert_eq!(expand_path("~", cwd).unwrap(), home);
    assert_eq!(expand_path("~/x/y", cwd).unwrap(), home.join("x/y"));
    // `~user` and `a/~` are plain names.
    assert_eq!(
        expand_path("~bob/x", cwd).unwrap(),
        PathBuf::from("/w/~bob/x")
    );
    assert_eq!(expand_path("a/~", cwd).unwrap(), PathBuf::from("/w/a/~"));
}

#[test]
fn expand_refuses_nul_and_empty() {
    let cwd = Path::new("/w");
    assert_eq!(expand_path("a\0b", cwd), Err(PathError::NullByte));
    assert_eq!(expand_path("", cwd), Err(PathError::Empty));
    assert_eq!(expand_path(" \t\n", cwd), Err(PathError::Empty));
}

#[test]
fn expand_normalises_to_nfc() {
    // "e" + combining acute accent becomes the single code point é.
    let decomposed = "caf\u{65}\u{301}.txt";
    let p = expand_path(decomposed, Path::new("/w")).unwrap();
    assert_eq!(p, PathBuf::from("/w/caf\u{e9}.txt"));
}

#[test]
fn chain_of_plain_path_is_itself() {
    let (_t, root) = real_tmp();
    let f = root.join("f.txt");
    std::fs::write(&f, "x").unwrap();
    let chain = resolve_symlink_chain(&f).unwrap();
    assert_eq!(chain.hops, vec![f.clone()]);
    assert_eq!(chain.resolved, f);
}

#[test]
fn chain_follows_relative_and_absolute_links() {
    let (_t, root) = real_tmp();
    std::fs::create_dir(root.join("d")).unwrap();
    let target = root.join("d/target.txt");
    std::fs::write(&target, "x").unwrap();
    // a -> d/b (relative), d/b -> <abs>/d/target.txt
    symlink(&target, root.join("d/b")).unwrap();
    symlink("d/b", root.join("a")).unwrap();
    let chain = resolve_symlink_chain(&root.join("a")).unwrap();
    assert_eq!(
        chain.hops,
        vec![root.join("a"), root.join("d/b"), target.clone()]
    );
    assert_eq!(chain.resolved, target);
}

#[test]
fn chain_relative_link_with_dotdot() {
    let (_t, root) = real_tmp();
    std::fs::create_dir_all(root.join("x/y")).unwrap();
    std::fs::write(root.join("t.txt"), "x").unwrap();
    symlink("../../t.txt", root.join("x/y/l")).unwrap();
    let chain = resolve_symlink_chain(&root.join("x/y/l")).unwrap();
    assert_eq!(chain.hops, vec![root.join("x/y/l"), root.join("t.txt")]);
    assert_eq!(chain.resolved, root.join("t.txt"));
}

#[test]
fn chain_counts_links_in_parent_directories() {
    let (_t, root) = real_tmp();
    std::fs::create_dir(root.join("real")).unwrap();
    std::fs::write(root.join("real/f"), "x").unwrap();
    symlink(root.join("real"), root.join("link")).unwrap();
    let chain = resolve_symlink_chain(&root.join("link/f")).unwrap();
    assert_eq!(chain.hops, vec![root.join("link/f"), root.join("real/f")]);
    assert_eq!(chain.resolved, root.join("real/f"));
}

#[test]
fn chain_missing_file_under_symlinked_directory() {
    let (_t, root) = real_tmp();
    std::fs::create_dir(root.join("real")).unwrap();
    symlink("real", root.join("link")).unwrap();
    let chain = resolve_symlink_chain(&root.join("link/new/deeper.txt")).unwrap();
    assert_eq!(
        chain.hops,
        vec![
            root.join("link/new/deeper.txt"),
            root.join("real/new/deeper.txt")
        ]
    );
    assert_eq!(chain.resolved, root.join("real/new/deeper.txt"));
}

#[test]
fn chain_dangling_link_resolves_to_its_target() {
    let (_t, root) = real_tmp();
    symlink("nowhere/file.txt", root.join("dangling")).unwrap();
    let chain = resolve_symlink_chain(&root.join("dangling")).unwrap();
    assert_eq!(
        chain.hops,
        vec![root.join("dangling"), root.join("nowhere/file.txt")]
    );
    assert_eq!(chain.resolved, root.join("nowhere/file.txt"));
}

#[test]
fn chain_detects_cycles() {
    let (_t, root) = real_tmp();
    symlink("b", root.join("a")).unwrap();
    symlink("a", root.join("b")).unwrap();
    assert_eq!(
        resolve_symlink_chain(&root.join("a/x")),
        Err(PathError::Cycle {
            path: root.join("a")
        })
    );
    symlink("self", root.join("self")).unwrap();
    assert!(matches!(
        resolve_symlink_chain(&root.join("self")),
        Err(PathError::Cycle { .. })
    ));
}

#[test]
fn chain_refuses_more_than_forty_hops() {
    let (_t, root) = real_tmp();
    std::fs::write(root.join("l0"), "x").unwrap();
    for i in 1..=41 {
        symlink(format!("l{}", i - 1), root.join(format!("l{i}"))).unwrap();
    }
    // 40 hops are fine.
    let chain = resolve_symlink_chain(&root.join("l40")).unwrap();
    assert_eq!(chain.hops.len(), 41);
    assert_eq!(chain.resolved, root.join("l0"));
    assert!(matches!(
        resolve_symlink_chain(&root.join("l41")),
        Err(PathError::TooManyHops { .. })
    ));
}

#[test]
fn chain_missing_path_and_file_as_parent() {
    let (_t, root) = real_tmp();
    let missing = root.join("no/such/file");
    let chain = resolve_symlink_chain(&missing).unwrap();
    assert_eq!(chain.hops, vec![missing.clone()]);
    assert_eq!(chain.resolved, missing);
    std::fs::write(root.join("file"), "x").unwrap();
    let under_file = root.join("file/child");
    assert_eq!(
        resolve_symlink_chain(&under_file).unwrap().resolved,
        under_file
    );
}

#[test]
fn chain_refuses_relative_input() {
    assert_eq!(
        resolve_symlink_chain(Path::new("rel/x")),
        Err(PathError::NotAbsolute {
            path: PathBuf::from("rel/x")
        })
    );
}

#[test]
fn chain_input_is_lexically_normalised_first() {
    let (_t, root) = real_tmp();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(root.join("a/f"), "x").unwrap();
    symlink(root.join("a/b"), root.join("l")).unwrap();
    // `l/..` is `a`, not `root`: after the link is replaced the `..` applies to the target.
    let chain = resolve_symlink_chain(&root.join("l/../f"));
    // The input is lexically normalised first (as permissions see it): `l/../f` is `f`.
    assert_eq!(chain.unwrap().resolved, root.join("f"));
}

proptest! {
    #[test]
    fn expand_never_panics_and_is_clean(raw in "\\PC{0,40}", parts in proptest::collection::vec("[a-z.~]{1,4}", 0..4)) {
        let cwd: PathBuf = std::iter::once("/".to_string()).chain(parts).collect();
        if let Ok(p) = expand_path(&raw, &cwd) {
            prop_assert!(p.is_absolute());
            prop_assert!(!p.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)));
            let s = p.to_string_lossy().to_string();
            prop_assert_eq!(s.nfc().collect::<String>(), s);
        }
    }

    #[test]
    fn expand_of_segments(segs in proptest::collection::vec(prop_oneof![
        Just("..".to_string()), Just(".".to_string()), Just("~".to_string()),
        "[a-zA-Z\u{300}-\u{36f}é ]{1,5}"], 0..8)) {
        let raw = segs.join("/");
        match expand_path(&raw, Path::new("/base/dir")) {
            Ok(p) => {
                prop_assert!(p.is_absolute());
                prop_assert!(!p.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)));
                let s = p.to_string_lossy().to_string();
                prop_assert_eq!(s.nfc().collect::<String>(), s);
            }
            Err(e) => prop_assert_eq!(e, PathError::Empty),
        }
    }
}

#[test]
fn paths_under_home_show_with_a_tilde() {
    let home = Some(Path::new("/home/ada"));
    assert_eq!(tilde_path_in(Path::new("/home/ada"), home), "~");
    assert_eq!(tilde_path_in(Path::new("/home/ada/src/x"), home), "~/src/x");
    assert_eq!(tilde_path_in(Path::new("/home/adam"), home), "/home/adam");
    assert_eq!(tilde_path_in(Path::new("/srv/x"), None), "/srv/x");
}
