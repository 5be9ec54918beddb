//! The checkpoint store on real files in temp dirs: what a checkpoint notices (writes, `rm`,
//! `sed -i`, appends, new and deleted directories, symlinks, chmod), what it leaves out
//! (gitignored files, `.git`, files over the cap), restoring and undoing a restore, surviving a
//! restart and a torn checkpoint file, and refusing to be led outside the root by a symlink.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

#[path = "support/checkpoint.rs"]
mod support;
use support::{Op, actions, apply_op, noise, ws};

use cairn::checkpoint::{
    CheckpointId, CheckpointOptions, CheckpointStore, RestoreAction, Uncovered,
};

#[test]
fn first_checkpoint_stores_everything_and_nothing_changed_writes_nothing_but_a_name() {
    let w = ws();
    w.write("a.txt", "alpha\n");
    w.write("src/b.rs", "fn b() {}\n");
    let mut store = w.open();
    let first = store.record("start").unwrap();
    assert_eq!(first.id, CheckpointId(1));
    // Two files and one directory.
    assert_eq!(first.changed, 3);
    assert_eq!(first.files_stored, 2);
    assert!(!first.reused);
    let again = store.record("again").unwrap();
    // Nothing changed: no checkpoint file, the label names the first one.
    assert_eq!(again.id, CheckpointId(1));
    assert!(again.reused);
    assert_eq!(again.changed, 0);
    assert_eq!(again.files_stored, 0);
    assert_eq!(store.count(), 1);
    let cp_files = std::fs::read_dir(w.data.join("checkpoints"))
        .unwrap()
        .count();
    assert_eq!(cp_files, 1);
    assert!(store.plan_restore(first.id).unwrap().files.is_empty());
    // The name survives a reopen, and a change is a new checkpoint again.
    drop(store);
    let mut store = w.open();
    let labels: Vec<(u64, String)> = store
        .list()
        .into_iter()
        .map(|c| (c.id.0, c.label))
        .collect();
    assert_eq!(labels, [(1, "start".to_string()), (1, "again".to_string())]);
    w.write("a.txt", "beta\n");
    let changed = store.record("changed").unwrap();
    assert_eq!((changed.id, changed.reused), (CheckpointId(2), false));
}

#[test]
fn write_is_restored() {
    let w = ws();
    w.write("a.txt", "alpha\n");
    let mut store = w.open();
    let cp = store.record("before").unwrap().id;
    w.write("a.txt", "changed by a tool\n");
    let plan = store.plan_restore(cp).unwrap();
    assert_eq!(
        actions(&plan),
        vec![("a.txt".into(), RestoreAction::Rewrite)]
    );
    let done = store.restore(cp, "rewind").unwrap();
    assert!(done.problems.is_empty(), "{:?}", done.problems);
    assert_eq!(w.read("a.txt"), "alpha\n");
}

#[test]
fn rm_is_undone_with_mode_bits() {
    let w = ws();
    w.write("run.sh", "#!/bin/sh\necho hi\n");
    fs::set_permissions(w.p("run.sh"), fs::Permissions::from_mode(0o751)).unwrap();
    let mut store = w.open();
    let cp = store.record("before").unwrap().id;
    fs::remove_file(w.p("run.sh")).unwrap();
    let plan = store.plan_restore(cp).unwrap();
    assert_eq!(
        actions(&plan),
        vec![("run.sh".into(), RestoreAction::Recreate)]
    );
    store.restore(cp, "rewind").unwrap();
    assert_eq!(w.read("run.sh"), "#!/bin/sh\necho hi\n");
    let mode = fs::metadata(w.p("run.sh")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o751);
}

