//! Editing: [`apply`] performs one NotebookEdit (replace, insert or delete a
//! cell) by splicing the edited cell's text into the original file text,
//! leaving every other byte as it was. This file also owns the cell lookup
//! (by `id` or `cell-N`), the unknown-id message and the ids of new cells.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::scan::{Layout, Span, leading_indent, own_line_indent};
use super::writer::{Style, Writer, source_lines};
use super::{
    Applied, CellType, EditMode, NotebookEdit, cell_id, cell_kind, cells_of, parse_root, split_bom,
};

/// How many existing ids an unknown-id error lists.
const MAX_LISTED_IDS: usize = 10;

/// Apply `edit` to the notebook `text`, returning the new file text.
///
/// Only the edited cell's text changes; the rest of the file is kept byte for byte.
///
/// # Errors
/// A one-line message when `text` is not a notebook, the cell id is missing
/// (replace, delete) or unknown (the message lists up to 10 existing ids), or
/// `cell_type` is missing for an insert.
pub fn apply(text: &str, edit: &NotebookEdit) -> Result<Applied, String> {
    let (bom, body) = split_bom(text);
    let root = parse_root(body)?;
    let layout = Layout::scan(body)?;
    let cells = cells_of(&root);
    if layout.cells.len() != cells.len() {
        return Err("could not locate the notebook's cells in the file text".to_string());
    }
    let doc = Doc {
        text: body,
        root: &root,
        cells,
        style: Style::detect(body),
        layout,
    };
    let applied = match edit.mode {
        EditMode::Replace => doc.replace(edit)?,
        EditMode::Insert => doc.insert(edit)?,
        EditMode::Delete => doc.delete(edit)?,
    };
    Ok(Applied {
        text: format!("{bom}{}", applied.text),
        ..applied
    })
}

/// A notebook being edited: its text, parsed value, layout and style.
struct Doc<'a> {
    text: &'a str,
    root: &'a Value,
    cells: &'a [Value],
    layout: Layout,
    style: Style,
}

