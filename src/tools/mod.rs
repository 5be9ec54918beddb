//! The tool framework: the [`Tool`] trait every tool implements, its object-safe twin
//! [`DynTool`] the executor uses, the per-call [`ToolContext`], and the results tools return.
//!
//! A tool declares a typed input (`Deserialize + JsonSchema`): deserialising the model's JSON is
//! the validation, and the schema the model sees is derived from the same struct. Defaults fail
//! closed: a tool is not concurrency-safe, not read-only and needs permission unless it says
//! otherwise. A tool never panics on input and never prints: it returns a [`ToolOutput`] (content
//! blocks for the model — text, and images or documents — and a [`Display`] for people) or a
//! [`ToolError`] whose message tells the model what to do next.

pub mod agent_servers;
pub mod agent_tool;
pub mod ask_user;
pub mod attachment;
pub mod bash;
pub mod diff_snippet;
pub mod edit;
pub mod edit_commit;
pub mod edit_conflict;
pub mod edit_core;
pub mod edit_large;
pub mod file_common;
pub mod glob;
pub mod grep;
pub mod kind;
pub mod mcp_catalog;
pub mod mcp_resources;
pub mod multi_edit;
pub mod notebook_edit;
pub mod plan_mode;
pub mod read;
pub mod read_only_guard;
pub mod registry;
pub mod schema;
pub mod search_budget;
pub mod skill;
pub mod spill;
pub mod text_match;
pub mod todo_write;
pub mod tool_search;
pub mod web_fetch;
pub mod web_search;
pub mod write;
pub mod write_errors;

use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::protocol::{Display, Event};
use crate::session::context::SessionContext;

/// The blocks of a result: the same types the conversation carries, so results reach the wire
/// without conversion.
pub use crate::llm::{ToolResultBlock, ToolResultContent};

pub use kind::{McpName, ToolKind};
pub use registry::{LateTools, ToolRegistry};

/// What a call touches, for permission rules and path-safety checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Reads this path (Read, Glob/Grep roots). Absolute, as given after expansion.
    Read(PathBuf),
    /// Writes this path (Write, Edit, MultiEdit).
    Write(PathBuf),
    /// Runs a shell command in a directory.
    Exec { command: String, cwd: PathBuf },
    /// Fetches a URL.
    Fetch(String),
    /// Anything else matched by a specifier (`Agent(name)`).
    Named(String),
    /// Runs something named whose instructions then steer the conversation, and whose
    /// `allowed-tools` are allowed while it runs (`Skill(name)`): even from a read-only call it
    /// needs the person's approval or one of their own rules naming it, never a grant of
    /// another skill or command.
    Invoke(String),
    /// Needs the person's approval of this plan, and ends plan mode when given (ExitPlanMode).
    /// Outside plan mode there is nothing to approve, and the call is refused.
    ApprovePlan(String),
    /// Needs the person's answers to these questions (AskUserQuestion); refused when no one can
    /// be asked.
    AskPerson(Vec<crate::protocol::Question>),
    /// Reads what this MCP server publishes (its resources): a deny rule on all of that
    /// server's tools (`mcp__server`, `mcp__*`) refuses it too.
    McpServer(String),
}

/// What a successful call asks of the core beside its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Switch the session to plan mode (EnterPlanMode).
    EnterPlanMode,
    /// The session's todo list is now this (TodoWrite).
    Todos(Vec<crate::protocol::Todo>),
    /// Until the turn ends: allow these rules and use this model (a skill's `allowed-tools`
    /// and `model`).
    ForTurn {
        allowed_tools: Vec<String>,
        model: Option<String>,
    },
    /// These deferred tools are loaded from now on (ToolSearch).
    LoadTools(Vec<String>),
}

/// What a call would do, computed without side effects, shown in the permission prompt and, for
/// writes, carried into the call so it writes exactly what was approved.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub display: Display,
    /// For file writes: the exact content the call will write. None for a large file's write,
    /// whose `Display::Diff` carries it (one copy of the file fewer): see [`Preview::content`].
    pub new_content: Option<String>,
}

impl Preview {
    /// What a file write will write: `new_content`, else the `after` of its diff (only the
    /// file tools preview a diff).
    pub fn content(&self) -> Option<&str> {
        match (&self.new_content, &self.display) {
            (Some(c), _) => Some(c),
            (None, Display::Diff { after, .. }) => Some(after),
            _ => None,
        }
    }
}

