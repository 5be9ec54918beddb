//! The tool registry in its three layers: the built-in base set, filtered by context (deny
//! rules, mode, what is enabled), plus MCP tools. Built-ins sort first by name, MCP tools after
//! by name, so adding a server never changes the prefix of the tool list (prompt caching); on a
//! name clash the built-in wins.

use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use crate::session::context::SessionContext;

use super::{DynTool, ToolHandle};

/// The built-in tools for a session, unfiltered.
pub fn builtin_tools(session: &Arc<SessionContext>) -> Vec<ToolHandle> {
    builtin_tools_with(session, Arc::new(super::bash::BackgroundShells::new()))
}

/// The built-in tools, their background shells in `shells` (the core stops and reads them
/// for the person too).
pub fn builtin_tools_with(
    _session: &Arc<SessionContext>,
    shells: Arc<super::bash::BackgroundShells>,
) -> Vec<ToolHandle> {
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
        Arc::new(super::tool_search::ToolSearchTool),
    ];
    // Bash, BashOutput and KillShell share one registry of background shells; its last Arc
    // going away (the registry dropped at exit) kills whatever still runs.
    tools.push(Arc::new(super::bash::BashTool::new(shells.clone())));
    tools.push(Arc::new(super::bash::BashOutputTool::new(shells.clone())));
    tools.push(Arc::new(super::bash::KillShellTool::new(shells)));
    tools.push(Arc::new(super::glob::GlobTool));
    tools.push(Arc::new(super::grep::GrepTool));
    tools.push(Arc::new(super::web_fetch::WebFetchTool::new()));
    tools.push(Arc::new(super::web_search::WebSearchTool::new()));
    tools
}

/// Tools that join after the session started (MCP servers connect in the background): a
/// shared list their owners replace as they come and go, with a generation number so a
/// registry sees a change with one atomic read. Cloning shares the list.
#[derive(Clone, Default)]
pub struct LateTools(Arc<RwLock<LateList>>);

#[derive(Default)]
struct LateList {
    generation: u64,
    /// Each tool with its owner (an MCP server's name).
    tools: Vec<(String, ToolHandle)>,
    /// The MCP servers' resources and prompts, once their client is started.
    catalog: Option<Arc<dyn super::mcp_catalog::McpCatalog>>,
}

impl LateTools {
    /// Replace the tools `owner` offers with `tools`.
    pub fn replace(&self, owner: &str, tools: Vec<ToolHandle>) {
        // A poisoned lock only means a panic elsewhere mid-update; the list is still whole.
        let mut list = self.0.write().unwrap_or_else(|e| e.into_inner());
        list.tools.retain(|(o, _)| o != owner);
        list.tools
            .extend(tools.into_iter().map(|t| (owner.to_string(), t)));
        list.generation += 1;
    }

    /// Whether `owner` offers any tool now.
    pub fn has_owner(&self, owner: &str) -> bool {
        let list = self.0.read().unwrap_or_else(|e| e.into_inner());
        list.tools.iter().any(|(o, _)| o == owner)
    }

    /// The generation and the current tools.
    pub fn snapshot(&self) -> (u64, Vec<ToolHandle>) {
        let list = self.0.read().unwrap_or_else(|e| e.into_inner());
        let tools = list.tools.iter().map(|(_, t)| Arc::clone(t)).collect();
        (list.generation, tools)
    }

    pub fn generation(&self) -> u64 {
        self.0.read().unwrap_or_else(|e| e.into_inner()).generation
    }

    /// Hand the core the MCP servers' resources and prompts (`@server:uri`, `/mcp__…`).
    pub fn set_catalog(&self, catalog: Arc<dyn super::mcp_catalog::McpCatalog>) {
        self.0.write().unwrap_or_else(|e| e.into_inner()).catalog = Some(catalog);
    }

    pub fn catalog(&self) -> Option<Arc<dyn super::mcp_catalog::McpCatalog>> {
        self.0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .catalog
            .clone()
    }
}

/// Which late tools a registry offers (the gate's deny rules).
type Keep = Arc<dyn Fn(&dyn DynTool) -> bool + Send + Sync>;

/// Late tools a registry follows, and what it had before they came.
#[derive(Clone)]
struct Following {
    late: LateTools,
    keep: Keep,
    seen: u64,
    builtins: Vec<ToolHandle>,
    extra: Vec<ToolHandle>,
}

