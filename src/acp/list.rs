//! `session/list` answered from cairn's transcripts: the saved sessions of each folder
//! ([`crate::host::saved_sessions`], what `/resume` lists), newest first, with the first
//! prompt as the title and the transcript's last change as `updatedAt`, [`PAGE`] at a time.
//! The cursor is opaque to the client; here it is the number of sessions already given.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{ListSessionsResponse, SessionInfo};

use crate::protocol::SavedSession;

/// Sessions per answer.
pub const PAGE: usize = 50;

/// The page of `folders`' saved sessions that `cursor` points at.
pub fn page(folders: &[PathBuf], cursor: Option<&str>) -> Result<ListSessionsResponse, String> {
    let mut all: Vec<(PathBuf, SavedSession)> = folders
        .iter()
        .flat_map(|f| {
            crate::host::saved_sessions(f)
                .into_iter()
                .map(move |s| (f.clone(), s))
        })
        .collect();
    all.sort_by(|a, b| b.1.modified.cmp(&a.1.modified).then(a.1.id.cmp(&b.1.id)));
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= all.len())
            .ok_or_else(|| format!("unknown cursor {c:?}"))?,
    };
    let end = (start + PAGE).min(all.len());
    let sessions = all[start..end]
        .iter()
        .map(|(cwd, s)| info(cwd, s))
        .collect();
    let next = (end < all.len()).then(|| end.to_string());
    Ok(ListSessionsResponse::new(sessions).next_cursor(next))
}

fn info(cwd: &std::path::Path, s: &SavedSession) -> SessionInfo {
    let updated: chrono::DateTime<chrono::Utc> = s.modified.into();
    SessionInfo::new(s.id.clone(), cwd.to_path_buf())
        .title(s.first_prompt.clone())
        .updated_at(updated.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}