/// The person replaced the proposed content (rejected hunks, or edited it in $EDITOR).
#[derive(Debug, Clone, PartialEq)]
pub struct ContentOverride {
    pub content: String,
    /// Appended to the result so the model knows what changed.
    pub note: String,
    /// For a change to several files: each file's content as approved (`content` unused).
    pub files: Vec<crate::protocol::EditedFile>,
}

/// Sends progress for one call to the clients.
#[derive(Clone)]
pub struct ProgressSender {
    call_id: String,
    events: crate::session::context::EventSender,
}

impl ProgressSender {
    pub fn new(call_id: String, events: crate::session::context::EventSender) -> Self {
        ProgressSender { call_id, events }
    }

    /// Report the latest output of a long-running call (e.g. the last lines of a command).
    pub fn output(&self, output: impl Into<String>) {
        self.events.send(Event::ToolCallProgress {
            call_id: self.call_id.clone(),
            output: output.into(),
        });
    }
}

/// Everything one call may use. Built per call by the executor.
pub struct ToolContext {
    pub session: Arc<SessionContext>,
    pub call_id: String,
    /// Cancelled on interrupt: long-running tools must watch it.
    pub cancel: CancellationToken,
    pub progress: ProgressSender,
    /// The preview the person approved, if the tool produced one.
    pub preview: Option<Preview>,
    /// Set when the person changed the proposed content before approving.
    pub content_override: Option<ContentOverride>,
    /// The person's answers, for a call that asked questions ([`Access::AskPerson`]).
    pub answers: Option<Vec<String>>,
    /// The conversation's deferred tools (what ToolSearch searches).
    pub deferred: tool_search::DeferredTools,
    /// The name the model called the tool by, when it was an alias (`grep_search`).
    pub called_as: Option<String>,
    /// The person's answer to a change that conflicted with an outside change
    /// ([`ToolError::conflict`]): overwrite it, or re-read the file.
    pub conflict: Option<edit_conflict::Resolution>,
}

/// A successful result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// What the model reads: usually one text block; images and documents travel as blocks.
    pub content: ToolResultContent,
    /// What people see.
    pub display: Display,
    /// A result can be an error and still carry output (a command that exited non-zero).
    pub is_error: bool,
    /// What the core does when the call succeeds (none for most tools).
    pub effects: Vec<Effect>,
}

impl ToolOutput {
    pub fn text(content: impl Into<String>) -> ToolOutput {
        let content = content.into();
        ToolOutput {
            display: Display::Text {
                text: content.clone(),
            },
            content: content.into(),
            is_error: false,
            effects: Vec::new(),
        }
    }

    pub fn with_display(content: impl Into<String>, display: Display) -> ToolOutput {
        ToolOutput {
            content: content.into().into(),
            display,
            is_error: false,
            effects: Vec::new(),
        }
    }

    /// A result of several blocks (text and attachments) with its own display.
    pub fn blocks(blocks: Vec<ToolResultBlock>, display: Display) -> ToolOutput {
        ToolOutput {
            content: ToolResultContent(blocks),
            display,
            is_error: false,
            effects: Vec::new(),
        }
    }

    /// The same output, asking the core for `effect` too.
    pub fn with_effect(mut self, effect: Effect) -> ToolOutput {
        self.effects.push(effect);
        self
    }

    /// One image (`media_type`, base64 `data`), shown to people as a one-line attachment.
    pub fn image(media_type: impl Into<String>, data: impl Into<String>) -> ToolOutput {
        let block = ToolResultBlock::image(media_type, data);
        let display = attachment::display(&block).unwrap_or(Display::Empty);
        ToolOutput::blocks(vec![block], display)
    }
}

/// A failed call. The message goes to the model as an `is_error` tool result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub message: String,
    /// Set when a file changed on disk since it was read and the call's change cannot be
    /// merged with that change: the facts a client that can ask needs to offer overwriting.
    /// The message is the refusal as every other client gets it.
    pub conflict: Option<Arc<edit_conflict::Conflict>>,
}

impl ToolError {
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError {
            message: message.into(),
            conflict: None,
        }
    }

    /// This refusal, carrying the conflict's facts.
    pub fn with_conflict(mut self, conflict: edit_conflict::Conflict) -> ToolError {
        self.conflict = Some(Arc::new(conflict));
        self
    }
}

impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        ToolError::new(e.to_string())
    }
}