#[test]
fn sed_in_place_is_seen_and_restored() {
    let w = ws();
    w.write("conf.ini", "name = old\n");
    let mut store = w.open();
    let cp = store.record("before").unwrap().id;
    let ino = fs::metadata(w.p("conf.ini")).unwrap().ino();
    let status = std::process::Command::new("sed")
        .args(["-i", "s/old/new/"])
        .arg(w.p("conf.ini"))
        .status()
        .unwrap();
    assert!(status.success());
    assert_ne!(
        fs::metadata(w.p("conf.ini")).unwrap().ino(),
        ino,
        "sed -i renames"
    );
    assert_eq!(store.record("after sed").unwrap().changed, 1);
    store.restore(cp, "rewind").unwrap();
    assert_eq!(w.read("conf.ini"), "name = old\n");
}

#[test]
fn a_new_inode_alone_is_a_change() {
    // Same size, same mtime, same mode: only the inode tells the file was replaced.
    let w = ws();
    w.write("x.txt", "aaaa");
    let mut store = w.open();
    let cp = store.record("before").unwrap().id;
    let mtime = fs::metadata(w.p("x.txt")).unwrap().modified().unwrap();
    w.write("x.tmp", "bbbb");
    fs::File::options()
        .write(true)
        .open(w.p("x.tmp"))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    fs::rename(w.p("x.tmp"), w.p("x.txt")).unwrap();
    let plan = store.plan_restore(cp).unwrap();
    assert_eq!(
        actions(&plan),
        vec![("x.txt".into(), RestoreAction::Rewrite)]
    );
    store.restore(cp, "rewind").unwrap();
    assert_eq!(w.read("x.txt"), "aaaa");
}

#[test]
fn append_is_seen_and_restored() {
    let w = ws();
    w.write("log.md", "one\n");
    let mut store = w.open();
    let cp = store.record("before").unwrap().id;
    use std::io::Write;
    let mut f = fs::File::options()
        .append(true)
        .open(w.p("log.md"))
        .unwrap();
    writeln!(f, "two").unwrap();
    drop(f);
    assert_eq!(store.record("after append").unwrap().changed, 1);
    store.restore(cp, "rewind").unwrap();
    assert_eq!(w.read("log.md"), "one\n");
}

