//! The folder's trust as a session start sees it: whether the folder is trusted (the run's
//! `--trust-folder`, or `~/.claude.json`), recording the person's answers (trust, external
//! imports), the memory roots that answer decides, and the one notice an untrusted folder's
//! session gets.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::config::LoadedSettings;
use crate::config::layers::project_root;
use crate::config::trust::{
    EXTERNAL_IMPORTS_KEY, Recorded, TRUST_KEY, Trust, TrustStore, claude_json_path,
};

use super::env::env_var;

/// The trust of the folder cairn runs in, and where a "trust" answer is recorded.
#[derive(Debug, Clone)]
pub struct FolderTrust {
    pub trust: Trust,
    /// The folder a "trust" answer records: the project root (an ancestor's trust covers it).
    pub root: PathBuf,
    /// `~/.claude.json`; `None` without a home.
    pub store: Option<TrustStore>,
    /// Why the store could not be read (it then trusts nothing).
    pub problem: Option<String>,
    /// The root is the home directory itself: trusting it trusts every folder under it.
    pub is_home: bool,
    /// The person allowed the project's memory to import files outside it (recorded).
    pub external_imports_approved: bool,
}

impl FolderTrust {
    /// The files outside the project that the memory files of this (trusted) folder import and
    /// the person has not approved yet: what the TUI asks about before the session starts.
    /// Reads memory files only (no settings), runs nothing.
    pub fn pending_external_imports(&self, dir: &Path) -> Vec<PathBuf> {
        if !self.trust.is_trusted() {
            return Vec::new();
        }
        let home = env_var("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        crate::memory::load(&self.memory_roots(home, dir)).external_imports
    }

    /// Record that the person allowed the project's memory to import files outside it.
    pub fn allow_external_imports(&mut self) -> anyhow::Result<()> {
        let store = self
            .store
            .as_ref()
            .context("no home directory to record the approval in")?;
        store
            .record(&self.root, EXTERNAL_IMPORTS_KEY)
            .map_err(|e| anyhow::anyhow!("cannot record the approval: {e}"))?;
        self.external_imports_approved = true;
        Ok(())
    }

    /// Where memory is read from for a session in `project_dir`, and whether imports from
    /// outside the project count as approved (only in a trusted folder).
    pub(crate) fn memory_roots(
        &self,
        home: Option<PathBuf>,
        project_dir: &Path,
    ) -> crate::memory::Roots {
        let mut roots =
            crate::memory::Roots::standard(home, self.root.clone(), project_dir.to_path_buf());
        roots.external_imports_approved = self.trust.is_trusted() && self.external_imports_approved;
        roots
    }

    /// Record the person's "trust" in `~/.claude.json` and trust the folder for this run.
    pub fn accept(&mut self) -> anyhow::Result<()> {
        let store = self
            .store
            .as_ref()
            .context("no home directory to record the folder's trust in")?;
        store
            .record(&self.root, TRUST_KEY)
            .map_err(|e| anyhow::anyhow!("cannot record the folder's trust: {e}"))?;
        self.trust = Trust::Trusted;
        Ok(())
    }
}

/// Whether the folder `dir` is trusted: vouched for this run (`--trust-folder`, an editor that
/// says so), else what `~/.claude.json` records for it or an ancestor (Claude Code's record).
pub fn folder_trust(dir: &Path, vouched: bool) -> FolderTrust {
    let home = env_var("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let root = project_root(dir, home.as_deref());
    let store = claude_json_path(&env_var).map(TrustStore::new);
    let (recorded, problem) = match &store {
        // The root's settings apply, so the root must be covered: a trusted subfolder does
        // not vouch for the settings of the folder around it.
        Some(s) => match s.lookup(&root) {
            Ok(r) => (r, None),
            Err(e) => (Recorded::default(), Some(e)),
        },
        None => (Recorded::default(), None),
    };
    let trusted = vouched || recorded.trusted;
    FolderTrust {
        trust: if trusted {
            Trust::Trusted
        } else {
            Trust::Untrusted
        },
        is_home: home.as_deref() == Some(root.as_path()),
        external_imports_approved: recorded.external_imports_approved,
        root,
        store,
        problem,
    }
}

/// The one notice an untrusted folder gets: what its settings configure that was not applied,
/// and how to trust it. `None` when there was nothing to leave out.
pub(crate) fn untrusted_notice(
    settings: &LoadedSettings,
    mcp_servers: &[String],
    interactive: bool,
) -> Option<String> {
    if settings.trust.is_trusted() || (settings.untrusted.is_empty() && mcp_servers.is_empty()) {
        return None;
    }
    let mut kinds: Vec<String> = Vec::new();
    for item in &settings.untrusted {
        if !kinds.iter().any(|k| k == item.what) {
            kinds.push(item.what.to_string());
        }
    }
    if !mcp_servers.is_empty() {
        kinds.push(format!("MCP servers ({})", mcp_servers.join(", ")));
    }
    let how = if interactive {
        "restart cairn here and answer \"Yes, trust this folder\""
    } else {
        "pass --trust-folder for this run, or run `cairn` here once and trust the folder"
    };
    Some(format!(
        "this folder is not trusted, so its {} were not applied (deny and ask rules were); to \
         trust it, {how}",
        kinds.join(", ")
    ))
}
