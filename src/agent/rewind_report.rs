//! What a rewind of the files cannot undo, named for the person (`/rewind`'s list and its
//! summary: "not undone: …"): files the session's tools wrote outside the working
//! directories (a write the person approved there stays, by design: checkpoints cover the
//! working directories only), and files over the checkpoints' size cap that changed (their
//! contents are never copied, so they cannot be put back).
//!
//! The writes come from the transcript (so a resumed session sees them too): every tool call
//! of the turns since a prompt that succeeded and declared a write (`Access::Write`) outside
//! the working directories. A write a shell command made is not declared and not listed. This
//! module only reads.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::checkpoint::{NotCoveredFile, Uncovered};
use crate::llm::ContentBlock;
use crate::session::context::SessionContext;
use crate::session::transcript::parse_transcript;
use crate::tools::{Access, ToolRegistry};

/// The paths that the successful tool calls in these transcript lines declared writing, in
/// the order first written: those outside every working directory of `session`, and those
/// inside (resolved).
#[derive(Debug, Default)]
pub struct Writes {
    pub outside: Vec<PathBuf>,
    pub inside: Vec<PathBuf>,
}

pub fn writes(lines: &[u8], registry: &ToolRegistry, session: &SessionContext) -> Writes {
    let contents = parse_transcript(lines);
    let blocks = || {
        contents
            .entries
            .iter()
            .flat_map(|e| e.message.content.iter())
    };
    let failed: HashSet<&str> = blocks()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                is_error: true,
                ..
            } => Some(tool_use_id.as_str()),
            _ => None,
        })
        .collect();
    let roots: Vec<PathBuf> = session
        .working_dirs()
        .into_iter()
        .flat_map(|r| [canonical(&r), r])
        .collect();
    let mut out = Writes::default();
    for block in blocks() {
        let ContentBlock::ToolUse { id, name, input } = block else {
            continue;
        };
        if failed.contains(id.as_str()) {
            continue;
        }
        let Some(tool) = registry.get(name) else {
            continue;
        };
        let Ok(parsed) = tool.parse(input) else {
            continue;
        };
        for access in tool.accesses(&parsed, session) {
            let Access::Write(path) = access else {
                continue;
            };
            let resolved = canonical(&path);
            let inside = roots
                .iter()
                .any(|r| path.starts_with(r) || resolved.starts_with(r));
            let list = if inside {
                (&mut out.inside, resolved)
            } else {
                (&mut out.outside, path)
            };
            if !list.0.contains(&list.1) {
                list.0.push(list.1);
            }
        }
    }
    out
}

/// `path` with its existing ancestors resolved (symlinks, `..`), as far as they exist.
fn canonical(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(c) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(c, |p: PathBuf, n| p.join(n));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The files over the size cap that changed between a checkpoint (`then`) and the latest one
/// (`now`): there, gone, or of another size, or `written` by a tool since. (One rewritten
/// with the same size by a shell command is not seen: checkpoints keep only the size of a
/// file they do not copy.)
pub fn over_cap(
    then: &[NotCoveredFile],
    now: &[NotCoveredFile],
    written: &[PathBuf],
) -> Vec<PathBuf> {
    let large = |list: &[NotCoveredFile]| -> Vec<(PathBuf, u64)> {
        list.iter()
            .filter(|n| n.why == Uncovered::TooLarge)
            .map(|n| (n.path.clone(), n.size))
            .collect()
    };
    let (then, now) = (large(then), large(now));
    let mut out: Vec<PathBuf> = now
        .iter()
        .chain(&then)
        .filter(|f| !(then.contains(f) && now.contains(f)) || written.contains(&f.0))
        .map(|(p, _)| p.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The lines `/rewind` shows for what it cannot undo.
pub fn describe(outside: &[PathBuf], large: &[PathBuf], cap_mib: u64) -> Vec<String> {
    let outside = outside
        .iter()
        .map(|p| format!("{} (written outside the working directories)", p.display()));
    let large = large
        .iter()
        .map(|p| format!("{} (over the {cap_mib} MiB size cap)", p.display()));
    outside.chain(large).collect()
}