/// The static facts of a tool: who it is, and what every call of it is like unless the tool
/// answers per input. Built with `const` steps: `ToolInfo::new("Read", ToolKind::Read)
/// .aliases(&["read_file"]).read_only().concurrency_safe()`. Defaults fail closed: a call is
/// not read-only and not concurrency-safe unless the tool says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolInfo {
    /// The name the model calls (`Read`, `Bash`).
    pub name: &'static str,
    /// Other names the model may use for this tool (`read_file`).
    pub aliases: &'static [&'static str],
    /// What kind of work the tool does; permissions decide from this, never from the name.
    pub kind: ToolKind,
    /// Every call only reads.
    pub read_only: bool,
    /// Calls may run beside other calls.
    pub concurrency_safe: bool,
    /// Only the name is announced until ToolSearch loads the tool.
    pub deferred: bool,
    /// For a tool of an MCP server: the server and the tool, which rules match on.
    pub mcp: Option<McpName<'static>>,
    /// A reading tool that searches (file names, contents) rather than reads one thing: how
    /// a client labels its calls.
    pub search: bool,
}

impl ToolInfo {
    pub const fn new(name: &'static str, kind: ToolKind) -> ToolInfo {
        ToolInfo {
            name,
            aliases: &[],
            kind,
            read_only: false,
            concurrency_safe: false,
            deferred: false,
            mcp: None,
            search: false,
        }
    }

    pub const fn searches(mut self) -> ToolInfo {
        self.search = true;
        self
    }

    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> ToolInfo {
        self.aliases = aliases;
        self
    }

    pub const fn read_only(mut self) -> ToolInfo {
        self.read_only = true;
        self
    }

    pub const fn concurrency_safe(mut self) -> ToolInfo {
        self.concurrency_safe = true;
        self
    }

    pub const fn deferred(mut self) -> ToolInfo {
        self.deferred = true;
        self
    }

    /// The tool `tool` of MCP server `server` (names as in `mcp__<server>__<tool>`).
    pub const fn mcp(mut self, server: &'static str, tool: &'static str) -> ToolInfo {
        self.mcp = Some(McpName { server, tool });
        self
    }
}

/// A tool, with a typed input. Implement this; the executor uses it through [`DynTool`].
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    type Input: DeserializeOwned + JsonSchema + Send + Sync + 'static;

    /// Name, aliases, kind and the facts that hold for every call.
    fn info(&self) -> ToolInfo;

    /// The description sent with the schema.
    fn description(&self) -> String;

    /// Usage guidance added to the system prompt (may be empty).
    fn prompt(&self) -> String {
        String::new()
    }

    /// Whether this call may run beside others (by default, as [`ToolInfo`] says).
    fn is_concurrency_safe(&self, _input: &Self::Input) -> bool {
        self.info().concurrency_safe
    }

    /// Whether this call only reads (by default, as [`ToolInfo`] says).
    fn is_read_only(&self, _input: &Self::Input) -> bool {
        self.info().read_only
    }

    fn is_destructive(&self, _input: &Self::Input) -> bool {
        false
    }

    /// The one-line title of a call (`Read src/main.rs (lines 1-200)`).
    fn title(&self, input: &Self::Input, ctx: &SessionContext) -> String;

    /// What the call touches, for permissions.
    fn accesses(&self, _input: &Self::Input, _ctx: &SessionContext) -> Vec<Access> {
        Vec::new()
    }

    /// Semantic checks beyond the schema (cheap ones first). Runs before permission.
    async fn validate(&self, _input: &Self::Input, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    /// What the call would change, without side effects.
    async fn preview(
        &self,
        _input: &Self::Input,
        _ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        Ok(None)
    }

    async fn call(&self, input: Self::Input, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;

    /// Results longer than this keep head and tail and spill the whole to a file.
    /// `None` means the tool limits its own output (Read).
    fn max_result_chars(&self) -> Option<usize> {
        Some(30_000)
    }
}

/// A tool input parsed by its own tool; only that tool can look inside.
pub struct ParsedInput(Box<dyn Any + Send + Sync>);

impl ParsedInput {
    /// For tools that implement [`DynTool`] themselves (MCP tools, whose schemas are data).
    pub fn new<T: Any + Send + Sync>(input: T) -> ParsedInput {
        ParsedInput(Box::new(input))
    }

    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }

    pub fn downcast<T: Any>(self) -> Option<T> {
        self.0.downcast().ok().map(|b| *b)
    }
}

