//! What the session's MCP servers offer beyond tools, as the layers above `mcp` see it: their
//! resources (listed, read) and prompts (listed, expanded), behind the [`McpCatalog`] trait the
//! MCP client implements. The core reaches it through [`super::LateTools::catalog`] (for
//! `@server:uri` mentions and `/mcp__server__prompt`), the resource tools hold it. Also the one
//! way a resource's contents become text for the model: a `[Resource from <server> at <uri>]`
//! header before its text, in tool results and mentions alike.

use async_trait::async_trait;
use serde_json::Value;

/// One resource a server lists (Claude Code's `ListMcpResourcesTool` item).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub mime_type: Option<String>,
    pub description: Option<String>,
}

/// One prompt a server offers, as `/mcp__<server>__<prompt>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptEntry {
    /// The command's name without the slash: `mcp__<server>__<prompt>`, normalised.
    pub command: String,
    pub server: String,
    /// The prompt's name as the server has it.
    pub prompt: String,
    pub description: String,
    /// The arguments in the server's order: (name, required).
    pub arguments: Vec<(String, bool)>,
}

/// The session's MCP servers' resources and prompts. Errors are messages for the model or the
/// person. Everything a server returns is untrusted data.
#[async_trait]
pub trait McpCatalog: Send + Sync {
    /// The names of every configured server (connected or not).
    fn server_names(&self) -> Vec<String>;
    /// The servers still connecting (their tools are not known yet).
    fn connecting(&self) -> Vec<String> {
        Vec::new()
    }
    /// Wait until no server is still connecting (each gives up after its start-up timeout,
    /// `MCP_TIMEOUT`); once a server counts as connected its tools are in the late list.
    async fn wait_connecting(&self) {}
    /// The resources of `server`, or of every connected server.
    async fn list_resources(&self, server: Option<&str>) -> Result<Vec<ResourceEntry>, String>;
    /// `resources/read` on `server`: the wire result (`{"contents": [...]}`).
    async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, String>;
    /// Every connected server's prompts.
    fn prompts(&self) -> Vec<PromptEntry>;
    /// `prompts/get`: the prompt's messages as one text.
    async fn get_prompt(
        &self,
        entry: &PromptEntry,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<String, String>;
}

/// The header before a resource's text: `[Resource from <server> at <uri>] `.
pub fn resource_header(server: &str, uri: &str) -> String {
    format!("[Resource from {server} at {uri}] ")
}

/// One item of a `resources/read` result (or an embedded resource) as text for the model: its
/// text under the header, or a line saying what binary content was not shown.
pub fn resource_text(server: &str, item: &Value) -> String {
    let field = |k: &str| item.get(k).and_then(Value::as_str);
    let uri = field("uri").unwrap_or("");
    let header = resource_header(server, uri);
    match (field("text"), field("blob")) {
        (Some(text), _) => format!("{header}{text}"),
        (None, Some(blob)) => {
            let mime = field("mimeType").unwrap_or("application/octet-stream");
            let bytes = crate::llm::tool_result::base64_decoded_len(blob);
            format!("{header}[binary content ({mime}, {bytes} bytes) not shown]")
        }
        _ => format!("{header}(empty)"),
    }
}

/// The words of `args`: split at whitespace, a `"…"` or `'…'` quoted part kept whole.
fn words(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            None => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

/// The arguments of `/<entry.command> args`: `name=value` words set that argument, the other
/// words fill the remaining arguments in the server's order (words beyond the last one join
/// it). A required argument left without a value is an error naming it.
pub fn prompt_arguments(
    entry: &PromptEntry,
    args: &str,
) -> Result<serde_json::Map<String, Value>, String> {
    let mut named = serde_json::Map::new();
    let mut positional = Vec::new();
    for word in words(args) {
        match word.split_once('=') {
            Some((k, v)) if entry.arguments.iter().any(|(n, _)| n == k) => {
                named.insert(k.to_string(), Value::from(v));
            }
            _ => positional.push(word),
        }
    }
    let open: Vec<&String> = entry
        .arguments
        .iter()
        .map(|(n, _)| n)
        .filter(|n| !named.contains_key(n.as_str()))
        .collect();
    let mut values = positional.into_iter();
    for (i, name) in open.iter().enumerate() {
        let value = if i + 1 == open.len() {
            let rest: Vec<String> = values.by_ref().collect();
            (!rest.is_empty()).then(|| rest.join(" "))
        } else {
            values.next()
        };
        if let Some(v) = value {
            named.insert(name.to_string(), Value::from(v));
        }
    }
    let missing: Vec<&str> = entry
        .arguments
        .iter()
        .filter(|(n, required)| *required && !named.contains_key(n))
        .map(|(n, _)| n.as_str())
        .collect();
    if !missing.is_empty() {
        let usage: Vec<String> = entry
            .arguments
            .iter()
            .map(|(n, _)| format!("<{n}>"))
            .collect();
        return Err(format!(
            "/{} needs {}: {} (usage: /{} {})",
            entry.command,
            if missing.len() == 1 {
                "the argument"
            } else {
                "the arguments"
            },
            missing.join(", "),
            entry.command,
            usage.join(" ")
        ));
    }
    Ok(named)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn entry() -> super::PromptEntry {
        super::PromptEntry {
            command: "mcp__ev__args-prompt".into(),
            server: "ev".into(),
            prompt: "args-prompt".into(),
            description: String::new(),
            arguments: vec![("city".into(), true), ("state".into(), false)],
        }
    }

    #[test]
    fn prompt_arguments_by_position_by_name_and_quoted() {
        let args = |s: &str| super::prompt_arguments(&entry(), s).map(serde_json::Value::Object);
        assert_eq!(args("Paris"), Ok(json!({"city": "Paris"})));
        assert_eq!(
            args("Austin Texas"),
            Ok(json!({"city": "Austin", "state": "Texas"}))
        );
        assert_eq!(
            args("state=Texas Austin"),
            Ok(json!({"city": "Austin", "state": "Texas"}))
        );
        assert_eq!(
            args("\"New York\" New York State"),
            Ok(json!({"city": "New York", "state": "New York State"}))
        );
        assert_eq!(args("city='San José'"), Ok(json!({"city": "San José"})));
        assert_eq!(
            args("state=Texas"),
            Err("/mcp__ev__args-prompt needs the argument: city (usage: \
                 /mcp__ev__args-prompt <city> <state>)"
                .into())
        );
    }

    #[test]
    fn resource_text_keeps_the_uri_header_and_never_shows_a_blob() {
        let text = super::resource_text("ev", &json!({"uri": "demo://a", "text": "hello"}));
        assert_eq!(text, "[Resource from ev at demo://a] hello");
        let blob = super::resource_text(
            "ev",
            &json!({"uri": "demo://b", "mimeType": "application/gzip", "blob": "AAAA"}),
        );
        assert_eq!(
            blob,
            "[Resource from ev at demo://b] [binary content (application/gzip, 3 bytes) not shown]"
        );
    }
}
