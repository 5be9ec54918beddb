//! Deferred tools on the core's side: which tools are deferred (the `toolSearch` setting),
//! the tool list and tool results of each request, and telling the model which deferred tools
//! exist.
//!
//! Loading a tool must never rewrite the cached prompt prefix. Where the endpoint takes them
//! (first-party Anthropic, or as configured) every tool travels in every request, deferred ones
//! with `defer_loading: true`, and a ToolSearch result is its `tool_reference` blocks: the tool
//! list never changes. Elsewhere deferred tools stay out of the list until loaded and are then
//! appended at its end, in load order, and a ToolSearch result is its text (each schema). A 400
//! naming `defer_loading` or `tool_reference` switches the session to the second way.
//! The deferred tools are named once in the system prompt (those known at start) and, as MCP
//! servers come and go, in `<system-reminder>`s appended to the conversation.

use std::collections::{BTreeSet, HashSet};

use crate::llm::{ContentBlock, Message, ToolResultBlock, ToolSpec, pricing};
use crate::tools::tool_search::{DeferredTools, Entry};
use crate::tools::{DynTool, ToolKind, ToolRegistry};

pub use crate::config::tool_search::{ToolSearchConfig, ToolSearchMode};

/// Whether a failed request's error says the endpoint does not take deferred tools.
pub fn is_reference_error(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    ["defer_loading", "tool_reference", "advanced-tool-use"]
        .iter()
        .any(|k| m.contains(k))
}

/// One conversation's deferred-tool state.
pub struct Deferral {
    pub mode: ToolSearchMode,
    pub tools: DeferredTools,
    /// Requests use `defer_loading` and `tool_reference` (until the endpoint refuses them).
    pub references: bool,
    /// Deferred tools named in the system prompt.
    in_prompt: BTreeSet<String>,
    /// Deferred tools the model has been told of.
    announced: BTreeSet<String>,
    /// The registry version and model the catalog was last published for.
    published: Option<(u64, String)>,
}

impl Deferral {
    pub fn new(mode: ToolSearchMode, references: bool) -> Deferral {
        Deferral {
            mode,
            tools: DeferredTools::default(),
            references: references && mode != ToolSearchMode::Never,
            in_prompt: BTreeSet::new(),
            announced: BTreeSet::new(),
            published: None,
        }
    }

    /// Whether MCP tools are deferred for `model` with the tools of `registry`.
    fn mcp_deferred(&self, registry: &ToolRegistry, model: &str) -> bool {
        match self.mode {
            ToolSearchMode::Never => false,
            ToolSearchMode::Always => true,
            ToolSearchMode::Auto { percent } => {
                let bytes: usize = registry
                    .iter()
                    .filter(|t| t.kind() == ToolKind::Mcp)
                    .map(|t| {
                        t.name().len() + t.description().len() + t.input_schema().to_string().len()
                    })
                    .sum();
                let tokens = bytes as u64 / 4;
                tokens * 100 > pricing::context_window(model) * u64::from(percent)
            }
        }
    }

    /// Whether `tool` is deferred; `mcp`: MCP tools are. The resource tools
    /// (ListMcpResourcesTool, ReadMcpResourceTool) go with the MCP tools, as in Claude Code.
    fn deferred(&self, tool: &dyn DynTool, mcp: bool) -> bool {
        use crate::tools::mcp_resources::{LIST_NAME, READ_NAME};
        let mcp_tool =
            tool.kind() == ToolKind::Mcp || [LIST_NAME, READ_NAME].contains(&tool.name());
        self.mode != ToolSearchMode::Never && (tool.is_deferred() || (mcp && mcp_tool))
    }

    /// Publish which tools are deferred, when the registry (`version`) or the model changed.
    pub fn publish(&mut self, registry: &ToolRegistry, model: &str, version: u64) {
        let key = (version, model.to_string());
        if self.published.as_ref() == Some(&key) {
            return;
        }
        let mcp = self.mcp_deferred(registry, model);
        let entries = registry
            .iter()
            .filter(|t| self.deferred(t.as_ref(), mcp))
            .map(|t| Entry::new(t.name(), t.description(), t.input_schema()))
            .collect();
        self.tools.publish(entries);
        self.published = Some(key);
    }

