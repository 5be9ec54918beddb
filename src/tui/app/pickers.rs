//! The pickers' side of the app: opening, updating and closing the `/` and `@` pickers as the
//! word at the cursor changes, their keys, and the background file walk and match requests
//! (latest wins: results for an older request id are dropped).

use super::*;

impl App {
    /// Keys for an open picker: Up/Down select, Tab/Enter accept, Esc closes.
    pub(super) fn picker_key(&mut self, key: KeyInput) -> Option<Vec<AppAction>> {
        let picker = self.picker.as_mut()?;
        if key.mods != crate::tui::input::Mods::NONE {
            return None;
        }
        match key.code {
            Key::Up => picker.select_prev(),
            Key::Down => picker.select_next(),
            Key::Esc => self.picker = None,
            Key::Tab | Key::Enter => {
                let kind = picker.kind;
                let Some(item) = picker.selected().cloned() else {
                    self.picker = None;
                    return if key.code == Key::Enter {
                        None
                    } else {
                        Some(Vec::new())
                    };
                };
                self.picker = None;
                match kind {
                    PickerKind::Commands if key.code == Key::Enter => {
                        self.composer.clear();
                        return Some(self.run_command_text(&item.label));
                    }
                    PickerKind::Commands => self.composer.set_text(&format!("{} ", item.label)),
                    PickerKind::Files => self
                        .composer
                        .replace_word_at_cursor(&format!("@{} ", item.label)),
                }
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// Open, update or close the picker from the text around the cursor.
    pub(super) fn refresh_picker(&mut self) -> Vec<AppAction> {
        let text = self.composer.text();
        if text.starts_with('/') && !text.contains(char::is_whitespace) {
            self.picker = Some(Picker::commands(&text[1..]));
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
        if opened && !self.file_index.loading {
            self.file_index.loading = true;
            actions.push(AppAction::ListFiles {
                root: self.header.cwd.clone(),
            });
        }
        if self.file_index.files.is_none() {
            if let Some(p) = &mut self.picker {
                p.pending = Some(u64::MAX);
            }
            return actions;
        }
        actions.extend(self.request_file_matches());
        actions
    }

    pub(super) fn request_file_matches(&mut self) -> Vec<AppAction> {
        let (Some(p), Some(files)) = (&mut self.picker, &self.file_index.files) else {
            return Vec::new();
        };
        if p.kind != PickerKind::Files {
            return Vec::new();
        }
        self.file_index.next_request += 1;
        let request_id = self.file_index.next_request;
        p.pending = Some(request_id);
        vec![AppAction::MatchFiles {
            request_id,
            query: p.query.clone(),
            files: Arc::clone(files),
        }]
    }
}
