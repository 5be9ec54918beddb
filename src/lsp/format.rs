//! Server answers as compact text the model can act on: locations as `path:line:col` with the
//! line's text, grouped by file and capped with a count of the rest; hover text as the server
//! wrote it; symbols as an indented outline; callers and callees with where the calls are.
//! Lines and columns are 1-based and count characters, as an editor shows them (the protocol's
//! are 0-based UTF-16 units). A location in a path the deny rules forbid reading is withheld
//! and counted; a file outside the working directories is named without its line's text.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use async_lsp::lsp_types::{
    CallHierarchyIncomingCall, CallHierarchyItem, CallHierarchyOutgoingCall, Diagnostic,
    DiagnosticSeverity, DocumentSymbol, DocumentSymbolResponse, Hover, HoverContents, Location,
    MarkedString, OneOf, Position, SymbolInformation, Url, WorkspaceSymbolResponse,
};

use crate::permissions::ReadGuard;

/// Locations shown before the rest are only counted.
pub const MAX_LOCATIONS: usize = 100;
/// Symbols shown before the rest are only counted.
pub const MAX_SYMBOLS: usize = 300;

/// Renders one call's answer; remembers the files it read and what it withheld.
pub struct Render<'a> {
    cwd: &'a Path,
    working: &'a [PathBuf],
    guard: &'a ReadGuard,
    lines: HashMap<PathBuf, Option<Vec<String>>>,
    /// Results left out because a deny rule covers their path.
    pub withheld: usize,
}

impl<'a> Render<'a> {
    pub fn new(cwd: &'a Path, working: &'a [PathBuf], guard: &'a ReadGuard) -> Render<'a> {
        Render {
            cwd,
            working,
            guard,
            lines: HashMap::new(),
            withheld: 0,
        }
    }

    /// The path of `uri` when it may be shown (a file path no deny rule covers); counts a
    /// withheld one.
    fn allowed(&mut self, uri: &Url) -> Option<PathBuf> {
        let path = uri.to_file_path().ok()?;
        if self.guard.denied(&path) {
            self.withheld += 1;
            return None;
        }
        Some(path)
    }

    /// `path` as the model should write it: relative to the working directory when inside.
    pub fn show_path(&self, path: &Path) -> String {
        match path.strip_prefix(self.cwd) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => path.display().to_string(),
        }
    }

    /// The file's lines, when it is inside the working directories and readable.
    fn file_lines(&mut self, path: &Path) -> Option<&Vec<String>> {
        if !self.lines.contains_key(path) {
            let inside = self.working.iter().any(|d| path.starts_with(d));
            let lines = inside
                .then(|| std::fs::read_to_string(path).ok())
                .flatten()
                .map(|t| t.lines().map(str::to_string).collect());
            self.lines.insert(path.to_path_buf(), lines);
        }
        self.lines.get(path).and_then(Option::as_ref)
    }

    /// `line:col`, 1-based, the column in characters.
    fn line_col(&mut self, path: &Path, pos: Position) -> String {
        let col = match self.file_lines(path).and_then(|l| l.get(pos.line as usize)) {
            Some(text) => char_column(text, pos.character) + 1,
            None => pos.character as usize + 1,
        };
        format!("{}:{col}", pos.line + 1)
    }

    fn line_text(&mut self, path: &Path, line: u32) -> Option<String> {
        self.file_lines(path)
            .and_then(|l| l.get(line as usize))
            .map(|t| t.trim().chars().take(200).collect())
    }

