//! Unit tests of the checkpoint module's inner parts: deltas between indexes (a property
//! test), the codec refusing every cut or damaged file, a restore refusing stored paths
//! that try to leave the root, and a journal-pruned scan's merge into the previous index.

use std::path::PathBuf;

use proptest::prelude::*;

use super::codec::{self, Body, BodyRef, DecodeError, Header};
use super::index::{Content, Entry, Index, NotCovered, Stat, Uncovered};
use super::objects::{ObjectStore, hash_bytes};
use super::restore::{self, RestoreAction};
use super::{CheckpointId, join_rel};

fn file(root: u16, path: &str, n: u8) -> Entry {
    Entry {
        root,
        path: path.as_bytes().into(),
        stat: Stat {
            size: u64::from(n),
            mtime_sec: i64::from(n) - 3,
            mtime_nsec: u32::from(n) * 7,
            ino: u64::from(n) + 100,
            mode: 0o100644,
        },
        content: Content::File([n; 32]),
    }
}

fn sample() -> Index {
    let mut link = file(0, "link", 9);
    link.content = Content::Symlink((*b"../target").into());
    let mut dir = file(1, "d", 0);
    dir.content = Content::Dir;
    Index::new(
        vec![file(0, "b.txt", 2), file(0, "a.txt", 1), link, dir],
        vec![NotCovered {
            root: 0,
            path: (*b"big.bin").into(),
            size: 1 << 30,
            why: Uncovered::TooLarge,
        }],
    )
}

fn header(parent: Option<u64>) -> Header {
    Header {
        id: 7,
        parent,
        created_ms: 1_700_000_000_000,
        label: "before prompt 3".into(),
        roots: vec![PathBuf::from("/r0"), PathBuf::from("/r1")],
    }
}

#[test]
fn full_and_delta_files_round_trip() {
    let index = sample();
    let bytes = codec::encode(&header(None), BodyRef::Full(&index)).unwrap();
    let (h, body) = codec::decode(&bytes).unwrap();
    assert_eq!(h, header(None));
    assert_eq!(body, Body::Full(index.clone()));

    let next = Index::new(vec![file(0, "a.txt", 5), file(0, "c.txt", 3)], vec![]);
    let delta = index.delta_to(&next);
    let bytes = codec::encode(&header(Some(6)), BodyRef::Delta(&delta, &[])).unwrap();
    let (h, body) = codec::decode(&bytes).unwrap();
    assert_eq!(h.parent, Some(6));
    let Body::Delta(decoded, not_covered) = body else {
        panic!("not a delta: {body:?}");
    };
    assert_eq!(index.apply(&decoded, not_covered), next);
}

#[test]
fn every_cut_and_every_flipped_byte_is_refused() {
    let bytes = codec::encode(&header(None), BodyRef::Full(&sample())).unwrap();
    for len in 0..bytes.len() {
        let err = codec::decode(&bytes[..len]).unwrap_err();
        assert!(
            matches!(err, DecodeError::Magic | DecodeError::Digest),
            "{len}: {err}"
        );
    }
    for at in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x01;
        assert!(
            codec::decode(&damaged).is_err(),
            "flip at {at} went unnoticed"
        );
        assert!(codec::decode_header(&damaged).is_err());
    }
}

fn arb_index() -> impl Strategy<Value = Index> {
    let entry = (0u16..2, "[a-c]{1,2}(/[a-c]{1,2})?", 0u8..4).prop_map(|(root, path, n)| {
        let mut e = file(root, &path, n);
        if n == 3 {
            e.content = Content::Symlink(path.as_bytes().into());
        }
        e
    });
    proptest::collection::vec(entry, 0..24).prop_map(|entries| Index::new(entries, vec![]))
}

proptest! {
    #[test]
    fn applying_the_delta_gives_the_next_index(old in arb_index(), new in arb_index()) {
        let delta = old.delta_to(&new);
        prop_assert_eq!(old.apply(&delta, vec![]), new.clone());
        // No change, no delta.
        prop_assert!(new.delta_to(&new).upserts.is_empty());
        prop_assert!(new.delta_to(&new).removals.is_empty());
    }
}

#[test]
fn stored_paths_that_leave_the_root_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let mut objects = ObjectStore::open(base.join("packs")).unwrap();
    let bytes = b"planted\n";
    let hash = hash_bytes(bytes);
    objects.put(&hash, bytes).unwrap();
    objects.flush().unwrap();
    let planted = |path: &str| Entry {
        root: 0,
        path: path.as_bytes().into(),
        stat: Stat {
            size: bytes.len() as u64,
            mode: 0o100644,
            ..Stat::default()
        },
        content: Content::File(hash),
    };
    // A symlink inside the root to a directory outside it: never a way through.
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::os::unix::fs::symlink(base.join("outside"), root.join("ln")).unwrap();
    let bad = [
        "ln/through.txt",
        "../escape.txt",
        "a/../../escape2.txt",
        "/tmp/abs.txt",
        "./x/../../e3",
        "ok\0",
    ];
    let mut entries: Vec<Entry> = bad.iter().map(|p| planted(p)).collect();
    entries.push(planted("fine.txt"));
    let target = Index::new(entries, vec![]);
    let roots = vec![root.clone()];
    let plan = restore::plan(
        CheckpointId(1),
        &roots,
        &target,
        &Index::default(),
        None,
        vec![],
    );
    assert!(
        plan.files
            .iter()
            .all(|f| f.action == RestoreAction::Recreate)
    );
    let done = restore::apply(plan, &roots, &target, &objects, 2);
    assert_eq!(done.done.len(), 1, "{:?}", done.done);
    assert_eq!(done.done[0].path, join_rel(&root, b"fine.txt"));
    assert_eq!(done.problems.len(), bad.len(), "{:?}", done.problems);
    assert!(!base.join("escape.txt").exists());
    assert!(!base.join("escape2.txt").exists());
    assert!(!PathBuf::from("/tmp/abs.txt").exists());
    assert!(!base.join("e3").exists());
    assert!(!base.join("outside/through.txt").exists());
    assert_eq!(std::fs::read(root.join("fine.txt")).unwrap(), bytes);
}

