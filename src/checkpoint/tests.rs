//! Unit tests of the checkpoint module's inner parts: deltas between indexes (a property
//! test), the codec refusing every cut or damaged file, and a restore refusing stored paths
//! that try to leave the root.

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
    let objects = ObjectStore::new(base.join("objects"));
    let bytes = b"planted\n";
    let hash = hash_bytes(bytes);
    objects.put(&hash, bytes).unwrap();
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
fn a_damaged_object_is_reported_not_restored() {
    let tmp = tempfile::tempdir().unwrap();
    let objects = ObjectStore::new(tmp.path().join("objects"));
    let bytes = b"the real content\n";
    let hash = hash_bytes(bytes);
    assert!(objects.put(&hash, bytes).unwrap());
    assert!(!objects.put(&hash, bytes).unwrap(), "stored once");
    assert_eq!(objects.get(&hash, bytes.len() as u64).unwrap(), bytes);
    let other = zstd::bulk::compress(b"something else!!", 1).unwrap();
    std::fs::write(objects.path(&hash), other).unwrap();
    let err = objects.get(&hash, bytes.len() as u64).unwrap_err();
    assert!(err.to_string().contains("damaged"), "{err}");
}
