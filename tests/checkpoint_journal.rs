//! The checkpoint store's change journal on real files with real inotify: every checkpoint it
//! drives must hold exactly what a full scan of the same tree holds — over random histories
//! (writes, same-size writes with the mtime put back, removals, renames of files and
//! directories, new nested directories, `.gitignore` changes, symlinks, chmod, restores) and in
//! the cases that must fall back to a full scan (queue overflow, a watcher that cannot watch
//! every directory, ignore files outside the tree, the periodic scan).

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

#[path = "support/checkpoint.rs"]
mod support;
use support::{Ws, actions, ws};

use cairn::checkpoint::{
    CheckpointId, CheckpointOptions, CheckpointStore, FullScanReason, ScanKind,
};

/// A tree with two stores on it: one with the journal, one that always scans in full.
struct Pair {
    w: Ws,
    journal: CheckpointStore,
    full: CheckpointStore,
}

fn pair_with(options: CheckpointOptions) -> Pair {
    let w = ws();
    let journal = CheckpointStore::open(&w.data, std::slice::from_ref(&w.root), options).unwrap();
    let full = CheckpointStore::open(
        &w.outside.join("full-store"),
        std::slice::from_ref(&w.root),
        CheckpointOptions {
            journal: false,
            ..CheckpointOptions::default()
        },
    )
    .unwrap();
    Pair { w, journal, full }
}

fn pair() -> Pair {
    // No periodic full scan: every checkpoint but the first must come from the journal.
    pair_with(CheckpointOptions {
        journal_full_every: 0,
        ..CheckpointOptions::default()
    })
}

impl Pair {
    /// Records with both stores; their indexes must be equal. Returns the journal's scan.
    fn record(&mut self) -> Result<(CheckpointId, ScanKind), String> {
        let j = self.journal.record("j").map_err(|e| e.to_string())?;
        let f = self.full.record("f").map_err(|e| e.to_string())?;
        assert_eq!(f.scan, ScanKind::Full(FullScanReason::Off));
        let jd = self.journal.describe(j.id).unwrap();
        let fd = self.full.describe(f.id).unwrap();
        if jd != fd {
            return Err(format!(
                "journal ({:?}) and full scan differ:\n--- journal\n{jd}--- full\n{fd}",
                j.scan
            ));
        }
        if j.changed != f.changed {
            return Err(format!("changed: {} vs {}", j.changed, f.changed));
        }
        Ok((j.id, j.scan))
    }
}

#[test]
fn nothing_changed_is_a_journal_checkpoint_that_looks_at_nothing() {
    let mut p = pair();
    p.w.write("src/a.rs", "a\n");
    p.w.write("src/deep/b.rs", "b\n");
    let (_, first) = p.record().unwrap();
    assert_eq!(first, ScanKind::Full(FullScanReason::NoBaseline));
    let r = p.journal.record("again").unwrap();
    assert_eq!(r.scan, ScanKind::Journal { paths: 0 });
    assert_eq!(r.changed, 0);
    p.w.write("src/deep/b.rs", "b2\n");
    let (_, kind) = p.record().unwrap();
    assert_eq!(kind, ScanKind::Journal { paths: 1 });
}

#[test]
fn a_change_inside_a_renamed_directory_is_seen() {
    let mut p = pair();
    p.w.write("a/sub/x.rs", "x\n");
    p.w.write("a/y.rs", "y\n");
    p.record().unwrap();
    fs::rename(p.w.p("a"), p.w.p("b")).unwrap();
    let (_, kind) = p.record().unwrap();
    assert!(matches!(kind, ScanKind::Journal { .. }), "{kind:?}");
    // The kernel's watches moved with the directories: the change must land under `b`.
    p.w.write("b/sub/x.rs", "x changed\n");
    p.w.write("b/sub/new.rs", "new\n");
    let (_, kind) = p.record().unwrap();
    assert!(matches!(kind, ScanKind::Journal { .. }), "{kind:?}");
    // And a directory renamed back over a name that existed before.
    fs::rename(p.w.p("b"), p.w.p("a")).unwrap();
    p.w.write("a/sub/x.rs", "x again\n");
    p.record().unwrap();
}