impl Doc<'_> {
    fn replace(&self, edit: &NotebookEdit) -> Result<Applied, String> {
        let id = required_id(edit, "replace")?;
        let index = find_cell(self.cells, id)?;
        let original = &self.cells[index];
        let shown_id = cell_id(original, index);
        let mut cell = original
            .as_object()
            .cloned()
            .ok_or_else(|| format!("cell \"{shown_id}\" is not a JSON object"))?;
        let old_kind = cell_kind(original).to_string();
        let new_kind = edit
            .cell_type
            .map_or(old_kind.clone(), |t| t.as_str().to_string());
        set_key(&mut cell, "cell_type", Value::String(new_kind.clone()));
        set_key(&mut cell, "source", source_lines(&edit.new_source));
        if new_kind == "code" {
            cell.shift_remove("attachments");
            set_key(&mut cell, "execution_count", Value::Null);
            set_key(&mut cell, "outputs", Value::Array(Vec::new()));
        } else {
            cell.shift_remove("execution_count");
            cell.shift_remove("outputs");
        }
        let span = self.layout.cells[index];
        let base = self.cell_indent(index);
        let cell_text = Writer::write(&self.style, &base, &Value::Object(cell));
        let mut summary = format!("Replaced the source of cell {shown_id}");
        if new_kind != old_kind {
            summary.push_str(&format!(
                " and changed its type from {old_kind} to {new_kind}"
            ));
        }
        if has_outputs(original) {
            summary.push_str("; its outputs were cleared");
        }
        Ok(Applied {
            text: splice(self.text, span, &cell_text),
            cell_id: shown_id,
            summary,
        })
    }

    fn insert(&self, edit: &NotebookEdit) -> Result<Applied, String> {
        let kind = edit
            .cell_type
            .ok_or("cell_type (code or markdown) is required to insert a cell")?;
        let (position, place) = match given_id(edit) {
            None => (0, "at the start of the notebook".to_string()),
            Some(id) => {
                let index = find_cell(self.cells, id)?;
                let after = cell_id(&self.cells[index], index);
                (index + 1, format!("after cell {after}"))
            }
        };
        let new_id = self
            .uses_ids()
            .then(|| fresh_id(self.cells, &edit.new_source));
        let cell = new_cell(kind, new_id.as_deref(), &edit.new_source);
        let mut summary = format!("Inserted a new {} cell", kind.as_str());
        let shown_id = match new_id {
            Some(id) => id,
            None => {
                summary.push_str(" (ids of the cells after it shift by one)");
                format!("cell-{position}")
            }
        };
        summary = format!("{summary} with id {shown_id} {place}");
        Ok(Applied {
            text: self.insert_text(position, &cell),
            cell_id: shown_id,
            summary,
        })
    }

    fn delete(&self, edit: &NotebookEdit) -> Result<Applied, String> {
        let id = required_id(edit, "delete")?;
        let index = find_cell(self.cells, id)?;
        let cell = &self.cells[index];
        let shown_id = cell_id(cell, index);
        let mut summary = format!("Deleted {} cell {shown_id}", cell_kind(cell));
        if cell.get("id").is_none() {
            summary.push_str(" (ids of the cells after it shift down by one)");
        }
        Ok(Applied {
            text: self.delete_text(index),
            cell_id: shown_id,
            summary,
        })
    }

    /// Whether new cells get an `id` (nbformat >= 4.5, or cells already have ids).
    fn uses_ids(&self) -> bool {
        let version = |key: &str| self.root.get(key).and_then(Value::as_u64).unwrap_or(0);
        let (major, minor) = (version("nbformat"), version("nbformat_minor"));
        major > 4 || (major == 4 && minor >= 5) || self.cells.iter().any(|c| c.get("id").is_some())
    }

    /// Indentation of the line the cell at `index` starts on.
    fn cell_indent(&self, index: usize) -> String {
        let own = self
            .layout
            .cells
            .get(index)
            .and_then(|span| own_line_indent(self.text, span.start));
        match own {
            Some(indent) => indent.to_string(),
            None => self.default_cell_indent(),
        }
    }

    /// The `cells` line's indentation plus one unit.
    fn default_cell_indent(&self) -> String {
        match &self.style.unit {
            Some(unit) => format!(
                "{}{unit}",
                leading_indent(self.text, self.layout.array.start)
            ),
            None => String::new(),
        }
    }

    /// A line break followed by `indent` (nothing in compact files).
    fn line_break(&self, indent: &str) -> String {
        match self.style.unit {
            Some(_) => format!("{}{indent}", self.style.newline),
            None => String::new(),
        }
    }

    fn insert_text(&self, position: usize, cell: &Value) -> String {
        let spans = &self.layout.cells;
        if spans.is_empty() {
            let base = self.default_cell_indent();
            let closing = leading_indent(self.text, self.layout.array.start);
            let cell_text = Writer::write(&self.style, &base, cell);
            let inside = format!(
                "{}{cell_text}{}",
                self.line_break(&base),
                self.line_break(closing)
            );
            return splice(self.text, self.array_inside(), &inside);
        }
        if position == 0 {
            let base = self.cell_indent(0);
            let cell_text = Writer::write(&self.style, &base, cell);
            let at = Span {
                start: spans[0].start,
                end: spans[0].start,
            };
            return splice(
                self.text,
                at,
                &format!("{cell_text},{}", self.line_break(&base)),
            );
        }
        let base = self.cell_indent(position - 1);
        let cell_text = Writer::write(&self.style, &base, cell);
        let end = spans[position - 1].end;
        let at = Span { start: end, end };
        splice(
            self.text,
            at,
            &format!(",{}{cell_text}", self.line_break(&base)),
        )
    }

    fn delete_text(&self, index: usize) -> String {
        let spans = &self.layout.cells;
        let removed = if spans.len() == 1 {
            self.array_inside()
        } else if index == 0 {
            Span {
                start: spans[0].start,
                end: spans[1].start,
            }
        } else {
            Span {
                start: spans[index - 1].end,
                end: spans[index].end,
            }
        };
        splice(self.text, removed, "")
    }

    /// The text between the `cells` array's brackets.
    fn array_inside(&self) -> Span {
        Span {
            start: self.layout.array.start + 1,
            end: self.layout.array.end - 1,
        }
    }
}

