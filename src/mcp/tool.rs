//! The bridge from a server's tool to a cairn tool: `mcp__<server>__<tool>`, kind
//! [`ToolKind::Mcp`], carrying its (server, tool) pair for the rules. A server's annotations
//! describe, they do not permit: a tool is never read-only for the permission gate, whatever
//! `readOnlyHint` says, so it asks (or is refused in plan mode) like any tool that may write;
//! the hint (without `destructiveHint`) only lets calls run beside others. The input is validated against the tool's `inputSchema` with
//! `jsonschema` before anything is sent, and the server's result (untrusted) becomes content
//! blocks: text, base64 images, embedded resources (under a `[Resource from <server> at
//! <uri>]` header), resource links, and `structuredContent` as
//! JSON when there is no text. Restarts and timeouts are the [`Server`]'s business.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::names::normalize;
use super::server::Server;
use crate::protocol::Display;
use crate::session::context::SessionContext;
use crate::tools::mcp_catalog::resource_text;
use crate::tools::{
    Access, DynTool, McpName, ParsedInput, Preview, ToolContext, ToolError, ToolKind, ToolOutput,
    ToolResultBlock, attachment,
};

/// What people are shown of a result's text, at most (head and tail).
const MAX_DISPLAY_CHARS: usize = 20_000;

/// Descriptions longer than this are cut (a server can send anything).
const MAX_DESCRIPTION: usize = 2048;

/// Claude Code's name for a server's tool: characters outside `[A-Za-z0-9_-]` become `_`.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", normalize(server), normalize(tool))
}

/// `name` as a `&'static str`, leaked once per distinct name: a server that lists its tools
/// again (restarts, `list_changed`) reuses the names it had.
fn intern(name: String) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = names.iter().find(|n| **n == name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.push(leaked);
    leaked
}

/// The prefix every tool of `server` has.
pub fn tool_prefix(server: &str) -> String {
    format!("mcp__{}__", normalize(server))
}

/// One tool of one server.
pub struct McpTool {
    /// Interned (leaked once per distinct name): the registry hands out `&'static str` names.
    name: &'static str,
    /// The server and tool parts of `name`, normalised, for rules.
    server_part: String,
    tool_part: String,
    remote_name: String,
    description: String,
    schema: Value,
    validator: Result<jsonschema::Validator, String>,
    /// The server's `readOnlyHint` (without `destructiveHint`): concurrency only, never
    /// permission.
    hinted_read_only: bool,
    deferred: bool,
    max_chars: usize,
    server: Arc<Server>,
}

impl McpTool {
    pub fn new(
        server: Arc<Server>,
        remote: &rmcp::model::Tool,
        deferred: bool,
        max_chars: usize,
    ) -> McpTool {
        let full = tool_name(server.name(), &remote.name);
        let mut schema = Value::Object((*remote.input_schema).clone());
        if let Some(obj) = schema.as_object_mut() {
            obj.entry("type").or_insert_with(|| Value::from("object"));
        }
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| format!("the server's inputSchema is not a valid JSON Schema: {e}"));
        let annotations = remote.annotations.as_ref();
        let hinted_read_only = annotations
            .is_some_and(|a| a.read_only_hint == Some(true) && a.destructive_hint != Some(true));
        let description: String = remote
            .description
            .as_deref()
            .unwrap_or_default()
            .chars()
            .take(MAX_DESCRIPTION)
            .collect();
        McpTool {
            name: intern(full),
            server_part: normalize(server.name()),
            tool_part: normalize(&remote.name),
            remote_name: remote.name.to_string(),
            description,
            schema,
            validator,
            hinted_read_only,
            deferred,
            max_chars,
            server,
        }
    }

    fn arguments<'a>(&self, input: &'a ParsedInput) -> Option<&'a Map<String, Value>> {
        input.downcast_ref::<Map<String, Value>>()
    }
}