#[test]
fn a_replaced_directory_is_walked_whole() {
    let mut p = pair();
    p.w.write("d/e/f.rs", "f\n");
    p.w.write("other/e/g.rs", "g\n");
    p.record().unwrap();
    fs::remove_dir_all(p.w.p("d")).unwrap();
    fs::rename(p.w.p("other"), p.w.p("d")).unwrap();
    p.record().unwrap();
    p.w.write("d/e/g.rs", "g changed\n");
    p.record().unwrap();
}

#[test]
fn restore_writes_are_in_the_next_checkpoint() {
    let mut p = pair();
    p.w.write("a.rs", "a1\n");
    p.w.write("d/b.rs", "b1\n");
    let (first, _) = p.record().unwrap();
    p.w.write("a.rs", "a2 longer\n");
    fs::remove_dir_all(p.w.p("d")).unwrap();
    p.w.write("n/c.rs", "c\n");
    p.record().unwrap();
    let done = p.journal.restore(first, "rewind").unwrap();
    assert!(done.problems.is_empty(), "{:?}", done.problems);
    assert_eq!(p.w.read("d/b.rs"), "b1\n");
    let (_, kind) = p.record().unwrap();
    assert!(matches!(kind, ScanKind::Journal { .. }), "{kind:?}");
}

#[test]
fn a_gitignore_change_rescans_in_full() {
    let mut p = pair();
    p.w.write(".gitignore", "*.log\n");
    p.w.write("src/a.rs", "a\n");
    p.w.write("src/b.tmp", "b\n");
    p.record().unwrap();
    p.w.write("src/.gitignore", "*.tmp\n");
    let (id, kind) = p.record().unwrap();
    assert_eq!(kind, ScanKind::Full(FullScanReason::IgnoreRules));
    assert!(!p.journal.describe(id).unwrap().contains("b.tmp"));
    // Outside the tree: the root's parent directory's ignore file counts too.
    fs::write(p.w.root.parent().unwrap().join(".gitignore"), "*.rs\n").unwrap();
    let (id, kind) = p.record().unwrap();
    assert_eq!(kind, ScanKind::Full(FullScanReason::IgnoreRules));
    assert!(!p.journal.describe(id).unwrap().contains("a.rs"));
}

#[test]
fn a_file_changed_through_a_hard_link_outside_is_seen() {
    let mut p = pair();
    p.w.write("src/a.rs", "a\n");
    let outside = p.w.outside.join("a-link");
    fs::hard_link(p.w.p("src/a.rs"), &outside).unwrap();
    p.record().unwrap();
    // No event reaches the watch on `src`: the write goes through the other name.
    fs::write(&outside, "changed through the link\n").unwrap();
    let (id, kind) = p.record().unwrap();
    assert!(matches!(kind, ScanKind::Journal { .. }), "{kind:?}");
    let text = p.journal.describe(id).unwrap();
    let full = p.full.describe(p.full.latest_id().unwrap()).unwrap();
    assert_eq!(text, full);
}

#[test]
fn an_overflowed_event_queue_falls_back_to_a_full_scan() {
    let max: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16_384);
    if max > 1 << 20 {
        eprintln!("max_queued_events is {max}: too many events to overflow in a test");
        return;
    }
    let mut p = pair();
    p.w.write("keep/a.rs", "a\n");
    p.w.write("churn/x", "x\n");
    p.record().unwrap();
    // Each distinct name raises its own events (the kernel merges only identical ones).
    let churn = p.w.p("churn");
    for i in 0..max / 2 + 100 {
        let t = churn.join(format!("t{i}"));
        fs::write(&t, b"").unwrap();
        fs::remove_file(&t).unwrap();
    }
    // These changes' events are lost with the overflow: only the full scan sees them. The
    // directory swapped for a new one leaves a watch on the old one behind, unnoticed.
    p.w.write("keep/a.rs", "a changed after the overflow\n");
    fs::remove_dir_all(p.w.p("keep")).unwrap();
    p.w.write("keep/a.rs", "a in a new directory\n");
    let (_, kind) = p.record().unwrap();
    assert_eq!(kind, ScanKind::Full(FullScanReason::Overflow));
    // And the journal works again afterwards, watching the new directory.
    p.w.write("keep/a.rs", "a once more\n");
    let (_, kind) = p.record().unwrap();
    assert!(matches!(kind, ScanKind::Journal { .. }), "{kind:?}");
}