    /// Locations grouped by file (files in order of first appearance, lines in order).
    pub fn locations(&mut self, what: &str, locations: Vec<Location>) -> String {
        let mut by_file: Vec<(PathBuf, Vec<Position>)> = Vec::new();
        for loc in locations {
            let Some(path) = self.allowed(&loc.uri) else {
                continue;
            };
            match by_file.iter_mut().find(|(p, _)| *p == path) {
                Some((_, positions)) => positions.push(loc.range.start),
                None => by_file.push((path, vec![loc.range.start])),
            }
        }
        let total: usize = by_file.iter().map(|(_, p)| p.len()).sum();
        if total == 0 {
            return format!("No {what} found.");
        }
        let files = by_file.len();
        let mut out = format!(
            "Found {total} {what}{} in {files} file{}:\n",
            plural(total),
            plural(files)
        );
        let mut shown = 0;
        let mut files_left = 0;
        for (path, mut positions) in by_file {
            if shown >= MAX_LOCATIONS {
                files_left += 1;
                continue;
            }
            positions.sort_by_key(|p| (p.line, p.character));
            positions.dedup();
            let _ = write!(out, "\n{}:\n", self.show_path(&path));
            for pos in positions {
                if shown >= MAX_LOCATIONS {
                    break;
                }
                shown += 1;
                let at = self.line_col(&path, pos);
                match self.line_text(&path, pos.line) {
                    Some(text) => {
                        let _ = writeln!(out, "  {at}: {text}");
                    }
                    None => {
                        let _ = writeln!(out, "  {at}");
                    }
                }
            }
        }
        if shown < total {
            let _ = write!(
                out,
                "\n… and {} more{}.\n",
                total - shown,
                if files_left > 0 {
                    format!(" (in {files_left} more file{} as well)", plural(files_left))
                } else {
                    String::new()
                }
            );
        }
        out
    }

    /// `Function greet — src/lib.py:3:5`.
    fn item(
        &mut self,
        kind: impl std::fmt::Debug,
        name: &str,
        uri: &Url,
        pos: Position,
    ) -> Option<String> {
        let path = self.allowed(uri)?;
        let at = self.line_col(&path, pos);
        Some(format!("{kind:?} {name} — {}:{at}", self.show_path(&path)))
    }

    /// The outline of one document.
    pub fn document_symbols(
        &mut self,
        path: &Path,
        answer: Option<DocumentSymbolResponse>,
    ) -> String {
        let mut out = String::new();
        let mut count = 0;
        match answer {
            Some(DocumentSymbolResponse::Nested(symbols)) => {
                self.outline(path, &symbols, 0, &mut out, &mut count);
            }
            Some(DocumentSymbolResponse::Flat(symbols)) => {
                for s in symbols {
                    count += 1;
                    if count > MAX_SYMBOLS {
                        continue;
                    }
                    let at = self.line_col(path, s.location.range.start);
                    let indent = if s.container_name.is_some() { "  " } else { "" };
                    let _ = writeln!(out, "{indent}{:?} {} ({at})", s.kind, s.name);
                }
            }
            None => {}
        }
        if count == 0 {
            return format!("No symbols found in {}.", self.show_path(path));
        }
        let mut head = format!("Symbols in {}:\n", self.show_path(path));
        head.push_str(&out);
        if count > MAX_SYMBOLS {
            let _ = writeln!(head, "… and {} more symbols.", count - MAX_SYMBOLS);
        }
        head
    }

