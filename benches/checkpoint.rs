//! Checkpoint store benchmarks on a generated 30,000-file tree (300 directories of 100 source
//! files of 1-4 KiB): recording a checkpoint when nothing changed (with the change journal, as
//! a session does — one in 20 is still a full scan — and with the journal off, every one a
//! full scan), planning a restore, and restoring 100 changed files (which first records the
//! undo checkpoint), in that tree and in a 1,000-file one.
//! Also prints, once, the first checkpoint's time and store size, and the heap held by the
//! latest index and the peak during an unchanged checkpoint (counting allocator).
//! Figures go in BENCHMARKS.md.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use cairn::checkpoint::{CheckpointOptions, CheckpointStore, ScanKind};
use criterion::{BatchSize, Criterion};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{LIVE, PEAK};

const DIRS: usize = 300;
const FILES_PER_DIR: usize = 100;

fn file_text(d: usize, f: usize, round: usize) -> String {
    let lines = 20 + (d * 7 + f * 13) % 80;
    (0..lines)
        .map(|l| {
            format!("    let value_{l} = compute({d}, {f}, {l}, {round}); // generated line\n")
        })
        .collect()
}

fn make_tree(root: &Path, dirs: usize) {
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n").expect("write .gitignore");
    for d in 0..dirs {
        let dir = root.join(format!("src/module_{d:03}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..FILES_PER_DIR {
            std::fs::write(dir.join(format!("file_{f:03}.rs")), file_text(d, f, 0)).expect("write");
        }
    }
}

fn dir_size(dir: &Path) -> (u64, usize) {
    let mut total = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let meta = e.metadata().expect("metadata");
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                total.0 += meta.len();
                total.1 += 1;
            }
        }
    }
    total
}

/// Rewrites 100 files spread over a tree of `dirs` directories with content of `round`.
fn change_100(root: &Path, dirs: usize, round: usize) {
    for i in 0..100 {
        let (d, f) = ((i * 3) % dirs, (i * 7) % FILES_PER_DIR);
        let path = root.join(format!("src/module_{d:03}/file_{f:03}.rs"));
        std::fs::write(path, file_text(d, f, round)).expect("write");
    }
}

fn main() {
    cairn::host::tune_allocator();
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("project");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&root).expect("mkdir");
    make_tree(&root, DIRS);
    let (tree_bytes, tree_files) = dir_size(&root);

    let before = LIVE.load(Ordering::Relaxed);
    let mut store = CheckpointStore::open(
        &data,
        std::slice::from_ref(&root),
        CheckpointOptions::default(),
    )
    .expect("open");
    let started = Instant::now();
    let first = store.record("first").expect("record");
    let first_time = started.elapsed();
    let (store_bytes, store_files) = dir_size(&data);
    let held = LIVE.load(Ordering::Relaxed) - before;
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    let base = LIVE.load(Ordering::Relaxed);
    let second = store.record("unchanged").expect("record");
    let peak = PEAK.load(Ordering::Relaxed) - base;
    eprintln!(
        "tree: {tree_files} files, {:.1} MiB; first checkpoint: {} entries stored in {:.0} ms, \
         store {:.1} MiB in {store_files} files",
        tree_bytes as f64 / 1048576.0,
        first.changed,
        first_time.as_secs_f64() * 1000.0,
        store_bytes as f64 / 1048576.0,
    );
    eprintln!(
        "memory: index held {:.2} MiB (heap_bytes says {:.2} MiB); peak extra during an \
         unchanged checkpoint {:.2} MiB; unchanged checkpoint changed {} entries",
        held as f64 / 1048576.0,
        store.index_heap_bytes() as f64 / 1048576.0,
        peak as f64 / 1048576.0,
        second.changed,
    );

    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    // Per kind of scan: (count, total time).
    let (mut journal, mut full) = ((0u32, Duration::ZERO), (0u32, Duration::ZERO));
    c.bench_function("checkpoint: record, 30k files, nothing changed", |b| {
        b.iter(|| {
            let started = Instant::now();
            let r = store.record("bench").expect("record");
            let took = started.elapsed();
            assert_eq!(r.changed, 0);
            let kind = match r.scan {
                ScanKind::Journal { .. } => &mut journal,
                ScanKind::Full(_) => &mut full,
            };
            kind.0 += 1;
            kind.1 += took;
        })
    });
    let mean = |(n, t): (u32, Duration)| t.as_secs_f64() * 1000.0 / f64::from(n.max(1));
    eprintln!(
        "unchanged checkpoints: {} from the journal, mean {:.2} ms; {} full scans (one in \
         20), mean {:.1} ms",
        journal.0,
        mean(journal),
        full.0,
        mean(full)
    );
    let target = first.id;
    c.bench_function(
        "checkpoint: plan restore (scan only), 30k files, nothing changed",
        |b| {
            b.iter(|| {
                let plan = store.plan_restore(target).expect("plan");
                assert!(plan.files.is_empty());
            })
        },
    );
    let mut round = 0;
    c.bench_function(
        "checkpoint: restore 100 changed files in a 30k-file tree",
        |b| {
            b.iter_batched(
                || {
                    round += 1;
                    change_100(&root, DIRS, round);
                },
                |()| {
                    let done = store.restore(target, "bench rewind").expect("restore");
                    assert_eq!(done.done.len(), 100);
                    assert!(done.problems.is_empty());
                },
                BatchSize::PerIteration,
            )
        },
    );
    drop(store);

    // The full scan the journal saves: the same tree with the journal off.
    let mut store = CheckpointStore::open(
        &tmp.path().join("data-full"),
        std::slice::from_ref(&root),
        CheckpointOptions {
            journal: false,
            ..CheckpointOptions::default()
        },
    )
    .expect("open");
    store.record("first").expect("record");
    c.bench_function(
        "checkpoint: record, 30k files, nothing changed, journal off (full scan)",
        |b| {
            b.iter(|| {
                let r = store.record("bench").expect("record");
                assert_eq!(r.changed, 0);
            })
        },
    );
    drop(store);

    // The same restore in a 1,000-file tree: the restore without the cost of a large scan.
    let small = tmp.path().join("small");
    std::fs::create_dir_all(&small).expect("mkdir");
    make_tree(&small, 10);
    let mut store = CheckpointStore::open(
        &tmp.path().join("small-data"),
        std::slice::from_ref(&small),
        CheckpointOptions::default(),
    )
    .expect("open");
    let target = store.record("first").expect("record").id;
    c.bench_function(
        "checkpoint: restore 100 changed files in a 1,000-file tree",
        |b| {
            b.iter_batched(
                || {
                    round += 1;
                    change_100(&small, 10, round);
                },
                |()| {
                    let done = store.restore(target, "bench rewind").expect("restore");
                    assert_eq!(done.done.len(), 100);
                    assert!(done.problems.is_empty());
                },
                BatchSize::PerIteration,
            )
        },
    );
    c.final_summary();
}
