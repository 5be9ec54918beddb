//! The input area: the composer and the picker over it (`/` commands, `@` files, and the
//! choice lists other parts open there), with the file index the `@` picker matches against.
//!
//! The `/` and `@` pickers follow the word at the cursor: they open, update and close as the
//! text changes ([`InputArea::refresh_picker`]). The project's files are walked in the
//! background each time the `@` picker opens (until the new list comes, the previous one
//! answers), and matched in the background; only the latest match request counts (results
//! for an older request id are dropped). What a picked row means beyond the composer is the
//! App's to decide.

use std::path::Path;
use std::sync::Arc;

use super::AppAction;
use crate::protocol::CommandInfo;
use crate::tui::composer::Composer;
use crate::tui::composer::history::History;
use crate::tui::input::KeyInput;
use crate::tui::picker::{Picker, PickerKind};

/// The file list for the `@` picker, loaded in the background.
#[derive(Debug, Default)]
struct FileIndex {
    files: Option<Arc<Vec<String>>>,
    /// MCP resources (`server:uri`), offered after the files.
    resources: Vec<String>,
    loading: bool,
    next_request: u64,
}

impl FileIndex {
    /// What the `@` picker matches against: the files, then the servers' resources.
    fn candidates(files: &Arc<Vec<String>>, resources: &[String]) -> Arc<Vec<String>> {
        if resources.is_empty() {
            return Arc::clone(files);
        }
        let mut all = files.as_ref().clone();
        all.extend(resources.iter().cloned());
        Arc::new(all)
    }
}

pub(crate) struct InputArea {
    pub(crate) composer: Composer,
    picker: Option<Picker>,
    files: FileIndex,
}

impl InputArea {
    pub fn new(history: History) -> InputArea {
        InputArea {
            composer: Composer::new(history),
            picker: None,
            files: FileIndex::default(),
        }
    }

    pub fn picker(&self) -> Option<&Picker> {
        self.picker.as_ref()
    }

    pub fn picker_mut(&mut self) -> Option<&mut Picker> {
        self.picker.as_mut()
    }

    /// Show a list of choices (or any picker) over the composer, in place of the open one.
    pub fn open_picker(&mut self, picker: Picker) {
        self.picker = Some(picker);
    }

    pub fn close_picker(&mut self) -> Option<Picker> {
        self.picker.take()
    }

    /// Ctrl+C on a composer with text: the text and the picker go.
    pub fn clear(&mut self) {
        self.composer.clear();
        self.picker = None;
    }

    /// A key while the history search runs: Ctrl+R steps back, other keys edit the query
    /// (`ctrl_c` is left for the App). True when the search used it.
    pub fn search_key(&mut self, key: KeyInput, ctrl_c: bool) -> bool {
        if !self.composer.is_searching() {
            return false;
        }
        if key == KeyInput::ctrl('r') {
            self.composer.search_step();
            return true;
        }
        if ctrl_c {
            return false;
        }
        self.composer.search_key(key);
        true
    }

    /// A `/` command or `@` file was picked without running it: it goes into the composer.
    pub fn insert_picked(&mut self, kind: PickerKind, label: &str) {
        match kind {
            PickerKind::Commands => self.composer.set_text(&format!("{label} ")),
            PickerKind::Files => self.composer.replace_word_at_cursor(&format!("@{label} ")),
            _ => {}
        }
    }

    /// Open, update or close the picker from the text around the cursor: `/` commands (the
    /// built-in ones and `custom`), `@` files under `root`.
    pub fn refresh_picker(&mut self, custom: &[CommandInfo], root: &Path) -> Vec<AppAction> {
        let text = self.composer.text();
        if text.starts_with('/') && !text.contains(char::is_whitespace) {
            self.picker = Some(Picker::commands(&text[1..], custom));
            return Vec::new();
        }
        let Some((_, word)) = self.composer.word_at_cursor() else {
            self.picker = None;
            return Vec::new();
        };
        let Some(query) = word.strip_prefix('@') else {
            self.picker = None;
            return Vec::new();
        };
        let opened = match &mut self.picker {
            Some(p) if p.kind == PickerKind::Files && p.query == query => return Vec::new(),
            Some(p) if p.kind == PickerKind::Files => {
                p.query = query.to_string();
                false
            }
            _ => {
                self.picker = Some(Picker::files(query));
                true
            }
        };
        let mut actions = Vec::new();
        // Walk again each time the picker opens, so new files show up; until the new list
        // arrives, the previous one answers.
        if opened && !self.files.loading {
            self.files.loading = true;
            actions.push(AppAction::ListFiles {
                root: root.to_path_buf(),
            });
        }
        if self.files.files.is_none() {
            if let Some(p) = &mut self.picker {
                p.pending = Some(u64::MAX);
            }
            return actions;
        }
        actions.extend(self.request_file_matches());
        actions
    }

    /// The MCP servers' resources changed: the `@` picker offers these after the files.
    pub fn set_resources(&mut self, resources: Vec<String>) {
        self.files.resources = resources;
    }

    /// The walk finished: match the open `@` picker's query against the new list.
    pub fn files_listed(&mut self, files: Arc<Vec<String>>) -> Vec<AppAction> {
        self.files.loading = false;
        self.files.files = Some(files);
        self.request_file_matches()
    }

    /// Matches came: shown when they answer the `@` picker's latest request.
    pub fn files_matched(&mut self, request_id: u64, paths: Vec<String>) {
        if let Some(p) = &mut self.picker
            && p.kind == PickerKind::Files
            && p.pending == Some(request_id)
        {
            p.pending = None;
            p.set_files(paths);
        }
    }

    fn request_file_matches(&mut self) -> Vec<AppAction> {
        let (Some(p), Some(files)) = (&mut self.picker, &self.files.files) else {
            return Vec::new();
        };
        if p.kind != PickerKind::Files {
            return Vec::new();
        }
        self.files.next_request += 1;
        let request_id = self.files.next_request;
        p.pending = Some(request_id);
        vec![AppAction::MatchFiles {
            request_id,
            query: p.query.clone(),
            files: FileIndex::candidates(files, &self.files.resources),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(actions: &[AppAction]) -> Vec<String> {
        match actions.last() {
            Some(AppAction::MatchFiles { files, .. }) => files.as_ref().clone(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn the_at_picker_offers_the_servers_resources_after_the_files() {
        let mut input = InputArea::new(History::in_memory(Vec::new()));
        input.composer.set_text("@");
        let opened = input.refresh_picker(&[], Path::new("/p"));
        assert!(matches!(opened.first(), Some(AppAction::ListFiles { .. })));
        let files = Arc::new(vec!["src/main.rs".to_string()]);
        assert_eq!(
            matched(&input.files_listed(Arc::clone(&files))),
            ["src/main.rs"]
        );

        input.set_resources(vec!["ev:demo://a".into()]);
        let listed = input.files_listed(files);
        assert_eq!(matched(&listed), ["src/main.rs", "ev:demo://a"]);
    }
}