    fn outline(
        &mut self,
        path: &Path,
        symbols: &[DocumentSymbol],
        depth: usize,
        out: &mut String,
        count: &mut usize,
    ) {
        for s in symbols {
            *count += 1;
            if *count <= MAX_SYMBOLS {
                let at = self.line_col(path, s.selection_range.start);
                let detail = s
                    .detail
                    .as_deref()
                    .filter(|d| !d.is_empty())
                    .map(|d| format!(" {}", d.lines().next().unwrap_or("")))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{}{:?} {}{detail} ({at})",
                    "  ".repeat(depth),
                    s.kind,
                    s.name
                );
            }
            if let Some(children) = &s.children {
                self.outline(path, children, depth + 1, out, count);
            }
        }
    }

    pub fn workspace_symbols(
        &mut self,
        query: &str,
        answer: Option<WorkspaceSymbolResponse>,
    ) -> String {
        let mut lines = Vec::new();
        match answer {
            Some(WorkspaceSymbolResponse::Flat(symbols)) => {
                for SymbolInformation {
                    name,
                    kind,
                    location,
                    ..
                } in symbols
                {
                    lines.extend(self.item(kind, &name, &location.uri, location.range.start));
                }
            }
            Some(WorkspaceSymbolResponse::Nested(symbols)) => {
                for s in symbols {
                    let (uri, pos) = match &s.location {
                        OneOf::Left(loc) => (loc.uri.clone(), loc.range.start),
                        OneOf::Right(w) => (w.uri.clone(), Position::default()),
                    };
                    lines.extend(self.item(s.kind, &s.name, &uri, pos));
                }
            }
            None => {}
        }
        self.list("symbol", &format!(" matching \"{query}\""), lines)
    }

    /// `lines` under a count of `noun`s (`Found 1 symbol matching "x":`), capped.
    fn list(&self, noun: &str, tail: &str, lines: Vec<String>) -> String {
        if lines.is_empty() {
            return format!("No {noun}s{tail} found.");
        }
        let s = if lines.len() == 1 { "" } else { "s" };
        let mut out = format!("Found {} {noun}{s}{tail}:\n", lines.len());
        for l in lines.iter().take(MAX_LOCATIONS) {
            let _ = writeln!(out, "  {l}");
        }
        if lines.len() > MAX_LOCATIONS {
            let _ = writeln!(out, "… and {} more.", lines.len() - MAX_LOCATIONS);
        }
        out
    }

    pub fn call_items(&mut self, items: Vec<CallHierarchyItem>) -> String {
        let lines = items
            .iter()
            .filter_map(|i| self.item(i.kind, &i.name, &i.uri, i.selection_range.start))
            .collect();
        self.list("call hierarchy item", "", lines)
    }

    /// Who calls `of`, each with the lines of its calls.
    pub fn incoming(&mut self, of: &str, calls: Vec<CallHierarchyIncomingCall>) -> String {
        let mut lines = Vec::new();
        for call in calls {
            let Some(head) = self.item(
                call.from.kind,
                &call.from.name,
                &call.from.uri,
                call.from.selection_range.start,
            ) else {
                continue;
            };
            let sites = self.sites(&call.from.uri, &call.from_ranges);
            lines.push(format!("{head} (calls at {sites})"));
        }
        self.list("caller", &format!(" of {of}"), lines)
    }

    /// What `from` calls, each with where `from` calls it.
    pub fn outgoing(
        &mut self,
        from: &CallHierarchyItem,
        calls: Vec<CallHierarchyOutgoingCall>,
    ) -> String {
        let mut lines = Vec::new();
        for call in calls {
            let Some(head) = self.item(
                call.to.kind,
                &call.to.name,
                &call.to.uri,
                call.to.selection_range.start,
            ) else {
                continue;
            };
            let sites = self.sites(&from.uri, &call.from_ranges);
            lines.push(format!("{head} (called at {sites})"));
        }
        self.list("call", &format!(" made by {}", from.name), lines)
    }

    fn sites(&mut self, uri: &Url, ranges: &[async_lsp::lsp_types::Range]) -> String {
        let Ok(path) = uri.to_file_path() else {
            return "?".into();
        };
        ranges
            .iter()
            .map(|r| self.line_col(&path, r.start))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The withheld count as a sentence, or nothing.
    pub fn withheld_note(&self) -> Option<String> {
        (self.withheld > 0).then(|| {
            format!(
                "({} result{} in paths that permission rules deny reading {} withheld.)",
                self.withheld,
                plural(self.withheld),
                if self.withheld == 1 { "was" } else { "were" }
            )
        })
    }
}

/// The hover text, as the server wrote it (markdown or plain).
pub fn hover(answer: Option<Hover>) -> Option<String> {
    let marked = |m: MarkedString| match m {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(l) => format!("```{}\n{}\n```", l.language, l.value),
    };
    let text = match answer?.contents {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(items) => items
            .into_iter()
            .map(marked)
            .collect::<Vec<_>>()
            .join("\n\n"),
        HoverContents::Markup(m) => m.value,
    };
    let text = text.trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// The character index of UTF-16 offset `utf16` in `line`.
pub fn char_column(line: &str, utf16: u32) -> usize {
    let mut units = 0u32;
    for (i, c) in line.chars().enumerate() {
        if units >= utf16 {
            return i;
        }
        units += c.len_utf16() as u32;
    }
    line.chars().count()
}

/// The UTF-16 offset of 0-based character index `chars` in `line` (clamped to its end).
/// The protocol position of 1-based editor `line`/`character` in `path`.
pub fn position(path: &Path, line: u32, character: u32) -> Position {
    let line0 = line.saturating_sub(1);
    let col0 = character.saturating_sub(1) as usize;
    let col = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.lines().nth(line0 as usize).map(|l| utf16_offset(l, col0)))
        .unwrap_or(col0 as u32);
    Position::new(line0, col)
}