#[test]
fn a_watcher_that_cannot_watch_every_directory_scans_in_full() {
    let mut p = pair_with(CheckpointOptions {
        journal_max_dirs: 2,
        ..CheckpointOptions::default()
    });
    for d in ["a", "b", "c", "d"] {
        p.w.write(&format!("{d}/f.rs"), d);
    }
    let (_, kind) = p.record().unwrap();
    assert_eq!(kind, ScanKind::Full(FullScanReason::NoBaseline));
    p.w.write("d/f.rs", "changed");
    let (_, kind) = p.record().unwrap();
    assert_eq!(kind, ScanKind::Full(FullScanReason::WatcherFailed));
    p.w.write("a/f.rs", "changed too");
    let (_, kind) = p.record().unwrap();
    assert_eq!(kind, ScanKind::Full(FullScanReason::WatcherFailed));
}

#[test]
fn every_so_many_checkpoints_one_is_a_full_scan() {
    let mut p = pair_with(CheckpointOptions {
        journal_full_every: 3,
        ..CheckpointOptions::default()
    });
    p.w.write("a.rs", "a");
    let kinds: Vec<ScanKind> = (0..5).map(|_| p.record().unwrap().1).collect();
    let journal = ScanKind::Journal { paths: 0 };
    assert_eq!(
        kinds,
        [
            ScanKind::Full(FullScanReason::NoBaseline),
            journal,
            journal,
            ScanKind::Full(FullScanReason::Periodic),
            journal,
        ]
    );
}

#[test]
fn a_deferred_journal_starts_at_its_checkpoint_or_with_a_large_tree() {
    // By count: the third checkpoint starts it; until then full scans, the same indexes, and
    // no watches (no journal directory in the store).
    let mut p = pair_with(CheckpointOptions {
        journal_from: 3,
        journal_min_entries: 1_000,
        ..CheckpointOptions::default()
    });
    p.w.write("a.rs", "a");
    let (_, first) = p.record().unwrap();
    assert!(!p.w.data.join("journal").exists());
    p.w.write("b.rs", "b");
    let (_, second) = p.record().unwrap();
    assert!(!p.w.data.join("journal").exists());
    p.w.write("a.rs", "A");
    let kinds: Vec<ScanKind> = (0..2).map(|_| p.record().unwrap().1).collect();
    let deferred = ScanKind::Full(FullScanReason::Deferred);
    assert_eq!([first, second], [deferred, deferred]);
    assert_eq!(
        kinds,
        [
            ScanKind::Full(FullScanReason::NoBaseline),
            ScanKind::Journal { paths: 0 }
        ]
    );
    assert!(p.w.data.join("journal").is_dir());
    // By size: the checkpoint after one that held 3 entries starts it.
    let mut p = pair_with(CheckpointOptions {
        journal_from: 100,
        journal_min_entries: 3,
        ..CheckpointOptions::default()
    });
    p.w.write("d/a.rs", "a");
    p.w.write("d/b.rs", "b");
    let kinds: Vec<ScanKind> = (0..3).map(|_| p.record().unwrap().1).collect();
    assert_eq!(
        kinds,
        [
            deferred,
            ScanKind::Full(FullScanReason::NoBaseline),
            ScanKind::Journal { paths: 0 }
        ]
    );
}

#[test]
fn with_the_journal_off_every_checkpoint_is_a_full_scan() {
    let w = ws();
    let mut store = w.open_with(CheckpointOptions {
        journal: false,
        ..CheckpointOptions::default()
    });
    w.write("a.rs", "a");
    for _ in 0..2 {
        let r = store.record("x").unwrap();
        assert_eq!(r.scan, ScanKind::Full(FullScanReason::Off));
    }
    assert!(!w.data.join("journal").exists());
}

/// One change to the tree in a random history.
#[derive(Debug, Clone)]
enum Op {
    Write(usize, u8),
    /// Different bytes, same size, and the mtime put back: a scan by stat cannot tell.
    SameStat(usize),
    Remove(usize),
    RenameFile(usize, usize),
    RenameDir(usize, usize),
    Nested(usize, u8),
    RemoveDir(usize),
    Ignore(usize, usize),
    Link(usize, usize),
    Chmod(usize, bool),
}

