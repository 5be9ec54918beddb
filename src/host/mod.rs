//! The session host: opens sessions from plain-data specs ([`SessionSpec`]) and owns them while
//! they run — more than one at a time, each with its own project root and working directory,
//! none reading the process's. Every client (the TUI, `-p`, an editor over ACP) gets the same
//! [`SessionHandle`]: a protocol [`Connection`] whose ops pass through the host's relay (which
//! answers the ops that are the host's to answer) on their way to the core.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::protocol::{Connection, Op};

mod demo;
mod env;
mod folder;
mod open;
mod ops;
mod relay;
mod report;
mod spec;

pub use crate::config::model::NoCredentials;
pub use demo::DEMO_SCRIPT;
pub use folder::{FolderTrust, folder_trust};
pub use report::{TrustReport, broken_settings_report, runs_demo, trust_report};
pub use spec::{ClientKind, Resume, SessionSpec, TrustDecision};

/// What a client may want to know about the session it opened.
#[derive(Debug, Clone)]
pub struct SessionFacts {
    /// Where the session works (the demo's scratch copy in demo mode).
    pub project_dir: PathBuf,
    /// The project root whose local settings keep the person's answers (approved servers).
    pub project_root: PathBuf,
    /// The project's folder of transcripts (for `/resume`).
    pub sessions_dir: PathBuf,
    /// cairn's data folder (history, transcripts, logs).
    pub data_root: PathBuf,
    /// The session's JSONL transcript.
    pub transcript_path: PathBuf,
    /// `--resume` without an id in the TUI: open the session picker.
    pub pick_session: bool,
    /// Whether bypassPermissions is in the Shift+Tab cycle.
    pub bypass_allowed: bool,
    /// Settings problems that keep the gate closed to every call that is not read-only; the
    /// TUI shows them as errors.
    pub settings_broken: Vec<String>,
    /// The settings' `statusLine`, for the TUI to run.
    pub status_line: Option<crate::config::appearance::StatusLineSetting>,
    /// The name of the output style in use (`default` when none).
    pub output_style: String,
    /// Where the model credentials come from (Claude Code's `apiKeySource`).
    pub api_key_source: String,
    /// The settings' `env`, for the commands cairn runs (the status line's).
    pub tool_env: Vec<(String, String)>,
    /// The session runs the built-in demo.
    pub demo: bool,
    /// The session's plugins (`/plugin`) and the problems finding them.
    pub plugins: Vec<crate::protocol::PluginInfo>,
    pub plugin_problems: Vec<String>,
}

/// One open session, as the client holds it. Dropping `conn.ops` ends the session; its
/// outside parts (MCP servers, the demo's server and scratch project) stop with it.
pub struct SessionHandle {
    pub conn: Connection,
    /// Lines for the person before the session starts (e.g. "running the demo").
    pub notices: Vec<String>,
    pub facts: SessionFacts,
    /// The session's MCP servers (connecting in the background), for a client that waits for
    /// them before its first prompt (`-p`).
    pub mcp: Option<Arc<crate::mcp::McpManager>>,
}

/// One of the host's open sessions.
#[derive(Debug, Clone)]
pub struct OpenSession {
    pub session_id: String,
    pub project_dir: PathBuf,
    pub project_root: PathBuf,
}

struct Entry {
    session: OpenSession,
    /// The core's ops channel (not the client's), for closing it.
    core_ops: mpsc::UnboundedSender<Op>,
}

type Registry = Arc<Mutex<BTreeMap<String, Entry>>>;

/// The host. Cheap to clone; clones share the open sessions.
#[derive(Clone, Default)]
pub struct Host {
    sessions: Registry,
}

impl Host {
    pub fn new() -> Host {
        Host::default()
    }

