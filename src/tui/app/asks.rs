//! What the app asked of the session's host and is still waiting for. The host's answers come
//! back as events some time later; only an answer the app waits for does anything (a list of
//! saved sessions nobody asked for opens no picker, a memory file `/memory` did not pick is not
//! edited). A `#` note waits here for the person to pick its file. Owned by the App; it sends
//! nothing itself.

use std::path::{Path, PathBuf};

use crate::protocol::SavedSession;

#[derive(Debug, Default)]
pub(crate) struct HostAsks {
    /// A `#` note waiting for the person to pick its memory file.
    note: Option<String>,
    /// The memory file `/memory` asked the host for, to edit when it comes.
    reading: Option<PathBuf>,
    /// `/resume` asked for the saved sessions.
    sessions_wanted: bool,
    /// What `/resume`'s picker lists.
    sessions: Vec<SavedSession>,
}

impl HostAsks {
    /// Keep `note` (or none, for `/memory`) until its file is picked.
    pub fn hold_note(&mut self, note: Option<String>) {
        self.note = note;
    }

    pub fn take_note(&mut self) -> Option<String> {
        self.note.take()
    }

    /// `/memory` asked the host for `path`.
    pub fn reading(&mut self, path: PathBuf) {
        self.reading = Some(path);
    }

    /// The host read `path`: true when it is the file `/memory` waits for (no longer).
    pub fn read_arrived(&mut self, path: &Path) -> bool {
        let wanted = self.reading.as_deref() == Some(path);
        if wanted {
            self.reading = None;
        }
        wanted
    }

    /// `/resume` asked for the saved sessions.
    pub fn want_sessions(&mut self) {
        self.sessions_wanted = true;
    }

    /// The host listed the saved sessions: when `/resume` asked, the ones it may offer (all
    /// but `current`, the session running now).
    pub fn sessions_arrived(
        &mut self,
        sessions: &[SavedSession],
        current: Option<&str>,
    ) -> Option<&[SavedSession]> {
        if !std::mem::take(&mut self.sessions_wanted) {
            return None;
        }
        self.sessions = sessions
            .iter()
            .filter(|s| Some(s.id.as_str()) != current)
            .cloned()
            .collect();
        Some(&self.sessions)
    }

    /// The transcript of the listed session `id`.
    pub fn session_path(&self, id: &str) -> Option<PathBuf> {
        self.sessions
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.path.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(id: &str) -> SavedSession {
        SavedSession {
            id: id.into(),
            path: format!("/data/{id}.jsonl").into(),
            first_prompt: "p".into(),
            modified: std::time::SystemTime::UNIX_EPOCH,
            prompts: 1,
            branch: None,
        }
    }

    #[test]
    fn only_answers_waited_for_count() {
        let mut asks = HostAsks::default();
        let list = [saved("a"), saved("now")];
        assert!(asks.sessions_arrived(&list, Some("now")).is_none());
        asks.want_sessions();
        let offered = asks.sessions_arrived(&list, Some("now")).unwrap();
        assert_eq!(offered, [saved("a")]);
        assert!(
            asks.sessions_arrived(&list, None).is_none(),
            "answered once"
        );
        assert_eq!(asks.session_path("a"), Some("/data/a.jsonl".into()));
        assert_eq!(asks.session_path("now"), None);

        assert!(!asks.read_arrived(Path::new("/p/CLAUDE.md")));
        asks.reading("/p/CLAUDE.md".into());
        assert!(!asks.read_arrived(Path::new("/p/other.md")));
        assert!(asks.read_arrived(Path::new("/p/CLAUDE.md")));
        assert!(!asks.read_arrived(Path::new("/p/CLAUDE.md")));
    }
}