#[async_trait]
impl DynTool for McpTool {
    fn name(&self) -> &'static str {
        self.name
    }
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    fn description(&self) -> String {
        self.description.clone()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Mcp
    }
    fn mcp_name(&self) -> Option<McpName<'_>> {
        Some(McpName {
            server: &self.server_part,
            tool: &self.tool_part,
        })
    }
    fn prompt(&self) -> String {
        String::new()
    }
    fn is_deferred(&self) -> bool {
        self.deferred
    }
    fn input_schema(&self) -> Value {
        self.schema.clone()
    }
    fn max_result_chars(&self) -> Option<usize> {
        Some(self.max_chars)
    }
    fn parse(&self, input: &Value) -> Result<ParsedInput, ToolError> {
        let fail = |why: String| {
            ToolError::new(format!(
                "InputValidationError: {} failed due to the following issue: {why}",
                self.name
            ))
        };
        let Some(object) = input.as_object() else {
            return Err(fail("the input must be an object".into()));
        };
        let validator = self.validator.as_ref().map_err(|e| fail(e.clone()))?;
        let problems: Vec<String> = validator
            .iter_errors(input)
            .take(5)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if !problems.is_empty() {
            return Err(fail(problems.join("; ")));
        }
        Ok(ParsedInput::new(object.clone()))
    }
    fn is_concurrency_safe(&self, _input: &ParsedInput) -> bool {
        // Scheduling only: every call still goes through the gate on its own.
        self.hinted_read_only
    }
    fn is_read_only(&self, _input: &ParsedInput) -> bool {
        // A server's claim about its tool is not a permission (a destructive tool can say
        // `readOnlyHint: true`): the gate treats every MCP call as one that may write.
        false
    }
    fn is_destructive(&self, _input: &ParsedInput) -> bool {
        !self.hinted_read_only
    }
    fn title(&self, input: &ParsedInput, _ctx: &SessionContext) -> String {
        let args = self
            .arguments(input)
            .map(|a| Value::Object(a.clone()).to_string())
            .unwrap_or_default();
        let args: String = args.chars().take(120).collect();
        format!("{} - {} (MCP) {args}", self.server.name(), self.remote_name)
    }
    fn accesses(&self, _input: &ParsedInput, _ctx: &SessionContext) -> Vec<Access> {
        Vec::new()
    }
    async fn validate(&self, _input: &ParsedInput, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }
    async fn preview(
        &self,
        _input: &ParsedInput,
        _ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        Ok(None)
    }
    async fn call(&self, input: ParsedInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(arguments) = input.downcast::<Map<String, Value>>() else {
            return Err(ToolError::new(format!(
                "internal error: input was not parsed by {}",
                self.name
            )));
        };
        let result = self
            .server
            .call(
                &self.remote_name,
                arguments,
                &ctx.cancel,
                Some(ctx.progress.clone()),
            )
            .await
            .map_err(ToolError::new)?;
        // The wire shape is the stable contract; reading it back keeps us independent of the
        // SDK's Rust types for content.
        let value = serde_json::to_value(&result)
            .map_err(|e| ToolError::new(format!("the server's result is unreadable: {e}")))?;
        Ok(output_from_result(self.server.name(), &value))
    }
}

/// A `tools/call` result of `server` (wire JSON) as content for the model and a display for people.
pub fn output_from_result(server: &str, result: &Value) -> ToolOutput {
    let mut blocks: Vec<ToolResultBlock> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    let items = result.get("content").and_then(Value::as_array);
    for item in items.into_iter().flatten() {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        let s = |k: &str| item.get(k).and_then(Value::as_str);
        match kind {
            "text" => push_text(&mut blocks, &mut texts, s("text").unwrap_or("").to_string()),
            "image" => match (s("mimeType"), s("data")) {
                (Some(mime), Some(data)) => {
                    let block = ToolResultBlock::image(mime, data);
                    match attachment::check(&block) {
                        Ok(()) => blocks.push(block),
                        Err(why) => push_text(&mut blocks, &mut texts, why),
                    }
                }
                _ => push_text(
                    &mut blocks,
                    &mut texts,
                    "[image without data or mimeType]".into(),
                ),
            },
            "audio" => {
                let mime = s("mimeType").unwrap_or("audio");
                push_text(&mut blocks, &mut texts, format!("[{mime} audio not shown]"));
            }
            "resource" => {
                // Claude Code's form: the text after a `[Resource from <server> at <uri>]`
                // header, so the model knows where it came from.
                let res = item.get("resource").unwrap_or(&Value::Null);
                push_text(&mut blocks, &mut texts, resource_text(server, res));
            }
            "resource_link" => {
                let uri = s("uri").unwrap_or("");
                let mut line = format!("[Resource link: {}", s("name").unwrap_or(uri));
                if s("name").is_some() {
                    line.push_str(&format!(" ({uri})"));
                }
                if let Some(d) = s("description") {
                    line.push_str(&format!(": {d}"));
                }
                line.push(']');
                push_text(&mut blocks, &mut texts, line);
            }
            other => push_text(
                &mut blocks,
                &mut texts,
                format!("[unsupported content type {other:?}]"),
            ),
        }
    }
    if texts.is_empty()
        && let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null())
    {
        let json = serde_json::to_string_pretty(structured).unwrap_or_default();
        push_text(&mut blocks, &mut texts, json);
    }
    if blocks.is_empty() {
        push_text(&mut blocks, &mut texts, "(no content)".into());
    }
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let display = match blocks.iter().find_map(attachment::display) {
        Some(image) if texts.is_empty() => image,
        // People see a bounded copy (the model gets the spilled text, its file the whole).
        _ => Display::Text {
            text: crate::tools::spill::head_tail(&texts.join("\n"), MAX_DISPLAY_CHARS),
        },
    };
    let mut output = ToolOutput::blocks(blocks, display);
    output.is_error = is_error;
    output
}

fn push_text(blocks: &mut Vec<ToolResultBlock>, texts: &mut Vec<String>, text: String) {
    texts.push(text.clone());
    blocks.push(ToolResultBlock::Text { text });
}

#[cfg(test)]
#[path = "tool_tests.rs"]
mod tests;
