//! Issue 29, section 1: a checkpoint store altered by someone else (files rewritten with a
//! fresh digest, packs damaged) is never trusted more than the session. A restore stays
//! inside the session's working directories, refuses a checkpoint that fails any check as a
//! whole before touching anything, and its undo brings back everything it changed or
//! removed — checked on examples and on random trees with random corruptions.

use std::collections::BTreeMap;
use std::fs;

#[path = "support/checkpoint.rs"]
mod support;
#[path = "support/checkpoint_file.rs"]
mod tampering;

use cairn::checkpoint::{CheckpointError, CheckpointId, CheckpointOptions, CheckpointStore};
use support::{Op, Ws, apply_op, tree, ws};
use tampering::{Content, tamper};

/// The project and the directory beside it, as text.
fn both(w: &Ws) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    (tree(&w.root), tree(&w.outside))
}

fn refused(result: Result<impl std::fmt::Debug, CheckpointError>) -> String {
    match result {
        Err(e @ CheckpointError::Refused { .. }) => e.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Three project files at checkpoint 1, then changed at checkpoint 2; files outside too.
fn history(w: &Ws) -> CheckpointStore {
    w.write("a.txt", "a1\n");
    w.write("b.txt", "b1\n");
    w.write("src/c.rs", "c1\n");
    fs::write(w.outside.join("keep.txt"), "outside\n").unwrap();
    fs::create_dir_all(w.outside.join("dir")).unwrap();
    fs::write(w.outside.join("dir/x"), "x\n").unwrap();
    let mut store = w.open();
    assert_eq!(store.record("one").unwrap().id, CheckpointId(1));
    w.write("a.txt", "a2\n");
    w.write("new.txt", "new\n");
    assert_eq!(store.record("two").unwrap().id, CheckpointId(2));
    store
}

#[test]
fn a_checkpoint_whose_roots_were_changed_is_refused_and_nothing_outside_is_touched() {
    let w = ws();
    drop(history(&w));
    // The attacker's checkpoint: the outside directory as its root, holding nothing, so a
    // restore would delete every file there.
    let outside = w.outside.as_os_str().as_encoded_bytes().to_vec();
    tamper(&w.data, 1, |cp| cp.roots = vec![outside.clone()]);
    tamper(&w.data, 2, |cp| cp.roots = vec![outside]);
    let before = both(&w);
    // As after `--resume`: the store is opened afresh from disk.
    let mut store = w.open();
    let plan = refused(store.plan_restore(CheckpointId(1)));
    let done = refused(store.restore(CheckpointId(1), "rewind"));
    for message in [plan, done] {
        assert_eq!(
            message,
            format!(
                "checkpoint 1 is refused and nothing was restored: it covers {}, which is not \
                 a working directory of this session",
                w.outside.display()
            )
        );
    }
    assert_eq!(both(&w), before);
}

#[test]
fn an_index_naming_paths_outside_is_refused_whole() {
    let w = ws();
    drop(history(&w));
    let abs = w.outside.join("abs.txt").display().to_string();
    tamper(&w.data, 1, |cp| {
        cp.entry_mut("a.txt").path = b"../outside/x".to_vec();
        cp.entry_mut("b.txt").path = abs.into_bytes();
    });
    let before = both(&w);
    let mut store = w.open();
    let message = refused(store.restore(CheckpointId(1), "rewind"));
    assert!(
        message.contains("\"../outside/x\"") || message.contains("abs.txt"),
        "{message}"
    );
    assert!(message.contains("not a plain path"), "{message}");
    // Not applied in part: b.txt and src/c.rs, which the index no longer lists, are still
    // there, and new.txt was not removed either.
    assert_eq!(both(&w), before);
}

#[test]
fn an_index_naming_a_root_it_does_not_have_is_refused() {
    let w = ws();
    drop(history(&w));
    tamper(&w.data, 1, |cp| cp.entry_mut("a.txt").root = 3);
    let before = both(&w);
    let message = refused(w.open().restore(CheckpointId(1), "rewind"));
    assert!(message.contains("names root 3"), "{message}");
    assert_eq!(both(&w), before);
}

#[test]
fn an_index_that_drops_files_is_applied_but_its_undo_brings_everything_back() {
    let w = ws();
    drop(history(&w));
    let before = both(&w);
    // Both checkpoints forget b.txt and src/c.rs, and the latest one (the undo's starting
    // point) claims another content for a.txt with its stat unchanged: an undo that trusted
    // it would lose both files and put the wrong a.txt back.
    let b_hash = std::cell::Cell::new([0u8; 32]);
    tamper(&w.data, 1, |cp| {
        if let Content::File(h) = cp.entry_mut("b.txt").content {
            b_hash.set(h);
        }
        cp.entries
            .retain(|e| e.path != b"b.txt" && !e.path.starts_with(b"src"));
    });
    tamper(&w.data, 2, |cp| {
        cp.entries
            .retain(|e| e.path != b"b.txt" && !e.path.starts_with(b"src"));
        cp.removals.push((0, b"b.txt".to_vec()));
        cp.removals.push((0, b"src".to_vec()));
        cp.removals.push((0, b"src/c.rs".to_vec()));
        cp.entry_mut("a.txt").content = Content::File(b_hash.get());
    });
    let mut store = w.open();
    let done = store.restore(CheckpointId(1), "rewind").unwrap();
    assert_eq!(w.read("a.txt"), "a1\n");
    assert!(!w.p("b.txt").exists() && !w.p("src").exists());
    let undone = store.restore(done.undo, "undo").unwrap();
    assert!(undone.problems.is_empty(), "{:?}", undone.problems);
    assert_eq!(both(&w), before);
}

#[test]
fn a_target_whose_stored_copy_is_damaged_is_refused_before_anything_is_touched() {
    let w = ws();
    drop(history(&w));
    // Pack 1 holds checkpoint 1's three contents: damage every copy in it and leave its
    // index (3 entries of 52 bytes, then a 44-byte trailer) whole, so the store still lists
    // them.
    let pack = w.data.join("packs/0000000001.pack");
    let mut bytes = fs::read(&pack).unwrap();
    let frames = bytes.len() - 3 * 52 - 44;
    for b in &mut bytes[..frames] {
        *b ^= 0xff;
    }
    fs::write(&pack, bytes).unwrap();
    let before = both(&w);
    let message = refused(w.open().restore(CheckpointId(1), "rewind"));
    assert!(message.contains("cannot be used"), "{message}");
    assert_eq!(both(&w), before);
}

#[test]
fn a_current_file_whose_stored_copy_is_gone_is_stored_again_before_the_restore() {
    let w = ws();
    let mut store = history(&w);
    // Pack 2 holds a.txt's "a2" and new.txt: gone while the store is open, so the store
    // still lists them and would otherwise skip storing them for the undo.
    fs::remove_file(w.data.join("packs/0000000002.pack")).unwrap();
    let before = both(&w);
    let done = store.restore(CheckpointId(1), "rewind").unwrap();
    assert!(done.problems.is_empty(), "{:?}", done.problems);
    assert_eq!(w.read("a.txt"), "a1\n");
    store.restore(done.undo, "undo").unwrap();
    assert_eq!(both(&w), before);
}

/// A change someone makes to the store.
#[derive(Debug, Clone)]
enum Corruption {
    /// A byte of a checkpoint file flipped (its digest no longer matches).
    Flip { cp: usize, at: usize },
    /// The header's roots are the outside directory.
    Roots { cp: usize },
    /// An entry renamed to a path that is not plain.
    Rename { cp: usize, entry: usize, to: u8 },
    /// An entry forgotten.
    Drop { cp: usize, entry: usize },
    /// An entry's content claimed to be another entry's, or a hash no content has.
    Hash {
        cp: usize,
        entry: usize,
        from: usize,
        bogus: bool,
    },
    /// An entry under a root the checkpoint does not have.
    Root { cp: usize, entry: usize },
    /// A byte of a content pack flipped.
    Pack { pack: usize, at: usize },
    /// A content pack removed.
    DropPack { pack: usize },
}

fn corrupt(w: &Ws, ids: &[u64], c: &Corruption) {
    let cp_id = |cp: usize| ids[cp % ids.len()];
    let pick = |n: usize, len: usize| if len == 0 { None } else { Some(n % len) };
    let packs = || {
        let mut p: Vec<_> = fs::read_dir(w.data.join("packs"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        p.sort();
        p
    };
    match c {
        Corruption::Flip { cp, at } => {
            let path = tampering::cp_path(&w.data, cp_id(*cp));
            let mut bytes = fs::read(&path).unwrap();
            let at = at % bytes.len();
            bytes[at] ^= 0x20;
            fs::write(&path, bytes).unwrap();
        }
        Corruption::Roots { cp } => {
            let outside = w.outside.as_os_str().as_encoded_bytes().to_vec();
            tamper(&w.data, cp_id(*cp), |f| f.roots = vec![outside]);
        }
        Corruption::Rename { cp, entry, to } => {
            let abs = w
                .outside
                .join("abs")
                .as_os_str()
                .as_encoded_bytes()
                .to_vec();
            tamper(&w.data, cp_id(*cp), |f| {
                if let Some(n) = pick(*entry, f.entries.len()) {
                    f.entries[n].path = match to % 3 {
                        0 => b"../outside/x".to_vec(),
                        1 => abs,
                        _ => b"d/../../outside/y".to_vec(),
                    };
                }
            });
        }
        Corruption::Drop { cp, entry } => tamper(&w.data, cp_id(*cp), |f| {
            if let Some(n) = pick(*entry, f.entries.len()) {
                f.entries.remove(n);
            }
        }),
        Corruption::Hash {
            cp,
            entry,
            from,
            bogus,
        } => tamper(&w.data, cp_id(*cp), |f| {
            let files: Vec<usize> = (0..f.entries.len())
                .filter(|&n| matches!(f.entries[n].content, Content::File(_)))
                .collect();
            let (Some(a), Some(b)) = (pick(*entry, files.len()), pick(*from, files.len())) else {
                return;
            };
            let mut hash = match f.entries[files[b]].content {
                Content::File(h) => h,
                _ => unreachable!(),
            };
            if *bogus {
                hash[0] ^= 1;
            }
            f.entries[files[a]].content = Content::File(hash);
        }),
        Corruption::Root { cp, entry } => tamper(&w.data, cp_id(*cp), |f| {
            if let Some(n) = pick(*entry, f.entries.len()) {
                f.entries[n].root = 1;
            }
        }),
        Corruption::Pack { pack, at } => {
            let all = packs();
            if let Some(n) = pick(*pack, all.len()) {
                let mut bytes = fs::read(&all[n]).unwrap();
                let at = at % bytes.len();
                bytes[at] ^= 0x20;
                fs::write(&all[n], bytes).unwrap();
            }
        }
        Corruption::DropPack { pack } => {
            let all = packs();
            if let Some(n) = pick(*pack, all.len()) {
                fs::remove_file(&all[n]).unwrap();
            }
        }
    }
}

#[test]
fn any_corruption_is_refused_whole_or_undone_completely() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let op = support::op_strategy();
    let n = 0usize..64;
    let corruption = prop_oneof![
        1 => (n.clone(), any::<usize>()).prop_map(|(cp, at)| Corruption::Flip { cp, at }),
        1 => n.clone().prop_map(|cp| Corruption::Roots { cp }),
        1 => (n.clone(), n.clone(), 0u8..3).prop_map(|(cp, entry, to)| Corruption::Rename {
            cp,
            entry,
            to
        }),
        3 => (n.clone(), n.clone()).prop_map(|(cp, entry)| Corruption::Drop { cp, entry }),
        3 => (n.clone(), n.clone(), n.clone(), any::<bool>()).prop_map(
            |(cp, entry, from, bogus)| Corruption::Hash { cp, entry, from, bogus }
        ),
        1 => (n.clone(), n.clone()).prop_map(|(cp, entry)| Corruption::Root { cp, entry }),
        2 => (n.clone(), any::<usize>()).prop_map(|(pack, at)| Corruption::Pack { pack, at }),
        1 => n.clone().prop_map(|pack| Corruption::DropPack { pack }),
    ];
    let case = (
        proptest::collection::vec(op, 1..16),
        proptest::collection::vec(corruption, 1..4),
        any::<bool>(),
        n,
    );
    // Few cases: every one records and restores with fsyncs on a real disk.
    let config = Config {
        cases: 40,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&case, |(ops, corruptions, reopen, target)| {
        let w = ws();
        fs::write(w.outside.join("keep.txt"), "outside\n").unwrap();
        let options = CheckpointOptions {
            full_every: 3,
            ..CheckpointOptions::default()
        };
        let mut store = w.open_with(options.clone());
        let mut ids = vec![store.record("start").unwrap().id.0];
        for op in &ops {
            apply_op(&w, op);
            if matches!(op, Op::Record) {
                ids.push(store.record("step").unwrap().id.0);
            }
        }
        // The tree moves on after the last checkpoint too.
        apply_op(&w, &Op::Write(0, 3));
        for c in &corruptions {
            corrupt(&w, &ids, c);
        }
        if reopen {
            store = w.open_with(options);
        }
        let before = both(&w);
        let target = CheckpointId(ids[target % ids.len()]);
        match store.restore(target, "rewind") {
            Err(e) => {
                prop_assert_eq!(both(&w), before, "refused ({}) but touched", e);
            }
            Ok(done) => {
                prop_assert_eq!(&tree(&w.outside), &before.1, "outside touched");
                let undone = store.restore(done.undo, "undo");
                prop_assert!(undone.is_ok(), "the undo failed: {:?}", undone.err());
                prop_assert_eq!(both(&w), before, "the undo did not bring everything back");
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
