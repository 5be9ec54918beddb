//! Jupyter notebooks (`.ipynb`, nbformat 4): reading them for the model and
//! editing them for the NotebookEdit tool.
//!
//! [`Notebook`] renders a notebook as tagged text (cell ids, types, sources and
//! text outputs, with ANSI escapes removed and long outputs cut) and lists the
//! PNG / JPEG images of its outputs. [`apply`] performs one edit (replace,
//! insert or delete a cell) with Claude Code's NotebookEdit semantics and
//! returns the new file text. Edits are spliced into the original text: only
//! the edited cell's lines change, and the cell itself is written the way
//! Jupyter writes it (`json.dumps(indent=1, ensure_ascii=False)`, keys in
//! their stored order, Python's float spelling, source as a list of lines),
//! with the file's own indentation unit and line ending. Cells without an `id`
//! (nbformat < 4.5) are addressed as `cell-N` (0-based index).
//!
//! This file owns the public types, the reading entry point [`Notebook`] and
//! the helpers that parse a notebook and reach into its cells. The rest lives
//! in submodules: `render` (the text the model reads), `edit` ([`apply`] and
//! the splicing of one cell's text), `scan` (locating the cells in the file
//! text) and `writer` (serializing JSON the way Jupyter does).

mod edit;
mod render;
mod scan;
#[cfg(test)]
mod tests;
mod writer;

pub use self::edit::apply;

use serde_json::{Map, Value};

/// Media types returned by [`Notebook::images`].
const IMAGE_TYPES: [&str; 2] = ["image/png", "image/jpeg"];

/// A notebook parsed for reading.
pub struct Notebook {
    root: Value,
    language: String,
}

/// One image found in a cell's outputs (base64 as stored in the notebook, whitespace removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputImage {
    /// The id of the cell whose output holds the image (`cell-N` when cells have no ids).
    pub cell_id: String,
    /// `image/png` or `image/jpeg`.
    pub media_type: String,
    /// The image data, base64-encoded, without whitespace.
    pub base64: String,
}

impl Notebook {
    /// Parse; a file that is not JSON or not a notebook (no `cells` array) gives a one-line message.
    ///
    /// # Errors
    /// A one-line message when `text` is not JSON or has no `cells` array.
    pub fn parse(text: &str) -> Result<Notebook, String> {
        let root = parse_root(split_bom(text).1)?;
        let language = notebook_language(&root);
        Ok(Notebook { root, language })
    }

    /// The notebook as the model reads it: for each cell, a header line
    /// `<cell id="ID"> (cell_type, [execution_count N])` then its source, then its text outputs
    /// (stream text, text/plain of execute_result/display_data, errors as "ename: evalue" plus traceback
    /// with ANSI escapes removed), then `</cell>`. Long outputs are cut to 10,000 chars per cell with a note.
    /// Cells without an `id` (nbformat < 4.5) get the id `cell-N` (0-based index), which `apply`
    /// accepts too.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (index, cell) in self.cells().iter().enumerate() {
            render::render_cell(&mut out, index, cell, &self.language);
        }
        out
    }

    /// PNG / JPEG images of outputs (image/png, image/jpeg), in order.
    pub fn images(&self) -> Vec<OutputImage> {
        let mut images = Vec::new();
        for (index, cell) in self.cells().iter().enumerate() {
            for data in output_data(cell) {
                for (media_type, value) in data {
                    if !IMAGE_TYPES.contains(&media_type.as_str()) {
                        continue;
                    }
                    let base64: String = join_text(Some(value))
                        .chars()
                        .filter(|c| !c.is_whitespace())
                        .collect();
                    if !base64.is_empty() {
                        images.push(OutputImage {
                            cell_id: cell_id(cell, index),
                            media_type: media_type.clone(),
                            base64,
                        });
                    }
                }
            }
        }
        images
    }

    /// The number of cells.
    pub fn cell_count(&self) -> usize {
        self.cells().len()
    }

    fn cells(&self) -> &[Value] {
        cells_of(&self.root)
    }
}

/// What an edit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditMode {
    /// Replace the source (and optionally the type) of an existing cell.
    Replace,
    /// Insert a new cell after the given cell, or at the start without one.
    Insert,
    /// Delete a cell.
    Delete,
}

/// The type of a cell written by an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellType {
    /// A code cell (has outputs and an execution count).
    Code,
    /// A markdown cell.
    Markdown,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
        }
    }
}

/// One NotebookEdit.
#[derive(Debug, Clone)]
pub struct NotebookEdit {
    /// The target cell (its `id`, or `cell-N`); for insert, the cell to insert after
    /// (`None`: insert at the start). Required for replace and delete.
    pub cell_id: Option<String>,
    /// The new source (replace, insert); ignored by delete.
    pub new_source: String,
    /// The cell type: required for insert, optional for replace (keeps the type when `None`).
    pub cell_type: Option<CellType>,
    /// Replace, insert or delete.
    pub mode: EditMode,
}

/// What an edit did, for the tool's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The new notebook file text.
    pub text: String,
    /// The id of the replaced, inserted or deleted cell.
    pub cell_id: String,
    /// One sentence describing the edit.
    pub summary: String,
}

// ---------------------------------------------------------------------------
// Parsing and cell access

fn split_bom(text: &str) -> (&str, &str) {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    }
}

fn parse_root(text: &str) -> Result<Value, String> {
    let root: Value = serde_json::from_str(text)
        .map_err(|e| format!("not a valid notebook: invalid JSON ({e})"))?;
    match root.get("cells") {
        Some(Value::Array(_)) => Ok(root),
        _ if root.get("worksheets").is_some() => Err(
            "unsupported notebook: nbformat 3 (worksheets); only nbformat 4 is supported".into(),
        ),
        _ => Err("not a Jupyter notebook: no \"cells\" array".into()),
    }
}

fn cells_of(root: &Value) -> &[Value] {
    root.get("cells")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn notebook_language(root: &Value) -> String {
    let metadata = root.get("metadata");
    let from_info = metadata
        .and_then(|m| m.get("language_info"))
        .and_then(|l| l.get("name"));
    let from_kernel = metadata
        .and_then(|m| m.get("kernelspec"))
        .and_then(|k| k.get("language"));
    from_info
        .or(from_kernel)
        .and_then(Value::as_str)
        .unwrap_or("python")
        .to_string()
}

/// The cell's `id`, or `cell-N` for cells without one.
fn cell_id(cell: &Value, index: usize) -> String {
    match cell.get("id").and_then(Value::as_str) {
        Some(id) => id.to_string(),
        None => format!("cell-{index}"),
    }
}

fn cell_kind(cell: &Value) -> &str {
    cell.get("cell_type")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
}

/// A multiline string as Jupyter stores it: a string or a list of strings.
fn join_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// The `data` bundles of a cell's execute_result / display_data outputs.
fn output_data(cell: &Value) -> impl Iterator<Item = &Map<String, Value>> {
    cell.get("outputs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|output| output.get("data")?.as_object())
}
