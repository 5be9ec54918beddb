//! The guarded write path shared by Write, Edit and MultiEdit.
//!
//! [`plan`] computes, without writing, exactly what a call would put on disk (or in the
//! client's buffer): from the file's text as loaded (`file_common::load_text`), it enforces
//! read-before-write, applies the edits in memory (all or nothing), checks the
//! change lies in lines the model has seen, and — when the file changed on disk since it was
//! read — merges: the edits are applied to the disk version when they do not overlap the
//! outside change, and refused with a compact diff of that change when they do — a refusal
//! that carries the conflict's facts (`edit_conflict::Conflict`) when the session has a
//! version of its own to offer instead (its edits on what it read; a Write's content). Writing
//! the plan is `edit_commit`'s job.
//!
//! "Changed since read" is decided from what the text carries: a file from disk by its mtime
//! and size first (then its hash, so a touch is no change); a text from the client has no
//! mtime, so only its content counts — the hash of the client's text now against the one
//! recorded when the model read it (or the recorded text itself).

use std::path::{Path, PathBuf};

use super::ToolError;
use super::diff_snippet::{diff_snippet, shift_ranges};
use super::edit_conflict::Conflict;
use super::edit_large::{LARGE_TEXT, Spliced, splice_in_place};
use super::file_common::{LoadedText, line_count};
use super::text_match::{MatchKind, Occurrence, closest_region, locate, numbered_line};
use crate::diff::{self, changes};
use crate::files::encoding::{self, LineEnding, TextFormat};
use crate::files::state::{FileSnapshot, ReadFileState};

pub const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
pub const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
pub const NO_CHANGES: &str = "No changes to make: old_string and new_string are exactly the same.";
pub const ALREADY_EXISTS: &str = "Cannot create new file - file already exists.";

/// One replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditSpec {
    pub old_string: String,
    pub new_string: String,
    pub replace_all: bool,
    /// How many occurrences the caller expects to replace (`None`: one, or every one with
    /// `replace_all`). A different count refuses the edit, naming both.
    pub expected_replacements: Option<usize>,
}