    /// The system prompt's section naming the deferred tools known now (empty when none);
    /// they count as announced.
    pub fn prompt_section(&mut self) -> String {
        let pending = self.tools.pending();
        if pending.is_empty() {
            return String::new();
        }
        self.in_prompt = pending.iter().map(|(n, _)| n.clone()).collect();
        self.announced = self.in_prompt.clone();
        format!(
            "\n# Deferred tools\nThese tools exist but their schemas are not loaded, so they \
             cannot be called yet. Load one with ToolSearch (\"select:Name\", or keywords) \
             before using it:\n{}",
            listing(&pending)
        )
    }

    /// The system prompt's section naming the MCP servers of `registry` still connecting
    /// (empty when none): their tools come later, and ToolSearch waits for them.
    pub fn connecting_section(&self, registry: &ToolRegistry) -> String {
        let Some(catalog) = registry.late().and_then(crate::tools::LateTools::catalog) else {
            return String::new();
        };
        let names = catalog.connecting();
        if names.is_empty() {
            return String::new();
        }
        let how = if self.mode == ToolSearchMode::Never {
            "their tools join the list when they are ready"
        } else {
            "ToolSearch waits for them, then finds their tools"
        };
        format!(
            "\n# MCP servers still connecting\n{}: {how}.",
            names.join(", ")
        )
    }

    /// The conversation no longer holds the reminders (cleared, resumed, compacted): tell the
    /// model again what is not in the system prompt.
    pub fn forget_announcements(&mut self) {
        self.announced = self.in_prompt.clone();
    }

    /// A reminder naming deferred tools that appeared or went away since the model was last
    /// told, if any did.
    pub fn announcement(&mut self) -> Option<String> {
        let pending = self.tools.pending();
        let loaded: HashSet<String> = self.tools.loaded().into_iter().collect();
        let now: BTreeSet<String> = pending.iter().map(|(n, _)| n.clone()).collect();
        let new: Vec<(String, String)> = pending
            .into_iter()
            .filter(|(n, _)| !self.announced.contains(n))
            .collect();
        let gone: Vec<String> = self
            .announced
            .iter()
            .filter(|n| !now.contains(*n) && !loaded.contains(*n))
            .cloned()
            .collect();
        if new.is_empty() && gone.is_empty() {
            return None;
        }
        let mut out = Vec::new();
        if !new.is_empty() {
            out.push(format!(
                "These deferred tools are now available. Load one with ToolSearch \
                 (\"select:Name\", or keywords) before calling it:\n{}",
                listing(&new)
            ));
        }
        if !gone.is_empty() {
            out.push(format!(
                "These deferred tools are no longer available: {}.",
                gone.join(", ")
            ));
        }
        for n in gone {
            self.announced.remove(&n);
        }
        self.announced.extend(new.into_iter().map(|(n, _)| n));
        Some(out.join("\n"))
    }

    /// The tool list of the next request.
    pub fn specs(&self, registry: &ToolRegistry, messages: &[Message]) -> Vec<ToolSpec> {
        let spec = |t: &dyn DynTool, defer_loading: bool| ToolSpec {
            name: t.name().to_string(),
            description: t.description(),
            input_schema: t.input_schema(),
            defer_loading,
        };
        let deferred = |t: &dyn DynTool| self.tools.is_deferred(t.name());
        if self.references {
            // A loaded tool whose reference is gone from the conversation (compacted away)
            // travels whole.
            let referenced = referenced(messages);
            return registry
                .iter()
                .map(|t| {
                    let name = t.name();
                    let hidden = deferred(t.as_ref())
                        && (!self.tools.is_loaded(name) || referenced.contains(name));
                    spec(t.as_ref(), hidden)
                })
                .collect();
        }
        let mut specs: Vec<ToolSpec> = registry
            .iter()
            .filter(|t| !deferred(t.as_ref()))
            .map(|t| spec(t.as_ref(), false))
            .collect();
        for name in self.tools.loaded() {
            if let Some(t) = registry
                .iter()
                .find(|t| t.name() == name && deferred(t.as_ref()))
            {
                specs.push(spec(t.as_ref(), false));
            }
        }
        specs
    }

