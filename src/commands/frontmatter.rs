//! The YAML frontmatter of skills, agents, commands and output styles, read as YAML (with
//! `serde-saphyr`, under its default budget against alias bombs): block and flow lists, folded
//! (`>-`) and literal (`|`) strings, quotes with their escapes, comments. This module owns the
//! split of a file into its frontmatter and body and the typed reading of one field; each kind
//! (`skills.rs`, `agents.rs`, `mod.rs` for commands, `agent/output_style.rs`) builds its own
//! typed struct from the fields it documents.
//!
//! A field of the wrong shape is never guessed at: it is a notice with the file and line (and
//! the field reads as absent, or, for a tools list, as unreadable: see [`ToolList`]). Keys the
//! kind does not know are a notice too (a misspelt `tool:` would otherwise go unseen). Text that
//! is not YAML at all skips the file, with the parser's line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use serde_saphyr::Spanned;

/// A file's frontmatter, parsed; the notices its fields gave while they were read.
pub struct Front {
    fields: BTreeMap<String, Spanned<Value>>,
    file: PathBuf,
    notices: Vec<String>,
}

/// A list of tools as a field gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolList {
    /// The field is not there.
    Absent,
    /// The tools it names (a comma or space separated string, a block or a flow list).
    Listed(Vec<String>),
    /// The field is there but is not a list of names: it grants nothing (the notice says so).
    Unreadable,
}

impl ToolList {
    /// The names, none when absent or unreadable.
    pub fn names(self) -> Vec<String> {
        match self {
            ToolList::Listed(names) => names,
            ToolList::Absent | ToolList::Unreadable => Vec::new(),
        }
    }
}

/// The YAML between a leading `---` line and the next `---` line, the line the YAML starts on
/// (2), and the body after it; `None` for the YAML when the file has no frontmatter.
/// Err(1), the line of the opening `---`, when the block never closes.
pub fn split(text: &str) -> Result<(Option<&str>, &str), usize> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok((None, text));
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Ok((Some(&rest[..offset]), &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(1)
}

/// The frontmatter and body of `text` (from `file`, a `what`), or why the file is skipped.
pub fn parse<'t>(text: &'t str, file: &Path, what: &str) -> Result<(Front, &'t str), String> {
    let (yaml, body) = split(text).map_err(|line| {
        format!(
            "{}:{line}: the frontmatter (from `---`) is not closed; {what} skipped",
            file.display()
        )
    })?;
    let mut front = Front {
        fields: BTreeMap::new(),
        file: file.to_path_buf(),
        notices: Vec::new(),
    };
    let Some(yaml) = yaml.filter(|y| !y.trim().is_empty()) else {
        return Ok((front, body));
    };
    match fields(yaml) {
        Ok(fields) => front.fields = fields,
        Err(e) => {
            // `description: Use when: the user asks` is not YAML, but real files have it:
            // such plain values are read as the text they are meant to be, with a notice.
            let Some((quoted, lines)) = quote_plain_values(yaml) else {
                return Err(not_yaml(&e, file, what));
            };
            front.fields = fields(&quoted).map_err(|_| not_yaml(&e, file, what))?;
            for line in lines {
                front.notices.push(format!(
                    "{}:{line}: a value with `: ` in it should be quoted in YAML; read as text",
                    file.display()
                ));
            }
        }
    }
    Ok((front, body))
}

fn fields(yaml: &str) -> Result<BTreeMap<String, Spanned<Value>>, serde_saphyr::Error> {
    let options = serde_saphyr::options! { with_snippet: false };
    serde_saphyr::from_str_with_options::<Option<BTreeMap<String, Spanned<Value>>>>(yaml, options)
        .map(Option::unwrap_or_default)
}

fn not_yaml(e: &serde_saphyr::Error, file: &Path, what: &str) -> String {
    // The YAML's lines start on the file's second line.
    let line = e.location().map_or(1, |l| l.line() + 1);
    let message = e.to_string();
    let message = message.lines().next().unwrap_or_default();
    format!(
        "{}:{line}: the frontmatter is not valid YAML ({message}); {what} skipped",
        file.display()
    )
}

/// `yaml` with each top-level `key: plain value` whose value holds `: ` single-quoted, and the
/// file lines changed; `None` when there is no such line.
fn quote_plain_values(yaml: &str) -> Option<(String, Vec<usize>)> {
    let mut out = String::with_capacity(yaml.len() + 16);
    let mut changed = Vec::new();
    for (n, line) in yaml.split_inclusive('\n').enumerate() {
        let content = line.trim_end_matches(['\n', '\r']);
        let plain = content.split_once(": ").filter(|(key, value)| {
            let value = value.trim();
            !key.is_empty()
                && !key.starts_with([' ', '\t', '-', '#'])
                && value.contains(": ")
                && !value.starts_with(['"', '\'', '[', '{', '>', '|', '&', '*', '!'])
        });
        match plain {
            Some((key, value)) => {
                changed.push(n + 2);
                let value = value.trim().replace('\'', "''");
                out.push_str(&format!("{key}: '{value}'\n"));
            }
            None => out.push_str(line),
        }
    }
    (!changed.is_empty()).then_some((out, changed))
}

