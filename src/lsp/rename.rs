//! The LSP tool's `rename`: the language server's `WorkspaceEdit` turned into one change to
//! several files, which the person reviews like an Edit (one approval for the set, per-hunk
//! choice per file) and cairn writes all or nothing.
//!
//! Planning ([`plan`]) asks the server and applies its text edits to each file's current text
//! on disk (positions in UTF-16 code units, as the protocol counts them); nothing is written.
//! An edit that creates, renames or deletes files, overlaps another, or points past the end of
//! its file refuses the whole rename. Committing ([`commit`]) holds the session's write lock,
//! checks that every file still holds the very bytes the plan read (else nothing is written),
//! then writes each file atomically in its own encoding and line endings; if a later write
//! fails, the files already written are put back as they were.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_lsp::lsp_types::request::Rename;
use async_lsp::lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, Position, RenameParams, TextDocumentEdit,
    TextDocumentPositionParams, TextEdit, WorkspaceEdit,
};

use super::server::{LspError, Server};
use crate::files::atomic::write_atomic;
use crate::files::encoding::{self, TextFormat};
use crate::files::state::{ReadFileState, WriteRecord, content_hash};
use crate::protocol::{EditedFile, FileTexts};
use crate::tools::diff_snippet::shift_ranges;

/// One file of a planned rename.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedFile {
    pub path: PathBuf,
    /// Logical text (`\n` line endings) before and after.
    pub before: String,
    pub after: String,
    format: TextFormat,
    /// [`content_hash`] of the bytes the plan read.
    disk_hash: u64,
}

impl PlannedFile {
    pub fn diff(&self) -> FileTexts {
        FileTexts {
            path: self.path.clone(),
            before: self.before.clone(),
            after: self.after.clone(),
        }
    }
}

/// Ask the server to rename the symbol at `at` to `new_name`, and plan the change: each file's
/// text with the server's edits applied, in path order. `Ok(empty)` when the server has
/// nothing to rename there.
pub async fn plan(
    server: &Server,
    at: TextDocumentPositionParams,
    new_name: &str,
) -> Result<Vec<PlannedFile>, LspError> {
    let answer = server
        .request::<Rename>(RenameParams {
            text_document_position: at,
            new_name: new_name.to_string(),
            work_done_progress_params: Default::default(),
        })
        .await?;
    let Some(edit) = answer else {
        return Ok(Vec::new());
    };
    let mut planned = Vec::new();
    for (path, edits) in edits_by_file(edit)? {
        planned.push(plan_file(&path, edits)?);
    }
    Ok(planned)
}

/// The text edits of a `WorkspaceEdit`, by file. Resource operations are refused: the client
/// declares no support for them, and a rename that moves files needs more than a review of
/// text.
fn edits_by_file(edit: WorkspaceEdit) -> Result<BTreeMap<PathBuf, Vec<TextEdit>>, LspError> {
    let mut by_file: BTreeMap<PathBuf, Vec<TextEdit>> = BTreeMap::new();
    let mut add = |uri: &async_lsp::lsp_types::Url, edits: Vec<TextEdit>| {
        let path = uri
            .to_file_path()
            .map_err(|()| LspError(format!("the server's rename names a non-file URI: {uri}")))?;
        by_file.entry(path).or_default().extend(edits);
        Ok::<_, LspError>(())
    };
    let document_edit = |d: TextDocumentEdit| {
        let edits = d.edits.into_iter().map(|e| match e {
            OneOf::Left(e) => e,
            OneOf::Right(annotated) => annotated.text_edit,
        });
        (d.text_document.uri, edits.collect::<Vec<_>>())
    };
    match edit.document_changes {
        Some(DocumentChanges::Edits(docs)) => {
            for d in docs {
                let (uri, edits) = document_edit(d);
                add(&uri, edits)?;
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                match op {
                    DocumentChangeOperation::Edit(d) => {
                        let (uri, edits) = document_edit(d);
                        add(&uri, edits)?;
                    }
                    DocumentChangeOperation::Op(_) => {
                        return Err(LspError(
                            "the server's rename also creates, renames or deletes files, which \
                             cairn does not apply; nothing was changed"
                                .into(),
                        ));
                    }
                }
            }
        }
        None => {
            for (uri, edits) in edit.changes.unwrap_or_default() {
                add(&uri, edits)?;
            }
        }
    }
    by_file.retain(|_, edits| !edits.is_empty());
    Ok(by_file)
}