    /// The conversation as the next request sends it: a ToolSearch result is its
    /// `tool_reference` blocks where the endpoint takes them, its text elsewhere.
    pub fn shape_messages(&self, messages: &[Message]) -> Vec<Message> {
        let mut out = messages.to_vec();
        for block in out.iter_mut().flat_map(|m| m.content.iter_mut()) {
            if let ContentBlock::ToolResult { content, .. } = block
                && content.tool_references().next().is_some()
            {
                let references = self.references;
                content
                    .0
                    .retain(|b| matches!(b, ToolResultBlock::ToolReference { .. }) == references);
            }
        }
        out
    }
}

/// Up to this many deferred tools are listed with their one-line summaries; more are listed by
/// name only (keyword searches still match their descriptions). Measured: the summaries of the
/// 27 tools of server-everything and server-filesystem cost ~450 tokens more than their names.
const SUMMARIES_UP_TO: usize = 8;

/// `- name: summary` lines; a long list is names alone, an MCP server's tools on one line
/// (`- mcp__gh__<name>: create_issue, get_issue`), which halves its cost.
fn listing(tools: &[(String, String)]) -> String {
    if tools.len() > SUMMARIES_UP_TO {
        return grouped(tools);
    }
    tools
        .iter()
        .map(|(n, s)| match s.is_empty() {
            true => format!("- {n}\n"),
            false => format!("- {n}: {s}\n"),
        })
        .collect()
}

/// Names only: other tools one a line, then each MCP server's tools on one line.
fn grouped(tools: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut servers: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, _) in tools {
        let split = name
            .strip_prefix("mcp__")
            .and_then(|rest| rest.split_once("__"));
        match split {
            Some((server, tool)) if !server.is_empty() && !tool.is_empty() => {
                match servers.iter_mut().find(|(s, _)| *s == server) {
                    Some((_, list)) => list.push(tool),
                    None => servers.push((server, vec![tool])),
                }
            }
            _ => out.push_str(&format!("- {name}\n")),
        }
    }
    for (server, list) in servers {
        out.push_str(&format!("- mcp__{server}__<name>: {}\n", list.join(", ")));
    }
    out
}

/// The tools referenced by ToolSearch results in `messages`.
fn referenced(messages: &[Message]) -> HashSet<&str> {
    messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => Some(content.tool_references()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_errors_are_recognised() {
        assert!(is_reference_error(
            "400: tools.3.defer_loading: Extra inputs are not permitted"
        ));
        assert!(is_reference_error("unknown content type tool_reference"));
        assert!(!is_reference_error("400: max_tokens: too large"));
    }

    #[test]
    fn a_long_listing_puts_each_servers_tools_on_one_line() {
        let tools: Vec<(String, String)> = ["EnterPlanMode", "mcp__gh__create_issue"]
            .into_iter()
            .chain((0..8).map(|_| "mcp__gh__get_issue"))
            .chain(["mcp__time__now", "mcp__a__b__c"])
            .map(|n| (n.to_string(), "Summary.".to_string()))
            .collect();
        let gh = ["create_issue"]
            .into_iter()
            .chain(std::iter::repeat_n("get_issue", 8))
            .collect::<Vec<_>>()
            .join(", ");
        assert_eq!(
            listing(&tools),
            format!(
                "- EnterPlanMode\n- mcp__gh__<name>: {gh}\n- mcp__time__<name>: now\n\
                 - mcp__a__<name>: b__c\n"
            )
        );
        assert_eq!(
            listing(&tools[..2]),
            "- EnterPlanMode: Summary.\n- mcp__gh__create_issue: Summary.\n"
        );
    }
}