fn splice(text: &str, span: Span, replacement: &str) -> String {
    format!("{}{replacement}{}", &text[..span.start], &text[span.end..])
}

fn given_id(edit: &NotebookEdit) -> Option<&str> {
    edit.cell_id.as_deref().filter(|id| !id.is_empty())
}

fn required_id<'a>(edit: &'a NotebookEdit, verb: &str) -> Result<&'a str, String> {
    given_id(edit).ok_or_else(|| format!("cell_id is required to {verb} a cell"))
}

fn has_outputs(cell: &Value) -> bool {
    cell.get("outputs")
        .and_then(Value::as_array)
        .is_some_and(|outputs| !outputs.is_empty())
}

/// The index of the cell with `id`, or of `cell-N`.
fn find_cell(cells: &[Value], id: &str) -> Result<usize, String> {
    let by_id = cells
        .iter()
        .position(|cell| cell.get("id").and_then(Value::as_str) == Some(id));
    by_id
        .or_else(|| index_id(id).filter(|&index| index < cells.len()))
        .ok_or_else(|| unknown_id(cells, id))
}

/// N from `cell-N`.
fn index_id(id: &str) -> Option<usize> {
    let digits = id.strip_prefix("cell-")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn unknown_id(cells: &[Value], id: &str) -> String {
    if cells.is_empty() {
        return format!("cell id \"{id}\" not found: the notebook has no cells");
    }
    let listed: Vec<String> = cells
        .iter()
        .enumerate()
        .take(MAX_LISTED_IDS)
        .map(|(index, cell)| cell_id(cell, index))
        .collect();
    let more = cells.len().saturating_sub(MAX_LISTED_IDS);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "cell id \"{id}\" not found; existing cell ids: {}{more}",
        listed.join(", ")
    )
}

/// Replace `key`'s value in place, or add it where sorted key order puts it.
fn set_key(map: &mut Map<String, Value>, key: &str, value: Value) {
    if let Some(slot) = map.get_mut(key) {
        *slot = value;
        return;
    }
    let index = map
        .keys()
        .position(|existing| existing.as_str() > key)
        .unwrap_or(map.len());
    map.shift_insert(index, key.to_string(), value);
}

/// A new cell with keys in Jupyter's (sorted) order.
fn new_cell(kind: CellType, id: Option<&str>, source: &str) -> Value {
    let mut cell = Map::new();
    cell.insert("cell_type".into(), Value::String(kind.as_str().into()));
    if kind == CellType::Code {
        cell.insert("execution_count".into(), Value::Null);
    }
    if let Some(id) = id {
        cell.insert("id".into(), Value::String(id.into()));
    }
    cell.insert("metadata".into(), Value::Object(Map::new()));
    if kind == CellType::Code {
        cell.insert("outputs".into(), Value::Array(Vec::new()));
    }
    cell.insert("source".into(), source_lines(source));
    Value::Object(cell)
}

/// An 8-hex-digit id, unique in the notebook, derived from its ids and the new source.
fn fresh_id(cells: &[Value], source: &str) -> String {
    let existing: HashSet<&str> = cells
        .iter()
        .filter_map(|cell| cell.get("id").and_then(Value::as_str))
        .collect();
    let mut seed = fnv1a(FNV_OFFSET, source.as_bytes());
    for cell in cells {
        if let Some(id) = cell.get("id").and_then(Value::as_str) {
            seed = fnv1a(seed, id.as_bytes());
        }
    }
    let mut counter = 0u64;
    loop {
        let hash = fnv1a(seed, &counter.to_le_bytes());
        let candidate = format!("{:08x}", (hash ^ (hash >> 32)) as u32);
        if !existing.contains(candidate.as_str()) {
            return candidate;
        }
        counter += 1;
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