/// The object-safe face of a [`Tool`], implemented for every `Tool`.
#[async_trait]
pub trait DynTool: Send + Sync {
    fn name(&self) -> &'static str;
    fn aliases(&self) -> &'static [&'static str];
    fn description(&self) -> String;
    fn kind(&self) -> ToolKind;
    /// A reading tool that searches ([`ToolInfo::search`]).
    fn searches(&self) -> bool {
        false
    }
    /// For a tool of an MCP server, the (server, tool) pair permission rules match on.
    fn mcp_name(&self) -> Option<McpName<'_>>;
    fn prompt(&self) -> String;
    fn is_deferred(&self) -> bool;
    fn input_schema(&self) -> Value;
    fn max_result_chars(&self) -> Option<usize>;
    /// Deserialise and so validate the model's input. The error names the bad field.
    fn parse(&self, input: &Value) -> Result<ParsedInput, ToolError>;
    fn is_concurrency_safe(&self, input: &ParsedInput) -> bool;
    fn is_read_only(&self, input: &ParsedInput) -> bool;
    fn is_destructive(&self, input: &ParsedInput) -> bool;
    fn title(&self, input: &ParsedInput, ctx: &SessionContext) -> String;
    fn accesses(&self, input: &ParsedInput, ctx: &SessionContext) -> Vec<Access>;
    async fn validate(&self, input: &ParsedInput, ctx: &ToolContext) -> Result<(), ToolError>;
    async fn preview(
        &self,
        input: &ParsedInput,
        ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError>;
    async fn call(&self, input: ParsedInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

fn foreign_input(name: &str) -> ToolError {
    // Unreachable in practice: a ParsedInput only ever comes from the same tool's `parse`.
    ToolError::new(format!("internal error: input was not parsed by {name}"))
}

#[async_trait]
impl<T: Tool> DynTool for T {
    fn name(&self) -> &'static str {
        self.info().name
    }
    fn aliases(&self) -> &'static [&'static str] {
        self.info().aliases
    }
    fn description(&self) -> String {
        Tool::description(self)
    }
    fn kind(&self) -> ToolKind {
        self.info().kind
    }
    fn searches(&self) -> bool {
        self.info().search
    }
    fn mcp_name(&self) -> Option<McpName<'_>> {
        self.info().mcp
    }
    fn prompt(&self) -> String {
        Tool::prompt(self)
    }
    fn is_deferred(&self) -> bool {
        self.info().deferred
    }
    fn input_schema(&self) -> Value {
        schema_for::<T::Input>()
    }
    fn max_result_chars(&self) -> Option<usize> {
        Tool::max_result_chars(self)
    }
    fn parse(&self, input: &Value) -> Result<ParsedInput, ToolError> {
        T::Input::deserialize(input)
            .map(|i| ParsedInput(Box::new(i)))
            .map_err(|e| {
                ToolError::new(format!(
                    "InputValidationError: {} failed due to the following issue: {e}",
                    self.info().name
                ))
            })
    }
    fn is_concurrency_safe(&self, input: &ParsedInput) -> bool {
        input
            .0
            .downcast_ref::<T::Input>()
            .is_some_and(|i| Tool::is_concurrency_safe(self, i))
    }
    fn is_read_only(&self, input: &ParsedInput) -> bool {
        input
            .0
            .downcast_ref::<T::Input>()
            .is_some_and(|i| Tool::is_read_only(self, i))
    }
    fn is_destructive(&self, input: &ParsedInput) -> bool {
        // Fail closed: an input we cannot inspect counts as destructive.
        input
            .0
            .downcast_ref::<T::Input>()
            .is_none_or(|i| Tool::is_destructive(self, i))
    }
    fn title(&self, input: &ParsedInput, ctx: &SessionContext) -> String {
        match input.0.downcast_ref::<T::Input>() {
            Some(i) => Tool::title(self, i, ctx),
            None => self.info().name.to_string(),
        }
    }
    fn accesses(&self, input: &ParsedInput, ctx: &SessionContext) -> Vec<Access> {
        match input.0.downcast_ref::<T::Input>() {
            Some(i) => Tool::accesses(self, i, ctx),
            None => Vec::new(),
        }
    }
    async fn validate(&self, input: &ParsedInput, ctx: &ToolContext) -> Result<(), ToolError> {
        match input.0.downcast_ref::<T::Input>() {
            Some(i) => Tool::validate(self, i, ctx).await,
            None => Err(foreign_input(self.info().name)),
        }
    }
    async fn preview(
        &self,
        input: &ParsedInput,
        ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        match input.0.downcast_ref::<T::Input>() {
            Some(i) => Tool::preview(self, i, ctx).await,
            None => Err(foreign_input(self.info().name)),
        }
    }
    async fn call(&self, input: ParsedInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        match input.0.downcast::<T::Input>() {
            Ok(i) => Tool::call(self, *i, ctx).await,
            Err(_) => Err(foreign_input(self.info().name)),
        }
    }
}

use serde::Deserialize as _;

pub use schema::schema_for;

/// Shorthand for a tool handle in the registry.
pub type ToolHandle = Arc<dyn DynTool>;
