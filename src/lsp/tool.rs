//! The `LSP` tool: semantic navigation through the session's language servers — definition,
//! references, hover, document and workspace symbols, implementation, and the call hierarchy —
//! with Claude Code's input (`operation`, `filePath`, 1-based `line` and `character`, `query`
//! for workspace symbols). Read-only and concurrency-safe: it declares a read of the file asked
//! about (so deny rules refuse it before anything runs), and withholds returned locations in
//! denied paths ([`ReadGuard`]). The file is synced from disk before each question, so answers
//! reflect the session's edits.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_lsp::lsp_types::request::{
    CallHierarchyIncomingCalls, CallHierarchyOutgoingCalls, CallHierarchyPrepare,
    DocumentSymbolRequest, GotoDefinition, GotoImplementation, HoverRequest, References,
    WorkspaceSymbolRequest,
};
use async_lsp::lsp_types::{
    CallHierarchyIncomingCallsParams, CallHierarchyItem, CallHierarchyOutgoingCallsParams,
    CallHierarchyPrepareParams, DocumentSymbolParams, GotoDefinitionParams, GotoDefinitionResponse,
    HoverParams, Location, ReferenceContext, ReferenceParams, TextDocumentIdentifier,
    TextDocumentPositionParams, Url, WorkspaceSymbolParams,
};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::files::paths::expand_path;
use crate::permissions::ReadGuard;
use crate::session::context::SessionContext;
use crate::tools::{Access, Preview, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};

use super::format::{Render, hover, position};
use super::rename_tool::Renames;
use super::server::{LspError, Server};
use super::{LspManager, after_edit, root_for};

/// The tool's name.
pub const NAME: &str = "LSP";

pub use super::INDEXING_WAIT;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Operation {
    // Where the symbol at the position is defined.
    GoToDefinition,
    // Every reference to the symbol at the position.
    FindReferences,
    // Type information and documentation of the symbol at the position.
    Hover,
    // The outline of the file: its classes, functions, variables.
    DocumentSymbol,
    // Symbols across the workspace whose names match `query`.
    WorkspaceSymbol,
    // Implementations of the interface or abstract method at the position.
    GoToImplementation,
    // The call-hierarchy item at the position (a function or method).
    PrepareCallHierarchy,
    // The functions that call the function at the position.
    IncomingCalls,
    // The functions the function at the position calls.
    OutgoingCalls,
    // Rename the symbol at the position to `newName` everywhere the server knows it: the
    // edits across files are shown to the user for review and written all or nothing.
    Rename,
}

impl Operation {
    fn needs_position(self) -> bool {
        !matches!(self, Operation::DocumentSymbol | Operation::WorkspaceSymbol)
    }

