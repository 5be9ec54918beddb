//! `ListMcpResourcesTool` and `ReadMcpResourceTool`, with Claude Code's names, inputs and result
//! shapes: the list is a JSON array of `{uri, name, mimeType?, description?, server}`, a read is
//! `{"contents": [{uri, mimeType?, text}]}` (binary contents are described, never sent). They
//! join the session's tools (through [`super::LateTools`]) once a connected server offers
//! resources. Reading only asks a server for data it publishes: read-only, no prompt, as in
//! Claude Code.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::mcp_catalog::{McpCatalog, resource_header};
use super::{Access, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::session::context::SessionContext;

pub const LIST_NAME: &str = "ListMcpResourcesTool";
pub const READ_NAME: &str = "ReadMcpResourceTool";

/// The list's answer when no server has a resource (Claude Code's words).
pub const NO_RESOURCES: &str =
    "No resources found. MCP servers may still provide tools even if they have no resources.";

/// Whether `name` is one of the resource tools.
pub fn is_resource_tool(name: &str) -> bool {
    name == LIST_NAME || name == READ_NAME
}

/// Both tools over `catalog`.
pub fn tools(catalog: Arc<dyn McpCatalog>) -> Vec<super::ToolHandle> {
    vec![
        Arc::new(ListMcpResourcesTool(Arc::clone(&catalog))),
        Arc::new(ReadMcpResourceTool(catalog)),
    ]
}

pub struct ListMcpResourcesTool(Arc<dyn McpCatalog>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    /// Optional server name to filter resources by
    #[serde(default)]
    pub server: Option<String>,
}

#[async_trait]
impl Tool for ListMcpResourcesTool {
    type Input = ListInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new(LIST_NAME, ToolKind::Other)
            .read_only()
            .concurrency_safe()
    }

    fn description(&self) -> String {
        "Lists available resources from configured MCP servers. Each resource object includes \
         a 'server' field indicating which server it's from. Usage: list every server's \
         resources with no input, or one server's with {\"server\": \"name\"}."
            .into()
    }

    /// The servers it reads: the one named, else every server (a denied one refuses it).
    fn accesses(&self, input: &ListInput, _ctx: &SessionContext) -> Vec<Access> {
        let servers = match &input.server {
            Some(s) => vec![s.clone()],
            None => self.0.server_names(),
        };
        servers.into_iter().map(Access::McpServer).collect()
    }

    fn title(&self, input: &ListInput, _ctx: &SessionContext) -> String {
        match &input.server {
            Some(s) => format!("List MCP resources from server \"{s}\""),
            None => "List all MCP resources".into(),
        }
    }

    async fn call(&self, input: ListInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let found = self
            .0
            .list_resources(input.server.as_deref())
            .await
            .map_err(ToolError::new)?;
        if found.is_empty() {
            return Ok(ToolOutput::text(NO_RESOURCES));
        }
        let items: Vec<Value> = found
            .into_iter()
            .map(|r| {
                let mut item = json!({"uri": r.uri, "name": r.name});
                if let Some(m) = r.mime_type {
                    item["mimeType"] = m.into();
                }
                if let Some(d) = r.description {
                    item["description"] = d.into();
                }
                item["server"] = r.server.into();
                item
            })
            .collect();
        Ok(ToolOutput::text(
            serde_json::to_string(&items).unwrap_or_default(),
        ))
    }
}

pub struct ReadMcpResourceTool(Arc<dyn McpCatalog>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// The MCP server name
    pub server: String,
    /// The resource URI to read
    pub uri: String,
}

#[async_trait]
impl Tool for ReadMcpResourceTool {
    type Input = ReadInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new(READ_NAME, ToolKind::Other)
            .read_only()
            .concurrency_safe()
    }

    fn description(&self) -> String {
        "Reads a specific resource from an MCP server, identified by server name and resource \
         URI. Parameters: server (required): the name of the MCP server from which to read the \
         resource; uri (required): the URI of the resource to read."
            .into()
    }

    fn accesses(&self, input: &ReadInput, _ctx: &SessionContext) -> Vec<Access> {
        vec![Access::McpServer(input.server.clone())]
    }

    fn title(&self, input: &ReadInput, _ctx: &SessionContext) -> String {
        format!("Read MCP resource {} from \"{}\"", input.uri, input.server)
    }

    async fn call(&self, input: ReadInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let result = self
            .0
            .read_resource(&input.server, &input.uri)
            .await
            .map_err(ToolError::new)?;
        Ok(ToolOutput::text(read_answer(&input.server, &result)))
    }
}

/// A `resources/read` result as Claude Code answers it: `{"contents": [...]}` with each item's
/// `uri`, `mimeType` and `text`; a binary item's `blob` is replaced by a line saying what it was.
pub fn read_answer(server: &str, result: &Value) -> String {
    let items = result.get("contents").and_then(Value::as_array);
    let contents: Vec<Value> = items
        .into_iter()
        .flatten()
        .map(|item| {
            let field = |k: &str| item.get(k).and_then(Value::as_str);
            let uri = field("uri").unwrap_or("");
            let mut out = json!({"uri": uri});
            if let Some(m) = field("mimeType") {
                out["mimeType"] = m.into();
            }
            match (field("text"), field("blob")) {
                (Some(text), _) => out["text"] = text.into(),
                (None, Some(_)) => {
                    let text = super::mcp_catalog::resource_text(server, item);
                    let note = text
                        .strip_prefix(&resource_header(server, uri))
                        .unwrap_or(&text);
                    out["text"] = note.into();
                }
                _ => {}
            }
            out
        })
        .collect();
    serde_json::to_string(&json!({ "contents": contents })).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_read_answer_has_claude_codes_shape_and_never_carries_a_blob() {
        let answer = super::read_answer(
            "ev",
            &json!({"contents": [
                {"uri": "demo://t", "mimeType": "text/plain", "text": "hi"},
                {"uri": "demo://b", "mimeType": "application/gzip", "blob": "AAAA"},
            ]}),
        );
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(
            v,
            json!({"contents": [
                {"uri": "demo://t", "mimeType": "text/plain", "text": "hi"},
                {"uri": "demo://b", "mimeType": "application/gzip",
                 "text": "[binary content (application/gzip, 3 bytes) not shown]"},
            ]})
        );
    }
}
