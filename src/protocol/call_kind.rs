//! What kind of work a tool call does, as a client sees it (an editor picks an icon by it):
//! the tool's own kind, with searches told from reads and sub-agents from other tools.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// Reads files.
    Read,
    /// Searches file names or contents.
    Search,
    /// Changes files.
    Edit,
    /// Runs commands.
    Execute,
    /// Fetches URLs.
    Fetch,
    /// Enters or leaves plan mode.
    Plan,
    /// Asks the person something or keeps the todo list.
    Interact,
    /// Runs a sub-agent.
    Agent,
    /// A tool of an MCP server.
    Mcp,
    #[default]
    Other,
}
