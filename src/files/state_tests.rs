use super::*;
use std::time::{Duration, UNIX_EPOCH};

fn t(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn read(content: Option<&str>, mtime: u64, shown: (usize, usize)) -> ReadRecord {
    ReadRecord {
        content: content.map(Arc::from),
        mtime: t(mtime),
        size: content.map_or(0, |c| c.len() as u64),
        hash: None,
        format: TextFormat::default(),
        shown: Some(shown),
        offset: shown.0,
        limit: shown.1 - shown.0 + 1,
    }
}

#[test]
fn ranges_accumulate_while_unchanged_and_reset_on_change() {
    let s = ReadFileState::default();
    let p = Path::new("/x/a.txt");
    s.record_read(p, read(Some("abc"), 1, (1, 10)));
    s.record_read(p, read(Some("abc"), 1, (11, 20)));
    s.record_read(p, read(Some("abc"), 1, (40, 50)));
    let snap = s.get(p).unwrap();
    assert_eq!(snap.ranges, vec![(1, 20), (40, 50)]);
    assert!(snap.has_seen(5, 20));
    assert!(!snap.has_seen(15, 45));
    assert_eq!(snap.last_read, Some((40, 11)));
    // The file changed (new mtime): what was seen before no longer counts.
    s.record_read(p, read(Some("abcd"), 2, (1, 5)));
    assert_eq!(s.get(p).unwrap().ranges, vec![(1, 5)]);
}

#[test]
fn stale_and_remove() {
    let s = ReadFileState::default();
    let p = Path::new("/x/a.txt");
    assert!(!s.mark_stale(p));
    s.record_read(p, read(Some("abc"), 1, (1, 1)));
    assert!(s.mark_stale(p));
    let snap = s.get(p).unwrap();
    assert!(snap.stale);
    assert_eq!(snap.last_read, None);
    assert_eq!(s.watched_dirs(), vec![(PathBuf::from("/x"), 1)]);
    assert!(s.remove(p));
    assert!(!s.contains(p));
    assert_eq!(s.watched_dirs(), vec![]);
    assert_eq!(s.content_bytes(), 0);
}

#[test]
fn lru_evicts_content_not_entries() {
    let s = ReadFileState::with_content_limit(10);
    let (a, b, c) = (Path::new("/d/a"), Path::new("/d/b"), Path::new("/d/c"));
    s.record_read(a, read(Some("aaaa"), 1, (1, 1)));
    s.record_read(b, read(Some("bbbb"), 1, (1, 1)));
    // Touch a so b is the least recently used.
    s.get(a);
    s.record_read(c, read(Some("cccc"), 1, (1, 1)));
    assert!(s.get(a).unwrap().content.is_some());
    assert!(s.get(b).unwrap().content.is_none());
    assert!(s.get(c).unwrap().content.is_some());
    assert_eq!(s.content_bytes(), 8);
    assert_eq!(s.watched_dirs(), vec![(PathBuf::from("/d"), 3)]);
}

#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<String>>);
impl DirWatch for Recorder {
    fn watch(&self, dir: &Path) {
        self.0.lock().unwrap().push(format!("+{}", dir.display()));
    }
    fn unwatch(&self, dir: &Path) {
        self.0.lock().unwrap().push(format!("-{}", dir.display()));
    }
}

#[test]
fn directories_are_reference_counted() {
    let s = ReadFileState::default();
    s.record_read(Path::new("/d/a"), read(None, 1, (1, 1)));
    let rec = Arc::new(Recorder::default());
    s.set_watcher(rec.clone());
    s.record_read(Path::new("/d/b"), read(None, 1, (1, 1)));
    s.record_read(Path::new("/e/c"), read(None, 1, (1, 1)));
    s.remove(Path::new("/d/a"));
    s.remove(Path::new("/d/b"));
    assert_eq!(*rec.0.lock().unwrap(), vec!["+/d", "+/e", "-/d"]);
}

#[test]
fn hash_distinguishes() {
    assert_ne!(content_hash(b"abc"), content_hash(b"abd"));
    assert_ne!(content_hash(b""), content_hash(b"\0"));
    assert_eq!(
        content_hash(b"same bytes here"),
        content_hash(b"same bytes here")
    );
}

#[test]
fn hash_in_pieces_equals_hash_whole() {
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
    for split in [0, 1, 31, 32, 33, 500, 999, 1000] {
        for split2 in [split, (split + 40).min(1000)] {
            let mut h = ContentHasher::new(1000);
            h.update(&data[..split]);
            h.update(&data[split..split2]);
            h.update(&data[split2..]);
            assert_eq!(
                h.finish_checked(),
                Some(content_hash(&data)),
                "{split} {split2}"
            );
        }
    }
    let mut short = ContentHasher::new(10);
    short.update(b"abc");
    assert_eq!(short.finish_checked(), None);
}