    /// Open a session as `spec` says. Everything comes from the spec and the environment;
    /// the process's working directory is never read.
    pub async fn open(&self, spec: SessionSpec) -> anyhow::Result<SessionHandle> {
        let open::Opened {
            agent,
            notices,
            facts,
            keep,
        } = open::open_session(&spec).await?;
        let session = OpenSession {
            session_id: agent.session_id.clone(),
            project_dir: facts.project_dir.clone(),
            project_root: facts.project_root.clone(),
        };
        let mcp = keep.mcp.clone();
        let side = ops::HostSide::new(facts.clone(), mcp.clone(), Arc::clone(&self.sessions))
            .with_lsp(keep.lsp.clone());
        let core_ops = agent.ops.clone();
        let conn = relay::start(agent, keep, side, Arc::clone(&self.sessions));
        lock(&self.sessions).insert(session.session_id.clone(), Entry { session, core_ops });
        Ok(SessionHandle {
            conn,
            notices,
            facts,
            mcp,
        })
    }

    /// The sessions open now, by id.
    pub fn sessions(&self) -> Vec<OpenSession> {
        lock(&self.sessions)
            .values()
            .map(|e| e.session.clone())
            .collect()
    }

    /// Close a session: the core is told to shut down (ending its turn, its hooks' SessionEnd)
    /// and the host forgets it. Unknown ids are ignored.
    pub fn close(&self, session_id: &str) {
        if let Some(entry) = lock(&self.sessions).remove(session_id) {
            let _ = entry.core_ops.send(Op::Shutdown);
        }
    }
}

/// The saved sessions of the project in `project_dir` (its transcripts, also ones another
/// client started), newest first: what `/resume` lists, for a client that has no session
/// there (an editor's `session/list`). Reads files: call it off the runtime's threads.
pub fn saved_sessions(project_dir: &Path) -> Vec<crate::protocol::SavedSession> {
    ops::saved_sessions_in(&project_data_dir(&data_root(), project_dir))
}

/// The registry's lock; a panic elsewhere while it was held leaves the map usable.
fn lock(registry: &Registry) -> std::sync::MutexGuard<'_, BTreeMap<String, Entry>> {
    registry
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Keep large buffers in the heap between uses. glibc maps every allocation over its mmap
/// threshold fresh from the kernel and returns freed heap above its trim threshold, so each
/// edit of a 10 MiB file paid for new zeroed pages several times over (a third of its time).
/// Raising both thresholds keeps such buffers reusable; memory is still returned past 128 MiB.
/// The binary calls this first thing; benchmarks call it too, to measure what the binary does.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only adjusts glibc's malloc parameters; it is called before any other
    // thread exists, and both values are within the ranges glibc accepts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 20);
    }
}

/// Where cairn keeps its data: `$CAIRN_DATA_DIR`, else the platform data dir.
pub fn data_root() -> PathBuf {
    if let Some(dir) = env::env_var("CAIRN_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    directories::ProjectDirs::from("dev", "cairn", "cairn")
        .map(|d| d.data_local_dir().to_path_buf())
        .unwrap_or_else(|| std::env::temp_dir().join("cairn"))
}

/// The per-project folder: the project path with non-alphanumerics replaced by '-'.
pub fn project_data_dir(root: &Path, project: &Path) -> PathBuf {
    let name: String = project
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    root.join("projects").join(name)
}

/// The settings for `spec`'s folder as a session there would load them (its trust as
/// recorded or vouched): for `cairn config`, `cairn mcp` and `cairn checkpoints`.
pub fn settings_for(spec: &SessionSpec) -> crate::config::LoadedSettings {
    let trust = open::spec_trust(spec).trust;
    crate::config::load_settings(&spec.cwd, spec.settings.as_deref(), &env::env_var, trust)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_folder_name_replaces_non_alphanumerics() {
        let p = project_data_dir(Path::new("/data"), Path::new("/home/me/my.repo"));
        assert_eq!(p, PathBuf::from("/data/projects/-home-me-my-repo"));
    }
}
