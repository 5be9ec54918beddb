//! Sub-agent ids and where their conversations are kept (the run itself is in `subagent.rs`):
//! every sub-agent run has an id (`a` and hex digits) under which its
//! conversation is kept in the session's data directory (`subagents/agent-<id>.jsonl`, with
//! `agent-<id>.meta.json` naming its agent type). An Agent call with `resume: <id>` (`SubagentRunner::resume` in `subagent.rs`) rebuilds
//! that conversation (repaired as a resumed session is: a call it was interrupted in gets an
//! "interrupted" result) and continues it with the new prompt, as the same type of agent, so an
//! interrupted exploration goes on instead of starting over. The files live with the session's,
//! so the ids outlive the process: `--resume` of the session finds them again. An id that names
//! no sub-agent of this session (or is not an id at all) is refused before anything runs.

use std::path::{Path, PathBuf};

/// Why an id cannot be resumed; the same for every cause, so nothing about the disk leaks.
const UNKNOWN: &str = "no sub-agent with that id in this session (an id is the agentId an \
Agent result ends with)";

/// A fresh sub-agent id.
pub(super) fn new_agent_id() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("a{}", &hex[..11])
}

/// Whether `id` could be one of ours: letters, digits, `-` and `_`, at most 64 (so it never
/// walks out of the folder).
fn well_formed(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn folder(data_dir: &Path) -> PathBuf {
    data_dir.join("subagents")
}

/// Where sub-agent `id`'s conversation is written.
pub(super) fn transcript_path(data_dir: &Path, id: &str) -> PathBuf {
    folder(data_dir).join(format!("agent-{id}.jsonl"))
}

fn meta_path(data_dir: &Path, id: &str) -> PathBuf {
    folder(data_dir).join(format!("agent-{id}.meta.json"))
}

/// Note that sub-agent `id` is an `agent` (once; a failure to write only costs resuming it).
pub(super) fn remember_type(data_dir: &Path, id: &str, agent: &str) {
    let path = meta_path(data_dir, id);
    if path.exists() {
        return;
    }
    let text = serde_json::json!({ "agentType": agent }).to_string();
    let written =
        std::fs::create_dir_all(folder(data_dir)).and_then(|()| std::fs::write(&path, text));
    if let Err(e) = written {
        tracing::warn!("cannot record sub-agent {id} at {}: {e}", path.display());
    }
}

/// The agent type sub-agent `id` of this session was started as, or why it cannot be resumed.
pub(super) fn agent_type(data_dir: &Path, id: &str) -> Result<String, String> {
    if !well_formed(id) || !transcript_path(data_dir, id).is_file() {
        return Err(UNKNOWN.into());
    }
    let text = std::fs::read_to_string(meta_path(data_dir, id)).map_err(|_| UNKNOWN.to_string())?;
    let meta: serde_json::Value = serde_json::from_str(&text).map_err(|_| UNKNOWN.to_string())?;
    meta["agentType"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| UNKNOWN.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_fresh_and_only_well_formed_ones_are_looked_up() {
        let a = new_agent_id();
        assert!(well_formed(&a) && a.starts_with('a') && a.len() == 12);
        assert_ne!(a, new_agent_id());
        let tmp = tempfile::tempdir().unwrap();
        for bad in ["", "../t", "a/b", "x.y", &"a".repeat(65)] {
            assert_eq!(
                agent_type(tmp.path(), bad),
                Err(UNKNOWN.to_string()),
                "{bad}"
            );
        }
        remember_type(tmp.path(), "a1", "Explore");
        // The type alone is not enough: there must be a conversation to go on with.
        assert_eq!(agent_type(tmp.path(), "a1"), Err(UNKNOWN.to_string()));
        std::fs::write(transcript_path(tmp.path(), "a1"), "").unwrap();
        assert_eq!(agent_type(tmp.path(), "a1"), Ok("Explore".to_string()));
    }
}