#[derive(Clone, Default)]
pub struct ToolRegistry {
    /// Sorted: built-ins by name, then MCP tools by name.
    tools: Vec<ToolHandle>,
    builtin_count: usize,
    following: Option<Box<Following>>,
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
            following: None,
        }
    }

    /// The same registry, also offering the `late` tools `keep` accepts once
    /// [`refresh_late`](Self::refresh_late) has seen them.
    pub fn following(
        mut self,
        late: LateTools,
        keep: impl Fn(&dyn DynTool) -> bool + Send + Sync + 'static,
    ) -> ToolRegistry {
        let (builtins, extra) = self.tools.split_at(self.builtin_count);
        self.following = Some(Box::new(Following {
            late,
            keep: Arc::new(keep),
            seen: u64::MAX,
            builtins: builtins.to_vec(),
            extra: extra.to_vec(),
        }));
        self.refresh_late();
        self
    }

    /// Take in late tools that joined (or left) since the last look. Returns whether the list
    /// changed. Cheap when nothing did: one read of the generation.
    pub fn refresh_late(&mut self) -> bool {
        let Some(f) = self.following.take() else {
            return false;
        };
        if f.late.generation() == f.seen {
            self.following = Some(f);
            return false;
        }
        let (generation, late) = f.late.snapshot();
        let mut extra = f.extra.clone();
        extra.extend(late.into_iter().filter(|t| (f.keep)(t.as_ref())));
        let mut rebuilt = ToolRegistry::new(f.builtins.clone(), extra);
        rebuilt.following = Some(Box::new(Following {
            seen: generation,
            ..*f
        }));
        *self = rebuilt;
        true
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

    /// The same registry with each tool replaced by what `map` makes of it (none: dropped),
    /// and `extra` added after the built-ins.
    pub fn mapped(
        &self,
        map: impl Fn(&ToolHandle) -> Option<ToolHandle>,
        extra: Vec<ToolHandle>,
    ) -> ToolRegistry {
        let (builtins, mcp) = self.tools.split_at(self.builtin_count);
        let mut others: Vec<ToolHandle> = mcp.iter().filter_map(&map).collect();
        others.extend(extra);
        ToolRegistry::new(builtins.iter().filter_map(&map).collect(), others)
    }

    /// The late tools this registry follows, if any.
    pub fn late(&self) -> Option<&LateTools> {
        self.following.as_ref().map(|f| &f.late)
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

    /// Up to three tool names closest to `name`, for the unknown-tool error.
    pub fn suggest(&self, name: &str) -> Vec<&'static str> {
        let names = self
            .tools
            .iter()
            .flat_map(|t| std::iter::once(t.name()).chain(t.aliases().iter().copied()));
        let mut out = Vec::new();
        for close in crate::commands::closest_names(name, names) {
            // An alias suggests its tool.
            if let Some(tool) = self.get(close)
                && !out.contains(&tool.name())
            {
                out.push(tool.name());
            }
        }
        out
    }
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
            ("web_search", "WebSearch"),
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

    struct Late(&'static str);

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoInput {}

    #[async_trait::async_trait]
    impl crate::tools::Tool for Late {
        type Input = NoInput;
        fn info(&self) -> crate::tools::ToolInfo {
            crate::tools::ToolInfo::new(self.0, crate::tools::ToolKind::Mcp)
        }
        fn description(&self) -> String {
            String::new()
        }
        fn title(&self, _: &NoInput, _: &SessionContext) -> String {
            self.0.into()
        }
        async fn call(
            &self,
            _: NoInput,
            _: &crate::tools::ToolContext,
        ) -> Result<crate::tools::ToolOutput, crate::tools::ToolError> {
            Ok(crate::tools::ToolOutput::text(""))
        }
    }

    #[test]
    fn late_tools_join_after_the_built_ins_once_refreshed_and_keep_applies() {
        let dir = tempfile::tempdir().unwrap();
        let session = SessionContext::for_dir(dir.path());
        let late = LateTools::default();
        let mut registry = ToolRegistry::new(builtin_tools(&session), Vec::new())
            .following(late.clone(), |t| t.name() != "mcp__x__denied");
        let before = registry.names();
        assert!(!registry.refresh_late(), "nothing new yet");
        late.replace(
            "x",
            vec![
                Arc::new(Late("mcp__x__b")),
                Arc::new(Late("mcp__x__a")),
                Arc::new(Late("mcp__x__denied")),
                Arc::new(Late("Read")),
            ],
        );
        assert!(registry.get("mcp__x__a").is_none(), "not before a refresh");
        assert!(registry.refresh_late());
        let mut expected = before.clone();
        expected.extend(["mcp__x__a".to_string(), "mcp__x__b".to_string()]);
        // Sorted after the built-ins; the denied one is not offered; a clash keeps the built-in.
        assert_eq!(registry.names(), expected);
        late.replace("x", Vec::new());
        assert!(registry.refresh_late());
        assert_eq!(registry.names(), before);
        assert!(!registry.refresh_late());
    }
}
