//! Issue 29, section 3: the checkpoint budget is the project's. A running session keeps all
//! of the project's session stores within it, pruning ended sessions' stores first (least
//! recently used first, their oldest checkpoints first, whole stores if need be), then its
//! own oldest, never its latest; a live session's store (its lock held) is never touched from
//! another process, by a session or by `cairn checkpoints gc`.

use std::fs;
use std::path::{Path, PathBuf};

#[path = "support/checkpoint.rs"]
mod support;

use support::noise;

use cairn::checkpoint::{CheckpointOptions, CheckpointStore, store_bytes};
use cairn::session::checkpoints::SessionCheckpoints;
use cairn::session::store_lock::{StoreLock, is_live};
use cairn::session::store_report;

const CONTENT: usize = 300_000;

struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
    seed: u32,
}

impl Project {
    fn new() -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("tree");
        let data = tmp.path().join("data").join("project");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&data).unwrap();
        Project {
            _tmp: tmp,
            root,
            data,
            seed: 1,
        }
    }

    fn store_dir(&self, session: &str) -> PathBuf {
        self.data.join(session).join("rewind")
    }

    /// Changes the tree: a new incompressible content of `CONTENT` bytes.
    fn change(&mut self) {
        fs::write(self.root.join("data.bin"), noise(self.seed, CONTENT)).unwrap();
        self.seed += 1;
    }

    /// A session store with `n` checkpoints, recorded by a session that has ended.
    fn session(&mut self, session: &str, n: usize) {
        let mut store = self.open(session);
        for _ in 0..n {
            self.change();
            store.record("step").unwrap();
        }
        // Distinct times of latest use.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }

    fn open(&self, session: &str) -> CheckpointStore {
        CheckpointStore::open(
            &self.store_dir(session),
            std::slice::from_ref(&self.root),
            CheckpointOptions {
                journal: false,
                ..CheckpointOptions::default()
            },
        )
        .unwrap()
    }

    fn count(&self, session: &str) -> usize {
        let store = self.open(session);
        assert!(store.damaged().is_empty(), "{:?}", store.damaged());
        store.list().len()
    }
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if path.is_dir() {
            out.extend(snapshot(&path));
        } else {
            out.push((path.clone(), fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_prunes_ended_sessions_first_and_never_a_live_one() {
    let mut p = Project::new();
    p.session("s-a", 3);
    p.session("s-b", 3);
    p.session("s-live", 2);
    let live = StoreLock::take_for_session(&p.store_dir("s-live"))
        .unwrap()
        .expect("the lock is free");
    assert!(is_live(&p.store_dir("s-live")));
    assert!(!is_live(&p.store_dir("s-a")));
    let live_files = snapshot(&p.store_dir("s-live"));

    // The three stores take about 2.4 MB; the budget leaves room for 2.2 MB.
    let budget = 2_200_000;
    let own = SessionCheckpoints::new(Some(p.store_dir("s-own")), vec![p.root.clone()], Vec::new())
        .with_budget(Some(budget));
    p.change();
    own.record("one".into()).await.unwrap();
    // About 0.5 MB over: the oldest ended session loses its oldest checkpoints, the other
    // ended session nothing yet.
    let a = p.count("s-a");
    assert!((1..3).contains(&a), "s-a kept {a}");
    assert_eq!(p.count("s-b"), 3);
    let notices = own.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with(&format!(
            "The /rewind store was over its budget (2.2 MB): {} checkpoint(s) of ended \
             sessions were pruned (the project's checkpoints take ",
            3 - a
        )),
        "{}",
        notices[0]
    );
    assert!(is_live(&p.store_dir("s-own")), "a session holds its lock");

    let mut last = None;
    for n in 0..7 {
        p.change();
        last = Some(own.record(format!("more {n}")).await.unwrap().id);
    }
    // Ended stores went entirely, oldest first; then the session's own oldest.
    assert_eq!(p.count("s-a"), 0);
    assert_eq!(p.count("s-b"), 0);
    let kept = own.list().await.unwrap();
    assert!(kept.len() < 8, "{}", kept.len());
    assert_eq!(kept.last().map(|c| c.id), last, "the latest is kept");
    let (used, of) = own.usage().await.unwrap();
    assert_eq!(of, budget);
    assert!(used <= budget, "{used}");
    assert_eq!(
        used,
        store_bytes(&p.store_dir("s-own")) + store_bytes(&p.store_dir("s-live"))
    );
    // The live session's store is untouched, byte for byte.
    assert_eq!(snapshot(&p.store_dir("s-live")), live_files);
    drop(live);
}

#[test]
fn gc_leaves_a_live_session_alone() {
    let mut p = Project::new();
    p.session("s-old", 4);
    p.session("s-live", 4);
    let live = StoreLock::take_for_session(&p.store_dir("s-live"))
        .unwrap()
        .expect("the lock is free");
    let live_files = snapshot(&p.store_dir("s-live"));
    let gc = store_report::gc(&p.data, &p.root, Some(1_000_000));
    assert!(
        gc.contains("  s-live  live (its session is running)  1.2 MB\n"),
        "{gc}"
    );
    assert!(gc.contains("s-old: pruned 3 checkpoint(s)"), "{gc}");
    assert!(gc.ends_with("1 live session(s) left alone: their sessions keep them to the budget.\ns-old: pruned 3 checkpoint(s), 1.2 MB → 0.3 MB\n"), "{gc}");
    assert_eq!(snapshot(&p.store_dir("s-live")), live_files);
    assert_eq!(p.count("s-old"), 1, "gc keeps a store's latest");

    // Its session ended: the next gc prunes it.
    drop(live);
    let gc = store_report::gc(&p.data, &p.root, Some(1_000_000));
    assert!(gc.contains("s-live: pruned "), "{gc}");
    assert!(p.count("s-live") < 4);
}