#[test]
fn chmod_alone_is_seen_and_restored() {
    let w = ws();
    w.write("tool.sh", "echo\n");
    fs::set_permissions(w.p("tool.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    let mut store = w.open();
    let cp = store.record("before").unwrap().id;
    fs::set_permissions(w.p("tool.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(store.record("after chmod").unwrap().changed, 1);
    store.restore(cp, "rewind").unwrap();
    let mode = fs::metadata(w.p("tool.sh")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

#[test]
fn new_file_and_new_directory_are_removed() {
    let w = ws();
    w.write("keep.txt", "keep\n");
    let mut store = w.open();
    let cp = store.record("before").unwrap().id;
    w.write("new.txt", "new\n");
    w.write("gen/deep/er/out.txt", "generated\n");
    let plan = store.plan_restore(cp).unwrap();
    let removed: Vec<_> = plan
        .files
        .iter()
        .filter(|f| f.action == RestoreAction::Remove)
        .map(|f| f.path.strip_prefix(&w.root).unwrap().display().to_string())
        .collect();
    assert_eq!(
        removed,
        [
            "gen",
            "gen/deep",
            "gen/deep/er",
            "gen/deep/er/out.txt",
            "new.txt"
        ]
    );
    let done = store.restore(cp, "rewind").unwrap();
    assert!(done.problems.is_empty(), "{:?}", done.problems);
    assert!(!w.p("new.txt").exists());
    assert!(!w.p("gen").exists());
    assert_eq!(w.read("keep.txt"), "keep\n");
}

#[test]
fn deleted_directory_is_recreated_with_its_mode() {
    let w = ws();
    w.write("lib/a.rs", "a\n");
    w.write("lib/inner/b.rs", "b\n");
    fs::set_permissions(w.p("lib/inner"), fs::Permissions::from_mode(0o700)).unwrap();
    let before = w.tree();
    let mut store = w.open();
    let cp = store.record("before").unwrap().id;
    fs::remove_dir_all(w.p("lib")).unwrap();
    let done = store.restore(cp, "rewind").unwrap();
    assert!(done.problems.is_empty(), "{:?}", done.problems);
    assert_eq!(w.tree(), before);
}

#[test]
fn read_only_directory_is_refilled() {
    let w = ws();
    w.write("ro/file.txt", "x\n");
    fs::set_permissions(w.p("ro"), fs::Permissions::from_mode(0o555)).unwrap();
    let before = w.tree();
    let mut store = w.open();
    let cp = store.record("before").unwrap().id;
    fs::set_permissions(w.p("ro"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_dir_all(w.p("ro")).unwrap();
    let done = store.restore(cp, "rewind").unwrap();
    assert!(done.problems.is_empty(), "{:?}", done.problems);
    assert_eq!(w.tree(), before);
    fs::set_permissions(w.p("ro"), fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn symlinks_are_recorded_as_links_and_never_followed() {
    let w = ws();
    fs::write(w.outside.join("secret.txt"), "outside\n").unwrap();
    fs::write(w.outside.join("other.txt"), "other\n").unwrap();
    symlink(w.outside.join("secret.txt"), w.p("link")).unwrap();
    symlink(&w.outside, w.p("dirlink")).unwrap();
    let mut store = w.open();
    let first = store.record("before").unwrap();
    // Two links, nothing behind them.
    assert_eq!(first.changed, 2);
    assert_eq!(first.files_stored, 0);
    fs::remove_file(w.p("link")).unwrap();
    symlink("elsewhere", w.p("link")).unwrap();
    store.restore(first.id, "rewind").unwrap();
    assert_eq!(
        fs::read_link(w.p("link")).unwrap(),
        w.outside.join("secret.txt")
    );
    assert_eq!(
        fs::read_to_string(w.outside.join("secret.txt")).unwrap(),
        "outside\n"
    );
    // A link replaced by a regular file gets its link back, and the target is untouched.
    fs::remove_file(w.p("link")).unwrap();
    w.write("link", "now a file\n");
    store.restore(first.id, "rewind").unwrap();
    assert!(
        fs::symlink_metadata(w.p("link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        fs::read_to_string(w.outside.join("secret.txt")).unwrap(),
        "outside\n"
    );
}

#[test]
fn a_directory_swapped_for_a_symlink_never_leads_outside() {
    let w = ws();
    w.write("sub/a.txt", "inside\n");
    let mut store = w.open();
    let cp = store.record("before").unwrap().id;
    // Someone replaces `sub` by a link to a directory outside the root with the same names.
    fs::remove_dir_all(w.p("sub")).unwrap();
    fs::write(w.outside.join("a.txt"), "outside\n").unwrap();
    symlink(&w.outside, w.p("sub")).unwrap();
    let done = store.restore(cp, "rewind").unwrap();
    assert!(done.problems.is_empty(), "{:?}", done.problems);
    assert_eq!(
        fs::read_to_string(w.outside.join("a.txt")).unwrap(),
        "outside\n"
    );
    assert!(fs::symlink_metadata(w.p("sub")).unwrap().is_dir());
    assert_eq!(w.read("sub/a.txt"), "inside\n");
}

#[test]
fn files_over_the_cap_are_reported_and_left_alone() {
    let w = ws();
    w.write("small.txt", "small\n");
    w.write("big.bin", &"x".repeat(2048));
    let options = CheckpointOptions {
        max_file_size: 1024,
        ..CheckpointOptions::default()
    };
    let mut store = w.open_with(options);
    let first = store.record("before").unwrap();
    assert_eq!(first.not_covered.len(), 1);
    assert_eq!(first.not_covered[0].path, w.p("big.bin"));
    assert_eq!(first.not_covered[0].why, Uncovered::TooLarge);
    assert_eq!(first.not_covered[0].size, 2048);
    assert_eq!(store.not_covered(first.id).unwrap(), first.not_covered);
    // A large file created since is not removed: nothing could bring it back.
    w.write("huge.log", &"y".repeat(4096));
    w.write("big.bin", &"z".repeat(3000));
    let plan = store.plan_restore(first.id).unwrap();
    assert!(plan.files.is_empty(), "{:?}", plan.files);
    let mut left: Vec<_> = plan.left_alone.iter().map(|n| n.path.clone()).collect();
    left.sort();
    assert_eq!(left, [w.p("big.bin"), w.p("huge.log")]);
    store.restore(first.id, "rewind").unwrap();
    assert_eq!(fs::metadata(w.p("huge.log")).unwrap().len(), 4096);
    assert_eq!(fs::metadata(w.p("big.bin")).unwrap().len(), 3000);
}

#[test]
fn gitignored_files_and_dot_git_are_left_out() {
    let w = ws();
    w.write(".gitignore", "target/\n*.log\n");
    w.write("src/main.rs", "fn main() {}\n");
    w.write(".git/HEAD", "ref: refs/heads/main\n");
    w.write(".hidden/config", "kept\n");
    let mut store = w.open();
    let first = store.record("before").unwrap();
    // .gitignore, src, src/main.rs, .hidden, .hidden/config.
    assert_eq!(first.changed, 5);
    w.write("target/debug/app", "binary\n");
    w.write("run.log", "log\n");
    w.write(".git/HEAD", "ref: refs/heads/other\n");
    assert_eq!(store.record("after").unwrap().changed, 0);
    let plan = store.plan_restore(first.id).unwrap();
    assert!(plan.files.is_empty(), "{:?}", plan.files);
    store.restore(first.id, "rewind").unwrap();
    assert_eq!(w.read("target/debug/app"), "binary\n");
    assert_eq!(w.read(".git/HEAD"), "ref: refs/heads/other\n");
}

#[test]
fn restore_then_undo_the_restore() {
    let w = ws();
    w.write("a.txt", "A1\n");
    w.write("dir/b.txt", "B1\n");
    let mut store = w.open();
    let one = store.record("prompt 1").unwrap().id;
    let state_one = w.tree();
    w.write("a.txt", "A2\n");
    fs::remove_dir_all(w.p("dir")).unwrap();
    w.write("c.txt", "C2\n");
    store.record("prompt 2").unwrap();
    // Changes after the last checkpoint: the restore must keep them in its undo checkpoint.
    w.write("a.txt", "A3 unsaved\n");
    w.write("d/e.txt", "E3\n");
    let state_now = w.tree();
    let restored = store.restore(one, "rewind to 1").unwrap();
    assert!(restored.problems.is_empty(), "{:?}", restored.problems);
    assert_eq!(w.tree(), state_one);
    let undone = store.restore(restored.undo, "undo rewind").unwrap();
    assert!(undone.problems.is_empty(), "{:?}", undone.problems);
    assert_eq!(w.tree(), state_now);
    // And the undo can itself be undone.
    store.restore(undone.undo, "redo rewind").unwrap();
    assert_eq!(w.tree(), state_one);
}

#[test]
fn plan_says_which_files_changed_outside_since_the_latest_checkpoint() {
    let w = ws();
    w.write("edited.txt", "v1\n");
    w.write("outside.txt", "o1\n");
    let mut store = w.open();
    let one = store.record("prompt 1").unwrap().id;
    // The agent edits, and records before its next writing tool...
    w.write("edited.txt", "v2\n");
    store.record("before Bash").unwrap();
    // ...then something else changes a file, with no checkpoint after it.
    w.write("outside.txt", "o2 by hand\n");
    let plan = store.plan_restore(one).unwrap();
    let flags: BTreeMap<_, _> = plan
        .files
        .iter()
        .map(|f| {
            (
                f.path.file_name().unwrap().to_string_lossy().to_string(),
                f.matches_latest,
            )
        })
        .collect();
    assert_eq!(
        flags,
        BTreeMap::from([("edited.txt".into(), true), ("outside.txt".into(), false)])
    );
    assert_eq!(plan.changed_outside().count(), 1);
}

#[test]
fn checkpoints_survive_a_restart() {
    let w = ws();
    w.write("a.txt", "first\n");
    let one = {
        let mut store = w.open();
        let one = store.record("prompt 1").unwrap().id;
        w.write("a.txt", "second\n");
        store.record("prompt 2").unwrap();
        one
    };
    w.write("a.txt", "third\n");
    let mut store = w.open();
    let labels: Vec<_> = store.list().into_iter().map(|c| c.label).collect();
    assert_eq!(labels, ["prompt 1", "prompt 2"]);
    let done = store.restore(one, "rewind").unwrap();
    assert_eq!(done.undo, CheckpointId(3));
    assert_eq!(w.read("a.txt"), "first\n");
}

#[test]
fn a_torn_checkpoint_is_ignored_and_its_id_not_reused() {
    let w = ws();
    w.write("a.txt", "1\n");
    let mut store = w.open();
    store.record("one").unwrap();
    w.write("a.txt", "2\n");
    store.record("two").unwrap();
    w.write("a.txt", "3\n");
    store.record("three").unwrap();
    drop(store);
    // Cut checkpoint 3 short, as a crash mid-write on a filesystem without atomic rename could.
    let cp_dir = w.data.join("checkpoints");
    let three = cp_dir.join("0000000003.cp");
    let bytes = fs::read(&three).unwrap();
    fs::write(&three, &bytes[..bytes.len() / 2]).unwrap();
    // And flip one byte in the middle of checkpoint 2: its content no longer matches.
    let two = cp_dir.join("0000000002.cp");
    let mut bytes = fs::read(&two).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    fs::write(&two, bytes).unwrap();
    let mut store = w.open();
    let ids: Vec<_> = store.list().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, [CheckpointId(1)]);
    let damaged: Vec<_> = store.damaged().iter().map(|d| d.path.clone()).collect();
    assert_eq!(damaged, [two.clone(), three.clone()]);
    let next = store.record("four").unwrap();
    assert_eq!(next.id, CheckpointId(4));
    // Checkpoint 4 was compared with 1, the latest readable one.
    assert_eq!(next.changed, 1);
    store.restore(CheckpointId(1), "rewind").unwrap();
    assert_eq!(w.read("a.txt"), "1\n");
    assert!(store.restore(CheckpointId(2), "rewind").is_err());
}

#[test]
fn a_delta_on_a_damaged_base_is_ignored_too() {
    let w = ws();
    w.write("a.txt", "1\n");
    let mut store = w.open();
    for n in 1..=3 {
        w.write("a.txt", &format!("{n}\n"));
        store.record(&format!("cp {n}")).unwrap();
    }
    drop(store);
    fs::write(w.data.join("checkpoints/0000000002.cp"), b"CAIRNCP1 junk").unwrap();
    let store = w.open();
    let ids: Vec<_> = store.list().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, [CheckpointId(1)]);
    assert_eq!(store.damaged().len(), 2);
    assert!(
        store.damaged()[1].why.contains("base checkpoint 2"),
        "{:?}",
        store.damaged()
    );
}

#[test]
fn a_latest_checkpoint_gone_bad_after_open_starts_a_new_chain() {
    let w = ws();
    w.write("a.txt", "1\n");
    w.write("b.txt", "b\n");
    let mut store = w.open();
    store.record("one").unwrap();
    w.write("a.txt", "2\n");
    store.record("two").unwrap();
    drop(store);
    let mut store = w.open();
    // Checkpoint 2 is a delta on 1; 1 disappears while the store is open.
    fs::remove_file(w.data.join("checkpoints/0000000001.cp")).unwrap();
    w.write("a.txt", "3\n");
    let three = store.record("three").unwrap();
    // A full index: every entry counts as new (a delta on 2 would count 1).
    assert_eq!(three.changed, 2);
    w.write("a.txt", "4\n");
    store.restore(three.id, "rewind").unwrap();
    assert_eq!(w.read("a.txt"), "3\n");
    assert!(matches!(
        store.restore(CheckpointId(2), "rewind"),
        Err(cairn::checkpoint::CheckpointError::Damaged { .. })
    ));
}

#[test]
fn every_checkpoint_reads_back_across_full_and_delta_files() {
    let w = ws();
    let options = CheckpointOptions {
        full_every: 3,
        ..CheckpointOptions::default()
    };
    let mut store = w.open_with(options.clone());
    let mut states = Vec::new();
    for n in 0..8 {
        w.write(&format!("f{}.txt", n % 3), &format!("round {n}\n"));
        if n % 4 == 3 {
            fs::remove_file(w.p("f0.txt")).unwrap();
        }
        let id = store.record(&format!("round {n}")).unwrap().id;
        states.push((id, w.tree()));
    }
    drop(store);
    let mut store = w.open_with(options);
    for (id, state) in states.iter().rev() {
        let done = store.restore(*id, "check").unwrap();
        assert!(done.problems.is_empty(), "{:?}", done.problems);
        assert_eq!(&w.tree(), state, "checkpoint {id}");
    }
}

#[test]
fn many_files_are_stored_on_several_threads_and_come_back() {
    let w = ws();
    for n in 0..300 {
        w.write(&format!("m{}/f{n}.txt", n % 7), &format!("file {n}\n"));
    }
    // Two files with one content: stored once.
    w.write("dup1.txt", "same\n");
    w.write("dup2.txt", "same\n");
    let before = w.tree();
    let mut store = w.open();
    let first = store.record("many").unwrap();
    assert_eq!(first.files_stored, 301);
    for n in 0..7 {
        fs::remove_dir_all(w.p(&format!("m{n}"))).unwrap();
    }
    let done = store.restore(first.id, "rewind").unwrap();
    assert!(done.problems.is_empty(), "{:?}", done.problems);
    assert_eq!(w.tree(), before);
}

#[test]
fn the_store_inside_a_root_is_not_checkpointed() {
    let w = ws();
    w.write("a.txt", "a\n");
    let data = w.p(".cairn-data");
    let mut store = CheckpointStore::open(
        &data,
        std::slice::from_ref(&w.root),
        CheckpointOptions::default(),
    )
    .unwrap();
    assert_eq!(store.record("one").unwrap().changed, 1);
    assert_eq!(store.record("two").unwrap().changed, 0);
}

#[test]
fn an_unknown_checkpoint_is_a_clear_error() {
    let w = ws();
    let mut store = w.open();
    let err = store.plan_restore(CheckpointId(7)).unwrap_err();
    assert_eq!(err.to_string(), "no checkpoint 7 in this session");
}

#[test]
fn any_history_restores_to_every_checkpoint_and_back() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let op = support::op_strategy();
    // Few cases: every one records and restores with fsyncs on a real disk.
    let config = Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&proptest::collection::vec(op, 1..24), |ops| {
        let w = ws();
        let mut store = w.open_with(CheckpointOptions {
            full_every: 3,
            ..CheckpointOptions::default()
        });
        let mut saved = vec![(store.record("start").unwrap().id, w.tree())];
        for op in &ops {
            apply_op(&w, op);
            if matches!(op, Op::Record) {
                saved.push((store.record("step").unwrap().id, w.tree()));
            }
        }
        let end = w.tree();
        let mut last_undo = None;
        for (id, tree) in saved.iter().rev() {
            let done = store.restore(*id, "rewind").unwrap();
            prop_assert!(done.problems.is_empty(), "{:?}", done.problems);
            prop_assert_eq!(&w.tree(), tree, "checkpoint {}", id);
            last_undo.get_or_insert(done.undo);
        }
        // The first rewind's undo checkpoint holds the state at the end of the history.
        let undo = last_undo.unwrap();
        store.restore(undo, "undo").unwrap();
        prop_assert_eq!(w.tree(), end);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Issue 29, section 3: a store over its budget loses its oldest checkpoints (never the
/// latest) and the packs only they needed; every checkpoint kept still restores exactly.
#[test]
fn pruning_to_a_budget_removes_the_oldest_checkpoints_and_their_packs() {
    let w = ws();
    let mut store = w.open_with(CheckpointOptions {
        full_every: 4,
        ..CheckpointOptions::default()
    });
    let mut states = Vec::new();
    for n in 0..6u8 {
        // Incompressible contents, so each checkpoint's pack has a size of its own.
        let bytes: Vec<u8> = (0..200_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> (n % 8 + 3)) as u8 ^ n)
            .collect();
        fs::write(w.p("big.dat"), &bytes).unwrap();
        w.write("small.txt", &format!("round {n}\n"));
        states.push((store.record("round").unwrap().id, w.tree_bytes()));
    }
    let before = store.disk_usage();
    let budget = before / 2;
    let pruned = store.prune(budget).unwrap();
    assert!(pruned.after <= budget, "{pruned:?}");
    assert_eq!(pruned.before, before);
    assert_eq!(pruned.after, store.disk_usage());
    let kept: Vec<_> = store.list().into_iter().map(|c| c.id).collect();
    assert_eq!(
        pruned.removed,
        states[..6 - kept.len()]
            .iter()
            .map(|s| s.0)
            .collect::<Vec<_>>()
    );
    assert!(pruned.packs_removed >= pruned.removed.len(), "{pruned:?}");
    assert!(!kept.is_empty() && kept.len() < 6);
    // Reopened (as after a restart), every kept checkpoint restores exactly.
    drop(store);
    let mut store = w.open();
    assert!(store.damaged().is_empty(), "{:?}", store.damaged());
    for (id, state) in states.iter().filter(|(id, _)| kept.contains(id)).rev() {
        let done = store.restore(*id, "check").unwrap();
        assert!(done.problems.is_empty(), "{:?}", done.problems);
        assert_eq!(&w.tree_bytes(), state, "checkpoint {id}");
    }
    // The latest is never pruned, whatever the budget.
    let latest = store.latest_id();
    store.prune(0).unwrap();
    assert_eq!(store.list().len(), 1);
    assert_eq!(store.latest_id(), latest);
}

#[test]
fn the_default_budget_is_ten_times_the_tree_between_50_mb_and_1_gb() {
    use cairn::checkpoint::default_budget;
    assert_eq!(default_budget(1_000), 50_000_000);
    assert_eq!(default_budget(6_100_000), 61_000_000);
    assert_eq!(default_budget(500_000_000), 1_000_000_000);
}

/// Issue 29, section 3: `cairn checkpoints du` lists the project's session stores against
/// the budget, `gc` prunes them to it (never a store's latest checkpoint).
#[test]
fn cairn_checkpoints_du_and_gc_report_and_prune_the_project_stores() {
    let w = ws();
    let data_root = w.data.join("root");
    let name: String = w
        .root
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let project = data_root.join("projects").join(name);
    let mut seed = 1;
    for session in ["s-old", "s-new"] {
        let dir = project.join(session).join("rewind");
        let mut store = CheckpointStore::open(
            &dir,
            std::slice::from_ref(&w.root),
            CheckpointOptions::default(),
        )
        .unwrap();
        for _ in 0..4 {
            fs::write(w.p("data.bin"), noise(seed, 300_000)).unwrap();
            seed += 1;
            store.record("step").unwrap();
        }
    }
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .current_dir(&w.root)
            .env("CAIRN_DATA_DIR", &data_root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let du = run(&["checkpoints", "du", "--budget-mb", "1"]);
    assert!(du.starts_with("/rewind checkpoints: 2."), "{du}");
    assert!(du.contains(" of a 1.0 MB budget, 2 session(s)\n"), "{du}");
    assert!(du.contains("  s-old  4 checkpoint(s)  1.2 MB\n"), "{du}");
    assert!(du.contains("  s-new  4 checkpoint(s)  1.2 MB\n"), "{du}");

    let gc = run(&["checkpoints", "gc", "--budget-mb", "1"]);
    assert!(gc.contains(": pruned "), "{gc}");
    let counts: Vec<usize> = ["s-old", "s-new"]
        .iter()
        .map(|s| {
            let dir = project.join(s).join("rewind");
            let store = CheckpointStore::open(
                &dir,
                std::slice::from_ref(&w.root),
                CheckpointOptions::default(),
            )
            .unwrap();
            assert!(store.damaged().is_empty(), "{:?}", store.damaged());
            store.list().len()
        })
        .collect();
    // 1 MB holds no more than three 300 KB contents: at most one store keeps two checkpoints.
    assert!(counts.iter().all(|&n| n >= 1), "{counts:?}");
    assert!(counts.iter().sum::<usize>() <= 3, "{counts:?}\n{gc}");
    let again = run(&["checkpoints", "gc", "--budget-mb", "1"]);
    assert!(again.ends_with("Nothing to prune.\n"), "{again}");
}

#[test]
fn a_rewrite_keeping_size_and_mtime_right_after_a_checkpoint_is_seen() {
    // Timestamps are coarse: a file written again in the tick the checkpoint read it keeps
    // its size, inode and mtime. A full scan must not trust such a stat (git's racily clean
    // entries): the file is read again, and the change recorded.
    let w = ws();
    let mut store = w.open_with(CheckpointOptions {
        journal: false,
        ..CheckpointOptions::default()
    });
    w.write("a.txt", "one\n");
    let path = w.p("a.txt");
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    let first = store.record("first").unwrap();
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    std::io::Write::write_all(&mut &file, b"two\n").unwrap();
    file.set_modified(mtime).unwrap();
    drop(file);
    let second = store.record("second").unwrap();
    assert!(!second.reused, "{second:?}");
    assert_eq!(second.changed, 1);
    store.restore(first.id, "back").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "one\n");
}

/// A `-p` run asks for the session's first checkpoint and, at once, the first prompt's: the
/// second is asked for before the first has started, so one scan records both and the
/// prompt's label names it. Rewinding to that prompt still puts the files back.
#[tokio::test(flavor = "current_thread")]
async fn checkpoints_asked_for_before_the_previous_started_share_one_scan() {
    use cairn::session::checkpoints::SessionCheckpoints;
    let tmp = tempfile::tempdir().unwrap();
    let (root, store) = (tmp.path().join("proj"), tmp.path().join("s1/rewind"));
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("a.txt"), "one\n").unwrap();
    let cps = SessionCheckpoints::new(Some(store), vec![root.clone()], Vec::new());
    // Nothing runs until this task waits: the second is queued behind the first.
    cps.record_in_background("session startup".into());
    cps.record_in_background("before prompt 1".into());
    cps.settle().await;
    assert_eq!(cps.recordings_that_looked().await.unwrap(), 1);
    let list = cps.list().await.unwrap();
    let labels: Vec<(&str, CheckpointId)> = list.iter().map(|c| (c.label.as_str(), c.id)).collect();
    assert_eq!(
        labels,
        [
            ("session startup", CheckpointId(1)),
            ("before prompt 1", CheckpointId(1))
        ]
    );

    // The turn changes the file; a later prompt's checkpoint, asked for alone, looks again.
    fs::write(root.join("a.txt"), "two\n").unwrap();
    cps.record("after turn 1".into()).await.unwrap();
    cps.record_in_background("before prompt 2".into());
    cps.settle().await;
    assert_eq!(cps.recordings_that_looked().await.unwrap(), 3);
    let prompt_1 = cps
        .list()
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.label == "before prompt 1")
        .unwrap();
    cps.restore(prompt_1.id, "rewind to prompt 1".into())
        .await
        .unwrap();
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
}
