//! The notebook as the model reads it: each cell's header, source and text
//! outputs (stream text, `text/plain` results, errors with their traceback),
//! with ANSI escapes removed, carriage-return progress bars collapsed and each
//! cell's output cut to a character budget.

use serde_json::Value;

use super::{IMAGE_TYPES, cell_id, cell_kind, join_text};

/// Characters of output text shown per cell before it is cut.
const OUTPUT_BUDGET: usize = 10_000;

pub(super) fn render_cell(out: &mut String, index: usize, cell: &Value, language: &str) {
    let kind = cell_kind(cell);
    let mut details = kind.to_string();
    if kind == "code" && language != "python" {
        details.push_str(&format!(", language {language}"));
    }
    if let Some(count) = cell.get("execution_count").and_then(Value::as_i64) {
        details.push_str(&format!(", execution_count {count}"));
    }
    out.push_str(&format!(
        "<cell id=\"{}\"> ({details})\n",
        cell_id(cell, index)
    ));
    push_block(out, &join_text(cell.get("source")));
    render_outputs(out, cell.get("outputs"));
    out.push_str("</cell>\n");
}

/// Append `text`, ending it with a newline.
fn push_block(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
}

/// How much output text a cell may still show.
struct Budget {
    remaining: usize,
    omitted: usize,
}

impl Budget {
    /// The part of `text` that fits; the rest is counted as omitted.
    fn take<'a>(&mut self, text: &'a str) -> &'a str {
        let length = text.chars().count();
        if length <= self.remaining {
            self.remaining -= length;
            return text;
        }
        let cut = text
            .char_indices()
            .nth(self.remaining)
            .map_or(text.len(), |(i, _)| i);
        self.omitted += length - self.remaining;
        self.remaining = 0;
        &text[..cut]
    }
}

fn render_outputs(out: &mut String, outputs: Option<&Value>) {
    let Some(outputs) = outputs.and_then(Value::as_array) else {
        return;
    };
    let mut budget = Budget {
        remaining: OUTPUT_BUDGET,
        omitted: 0,
    };
    for output in outputs {
        let (attributes, text) = output_text(output);
        let shown = budget.take(&text);
        if shown.is_empty() {
            continue;
        }
        out.push_str(&format!("<output{attributes}>\n"));
        push_block(out, shown);
        out.push_str("</output>\n");
    }
    if budget.omitted > 0 {
        out.push_str(&format!(
            "[output truncated: {} more characters not shown]\n",
            budget.omitted
        ));
    }
}

/// The tag attributes and text of one output.
fn output_text(output: &Value) -> (&'static str, String) {
    let kind = output.get("output_type").and_then(Value::as_str);
    match kind {
        Some("stream") => {
            let stderr = output.get("name").and_then(Value::as_str) == Some("stderr");
            let text = terminal_text(&join_text(output.get("text")));
            (if stderr { " stream=\"stderr\"" } else { "" }, text)
        }
        Some("execute_result" | "display_data") => ("", rich_text(output.get("data"))),
        Some("error") => (" type=\"error\"", error_text(output)),
        _ => ("", String::new()),
    }
}

/// text/plain of a data bundle, plus placeholders for images and text-less outputs.
fn rich_text(data: Option<&Value>) -> String {
    let Some(data) = data.and_then(Value::as_object) else {
        return String::new();
    };
    let mut text = String::new();
    if let Some(plain) = data.get("text/plain") {
        push_block(&mut text, &terminal_text(&join_text(Some(plain))));
    }
    for media_type in data.keys() {
        if IMAGE_TYPES.contains(&media_type.as_str()) {
            text.push_str(&format!("[{media_type} image output, not shown as text]\n"));
        }
    }
    if text.is_empty() && !data.is_empty() {
        let types: Vec<&str> = data.keys().map(String::as_str).collect();
        text = format!("[output of type {}, not shown as text]\n", types.join(", "));
    }
    text
}

fn error_text(output: &Value) -> String {
    let field = |name: &str| output.get(name).and_then(Value::as_str).unwrap_or("");
    let mut text = format!("{}: {}\n", field("ename"), field("evalue"));
    let traceback = output.get("traceback").and_then(Value::as_array);
    let lines: Vec<String> = traceback
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|item| terminal_text(item).trim_end_matches('\n').to_string())
        .collect();
    push_block(&mut text, &lines.join("\n"));
    text
}

/// Terminal output as a reader would see it: no ANSI escapes, and carriage
/// returns (progress bars) applied.
pub(super) fn terminal_text(text: &str) -> String {
    collapse_carriage_returns(&strip_ansi(text))
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        super::super::ansi::skip_escape(&mut chars);
    }
    out
}

/// Keep, on each line, only what follows its last carriage return.
fn collapse_carriage_returns(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let body = body.trim_end_matches('\r');
        out.push_str(body.rsplit('\r').next().unwrap_or(body));
        out.push_str(newline);
    }
    out
}
