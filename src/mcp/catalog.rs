//! The session's servers as a [`McpCatalog`]: their resources (from the lists each server keeps
//! current), reading one, their prompts as `/mcp__<server>__<prompt>` and getting one. A prompt's
//! messages become one text for the model; an embedded resource keeps its URI header.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::names::normalize;
use super::server::{Server, Status};
use crate::tools::mcp_catalog::{McpCatalog, PromptEntry, ResourceEntry, resource_text};

/// The manager's list of servers, shared.
pub type SharedServers = Arc<Mutex<Vec<Arc<Server>>>>;

pub struct Catalog {
    servers: SharedServers,
    /// The most [`McpCatalog::wait_connecting`] waits: the start-up timeout and a little.
    startup: Duration,
}

impl Catalog {
    pub fn new(servers: SharedServers, startup: Duration) -> Catalog {
        Catalog { servers, startup }
    }

    fn all(&self) -> Vec<Arc<Server>> {
        self.servers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn find(&self, name: &str) -> Result<Arc<Server>, String> {
        let all = self.all();
        if let Some(s) = all.iter().find(|s| s.name() == name) {
            return Ok(Arc::clone(s));
        }
        let names: Vec<&str> = all.iter().map(|s| s.name()).collect();
        Err(format!(
            "Server \"{name}\" not found. Available servers: {}",
            names.join(", ")
        ))
    }
}

#[async_trait]
impl McpCatalog for Catalog {
    fn server_names(&self) -> Vec<String> {
        self.all().iter().map(|s| s.name().to_string()).collect()
    }

    fn connecting(&self) -> Vec<String> {
        self.all()
            .iter()
            .filter(|s| s.status() == Status::Connecting)
            .map(|s| s.name().to_string())
            .collect()
    }

    async fn wait_connecting(&self) {
        let deadline = tokio::time::Instant::now() + self.startup + Duration::from_secs(1);
        while !self.connecting().is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn list_resources(&self, server: Option<&str>) -> Result<Vec<ResourceEntry>, String> {
        let servers = match server {
            Some(name) => vec![self.find(name)?],
            None => self.all(),
        };
        Ok(servers
            .iter()
            .flat_map(|s| {
                s.lists().resources.into_iter().map(|r| ResourceEntry {
                    server: s.name().to_string(),
                    uri: r.uri.clone(),
                    name: r.name.clone(),
                    mime_type: r.mime_type.clone(),
                    description: r.description.clone(),
                })
            })
            .collect())
    }

    async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, String> {
        self.find(server)?.read_resource(uri).await
    }

    fn prompts(&self) -> Vec<PromptEntry> {
        self.all()
            .iter()
            .filter(|s| matches!(s.status(), Status::Connected { .. } | Status::Failed(_)))
            .flat_map(|s| {
                s.lists().prompts.into_iter().map(|p| PromptEntry {
                    command: format!("mcp__{}__{}", normalize(s.name()), normalize(&p.name)),
                    server: s.name().to_string(),
                    description: p.description.clone().unwrap_or_default(),
                    arguments: p
                        .arguments
                        .iter()
                        .flatten()
                        .map(|a| (a.name.clone(), a.required == Some(true)))
                        .collect(),
                    prompt: p.name,
                })
            })
            .collect()
    }

    async fn get_prompt(
        &self,
        entry: &PromptEntry,
        arguments: Map<String, Value>,
    ) -> Result<String, String> {
        let result = self
            .find(&entry.server)?
            .get_prompt(&entry.prompt, arguments)
            .await?;
        Ok(prompt_text(&entry.server, &result))
    }
}

/// A `prompts/get` result (wire JSON) as one text: each message's text, an embedded resource
/// under its URI header, anything else named.
pub fn prompt_text(server: &str, result: &Value) -> String {
    let messages = result.get("messages").and_then(Value::as_array);
    let parts: Vec<String> = messages
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("content"))
        .map(|c| match c.get("type").and_then(Value::as_str) {
            Some("text") => c
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            Some("resource") => resource_text(server, c.get("resource").unwrap_or(&Value::Null)),
            Some(other) => format!("[{other} content not shown]"),
            None => String::new(),
        })
        .filter(|t| !t.is_empty())
        .collect();
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_prompts_messages_become_one_text_and_resources_keep_their_header() {
        let text = super::prompt_text(
            "ev",
            &json!({"messages": [
                {"role": "user", "content": {"type": "text", "text": "Look at this:"}},
                {"role": "user", "content": {"type": "resource",
                    "resource": {"uri": "demo://r/1", "text": "one"}}},
                {"role": "user", "content": {"type": "image", "data": "AA", "mimeType": "image/png"}},
            ]}),
        );
        assert_eq!(
            text,
            "Look at this:\n\n[Resource from ev at demo://r/1] one\n\n[image content not shown]"
        );
    }
}