#[test]
fn packs_store_each_content_once_and_refuse_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("packs");
    let mut objects = ObjectStore::open(dir.clone()).unwrap();
    let (one, two) = (
        b"the real content\n".as_slice(),
        b"another one\n".as_slice(),
    );
    let (h1, h2) = (hash_bytes(one), hash_bytes(two));
    assert!(objects.put(&h1, one).unwrap());
    assert!(!objects.put(&h1, one).unwrap(), "stored once");
    assert!(objects.put(&h2, two).unwrap());
    assert_eq!(objects.flush().unwrap(), 2);
    assert_eq!(objects.flush().unwrap(), 0, "nothing pending");
    assert!(!objects.put(&h1, one).unwrap(), "known after the flush");
    assert_eq!(objects.get(&h2, two.len() as u64).unwrap(), two);
    drop(objects);
    let pack = dir.join("0000000001.pack");
    let reopened = ObjectStore::open(dir.clone()).unwrap();
    assert_eq!(reopened.get(&h1, one.len() as u64).unwrap(), one);
    assert!(reopened.get(&h1, 3).is_err(), "a wrong size is refused");
    // A flipped byte inside the first content: caught by its digest.
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[5] ^= 0x20;
    std::fs::write(&pack, &bytes).unwrap();
    let err = reopened.get(&h1, one.len() as u64).unwrap_err();
    assert!(err.to_string().contains("damaged"), "{err}");
    // A pack cut short: ignored as a whole, and its contents are missing, not misread.
    std::fs::write(&pack, &bytes[..bytes.len() - 10]).unwrap();
    let reopened = ObjectStore::open(dir).unwrap();
    assert_eq!(reopened.damaged().len(), 1);
    let err = reopened.get(&h2, two.len() as u64).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn a_pruned_scan_replaces_only_what_it_looked_at() {
    use super::prune::{FullScanReason, Prune, RootPlan, merge};
    use std::collections::HashSet;
    use std::sync::Arc;
    let dir = |root: u16, path: &str| Entry {
        content: Content::Dir,
        ..file(root, path, 0)
    };
    let previous = Index::new(
        vec![
            dir(0, "kept"),
            file(0, "kept/a", 1),
            dir(0, "new"),
            file(0, "new/old", 2),
            file(0, "new/sub/deep", 3),
            file(0, "untouched", 4),
            file(0, "gone", 5),
            file(1, "other", 6),
        ],
        vec![],
    );
    let dirty: HashSet<Box<[u8]>> = ["kept", "new", "gone"]
        .iter()
        .map(|p| p.as_bytes().into())
        .collect();
    let prune = Prune::new(dirty, |p| p == b"kept");
    // The walk records dirty entries and everything under the dirty directory not kept.
    assert!(prune.records(b"kept") && !prune.records(b"kept/a"));
    assert!(prune.records(b"new/sub/deep") && !prune.records(b"untouched"));
    assert!(prune.descends(b"new/sub") && !prune.descends(b"kept"));
    let plans = [
        RootPlan::Changes(Arc::new(prune)),
        RootPlan::Full(FullScanReason::Off),
    ];
    // What the walk found: `kept` (chmod), `new` with other contents, `gone` gone; root 1 whole.
    let walked = vec![
        dir(0, "kept"),
        dir(0, "new"),
        file(0, "new/fresh", 7),
        file(1, "other2", 8),
    ];
    let merged = merge(&previous, &plans, walked, vec![]);
    let paths: Vec<(u16, &str)> = merged
        .entries()
        .iter()
        .map(|e| (e.root, std::str::from_utf8(&e.path).unwrap()))
        .collect();
    assert_eq!(
        paths,
        [
            (0, "kept"),
            (0, "kept/a"),
            (0, "new"),
            (0, "new/fresh"),
            (0, "untouched"),
            (1, "other2"),
        ]
    );
}

/// A fresh store's first checkpoint that stores nothing new (an empty tree) is written
/// without fsync and synced before the next is written; one that stores contents, or any
/// later one, is synced at once. Both read back.
#[test]
fn only_a_first_checkpoint_without_new_contents_waits_for_its_fsync() {
    use super::{CheckpointOptions, CheckpointStore};
    let tmp = tempfile::tempdir().unwrap();
    let (root, data) = (tmp.path().join("root"), tmp.path().join("data"));
    std::fs::create_dir_all(&root).unwrap();
    let open = |dir: &str| {
        CheckpointStore::open(
            &data.join(dir),
            std::slice::from_ref(&root),
            CheckpointOptions::default(),
        )
        .unwrap()
    };
    let mut store = open("empty");
    let first = store.record("session startup").unwrap();
    let pending = store
        .unsynced
        .clone()
        .expect("the first checkpoint waits for its fsync");
    assert!(pending.ends_with("0000000001.cp"), "{pending:?}");
    std::fs::write(root.join("a.txt"), "one").unwrap();
    let second = store.record("after turn 1").unwrap();
    assert_ne!(first.id, second.id);
    assert_eq!(store.unsynced, None, "synced before the second was written");
    assert_eq!(open("empty").list().len(), 2);

    // Contents stored with the first checkpoint: synced at once, as every later one.
    let mut store = open("with-contents");
    store.record("session startup").unwrap();
    assert_eq!(store.unsynced, None);
}