#[derive(Debug, Clone)]
enum Step {
    Ops(Vec<Op>),
    /// Restore the journal store's n-th checkpoint (modulo how many there are).
    Restore(usize),
}

const FILES: &[&str] = &[
    "f.rs",
    "a/f.rs",
    "a/g.log",
    "a/b/f.rs",
    "a/b/.h",
    "c/f.rs",
    "c/d/e/f.tmp",
    "n/x.rs",
];
const DIRS: &[&str] = &["a", "a/b", "c", "c/d", "c/d/e", "n", "m"];
const IGNORE_DIRS: &[&str] = &["", "a", "c/d"];
const PATTERNS: &[&str] = &[
    "*.log\n",
    "b/\n",
    "/c\n",
    "f.rs\n!a/f.rs\n",
    "e\n",
    "*.tmp\n",
    "",
];

fn apply(w: &Ws, op: &Op) {
    // An op that does not fit the tree as it is (a file where a directory is) is skipped.
    let _ = match op {
        Op::Write(f, v) => {
            let path = w.p(FILES[*f]);
            fs::create_dir_all(path.parent().unwrap())
                .and_then(|()| fs::write(&path, format!("v{v}\n").repeat(usize::from(*v) + 1)))
        }
        Op::SameStat(f) => {
            let path = w.p(FILES[*f]);
            match fs::symlink_metadata(&path) {
                Ok(m) if m.is_file() => fs::read(&path).and_then(|mut bytes| {
                    let mtime = m.modified()?;
                    bytes.iter_mut().for_each(|b| *b = b.wrapping_add(1));
                    fs::write(&path, &bytes)?;
                    fs::File::options()
                        .write(true)
                        .open(&path)?
                        .set_modified(mtime)
                }),
                _ => Ok(()),
            }
        }
        Op::Remove(f) => fs::remove_file(w.p(FILES[*f])),
        Op::RenameFile(a, b) => {
            let to = w.p(FILES[*b]);
            fs::create_dir_all(to.parent().unwrap()).and_then(|()| fs::rename(w.p(FILES[*a]), to))
        }
        Op::RenameDir(a, b) => {
            let (from, to) = (DIRS[*a], DIRS[*b]);
            if to.starts_with(from) || w.p(to).exists() {
                Ok(())
            } else {
                fs::create_dir_all(w.p(to).parent().unwrap())
                    .and_then(|()| fs::rename(w.p(from), w.p(to)))
            }
        }
        Op::Nested(d, v) => {
            let dir = w.p(DIRS[*d]).join(format!("new{v}/deeper"));
            fs::create_dir_all(&dir).and_then(|()| fs::write(dir.join("z.rs"), "z"))
        }
        Op::RemoveDir(d) => fs::remove_dir_all(w.p(DIRS[*d])),
        Op::Ignore(d, pat) => {
            let dir = w.p(IGNORE_DIRS[*d]);
            fs::create_dir_all(&dir)
                .and_then(|()| fs::write(dir.join(".gitignore"), PATTERNS[*pat]))
        }
        Op::Link(f, t) => {
            let path = w.p(FILES[*f]);
            let _ = fs::remove_file(&path);
            let target: PathBuf = if *t % 2 == 0 {
                DIRS[*t % DIRS.len()].into()
            } else {
                FILES[*t].into()
            };
            fs::create_dir_all(path.parent().unwrap()).and_then(|()| symlink(target, &path))
        }
        Op::Chmod(d, exec) => {
            let path = w.p(if *exec {
                DIRS[*d % DIRS.len()]
            } else {
                FILES[*d]
            });
            match fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => {
                    fs::set_permissions(&path, fs::Permissions::from_mode(0o750))
                }
                Ok(m) if m.is_file() => {
                    fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
                }
                _ => Ok(()),
            }
        }
    };
}

