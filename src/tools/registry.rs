//! The tool registry in its three layers: the built-in base set, filtered by context (deny
//! rules, mode, what is enabled), plus MCP tools. Built-ins sort first by name, MCP tools after
//! by name, so adding a server never changes the prefix of the tool list (prompt caching); on a
//! name clash the built-in wins.

use std::collections::HashSet;
use std::sync::Arc;

use crate::llm::ToolSpec;
use crate::session::context::SessionContext;

use super::{DynTool, ToolHandle};

/// The built-in tools for a session, unfiltered.
pub fn builtin_tools(_session: &Arc<SessionContext>) -> Vec<ToolHandle> {
    let mut tools: Vec<ToolHandle> = vec![
        Arc::new(super::read::ReadTool),
        Arc::new(super::notebook_edit::NotebookEditTool::default()),
        Arc::new(super::todo_write::TodoWriteTool),
        Arc::new(super::ask_user::AskUserQuestionTool),
        Arc::new(super::write::WriteTool::default()),
        Arc::new(super::edit::EditTool::default()),
        Arc::new(super::multi_edit::MultiEditTool::default()),
        Arc::new(super::plan_mode::EnterPlanMode),
        Arc::new(super::plan_mode::ExitPlanMode),
    ];
    // Bash, BashOutput and KillShell share one registry of background shells; its last Arc
    // going away (the registry dropped at exit) kills whatever still runs.
    let shells = Arc::new(super::bash::BackgroundShells::new());
    tools.push(Arc::new(super::bash::BashTool::new(shells.clone())));
    tools.push(Arc::new(super::bash::BashOutputTool::new(shells.clone())));
    tools.push(Arc::new(super::bash::KillShellTool::new(shells)));
    tools.push(Arc::new(super::glob::GlobTool));
    tools.push(Arc::new(super::grep::GrepTool));
    tools.push(Arc::new(super::web_fetch::WebFetchTool::new()));
    tools
}

#[derive(Clone, Default)]
pub struct ToolRegistry {
    /// Sorted: built-ins by name, then MCP tools by name.
    tools: Vec<ToolHandle>,
    builtin_count: usize,
}

impl ToolRegistry {
    pub fn new(mut builtins: Vec<ToolHandle>, mut mcp: Vec<ToolHandle>) -> ToolRegistry {
        builtins.sort_by(|a, b| a.name().cmp(b.name()));
        builtins.dedup_by(|a, b| a.name() == b.name());
        let builtin_names: HashSet<&str> = builtins.iter().map(|t| t.name()).collect();
        mcp.retain(|t| !builtin_names.contains(t.name()));
        mcp.sort_by(|a, b| a.name().cmp(b.name()));
        mcp.dedup_by(|a, b| a.name() == b.name());
        let builtin_count = builtins.len();
        builtins.extend(mcp);
        ToolRegistry {
            tools: builtins,
            builtin_count,
        }
    }

    /// The same registry without the tools `keep` rejects (deny rules, mode).
    pub fn filtered(&self, keep: impl Fn(&dyn DynTool) -> bool) -> ToolRegistry {
        let (builtins, mcp) = self.tools.split_at(self.builtin_count);
        ToolRegistry::new(
            builtins
                .iter()
                .filter(|t| keep(t.as_ref()))
                .cloned()
                .collect(),
            mcp.iter().filter(|t| keep(t.as_ref())).cloned().collect(),
        )
    }

    /// Find a tool by name or alias (names first).
    pub fn get(&self, name: &str) -> Option<&ToolHandle> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .or_else(|| self.tools.iter().find(|t| t.aliases().contains(&name)))
    }

    pub fn iter(&self) -> impl Iterator<Item = &ToolHandle> {
        self.tools.iter()
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name().to_string()).collect()
    }

    /// The specs sent to the model: every tool that is not deferred, plus deferred ones that
    /// ToolSearch has activated.
    pub fn specs(&self, activated: &HashSet<String>) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .filter(|t| !t.is_deferred() || activated.contains(t.name()))
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: t.description(),
                input_schema: t.input_schema(),
            })
            .collect()
    }

    /// Names of deferred tools not yet activated (announced by name only).
    pub fn deferred_names(&self, activated: &HashSet<String>) -> Vec<&'static str> {
        self.tools
            .iter()
            .filter(|t| t.is_deferred() && !activated.contains(t.name()))
            .map(|t| t.name())
            .collect()
    }

    /// Up to three tool names closest to `name`, for the unknown-tool error.
    pub fn suggest(&self, name: &str) -> Vec<&'static str> {
        let lower = name.to_lowercase();
        let mut scored: Vec<(usize, &'static str)> = self
            .tools
            .iter()
            .flat_map(|t| {
                std::iter::once(t.name())
                    .chain(t.aliases().iter().copied())
                    .map(move |n| (n, t.name()))
            })
            .map(|(n, canonical)| (edit_distance(&lower, &n.to_lowercase()), canonical))
            .filter(|(d, _)| *d <= lower.len().max(3) / 2 + 1)
            .collect();
        scored.sort();
        let mut out = Vec::new();
        for (_, n) in scored {
            if !out.contains(&n) {
                out.push(n);
            }
            if out.len() == 3 {
                break;
            }
        }
        out
    }
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_names_are_aliases_of_the_claude_code_names() {
        let dir = tempfile::tempdir().unwrap();
        let session = SessionContext::for_dir(dir.path());
        let registry = ToolRegistry::new(builtin_tools(&session), Vec::new());
        for (alias, name) in [
            ("read_file", "Read"),
            ("write_file", "Write"),
            ("edit_file", "Edit"),
            ("list_files", "Glob"),
            ("grep_search", "Grep"),
            ("run_shell", "Bash"),
            ("web_fetch", "WebFetch"),
            ("enter_plan_mode", "EnterPlanMode"),
            ("exit_plan_mode", "ExitPlanMode"),
        ] {
            assert_eq!(registry.get(alias).map(|t| t.name()), Some(name), "{alias}");
        }
        // Built-ins come sorted by name.
        let names = registry.names();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("read", "read"), 0);
        assert_eq!(edit_distance("reed", "read"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("bash", "bsah"), 2);
    }
}
