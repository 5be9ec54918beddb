//! What the model is told when the person approved a change other than the one proposed:
//! some hunks rejected, or the content edited by hand.

use std::path::Path;

use super::FileDiff;

/// "The user rejected hunks 2 and 3 of 3 ..." with each rejected hunk's text, so the model can
/// adapt instead of re-proposing them blindly. Empty when nothing was rejected.
pub fn rejected_hunks(path: &Path, diff: &FileDiff, accepted: &[bool]) -> String {
    let rejected: Vec<usize> = (0..diff.hunks.len())
        .filter(|i| !accepted.get(*i).copied().unwrap_or(false))
        .collect();
    if rejected.is_empty() {
        return String::new();
    }
    let total = diff.hunks.len();
    let mut out = format!(
        "The user reviewed the change to {} and rejected {} of its {} hunks; only the accepted \
         hunks were written. These hunks were NOT applied:\n",
        path.display(),
        rejected.len(),
        total
    );
    for i in rejected {
        out.push_str(&format!("\nHunk {} of {total}:\n", i + 1));
        out.push_str(&diff.hunks[i].to_unified());
    }
    out.push_str(
        "\nDo not re-apply the rejected hunks unless the user asks; adapt the rest of your work \
         to the file as it now is.",
    );
    out
}

/// The person edited the proposed content before approving: describe the difference.
pub fn edited_by_user(path: &Path, proposed: &str, written: &str) -> String {
    if proposed == written {
        return String::new();
    }
    let d = super::diff(proposed, written);
    let mut out = format!(
        "The user edited your proposed content for {} before approving it. What was written \
         differs from your proposal as follows (- yours, + theirs):\n",
        path.display()
    );
    for h in &d.hunks {
        out.push_str(&h.to_unified());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejected_note_lists_the_rejected_hunk_text() {
        let before = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let after = "A\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n";
        let d = crate::diff::diff(before, after);
        assert_eq!(d.hunks.len(), 2);
        let note = rejected_hunks(Path::new("src/x.rs"), &d, &[true, false]);
        assert!(note.contains("rejected 1 of its 2 hunks"), "{note}");
        assert!(note.contains("Hunk 2 of 2"));
        assert!(note.contains("-j\n+J\n"));
        assert!(!note.contains("+A"));
        assert_eq!(rejected_hunks(Path::new("x"), &d, &[true, true]), "");
    }

    #[test]
    fn edited_note_shows_the_difference() {
        let note = edited_by_user(Path::new("f.txt"), "one\ntwo\n", "one\n2\n");
        assert!(note.contains("-two\n+2\n"), "{note}");
        assert_eq!(edited_by_user(Path::new("f"), "same", "same"), "");
    }
}
