//! A tool that only runs what its inner tool calls read-only: read-only agents (the built-in
//! Explore and Plan) get Bash through it, so `git log` or `ls` work and anything that could
//! write is refused before it starts. It fails closed: an input the inner tool cannot judge
//! read-only (unknown command, an option not known to be harmless, a redirection) is refused,
//! with a message saying so. The permission gate still checks every call as usual.

use async_trait::async_trait;
use serde_json::Value;

use super::{
    Access, DynTool, McpName, ParsedInput, Preview, ToolContext, ToolError, ToolHandle, ToolKind,
    ToolOutput,
};
use crate::session::context::SessionContext;

pub struct ReadOnlyGuard {
    inner: ToolHandle,
}

impl ReadOnlyGuard {
    pub fn new(inner: ToolHandle) -> ReadOnlyGuard {
        ReadOnlyGuard { inner }
    }
}

#[async_trait]
impl DynTool for ReadOnlyGuard {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn aliases(&self) -> &'static [&'static str] {
        self.inner.aliases()
    }
    fn description(&self) -> String {
        format!(
            "{}\n\nOnly read-only commands run here (listing, reading, searching, read-only \
             git); anything that could change a file or run a program is refused.",
            self.inner.description()
        )
    }
    fn kind(&self) -> ToolKind {
        self.inner.kind()
    }
    fn mcp_name(&self) -> Option<McpName<'_>> {
        self.inner.mcp_name()
    }
    fn prompt(&self) -> String {
        self.inner.prompt()
    }
    fn is_deferred(&self) -> bool {
        self.inner.is_deferred()
    }
    fn input_schema(&self) -> Value {
        self.inner.input_schema()
    }
    fn max_result_chars(&self) -> Option<usize> {
        self.inner.max_result_chars()
    }
    fn parse(&self, input: &Value) -> Result<ParsedInput, ToolError> {
        self.inner.parse(input)
    }
    fn is_concurrency_safe(&self, input: &ParsedInput) -> bool {
        self.inner.is_concurrency_safe(input)
    }
    fn is_read_only(&self, input: &ParsedInput) -> bool {
        self.inner.is_read_only(input)
    }
    fn is_destructive(&self, input: &ParsedInput) -> bool {
        self.inner.is_destructive(input)
    }
    fn title(&self, input: &ParsedInput, ctx: &SessionContext) -> String {
        self.inner.title(input, ctx)
    }
    fn accesses(&self, input: &ParsedInput, ctx: &SessionContext) -> Vec<Access> {
        self.inner.accesses(input, ctx)
    }
    async fn validate(&self, input: &ParsedInput, ctx: &ToolContext) -> Result<(), ToolError> {
        if !self.inner.is_read_only(input) {
            return Err(ToolError::new(
                "Only read-only commands are allowed for this agent (listing, reading, \
                 searching, read-only git), and this one is not known to be read-only. Use \
                 Read, Glob or Grep, or a simpler command.",
            ));
        }
        self.inner.validate(input, ctx).await
    }
    async fn preview(
        &self,
        input: &ParsedInput,
        ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        self.inner.preview(input, ctx).await
    }
    async fn call(&self, input: ParsedInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Judged again here: `validate` is the executor's step, and a caller that skipped it
        // must not get around the guard.
        if !self.inner.is_read_only(&input) {
            return Err(ToolError::new(
                "Only read-only commands are allowed for this agent.",
            ));
        }
        self.inner.call(input, ctx).await
    }
}