impl Front {
    /// The file line of `key`'s value.
    fn line(&self, key: &str) -> u64 {
        self.fields.get(key).map_or(1, |v| v.referenced.line() + 1)
    }

    pub fn wrong(&mut self, key: &str, expected: &str, consequence: &str) {
        let line = self.line(key);
        let shape = self.fields.get(key).map_or("nothing", |v| shape(&v.value));
        self.notices.push(format!(
            "{}:{line}: `{key}` should be {expected}, not {shape}; {consequence}",
            self.file.display()
        ));
    }

    /// `key`'s value as YAML gave it, and its file line; for fields of their own shape.
    pub fn raw(&self, key: &str) -> Option<(&Value, u64)> {
        let value = self.fields.get(key)?;
        Some((&value.value, value.referenced.line() + 1))
    }

    /// A notice for `key` at its line (`file:line: message`).
    pub fn notice(&mut self, key: &str, message: &str) {
        let line = self.line(key);
        self.notices
            .push(format!("{}:{line}: {message}", self.file.display()));
    }

    /// The last notice given, taken out (for a problem that skips the file).
    pub fn take_last_notice(&mut self) -> Option<String> {
        self.notices.pop()
    }

    /// Whether `key` is given (whatever its value).
    pub fn has(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }

    /// A text field: a string (or a number, as YAML reads `model: 4`), trimmed, when not empty.
    pub fn text(&mut self, key: &str) -> Option<String> {
        let value = &self.fields.get(key)?.value;
        let text = match value {
            Value::String(s) => s.trim().to_string(),
            Value::Number(n) => n.to_string(),
            Value::Null => return None,
            _ => {
                self.wrong(key, "text", "ignored");
                return None;
            }
        };
        Some(text).filter(|t| !t.is_empty())
    }

    /// A yes/no field: `true`/`false` (quoted or not).
    pub fn flag(&mut self, key: &str) -> Option<bool> {
        match &self.fields.get(key)?.value {
            Value::Bool(b) => Some(*b),
            Value::String(s) if s.trim() == "true" => Some(true),
            Value::String(s) if s.trim() == "false" => Some(false),
            Value::Null => None,
            _ => {
                self.wrong(key, "true or false", "ignored");
                None
            }
        }
    }

    /// A whole number field.
    pub fn count(&mut self, key: &str) -> Option<u32> {
        match &self.fields.get(key)?.value {
            Value::Number(n) if n.as_u64().is_some_and(|n| n <= u64::from(u32::MAX)) => {
                n.as_u64().and_then(|n| u32::try_from(n).ok())
            }
            Value::Null => None,
            _ => {
                self.wrong(key, "a whole number", "ignored");
                None
            }
        }
    }

    /// A list of names: a comma (or space) separated string, or a list of strings. Anything
    /// else is [`ToolList::Unreadable`], with a notice saying `consequence`.
    pub fn names(&mut self, key: &str, consequence: &str) -> ToolList {
        let Some(value) = self.fields.get(key).map(|v| v.value.clone()) else {
            return ToolList::Absent;
        };
        match value {
            Value::String(s) => ToolList::Listed(split_names(&s)),
            Value::Array(items) => {
                let mut names = Vec::new();
                for item in &items {
                    match item {
                        Value::String(s) => names.extend(split_names(s)),
                        _ => {
                            self.wrong(key, "a list of names", consequence);
                            return ToolList::Unreadable;
                        }
                    }
                }
                ToolList::Listed(names)
            }
            _ => {
                self.wrong(key, "a list of names", consequence);
                ToolList::Unreadable
            }
        }
    }

    /// One notice naming those of `keys` that are given: fields Claude Code acts on that cairn
    /// does not (yet), for a `what`.
    pub fn not_applied(&mut self, keys: &[&str], what: &str) {
        let given: Vec<String> = keys
            .iter()
            .filter(|k| self.has(k))
            .map(|k| format!("`{k}`"))
            .collect();
        if !given.is_empty() {
            self.notices.push(format!(
                "{}: cairn does not apply the {what}'s {} yet",
                self.file.display(),
                given.join(", ")
            ));
        }
    }

    /// A notice for every key not in `known`, then all the notices the reading gave.
    pub fn finish(mut self, known: &[&str]) -> Vec<String> {
        for (key, value) in &self.fields {
            if !known.contains(&key.as_str()) {
                self.notices.push(format!(
                    "{}:{}: unknown frontmatter field `{key}` ignored",
                    self.file.display(),
                    value.referenced.line() + 1
                ));
            }
        }
        self.notices
    }
}

/// How a value is shaped, for a notice.
fn shape(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// `Read, Grep`, `Read Grep` or `Bash(git add *), Read`: names split at commas and at spaces
/// outside parentheses.
pub fn split_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut current)),
            c if c.is_whitespace() && depth == 0 => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    out.push(current);
    out.into_iter()
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

#[cfg(test)]
#[path = "frontmatter_tests.rs"]
mod tests;