    fn name(self) -> &'static str {
        match self {
            Operation::GoToDefinition => "goToDefinition",
            Operation::FindReferences => "findReferences",
            Operation::Hover => "hover",
            Operation::DocumentSymbol => "documentSymbol",
            Operation::WorkspaceSymbol => "workspaceSymbol",
            Operation::GoToImplementation => "goToImplementation",
            Operation::PrepareCallHierarchy => "prepareCallHierarchy",
            Operation::IncomingCalls => "incomingCalls",
            Operation::OutgoingCalls => "outgoingCalls",
            Operation::Rename => "rename",
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspInput {
    /// hover: type and docs; documentSymbol: the file's outline.
    pub operation: Operation,
    /// Absolute or relative path.
    #[serde(rename = "filePath")]
    pub file_path: String,
    /// 1-based (all but documentSymbol and workspaceSymbol).
    #[serde(default)]
    pub line: Option<u32>,
    /// 1-based column.
    #[serde(default)]
    pub character: Option<u32>,
    /// Name for workspaceSymbol.
    #[serde(default)]
    pub query: Option<String>,
    /// The new name (rename).
    #[serde(default, rename = "newName")]
    pub new_name: Option<String>,
}

/// Asks the session's language servers.
pub struct LspTool {
    manager: Arc<LspManager>,
    guard: ReadGuard,
    /// Renames planned for review, by call id, until their call writes them.
    renames: Renames,
}

impl LspTool {
    /// The tool over `manager`'s servers, withholding what `guard` denies.
    pub fn new(manager: Arc<LspManager>, guard: ReadGuard) -> LspTool {
        LspTool {
            manager,
            guard,
            renames: Renames::default(),
        }
    }
}

fn resolve(input: &LspInput, session: &SessionContext) -> Result<PathBuf, ToolError> {
    expand_path(&input.file_path, &session.cwd()).map_err(|e| ToolError::new(e.to_string()))
}

#[async_trait]
impl Tool for LspTool {
    type Input = LspInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new(NAME, ToolKind::Read)
            .read_only()
            .concurrency_safe()
    }

    fn is_read_only(&self, input: &LspInput) -> bool {
        input.operation != Operation::Rename
    }

    fn is_concurrency_safe(&self, input: &LspInput) -> bool {
        input.operation != Operation::Rename
    }

    fn description(&self) -> String {
        "Code navigation through language servers: prefer it over Grep to find where a \
         symbol is defined or used. Point at the symbol's name; workspaceSymbol searches \
         `query`; rename renames it to `newName` everywhere, after the user's review. No \
         server for the file's type: use Grep."
            .to_string()
    }

    fn title(&self, input: &LspInput, _ctx: &SessionContext) -> String {
        if let (Operation::Rename, Some(l), Some(c)) =
            (input.operation, input.line, input.character)
        {
            let to = input.new_name.as_deref().unwrap_or_default();
            return format!("LSP rename {}:{l}:{c} to {to}", input.file_path);
        }
        match (input.line, input.character) {
            (Some(l), Some(c)) if input.operation.needs_position() => {
                format!("LSP {} {}:{l}:{c}", input.operation.name(), input.file_path)
            }
            _ => format!("LSP {} {}", input.operation.name(), input.file_path),
        }
    }

    fn accesses(&self, input: &LspInput, ctx: &SessionContext) -> Vec<Access> {
        // A rename writes the file asked about; the other files it touches are declared by
        // its preview.
        let access = match input.operation {
            Operation::Rename => Access::Write,
            _ => Access::Read,
        };
        resolve(input, ctx).map(access).into_iter().collect()
    }

    async fn validate(&self, input: &LspInput, ctx: &ToolContext) -> Result<(), ToolError> {
        let path = resolve(input, &ctx.session)?;
        if input.operation.needs_position() {
            match (input.line, input.character) {
                (Some(l), Some(c)) if l >= 1 && c >= 1 => {}
                _ => {
                    return Err(ToolError::new(format!(
                        "{} needs `line` and `character`, both 1-based (as an editor shows \
                         them).",
                        input.operation.name()
                    )));
                }
            }
        }
        if input.operation == Operation::WorkspaceSymbol
            && input.query.as_deref().is_none_or(|q| q.trim().is_empty())
        {
            return Err(ToolError::new(
                "workspaceSymbol needs a `query`: the name (or part of it) to search for.",
            ));
        }
        if input.operation == Operation::Rename
            && input
                .new_name
                .as_deref()
                .is_none_or(|n| n.trim().is_empty())
        {
            return Err(ToolError::new(
                "rename needs `newName`: the symbol's new name.",
            ));
        }
        if self.manager.spec_for(&path).is_none() {
            return Err(ToolError::new(super::spec::no_server_message(&path)));
        }
        Ok(())
    }

    async fn preview(
        &self,
        input: &LspInput,
        ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        if input.operation != Operation::Rename {
            return Ok(None);
        }
        let path = resolve(input, &ctx.session)?;
        let (line, character) = (input.line.unwrap_or(1), input.character.unwrap_or(1));
        let new_name = input.new_name.as_deref().unwrap_or_default();
        let display = self
            .renames
            .plan(&self.manager, &path, (line, character), new_name, ctx)
            .await?;
        Ok(Some(Preview {
            display,
            new_content: None,
        }))
    }

    async fn call(&self, input: LspInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.operation == Operation::Rename {
            return self
                .renames
                .write(input.new_name.as_deref().unwrap_or_default(), ctx);
        }
        let path = resolve(&input, &ctx.session)?;
        if !path.is_file() {
            return Err(ToolError::new(format!(
                "File does not exist: {}",
                path.display()
            )));
        }
        after_edit::attach(&self.manager, &ctx.session);
        // Diagnostics of edits made just before are queued before this answer.
        self.manager.settle_checks().await;
        let working = ctx.session.working_dirs();
        let root = root_for(&path, &working);
        let ask = async {
            let (server, language) = self.manager.server_for(&path, &root).await?;
            let (uri, _) = server.sync(&path, &language).await?;
            let idle = server.state.wait_for(INDEXING_WAIT, |v| !v.busy()).await;
            let cwd = ctx.session.cwd();
            let guard = self.guard.for_conversation(&ctx.session.conversation);
            let mut render = Render::new(&cwd, &working, &guard);
            let text = ask(&server, &input, &path, uri, &mut render).await?;
            let mut text = text.trim_end().to_string();
            if let Some(note) = render.withheld_note() {
                text.push_str("\n\n");
                text.push_str(&note);
            }
            if !idle {
                text.push_str(&format!(
                    "\n\n(The language server `{}` is still indexing after {} s; results may \
                     be incomplete. Ask again shortly.)",
                    server.spec.name,
                    INDEXING_WAIT.as_secs()
                ));
            }
            Ok::<_, LspError>(text)
        };
        let text = tokio::select! {
            r = ask => r.map_err(|e| ToolError::new(e.0))?,
            () = ctx.cancel.cancelled() => return Err(ToolError::new("Interrupted by the user.")),
        };
        Ok(ToolOutput::text(text))
    }
}

async fn ask(
    server: &Server,
    input: &LspInput,
    path: &Path,
    uri: Url,
    render: &mut Render<'_>,
) -> Result<String, LspError> {
    let doc = TextDocumentIdentifier { uri };
    let at = TextDocumentPositionParams {
        text_document: doc.clone(),
        position: position(path, input.line.unwrap_or(1), input.character.unwrap_or(1)),
    };
    let shown = render.show_path(path);
    let here = format!(
        "{shown}:{}:{}",
        input.line.unwrap_or(1),
        input.character.unwrap_or(1)
    );
    Ok(match input.operation {
        Operation::GoToDefinition => {
            let answer = server
                .request::<GotoDefinition>(GotoDefinitionParams {
                    text_document_position_params: at,
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            render.locations("definition", locations(answer))
        }
        Operation::GoToImplementation => {
            let answer = server
                .request::<GotoImplementation>(GotoDefinitionParams {
                    text_document_position_params: at,
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            render.locations("implementation", locations(answer))
        }
        Operation::FindReferences => {
            let answer = server
                .request::<References>(ReferenceParams {
                    text_document_position: at,
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                    context: ReferenceContext {
                        include_declaration: true,
                    },
                })
                .await?;
            render.locations("reference", answer.unwrap_or_default())
        }
        Operation::Hover => {
            let answer = server
                .request::<HoverRequest>(HoverParams {
                    text_document_position_params: at,
                    work_done_progress_params: Default::default(),
                })
                .await?;
            hover(answer).unwrap_or_else(|| format!("No hover information at {here}."))
        }
        Operation::DocumentSymbol => {
            let answer = server
                .request::<DocumentSymbolRequest>(DocumentSymbolParams {
                    text_document: doc,
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            render.document_symbols(path, answer)
        }
        Operation::WorkspaceSymbol => {
            let query = input.query.clone().unwrap_or_default();
            let answer = server
                .request::<WorkspaceSymbolRequest>(WorkspaceSymbolParams {
                    query: query.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            render.workspace_symbols(&query, answer)
        }
        Operation::PrepareCallHierarchy => render.call_items(prepare(server, at).await?),
        Operation::IncomingCalls => {
            let Some(item) = prepare(server, at).await?.into_iter().next() else {
                return Ok(format!("No function or method at {here}."));
            };
            let calls = server
                .request::<CallHierarchyIncomingCalls>(CallHierarchyIncomingCallsParams {
                    item: item.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            render.incoming(&item.name, calls.unwrap_or_default())
        }
        Operation::OutgoingCalls => {
            let Some(item) = prepare(server, at).await?.into_iter().next() else {
                return Ok(format!("No function or method at {here}."));
            };
            let calls = server
                .request::<CallHierarchyOutgoingCalls>(CallHierarchyOutgoingCallsParams {
                    item: item.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await?;
            render.outgoing(&item, calls.unwrap_or_default())
        }
        // Planned by the preview and written by the call (`rename_tool`), never asked here.
        Operation::Rename => String::new(),
    })
}

async fn prepare(
    server: &Server,
    at: TextDocumentPositionParams,
) -> Result<Vec<CallHierarchyItem>, LspError> {
    Ok(server
        .request::<CallHierarchyPrepare>(CallHierarchyPrepareParams {
            text_document_position_params: at,
            work_done_progress_params: Default::default(),
        })
        .await?
        .unwrap_or_default())
}

fn locations(answer: Option<GotoDefinitionResponse>) -> Vec<Location> {
    match answer {
        None => Vec::new(),
        Some(GotoDefinitionResponse::Scalar(l)) => vec![l],
        Some(GotoDefinitionResponse::Array(ls)) => ls,
        Some(GotoDefinitionResponse::Link(links)) => links
            .into_iter()
            .map(|l| Location::new(l.target_uri, l.target_selection_range))
            .collect(),
    }
}
