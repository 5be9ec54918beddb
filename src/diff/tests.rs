//! The diff model: hunk splitting, numbering, applying subsets, changed regions.

use super::*;
use proptest::prelude::*;

const BEFORE: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n";
const AFTER: &str = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nM\nn\nextra\n";

fn apply(before: &str, after: &str, accepted: &[bool]) -> String {
    apply_selected(before, after, &diff(before, after), accepted)
}

#[test]
fn far_apart_changes_are_separate_hunks() {
    let d = diff(BEFORE, AFTER);
    assert_eq!(d.hunks.len(), 2);
    assert_eq!(d.hunks[0].header(), "@@ -1,5 +1,5 @@");
    assert_eq!((d.added, d.removed), (3, 2));
    assert!(d.hunks[0].to_unified().contains("-b\n+B\n"));
    assert!(d.hunks[1].to_unified().contains("+extra\n"));
}

#[test]
fn accepting_one_of_two_hunks_applies_only_it() {
    assert_eq!(
        apply(BEFORE, AFTER, &[true, false]),
        "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n"
    );
    assert_eq!(
        apply(BEFORE, AFTER, &[false, true]),
        "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nM\nn\nextra\n"
    );
}

#[test]
fn new_and_deleted_files() {
    let d = diff("", "one\ntwo\n");
    assert_eq!(d.hunks.len(), 1);
    assert_eq!(d.hunks[0].header(), "@@ -0,0 +1,2 @@");
    let d = diff("one\n", "");
    assert_eq!(d.removed, 1);
    assert_eq!(diff("same\n", "same\n"), FileDiff::default());
}

#[test]
fn crlf_lines_are_kept_byte_for_byte() {
    let before = "x\r\ny\r\n";
    let after = "x\r\nY\r\n";
    assert_eq!(apply(before, after, &[true]), after);
    assert_eq!(diff(before, after).hunks[0].lines[1].text, "y");
}

#[test]
fn numbers_are_absolute_in_a_windowed_diff() {
    let before: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
    let after = before.replace("line 500\n", "line five hundred\n");
    let d = diff(&before, &after);
    assert_eq!(d.hunks.len(), 1);
    let h = &d.hunks[0];
    assert_eq!(h.header(), "@@ -497,7 +497,7 @@");
    assert_eq!(h.lines[3].text, "line 500");
    assert_eq!((h.lines[3].old_no, h.lines[3].new_no), (Some(500), None));
    assert_eq!(
        &before[h.old_bytes.clone()],
        "line 497\nline 498\nline 499\nline 500\nline 501\nline 502\nline 503\n"
    );
    assert_eq!(apply(&before, &after, &[false]), before);
    assert_eq!(apply(&before, &after, &[true]), after);
}

#[test]
fn changes_are_absolute_line_ranges() {
    let before: String = (0..100).map(|i| format!("{i}\n")).collect();
    let after = before
        .replace("10\n", "ten\n")
        .replace("50\n", "")
        .replace("90\n", "90\nx\ny\n");
    let c = |old, new| Change { old, new };
    assert_eq!(
        changes(&before, &after),
        vec![c(10..11, 10..11), c(50..51, 50..50), c(91..91, 90..92)]
    );
}

fn lines_of(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

proptest! {
    #[test]
    fn all_or_nothing_reproduces_either_side(
        a in proptest::collection::vec("[a-c]{0,2}\r?\n?", 0..30),
        b in proptest::collection::vec("[a-c]{0,2}\r?\n?", 0..30),
    ) {
        let before: String = a.concat();
        let after: String = b.concat();
        let n = diff(&before, &after).hunks.len();
        prop_assert_eq!(apply(&before, &after, &vec![true; n]), after.clone());
        prop_assert_eq!(apply(&before, &after, &vec![false; n]), before.clone());
    }

    /// Any subset applies cleanly: each hunk's old bytes are replaced by its new bytes.
    #[test]
    fn any_subset_replays_hunk_by_hunk(
        before in "[ab\n]{0,60}",
        after in "[ab\n]{0,60}",
        pick in proptest::collection::vec(any::<bool>(), 0..8),
    ) {
        let d = diff(&before, &after);
        let got = apply_selected(&before, &after, &d, &pick);
        let mut want = before.clone();
        for (i, h) in d.hunks.iter().enumerate().rev() {
            if pick.get(i).copied().unwrap_or(false) {
                want.replace_range(h.old_bytes.clone(), &after[h.new_bytes.clone()]);
            }
        }
        prop_assert_eq!(got, want);
    }

    /// Replaying the changes on `before` gives `after`, whatever the texts.
    #[test]
    fn changes_rebuild_after(before in "[ab\n]{0,40}", after in "[ab\n]{0,40}") {
        let (b, a) = (lines_of(&before), lines_of(&after));
        let mut rebuilt: Vec<&str> = Vec::new();
        let mut at = 0;
        for c in changes(&before, &after) {
            prop_assert!(c.old.start >= at && c.old.end <= b.len() && c.new.end <= a.len());
            rebuilt.extend(&b[at..c.old.start]);
            rebuilt.extend(&a[c.new.clone()]);
            at = c.old.end;
        }
        rebuilt.extend(&b[at..]);
        prop_assert_eq!(rebuilt.concat(), after.clone());
    }
}
