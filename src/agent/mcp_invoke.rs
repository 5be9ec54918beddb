//! What the MCP servers add to a prompt, through the [`McpCatalog`] the core finds beside its
//! late tools: `/mcp__<server>__<prompt> args` is the server's prompt (arguments by position
//! and by `name=value`), sent in place of what was typed; and each `@<server>:<uri>` mention of
//! a configured server attaches that resource's contents, under its `[Resource from <server>
//! at <uri>]` header. A mention of no server is left to the file mentions (and as text).

use crate::llm::ContentBlock;
use crate::tools::mcp_catalog::{McpCatalog, prompt_arguments, resource_text};

/// At most this many resources are attached to one prompt.
const MAX_RESOURCES: usize = 10;

/// The server prompt `prompt` invokes, expanded (or why it cannot be); `None` when it names
/// no server prompt.
pub(crate) async fn expand_prompt(
    prompt: &str,
    catalog: Option<&dyn McpCatalog>,
) -> Option<Result<String, String>> {
    let (name, args) = crate::commands::invocation(prompt)?;
    if !name.starts_with("mcp__") {
        return None;
    }
    let entry = catalog?.prompts().into_iter().find(|p| p.command == name)?;
    let arguments = match prompt_arguments(&entry, args) {
        Ok(a) => a,
        Err(why) => return Some(Err(why)),
    };
    Some(
        catalog?
            .get_prompt(&entry, arguments)
            .await
            .map_err(|why| format!("/{name} failed: {why}")),
    )
}

/// The resources `prompt` mentions as `@server:uri`, as blocks to send after it, and notices
/// for the person.
pub(crate) async fn attach_resources(
    prompt: &str,
    catalog: Option<&dyn McpCatalog>,
) -> (Vec<ContentBlock>, Vec<String>) {
    let (mut blocks, mut notices) = (Vec::new(), Vec::new());
    let Some(catalog) = catalog else {
        return (blocks, notices);
    };
    let servers = catalog.server_names();
    let mentioned = super::attachments::mentions(prompt)
        .into_iter()
        .filter_map(|token| {
            let (server, uri) = token.split_once(':')?;
            (servers.iter().any(|s| s == server) && !uri.is_empty())
                .then(|| (server.to_string(), uri.to_string()))
        })
        .take(MAX_RESOURCES);
    for (server, uri) in mentioned {
        match catalog.read_resource(&server, &uri).await {
            Ok(result) => {
                let items = result.get("contents").and_then(|c| c.as_array());
                let texts: Vec<String> = items
                    .into_iter()
                    .flatten()
                    .map(|item| resource_text(&server, item))
                    .collect();
                let text = if texts.is_empty() {
                    format!("[Resource from {server} at {uri}] (empty)")
                } else {
                    texts.join("\n\n")
                };
                blocks.push(ContentBlock::Text { text });
                notices.push(format!("Attached @{server}:{uri}"));
            }
            Err(why) => notices.push(format!("@{server}:{uri} was not attached: {why}")),
        }
    }
    (blocks, notices)
}