/// What a call asks for.
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// Replace the whole content (Write).
    Write(&'a str),
    /// Replacements applied in order (Edit has one, MultiEdit several).
    Edits(&'a [EditSpec]),
}

/// The exact outcome of a call, computed without writing.
#[derive(Debug, Clone)]
pub struct Plan {
    pub path: PathBuf,
    pub existed: bool,
    /// Logical text on disk now ("" for a new file).
    pub before: String,
    /// Logical text to write.
    pub after: String,
    pub format: TextFormat,
    /// Lines the model had seen of `before`.
    pub ranges_before: Vec<(usize, usize)>,
    /// Lines the model knows once the write is done.
    pub ranges_after: Vec<(usize, usize)>,
    /// Said to the model with the result (e.g. that an outside change was merged).
    pub notes: Vec<String>,
    /// [`content_hash`] of the bytes the plan was made from; None when the file did not exist.
    pub disk_hash: Option<u64>,
    /// A large file edited in place (`edit_large`): `before` is then empty, and this stands
    /// for it.
    pub spliced: Option<Spliced>,
}

/// Cheap checks that need no disk: run first.
pub fn check_edits_in_memory(edits: &[EditSpec]) -> Result<(), ToolError> {
    if edits.is_empty() {
        return Err(ToolError::new(
            "edits is empty: give at least one {old_string, new_string}.",
        ));
    }
    for (i, e) in edits.iter().enumerate() {
        if e.old_string == e.new_string {
            return Err(name_edit(i, edits.len(), NO_CHANGES.into()));
        }
        if e.old_string.is_empty() && i > 0 {
            return Err(name_edit(
                i,
                edits.len(),
                "old_string is empty; only the first edit may create a file.".into(),
            ));
        }
    }
    Ok(())
}

fn name_edit(i: usize, n: usize, msg: String) -> ToolError {
    if n == 1 {
        ToolError::new(msg)
    } else {
        ToolError::new(format!(
            "Edit {} of {n} (edits[{i}]) failed: {msg}\nNo edit was applied; the file is unchanged.",
            i + 1
        ))
    }
}

/// Compute the plan (see the module docs) from `loaded`, the file's text now (`None`: no
/// such file). Writes nothing.
pub fn plan(
    state: &ReadFileState,
    path: &Path,
    change: Change<'_>,
    loaded: Option<LoadedText>,
) -> Result<Plan, ToolError> {
    if let Change::Edits(edits) = change {
        check_edits_in_memory(edits)?;
    }
    let snap = state.get(path);
    let Some(disk) = loaded else {
        return plan_new_file(path, change);
    };
    let creating = matches!(change, Change::Edits(e) if e[0].old_string.is_empty());
    if creating && !disk.decoded.text.trim().is_empty() {
        return Err(ToolError::new(ALREADY_EXISTS));
    }
    let Some(snap) = snap else {
        return Err(ToolError::new(NOT_READ));
    };
    let format = disk.decoded.format;
    // No stamp (the client's text): only the content can say it is unchanged.
    let changed = snap.stale
        || disk
            .stamp
            .is_none_or(|(mtime, size)| snap.mtime != mtime || snap.size != size);
    let same_bytes = snap.hash == Some(disk.hash)
        || snap
            .content
            .as_deref()
            .is_some_and(|c| c == disk.decoded.text);
    if changed && !same_bytes {
        return match (change, snap.content.clone()) {
            (Change::Edits(edits), Some(base)) => plan_merge(path, &snap, &base, disk, edits),
            (Change::Edits(_), None) => Err(ToolError::new(MODIFIED)),
            // A whole new content: nothing to merge, but the person may choose to overwrite.
            (Change::Write(content), _) => {
                let ours = encoding::normalize_input(content, format.line_ending).into_owned();
                let n = line_count(&ours);
                Err(ToolError::new(MODIFIED).with_conflict(Conflict {
                    path: path.to_path_buf(),
                    disk: disk.decoded.text,
                    ours,
                    disk_hash: disk.hash,
                    format,
                    ranges_after: if n > 0 { vec![(1, n)] } else { Vec::new() },
                }))
            }
        };
    }
    let disk_hash = disk.hash;
    let before = disk.decoded.text;
    match change {
        Change::Write(content) => {
            let after = encoding::normalize_input(content, format.line_ending).into_owned();
            let n = line_count(&after);
            Ok(Plan {
                path: path.to_path_buf(),
                existed: true,
                ranges_before: snap.ranges.clone(),
                ranges_after: if n > 0 { vec![(1, n)] } else { Vec::new() },
                before,
                after,
                format,
                notes: Vec::new(),
                disk_hash: Some(disk_hash),
                spliced: None,
            })
        }
        Change::Edits(edits) => {
            let mut notes = Vec::new();
            let (before, after, spliced) =
                edit_text(before, edits, format.line_ending, &mut notes)?;
            let (hunks, total) = match &spliced {
                Some(s) => (s.changes(&after), s.old_lines),
                None => (changes(&before, &after), line_count(&before)),
            };
            check_seen_of(&snap, total, &hunks)?;
            Ok(Plan {
                spliced,
                path: path.to_path_buf(),
                existed: true,
                ranges_before: snap.ranges.clone(),
                ranges_after: shift_ranges(&snap.ranges, &hunks),
                before,
                after,
                format,
                notes,
                disk_hash: Some(disk_hash),
            })
        }
    }
}

fn plan_new_file(path: &Path, change: Change<'_>) -> Result<Plan, ToolError> {
    let after = match change {
        Change::Write(content) => content.to_string(),
        Change::Edits(edits) if edits[0].old_string.is_empty() => {
            let first = edits[0].new_string.clone();
            apply_edits(&first, &edits[1..], LineEnding::Lf)?
        }
        Change::Edits(_) => {
            return Err(ToolError::new(format!(
                "File does not exist: {}. To create it, use Write (or Edit with an empty old_string).",
                path.display()
            )));
        }
    };
    let n = line_count(&after);
    Ok(Plan {
        path: path.to_path_buf(),
        existed: false,
        before: String::new(),
        ranges_before: Vec::new(),
        ranges_after: if n > 0 { vec![(1, n)] } else { Vec::new() },
        after,
        format: TextFormat::default(),
        notes: Vec::new(),
        disk_hash: None,
        spliced: None,
    })
}

/// The text before and after `edits`: one edit of a large text is made in place when it can
/// be (`edit_large`), the text before then given as its excerpt and the first string empty.
fn edit_text(
    before: String,
    edits: &[EditSpec],
    le: LineEnding,
    notes: &mut Vec<String>,
) -> Result<(String, String, Option<Spliced>), ToolError> {
    if edits.len() != 1 || before.len() <= LARGE_TEXT {
        let after = apply_edits_noting(&before, edits, le, notes)?;
        return Ok((before, after, None));
    }
    let mut text = before;
    Ok(match find_edit(&text, edits, 0, le, notes)? {
        Found::Whole(new) => (text, new, None),
        Found::At(occurrences) => match splice_in_place(&mut text, &occurrences) {
            Some(spliced) => (String::new(), text, Some(spliced)),
            None => {
                let after = replaced(&text, &occurrences);
                (text, after, None)
            }
        },
    })
}

/// Apply `edits` in order to `text`, each on the result of the previous.
pub fn apply_edits(text: &str, edits: &[EditSpec], le: LineEnding) -> Result<String, ToolError> {
    apply_edits_noting(text, edits, le, &mut Vec::new())
}

/// As [`apply_edits`], adding to `notes` how an edit matched when it was not exactly (quotes
/// normalised, line-number prefixes stripped), so the model learns it.
fn apply_edits_noting(
    text: &str,
    edits: &[EditSpec],
    le: LineEnding,
    notes: &mut Vec<String>,
) -> Result<String, ToolError> {
    // Borrow the input until the first edit: a large file is copied once, not twice.
    let mut text: std::borrow::Cow<'_, str> = text.into();
    for i in 0..edits.len() {
        text = match find_edit(&text, edits, i, le, notes)? {
            Found::Whole(new) => new.into(),
            Found::At(occurrences) => replaced(&text, &occurrences).into(),
        };
    }
    Ok(text.into_owned())
}

/// Where edit `i` of `edits` applies in `text`.
pub(super) enum Found {
    /// An empty `old_string` on an empty file: this is the whole new text.
    Whole(String),
    /// The occurrences to replace, in order, not overlapping.
    At(Vec<Occurrence>),
}

/// Finds where edit `i` applies in `text`, refusing it (with the model's message) when its
/// string is not there, or is there a different number of times than asked; how it matched,
/// when not exactly, is added to `notes`.
pub(super) fn find_edit(
    text: &str,
    edits: &[EditSpec],
    i: usize,
    le: LineEnding,
    notes: &mut Vec<String>,
) -> Result<Found, ToolError> {
    let e = &edits[i];
    let old = encoding::normalize_input(&e.old_string, le);
    let new = encoding::normalize_input(&e.new_string, le);
    if old.is_empty() {
        if !text.trim().is_empty() {
            return Err(name_edit(i, edits.len(), ALREADY_EXISTS.into()));
        }
        return Ok(Found::Whole(new.into_owned()));
    }
    let Some(found) = locate(text, &old, &new) else {
        return Err(name_edit(
            i,
            edits.len(),
            not_found_message(text, &e.old_string),
        ));
    };
    if let Some(how) = match found.kind {
        MatchKind::Exact => None,
        MatchKind::Quotes => Some(
            "matched after normalising quotes: the file's curly quotes were kept in the \
             replacement",
        ),
        MatchKind::LinePrefixes => Some(
            "matched after stripping line-number prefixes copied from Read output (they are \
             not part of the file)",
        ),
    } {
        let which = if edits.len() > 1 {
            format!("edit {}: ", i + 1)
        } else {
            String::new()
        };
        notes.push(format!("Note: {which}old_string {how}."));
    }
    let n = found.occurrences.len();
    if let Some(want) = e.expected_replacements
        && want != n
    {
        return Err(name_edit(
            i,
            edits.len(),
            format!(
                "Expected {want} replacement{} but found {n} match{} of the string to replace. No edit was made.\nString: {}",
                if want == 1 { "" } else { "s" },
                if n == 1 { "" } else { "es" },
                e.old_string
            ),
        ));
    }
    if n > 1 && !e.replace_all && e.expected_replacements.is_none() {
        return Err(name_edit(
            i,
            edits.len(),
            format!(
                "Found {n} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: {}",
                e.old_string
            ),
        ));
    }
    Ok(Found::At(found.occurrences))
}

/// `text` with `occurrences` (in order, not overlapping) replaced.
pub(super) fn replaced(text: &str, occurrences: &[Occurrence]) -> String {
    let grown: usize = occurrences.iter().map(|o| o.replacement.len()).sum();
    let mut out = String::with_capacity(text.len() + grown);
    let mut last = 0;
    for occ in occurrences {
        out.push_str(&text[last..occ.range.start]);
        out.push_str(&occ.replacement);
        last = occ.range.end;
    }
    out.push_str(&text[last..]);
    out
}

fn not_found_message(text: &str, old: &str) -> String {
    if text.trim().is_empty() {
        return format!(
            "String to replace not found in file: the file is empty.\nString: {old}\nUse Write to \
             give it its content (or Edit with an empty old_string)."
        );
    }
    let mut msg = format!("String to replace not found in file.\nString: {old}");
    if let Some((start, end)) = closest_region(text, old) {
        let lines: Vec<String> = text
            .lines()
            .enumerate()
            .skip(start - 1)
            .take(end + 1 - start)
            .map(|(i, l)| numbered_line(i + 1, l))
            .collect();
        msg.push_str(&format!(
            "\n\nThe closest match in the file is at lines {start}-{end}:\n{}\nCopy old_string exactly from these lines (without the line-number prefix), or Read the file again.",
            lines.join("\n")
        ));
    }
    msg
}

/// Every line the change touches must have been shown to the model.
fn check_seen(snap: &FileSnapshot, before: &str, hunks: &[diff::Change]) -> Result<(), ToolError> {
    check_seen_of(snap, line_count(before), hunks)
}

/// [`check_seen`] of a text before of `total` lines.
fn check_seen_of(
    snap: &FileSnapshot,
    total: usize,
    hunks: &[diff::Change],
) -> Result<(), ToolError> {
    if total == 0 {
        return Ok(());
    }
    for h in hunks {
        // An insertion between lines k and k+1 needs line k (or line 1 at the very start).
        let (s, e) = if h.old.is_empty() {
            let k = h.old.start.clamp(1, total);
            (k, k)
        } else {
            (h.old.start + 1, h.old.end.min(total))
        };
        if !snap.has_seen(s, e) {
            let seen: Vec<String> = snap
                .ranges
                .iter()
                .map(|(a, b)| format!("{a}-{b}"))
                .collect();
            let seen = if seen.is_empty() {
                "none".to_string()
            } else {
                seen.join(", ")
            };
            return Err(ToolError::new(format!(
                "This edit changes lines {s}-{e}, which you have not read (lines read so far: {seen}). Read them first (offset={s}, limit={}) and retry.",
                e + 1 - s
            )));
        }
    }
    Ok(())
}

/// The file changed on disk since it was read: apply the edits to the disk version when they
/// do not touch what changed outside.
fn plan_merge(
    path: &Path,
    snap: &FileSnapshot,
    base: &str,
    disk: LoadedText,
    edits: &[EditSpec],
) -> Result<Plan, ToolError> {
    let format = disk.decoded.format;
    let disk_hash = disk.hash;
    let theirs = disk.decoded.text;
    let outside = changes(base, &theirs);
    // The refusal; with the session's version when there is one (the edits applied to what
    // it read, in lines it had seen), so a client that can ask may offer to overwrite.
    let conflict = |ours: Option<String>| {
        let d = diff_snippet(base, &theirs);
        let mut snippet: Vec<&str> = d.snippet.lines().take(40).collect();
        if d.snippet.lines().count() > 40 {
            snippet.push("...");
        }
        let error = ToolError::new(format!(
            "{MODIFIED}\nThe outside change overlaps your edit:\n{}",
            snippet.join("\n")
        ));
        let Some(ours) = ours else {
            return error;
        };
        let hunks = changes(base, &ours);
        if check_seen(snap, base, &hunks).is_err() {
            return error;
        }
        error.with_conflict(Conflict {
            path: path.to_path_buf(),
            disk: theirs.clone(),
            ranges_after: shift_ranges(&snap.ranges, &hunks),
            ours,
            disk_hash,
            format,
        })
    };
    let on_base = apply_edits(base, edits, format.line_ending);
    let on_theirs = apply_edits(&theirs, edits, format.line_ending);
    let (ours_on_base, after) = match (on_base, on_theirs) {
        (Ok(b), Ok(t)) => (b, t),
        // Fails on both: an ordinary mistake, reported against the current file.
        (Err(_), Err(e)) => return Err(e),
        // Works on what was read only: the outside change took the text the edit replaces.
        (Ok(b), Err(_)) => return Err(conflict(Some(b))),
        // Works on the outside version only: the edit touches text the outside change added.
        (Err(_), Ok(_)) => return Err(conflict(None)),
    };
    check_seen(snap, base, &changes(base, &ours_on_base))?;
    let ours = changes(&theirs, &after);
    let overlaps = ours.iter().any(|o| {
        outside.iter().any(|t| {
            // Both in the coordinates of the disk version; touching ranges count as overlap.
            o.old.start <= t.new.end && t.new.start <= o.old.end
        })
    });
    if overlaps {
        return Err(conflict(Some(ours_on_base)));
    }
    let changed: Vec<String> = outside
        .iter()
        .map(|h| {
            if h.new.is_empty() {
                format!("deleted after line {}", h.new.start)
            } else {
                format!("{}-{}", h.new.start + 1, h.new.end)
            }
        })
        .collect();
    let note = format!(
        "Note: {} was modified outside cairn after you read it (lines {} of the current file changed). Your edit did not overlap that change and was applied to the current version; content around it may differ from what you read.",
        path.display(),
        changed.join(", ")
    );
    // The model has seen only what it wrote; the rest must be read again before more edits.
    let ranges_after = shift_ranges(&[], &ours);
    Ok(Plan {
        path: path.to_path_buf(),
        existed: true,
        before: theirs,
        after,
        format,
        ranges_before: Vec::new(),
        ranges_after,
        notes: vec![note],
        disk_hash: Some(disk_hash),
        spliced: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(old: &str, new: &str, all: bool) -> EditSpec {
        EditSpec {
            old_string: old.into(),
            new_string: new.into(),
            replace_all: all,
            expected_replacements: None,
        }
    }

    #[test]
    fn edits_apply_in_sequence() {
        let out = apply_edits(
            "a b a\n",
            &[spec("a", "c", true), spec("c b", "x", false)],
            LineEnding::Lf,
        )
        .unwrap();
        assert_eq!(out, "x c\n");
    }

    #[test]
    fn crlf_input_is_normalised_for_crlf_files() {
        let out = apply_edits(
            "one\ntwo\n",
            &[spec("one\r\ntwo", "1\r\n2", false)],
            LineEnding::CrLf,
        )
        .unwrap();
        assert_eq!(out, "1\n2\n");
    }

    #[test]
    fn failing_edit_is_named() {
        let err = apply_edits(
            "abc",
            &[spec("a", "x", false), spec("zzz", "y", false)],
            LineEnding::Lf,
        )
        .unwrap_err();
        assert!(err.message.starts_with(
            "Edit 2 of 2 (edits[1]) failed: String to replace not found in file.\nString: zzz"
        ));
    }

    proptest::proptest! {
        #[test]
        fn apply_never_panics(content in "\\PC{0,80}", old in "\\PC{0,10}", new in "\\PC{0,10}", all: bool) {
            let _ = apply_edits(&content, &[spec(&old, &new, all)], LineEnding::Lf);
            let _ = apply_edits(&content, &[spec(&old, &new, all)], LineEnding::CrLf);
        }
    }
}
