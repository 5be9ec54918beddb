//! Applying a chosen subset of a diff's hunks (the review widget's "accept some hunks").
//!
//! Works on the hunks' byte ranges, so line endings (CRLF, a lone CR, none at the end) come out
//! exactly as they were. Invariant: all accepted gives `after` and none gives `before`, byte for
//! byte, for any input.

use super::FileDiff;

/// The content with only the accepted hunks of `diff` (which must be [`super::diff`] of the same
/// texts) applied to `before`. `accepted[i]` is hunk i; missing entries count as rejected.
pub fn apply_selected(before: &str, after: &str, diff: &FileDiff, accepted: &[bool]) -> String {
    let mut out = String::with_capacity(after.len().max(before.len()));
    let mut at = 0;
    for (i, h) in diff.hunks.iter().enumerate() {
        // Between hunks both texts are the same, so the old text is copied.
        out.push_str(before.get(at..h.old_bytes.start).unwrap_or_default());
        let taken = if accepted.get(i).copied().unwrap_or(false) {
            after.get(h.new_bytes.clone())
        } else {
            before.get(h.old_bytes.clone())
        };
        out.push_str(taken.unwrap_or_default());
        at = h.old_bytes.end;
    }
    out.push_str(before.get(at..).unwrap_or_default());
    out
}
