//! The tools of one conversation: the registry (built-ins, then MCP tools as their servers
//! join) and which of them are deferred and how requests carry them ([`Deferral`]). Before
//! each request the tools that joined are taken in and the deferred ones published again.

use super::deferral::Deferral;
use crate::llm::{Message, ToolSpec};
use crate::tools::ToolRegistry;

pub(crate) struct ToolSet {
    pub registry: ToolRegistry,
    /// Deferred tools: which, which are loaded, how requests carry them.
    pub deferral: Deferral,
    /// Counts the changes of the registry's late tools (MCP servers coming and going).
    version: u64,
}

impl ToolSet {
    pub fn new(registry: ToolRegistry, deferral: Deferral) -> ToolSet {
        deferral.tools.follow(registry.clone());
        ToolSet {
            registry,
            deferral,
            version: 0,
        }
    }

    /// Replace the registry with what `change` makes of it (a sub-agent's own MCP servers
    /// joining as its run starts).
    pub fn rebuild(&mut self, change: impl FnOnce(&ToolRegistry) -> ToolRegistry) {
        self.registry = change(&self.registry);
        self.deferral.tools.follow(self.registry.clone());
        self.version += 1;
    }

    /// Before a request to `model`: take in the MCP tools that joined since the last one
    /// (servers connect in the background) and publish which are deferred; a word to the
    /// model about deferred tools that came or went.
    pub fn refresh(&mut self, model: &str) -> Option<String> {
        if self.registry.refresh_late() {
            self.version += 1;
        }
        self.deferral.publish(&self.registry, model, self.version);
        self.deferral.announcement()
    }

    /// The tool list of a request over `messages`.
    pub fn specs(&self, messages: &[Message]) -> Vec<ToolSpec> {
        self.deferral.specs(&self.registry, messages)
    }
}