/// `path`'s current text with `edits` applied.
fn plan_file(path: &Path, edits: Vec<TextEdit>) -> Result<PlannedFile, LspError> {
    let bytes = std::fs::read(path)
        .map_err(|e| LspError(format!("cannot read {}: {e}", path.display())))?;
    if encoding::looks_binary(&bytes) {
        return Err(LspError(format!(
            "{} is not a text file; nothing was changed",
            path.display()
        )));
    }
    let disk_hash = content_hash(&bytes);
    let raw = String::from_utf8(bytes).map_err(|_| {
        LspError(format!(
            "{} is not UTF-8, which the server's positions assume; nothing was changed",
            path.display()
        ))
    })?;
    let renamed = apply(&raw, edits)
        .map_err(|why| LspError(format!("the server's edit of {}: {why}", path.display())))?;
    let before = encoding::decode_owned(raw.into_bytes());
    let after = encoding::decode_owned(renamed.into_bytes());
    Ok(PlannedFile {
        path: path.to_path_buf(),
        before: before.text,
        after: after.text,
        format: before.format,
        disk_hash,
    })
}

/// `text` with `edits` applied (all positions refer to `text` as it is; none may overlap).
pub fn apply(text: &str, mut edits: Vec<TextEdit>) -> Result<String, String> {
    let mut spans = Vec::with_capacity(edits.len());
    for e in edits.drain(..) {
        let start = offset(text, e.range.start).ok_or("a position past the end of the file")?;
        let end = offset(text, e.range.end).ok_or("a position past the end of the file")?;
        if end < start {
            return Err("a range that ends before it starts".into());
        }
        spans.push((start, end, e.new_text));
    }
    spans.sort_by_key(|(start, end, _)| (*start, *end));
    if spans.windows(2).any(|w| w[1].0 < w[0].1) {
        return Err("overlapping edits".into());
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, new_text) in spans {
        out.push_str(&text[at..start]);
        out.push_str(&new_text);
        at = end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// The byte offset of a protocol position in `text`: `line` counts `\n`-ended lines, and
/// `character` UTF-16 code units into the line (clamped to the line's end, as the protocol
/// says). `None` for a line past the last.
fn offset(text: &str, pos: Position) -> Option<usize> {
    let mut line_start = 0;
    for _ in 0..pos.line {
        line_start += text[line_start..].find('\n')? + 1;
    }
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let line = text[line_start..line_end].trim_end_matches('\r');
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= pos.character {
            return Some(line_start + i);
        }
        units += c.len_utf16() as u32;
    }
    Some(line_start + line.len())
}

/// Write the approved rename: `planned` as planned, with the person's own version of a file
/// where `edited` has one. Refused, with nothing written, when any file changed since it was
/// planned; written all or nothing otherwise. Returns each file's path with its logical text
/// before and as written.
pub fn commit(
    state: &ReadFileState,
    planned: &[PlannedFile],
    edited: &[EditedFile],
    call_id: &str,
) -> Result<Vec<FileTexts>, String> {
    let _guard = state.lock_writes();
    for p in planned {
        let now = std::fs::read(&p.path).ok().map(|b| content_hash(&b));
        if now != Some(p.disk_hash) {
            return Err(format!(
                "{} changed after the rename was planned; nothing was written. Ask for the \
                 rename again.",
                p.path.display()
            ));
        }
    }
    let mut written: Vec<(&PlannedFile, String)> = Vec::new();
    for p in planned {
        let text = edited
            .iter()
            .find(|e| e.path == p.path)
            .map_or_else(|| p.after.clone(), |e| e.content.clone());
        if text == p.before {
            continue;
        }
        // What the model saw of the file moves with the change, and it knows the renamed
        // lines, as after its own edit.
        let seen = state.get(&p.path).map(|s| s.ranges).unwrap_or_default();
        let ranges = shift_ranges(&seen, &crate::diff::changes(&p.before, &text));
        if let Err(e) = write_recorded(state, p, &text, ranges, Some(call_id)) {
            let undone = undo(state, &written);
            return Err(format!(
                "Could not write {}: {e}. {undone}",
                p.path.display()
            ));
        }
        written.push((p, text));
    }
    Ok(written
        .into_iter()
        .map(|(p, text)| FileTexts {
            path: p.path.clone(),
            before: p.before.clone(),
            after: text,
        })
        .collect())
}

/// Write `text` to `p`'s file atomically in its format, and record the write in `state`.
fn write_recorded(
    state: &ReadFileState,
    p: &PlannedFile,
    text: &str,
    ranges: Vec<(usize, usize)>,
    call_id: Option<&str>,
) -> std::io::Result<()> {
    let bytes = encoding::encode(text, p.format);
    let stamp = write_atomic(&p.path, &bytes)?;
    state.record_write(
        &p.path,
        WriteRecord {
            content: Some(Arc::from(text)),
            mtime: stamp.mtime,
            size: stamp.size,
            hash: content_hash(&bytes),
            format: p.format,
            ranges,
            call_id: call_id.map(str::to_string),
        },
    );
    Ok(())
}

/// Put back the files a failed rename already wrote; says what happened.
fn undo(state: &ReadFileState, written: &[(&PlannedFile, String)]) -> String {
    if written.is_empty() {
        return "Nothing was written.".into();
    }
    let mut failed = Vec::new();
    for (p, _) in written {
        if write_recorded(state, p, &p.before, Vec::new(), None).is_err() {
            failed.push(p.path.display().to_string());
        }
    }
    if failed.is_empty() {
        "The files already renamed were put back as they were.".into()
    } else {
        format!(
            "These files were renamed and could not be put back: {}",
            failed.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_lsp::lsp_types::Range;

    fn edit(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextEdit {
        TextEdit::new(
            Range::new(Position::new(l0, c0), Position::new(l1, c1)),
            text.into(),
        )
    }

    #[test]
    fn edits_apply_in_utf16_units_from_the_end_back() {
        let text = "let é = 1;\r\nuse(é); // 😀 é\n";
        // `é` is one UTF-16 unit; `😀` two.
        let edits = vec![
            edit(1, 4, 1, 5, "name"),
            edit(0, 4, 0, 5, "name"),
            edit(1, 14, 1, 15, "name"),
        ];
        assert_eq!(
            apply(text, edits).unwrap(),
            "let name = 1;\r\nuse(name); // 😀 name\n"
        );
    }

    #[test]
    fn bad_edits_refuse_the_whole_rename() {
        let text = "a\nb\n";
        assert!(apply(text, vec![edit(0, 0, 0, 1, "x"), edit(0, 0, 0, 1, "y")]).is_err());
        assert!(apply(text, vec![edit(5, 0, 5, 1, "x")]).is_err());
        assert!(apply(text, vec![edit(1, 1, 1, 0, "x")]).is_err());
        // A character past the line's end means its end; the line after the last, the end.
        assert_eq!(apply(text, vec![edit(0, 9, 0, 9, "!")]).unwrap(), "a!\nb\n");
        assert_eq!(apply(text, vec![edit(2, 0, 2, 0, "c")]).unwrap(), "a\nb\nc");
    }

    #[test]
    fn a_file_changed_since_the_plan_stops_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.py"), dir.path().join("b.py"));
        std::fs::write(&a, "old = 1\n").unwrap();
        std::fs::write(&b, "print(old)\n").unwrap();
        let plan_of = |path: &Path, edits| plan_file(path, edits).unwrap();
        let planned = vec![
            plan_of(&a, vec![edit(0, 0, 0, 3, "new")]),
            plan_of(&b, vec![edit(0, 6, 0, 9, "new")]),
        ];
        std::fs::write(&b, "print(old)  # touched\n").unwrap();
        let state = ReadFileState::with_content_limit(1 << 20);
        let refused = commit(&state, &planned, &[], "r1").unwrap_err();
        assert!(
            refused.contains("b.py changed after the rename"),
            "{refused}"
        );
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old = 1\n");

        std::fs::write(&b, "print(old)\n").unwrap();
        let kept = EditedFile {
            path: b.clone(),
            content: "print(old)\n".into(),
        };
        let done = commit(&state, &planned, &[kept], "r1").unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new = 1\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "print(old)\n");
        assert_eq!(done.len(), 1, "the file the person kept is not written");
    }
}
