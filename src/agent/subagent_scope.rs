//! What a custom agent's file adds to its run beyond its tools and prompt: its own hooks
//! (`hooks`), read as the settings' hooks are (`config::hooks`, each problem with the agent
//! file's line), with `Stop` run as SubagentStop (as Claude Code documents), beside the
//! session's. A problem that may have lost a PreToolUse hook (a guard) refuses the run
//! instead of running unguarded. A project's agent has its hooks only in a trusted folder:
//! the host takes them away otherwise ([`without_untrusted_hooks`]).

use std::path::Path;
use std::sync::Arc;

use crate::commands::agents::AgentDef;
use crate::config::hooks::{HookEvent, parse_hooks};
use crate::config::layers::{Layer, Origin, Problems, SettingsSource};
use crate::hooks::Hooks;

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