pub fn utf16_offset(line: &str, chars: usize) -> u32 {
    line.chars().take(chars).map(|c| c.len_utf16() as u32).sum()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Errors and warnings of `after` that `before` did not have (matched by severity, message
/// and code, as many times as they occur: lines move with an edit).
pub fn new_problems(before: &[Diagnostic], after: &[Diagnostic]) -> Vec<Diagnostic> {
    let key = |d: &Diagnostic| {
        (
            d.severity.map(|s| format!("{s:?}")),
            d.message.clone(),
            format!("{:?}", d.code),
        )
    };
    let mut old: Vec<_> = before.iter().map(key).collect();
    after
        .iter()
        .filter(|d| {
            matches!(
                d.severity,
                None | Some(DiagnosticSeverity::ERROR) | Some(DiagnosticSeverity::WARNING)
            )
        })
        .filter(|d| {
            let k = key(d);
            match old.iter().position(|o| *o == k) {
                Some(i) => {
                    old.swap_remove(i);
                    false
                }
                None => true,
            }
        })
        .cloned()
        .collect()
}

/// One problem as a line: `line 5:17 error: message [code]` (1-based, as an editor shows).
pub fn diagnostic_line(d: &Diagnostic) -> String {
    let severity = match d.severity {
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        _ => "error",
    };
    let code = match &d.code {
        Some(async_lsp::lsp_types::NumberOrString::String(s)) => format!(" [{s}]"),
        Some(async_lsp::lsp_types::NumberOrString::Number(n)) => format!(" [{n}]"),
        None => String::new(),
    };
    let message = d.message.lines().collect::<Vec<_>>().join(" ");
    format!(
        "line {}:{} {severity}: {message}{code}",
        d.range.start.line + 1,
        d.range.start.character + 1
    )
}

/// The reminder for problems an edit introduced.
pub fn diagnostics_reminder(
    shown_path: &str,
    server: &str,
    problems: &[Diagnostic],
    baseline: bool,
) -> String {
    let mut out = if baseline {
        format!("New diagnostics in {shown_path} after your edit (from {server}):\n")
    } else {
        format!("Diagnostics in {shown_path} after your edit (from {server}):\n")
    };
    for d in problems.iter().take(20) {
        let _ = writeln!(out, "  {}", diagnostic_line(d));
    }
    if problems.len() > 20 {
        let _ = writeln!(out, "  … and {} more.", problems.len() - 20);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_lsp::lsp_types::Range;

    #[test]
    fn columns_convert_between_characters_and_utf16() {
        let line = "a😀b = 1";
        assert_eq!(utf16_offset(line, 2), 3);
        assert_eq!(char_column(line, 3), 2);
        assert_eq!(char_column("ab", 9), 2);
    }

    fn diag(line: u32, severity: DiagnosticSeverity, message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 0), Position::new(line, 1)),
            severity: Some(severity),
            message: message.into(),
            ..Default::default()
        }
    }

    #[test]
    fn only_problems_the_edit_brought_are_new() {
        let before = vec![diag(3, DiagnosticSeverity::ERROR, "old")];
        let after = vec![
            diag(5, DiagnosticSeverity::ERROR, "old"),
            diag(7, DiagnosticSeverity::ERROR, "new"),
            diag(8, DiagnosticSeverity::HINT, "hint"),
        ];
        let new = new_problems(&before, &after);
        assert_eq!(new.len(), 1);
        assert_eq!(new[0].message, "new");
        assert_eq!(
            diagnostics_reminder("a.py", "pyright", &new, true),
            "New diagnostics in a.py after your edit (from pyright):\n  line 8:1 error: new\n"
        );
    }

    #[test]
    fn locations_are_grouped_capped_and_denied_ones_withheld() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::write(root.join("a.py"), "x = 1\ny = x\n").unwrap();
        let guard = ReadGuard::none();
        let working = vec![root.clone()];
        let mut r = Render::new(&root, &working, &guard);
        let uri = Url::from_file_path(root.join("a.py")).unwrap();
        let loc = |line, ch| {
            Location::new(
                uri.clone(),
                Range::new(Position::new(line, ch), Position::new(line, ch)),
            )
        };
        let text = r.locations("reference", vec![loc(1, 4), loc(0, 0)]);
        assert_eq!(
            text,
            "Found 2 references in 1 file:\n\na.py:\n  1:1: x = 1\n  2:5: y = x\n"
        );
        let many: Vec<Location> = (0..150).map(|i| loc(i, 0)).collect();
        let text = r.locations("reference", many);
        assert!(text.ends_with("\n… and 50 more.\n"), "{text}");
    }
}
