//! What a custom agent's file adds to its run beyond its tools and prompt: its own hooks
//! (`hooks`), read as the settings' hooks are (`config::hooks`, each problem with the agent
//! file's line), with `Stop` run as SubagentStop (as Claude Code documents), beside the
//! session's. A problem that may have lost a PreToolUse hook (a guard) refuses the run
//! instead of running unguarded. A project's agent has its hooks only in a trusted folder:
//! the host takes them away otherwise ([`without_untrusted_hooks`]).
//!
//! Its persistent memory (`memory`), as Claude Code documents it: a directory per agent
//! (`~/.claude/agent-memory/<name>/`, `.claude/agent-memory/<name>/` or
//! `.claude/agent-memory-local/<name>/`), created when it starts; the first 200 lines (at most
//! 25 KB) of its `MEMORY.md` and how to keep it in its system prompt; and Read, Write and Edit
//! when its `tools` lack them, confined to that directory (`ReadOnlyGuard::inside`). The
//! permission gate decides its calls there as any other.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::commands::agents::{AgentDef, MemoryScope};
use crate::config::hooks::{HookEvent, parse_hooks};
use crate::config::layers::{Layer, Origin, Problems, SettingsSource};
use crate::hooks::Hooks;
use crate::tools::read_only_guard::{MEMORY_TOOLS, ReadOnlyGuard};
use crate::tools::{ToolHandle, ToolRegistry};

/// The hooks of `def`'s run: `session`'s and its own; the notices about its own.
pub(super) fn hooks_for(
    session: &Arc<Hooks>,
    def: &AgentDef,
    project_dir: &Path,
) -> Result<(Arc<Hooks>, Vec<String>), String> {
    let Some(own) = &def.hooks else {
        return Ok((Arc::clone(session), Vec::new()));
    };
    let layer = if def.path.starts_with(project_dir) {
        Layer::Project
    } else {
        Layer::User
    };
    let source = SettingsSource {
        origin: Origin {
            layer,
            source: def.path.display().to_string(),
        },
        text: own.text.clone(),
        value: own.value.clone(),
    };
    let mut problems = Problems::default();
    let mut groups = parse_hooks(&source, &own.value, &mut problems);
    if !problems.broken.is_empty() {
        return Err(format!(
            "the {} agent's hooks cannot all be read, and one may guard its calls, so it does \
             not run: {}",
            def.name,
            problems.broken.join("; ")
        ));
    }
    for group in &mut groups {
        if group.event == HookEvent::Stop {
            group.event = HookEvent::SubagentStop;
        }
    }
    Ok((Arc::new(session.with_groups(groups)), problems.notes))
}

/// `agents` without the hooks of those under `project_dir` (the folder is not trusted), and
/// a notice for each agent that lost some.
pub fn without_untrusted_hooks(agents: &mut [AgentDef], project_dir: &Path) -> Vec<String> {
    agents
        .iter_mut()
        .filter(|a| a.path.starts_with(project_dir))
        .filter_map(|a| {
            a.hooks.take().map(|_| {
                format!(
                    "{}: the {} agent's `hooks` do not run until you trust this folder",
                    a.path.display(),
                    a.name
                )
            })
        })
        .collect()
}

/// The lines of `MEMORY.md` the system prompt shows, and the most of it read.
const MEMORY_LINES: usize = 200;
const MEMORY_BYTES: u64 = 25 * 1024;

/// An agent's memory directory, ready, and the system prompt's section about it.
pub(super) struct AgentMemory {
    pub dir: PathBuf,
    pub section: String,
}

/// An agent's name as one path component, so that nothing in it may climb out: characters
/// other than letters, digits, `-`, `_` and `.` become `-`, and a name of dots only is
/// `agent`.
pub(super) fn path_component(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.chars().all(|c| c == '.') {
        "agent".into()
    } else {
        name
    }
}

/// The memory of `def` (none without `memory`): its directory made, its `MEMORY.md` read.
pub(super) fn memory_for(
    def: &AgentDef,
    project_dir: &Path,
    home: Option<&Path>,
) -> Result<Option<AgentMemory>, String> {
    let Some(scope) = def.memory else {
        return Ok(None);
    };
    let name = path_component(&def.name);
    let dir = match scope {
        MemoryScope::User => home
            .ok_or("its `memory: user` needs a home directory, and there is none")?
            .join(".claude/agent-memory"),
        MemoryScope::Project => project_dir.join(".claude/agent-memory"),
        MemoryScope::Local => project_dir.join(".claude/agent-memory-local"),
    }
    .join(name);
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("its memory directory {} cannot be made: {e}", dir.display()))?;
    let text = read_memory(&dir.join("MEMORY.md"), &dir);
    let shown = if text.trim().is_empty() {
        "(empty: nothing saved yet)".to_string()
    } else {
        text
    };
    let section = format!(
        "\n\n# Your persistent memory\nYou have a memory directory, {dir}, that stays between \
         your runs. Read it when it helps with the task; save there what you learn that will \
         help next time (conventions, decisions, recurring problems), with Write and Edit. Keep \
         {dir}/MEMORY.md short: only its first {MEMORY_LINES} lines are shown to you; put \
         details in other files there and name them in MEMORY.md.\n\n## MEMORY.md\n{shown}",
        dir = dir.display()
    );
    Ok(Some(AgentMemory { dir, section }))
}

/// The first lines of `file` (at most [`MEMORY_LINES`] and [`MEMORY_BYTES`]), when it is a
/// file inside `dir` after symlinks; empty otherwise.
fn read_memory(file: &Path, dir: &Path) -> String {
    let (Ok(real), Ok(dir)) = (file.canonicalize(), dir.canonicalize()) else {
        return String::new();
    };
    if !real.starts_with(&dir) || !real.is_file() {
        return String::new();
    }
    let mut bytes = Vec::new();
    let read =
        std::fs::File::open(&real).and_then(|f| f.take(MEMORY_BYTES).read_to_end(&mut bytes));
    if read.is_err() {
        return String::new();
    }
    String::from_utf8_lossy(&bytes)
        .lines()
        .take(MEMORY_LINES)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `registry` with Read, Write and Edit of `all` confined to `dir`, for those it lacks and
/// `def`'s `disallowedTools` does not name.
pub(super) fn with_memory_tools(
    registry: ToolRegistry,
    all: &ToolRegistry,
    def: &AgentDef,
    dir: &Path,
) -> ToolRegistry {
    let extra: Vec<ToolHandle> = MEMORY_TOOLS
        .iter()
        .filter(|name| registry.get(name).is_none())
        .filter_map(|name| all.get(name))
        .filter(|t| !def.disallowed_tools.iter().any(|n| n == t.name()))
        .map(|t| Arc::new(ReadOnlyGuard::inside(Arc::clone(t), dir.to_path_buf())) as ToolHandle)
        .collect();
    if extra.is_empty() {
        return registry;
    }
    registry.mapped(|t| Some(Arc::clone(t)), extra)
}