/// Whether directory `DIRS[d]` holds a `.gitignore`, at any depth.
fn holds_ignore_file(w: &Ws, d: &usize) -> bool {
    // Anywhere below it: a renamed directory carries its `.gitignore` to a path that is not
    // one of IGNORE_DIRS (`a/.gitignore` moved to `m/`).
    fn below(dir: &Path) -> bool {
        let Ok(entries) = fs::read_dir(dir) else {
            return false;
        };
        entries.flatten().any(|e| {
            let path = e.path();
            e.file_name() == ".gitignore"
                || (e.file_type().is_ok_and(|t| t.is_dir()) && below(&path))
        })
    }
    below(&w.p(DIRS[*d]))
}

fn history() -> impl proptest::strategy::Strategy<Value = Vec<Step>> {
    use proptest::prelude::*;
    let n = FILES.len();
    let d = DIRS.len();
    let op = prop_oneof![
        5 => (0..n, 0u8..4).prop_map(|(f, v)| Op::Write(f, v)),
        2 => (0..n).prop_map(Op::SameStat),
        2 => (0..n).prop_map(Op::Remove),
        2 => (0..n, 0..n).prop_map(|(a, b)| Op::RenameFile(a, b)),
        2 => (0..d, 0..d).prop_map(|(a, b)| Op::RenameDir(a, b)),
        2 => (0..d, 0u8..2).prop_map(|(a, v)| Op::Nested(a, v)),
        1 => (0..d).prop_map(Op::RemoveDir),
        1 => (0..IGNORE_DIRS.len(), 0..PATTERNS.len()).prop_map(|(a, p)| Op::Ignore(a, p)),
        1 => (0..n, 0..n).prop_map(|(a, t)| Op::Link(a, t)),
        1 => (0..n, any::<bool>()).prop_map(|(a, x)| Op::Chmod(a, x)),
    ];
    let step = prop_oneof![
        5 => proptest::collection::vec(op, 1..5).prop_map(Step::Ops),
        1 => (0usize..8).prop_map(Step::Restore),
    ];
    proptest::collection::vec(step, 1..8)
}

#[test]
fn journal_checkpoints_equal_full_scans_over_any_history() {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    // Few cases: each records a dozen checkpoints (with fsyncs) on a real disk.
    let cases = std::env::var("CAIRN_JOURNAL_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&history(), |steps| {
        let mut p = pair();
        for f in [0, 1, 3, 5, 7] {
            apply(&p.w, &Op::Write(f, 0));
        }
        apply(&p.w, &Op::Ignore(0, 0));
        let (first, _) = p.record().map_err(TestCaseError::fail)?;
        let mut ids = vec![first];
        for step in &steps {
            let mut may_be_full = false;
            match step {
                Step::Ops(ops) => {
                    for op in ops {
                        // Removing or moving an ignore file (with its directory) changes
                        // what is ignored: a full scan, rightly.
                        may_be_full |= match op {
                            Op::Ignore(..) => true,
                            Op::RemoveDir(d) | Op::RenameDir(d, _) => holds_ignore_file(&p.w, d),
                            _ => false,
                        };
                        apply(&p.w, op);
                    }
                    // Planning a restore looks at the tree through the journal too.
                    let planned = actions(&p.journal.plan_restore(first).unwrap());
                    let full_first = p.full.list()[0].id;
                    let expected = actions(&p.full.plan_restore(full_first).unwrap());
                    if planned != expected {
                        return Err(TestCaseError::fail(format!(
                            "plans differ: {planned:?} vs {expected:?}"
                        )));
                    }
                }
                Step::Restore(n) => {
                    let target = ids[n % ids.len()];
                    let done = p.journal.restore(target, "rewind").unwrap();
                    // Its undo checkpoint is the tree as the full store last recorded it.
                    let undo = p.journal.describe(done.undo).unwrap();
                    let full = p.full.describe(p.full.latest_id().unwrap()).unwrap();
                    if undo != full {
                        return Err(TestCaseError::fail(format!(
                            "undo checkpoint differs:\n{undo}--- full\n{full}"
                        )));
                    }
                    // A restore may put back an old .gitignore.
                    may_be_full = true;
                }
            }
            let (id, kind) = p.record().map_err(TestCaseError::fail)?;
            if !may_be_full && !matches!(kind, ScanKind::Journal { .. }) {
                return Err(TestCaseError::fail(format!(
                    "not from the journal: {kind:?}"
                )));
            }
            ids.push(id);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
