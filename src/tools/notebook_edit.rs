//! The NotebookEdit tool: replace, insert or delete one cell of a Jupyter notebook, as Claude
//! Code's tool does. The notebook must have been read and be unchanged since, like any edit; the
//! new file text comes from `media::notebook::apply` over the text on disk, and is previewed,
//! approved and written atomically by the same machinery as Write (`edit_commit`).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::edit_commit::PreparedWrites;
use super::edit_core::Change;
use super::file_common::{check_path_no_io, input_path, title_path};
use super::{Access, Preview, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::files::encoding;
use crate::media::notebook::{self, CellType, EditMode};
use crate::session::context::SessionContext;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CellTypeInput {
    Code,
    Markdown,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EditModeInput {
    #[default]
    Replace,
    Insert,
    Delete,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotebookEditInput {
    /// Absolute path.
    pub notebook_path: String,
    /// The id Read shows (`cell-N` without one); insert goes after it, or first.
    #[serde(default)]
    pub cell_id: Option<String>,
    /// The new source.
    pub new_source: String,
    /// Required to insert.
    #[serde(default)]
    pub cell_type: Option<CellTypeInput>,
    /// Default replace.
    #[serde(default)]
    pub edit_mode: Option<EditModeInput>,
}

impl NotebookEditInput {
    fn edit(&self) -> notebook::NotebookEdit {
        notebook::NotebookEdit {
            cell_id: self.cell_id.clone(),
            new_source: self.new_source.clone(),
            cell_type: self.cell_type.map(|t| match t {
                CellTypeInput::Code => CellType::Code,
                CellTypeInput::Markdown => CellType::Markdown,
            }),
            mode: match self.edit_mode.unwrap_or_default() {
                EditModeInput::Replace => EditMode::Replace,
                EditModeInput::Insert => EditMode::Insert,
                EditModeInput::Delete => EditMode::Delete,
            },
        }
    }
}

#[derive(Debug, Default)]
pub struct NotebookEditTool {
    prepared: PreparedWrites,
}

/// The notebook's new text, from the text on disk now, and what the edit did.
async fn apply(
    input: &NotebookEditInput,
    ctx: &ToolContext,
) -> Result<(std::path::PathBuf, notebook::Applied), ToolError> {
    let path = input_path(&input.notebook_path, &ctx.session)?;
    check_path_no_io(&path)?;
    let bytes = tokio::fs::read(&path)
        .await
        .map_err(|e| ToolError::new(format!("Cannot read the notebook {}: {e}", path.display())))?;
    let text = encoding::decode(&bytes).text;
    let applied = notebook::apply(&text, &input.edit()).map_err(ToolError::new)?;
    Ok((path, applied))
}

#[async_trait]
impl Tool for NotebookEditTool {
    type Input = NotebookEditInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("NotebookEdit", ToolKind::Edit).aliases(&["notebook_edit"])
    }

    fn description(&self) -> String {
        "Replaces, inserts or deletes one cell of a Jupyter notebook you have read.".into()
    }

    fn title(&self, input: &NotebookEditInput, ctx: &SessionContext) -> String {
        let mode = match input.edit_mode.unwrap_or_default() {
            EditModeInput::Replace => "replace",
            EditModeInput::Insert => "insert",
            EditModeInput::Delete => "delete",
        };
        let path = title_path(&input.notebook_path, ctx);
        match &input.cell_id {
            Some(id) => format!("NotebookEdit {path} ({mode} {id})"),
            None => format!("NotebookEdit {path} ({mode})"),
        }
    }

    fn accesses(&self, input: &NotebookEditInput, ctx: &SessionContext) -> Vec<Access> {
        input_path(&input.notebook_path, ctx)
            .map(|p| vec![Access::Write(p)])
            .unwrap_or_default()
    }

    async fn validate(
        &self,
        input: &NotebookEditInput,
        ctx: &ToolContext,
    ) -> Result<(), ToolError> {
        let path = input_path(&input.notebook_path, &ctx.session)?;
        check_path_no_io(&path)?;
        if path.extension().is_none_or(|e| e != "ipynb") {
            return Err(ToolError::new(
                "NotebookEdit edits Jupyter notebooks (.ipynb); use Edit for other files.",
            ));
        }
        let mode = input.edit_mode.unwrap_or_default();
        if matches!(mode, EditModeInput::Insert) && input.cell_type.is_none() {
            return Err(ToolError::new(
                "cell_type is required to insert a cell (code or markdown).",
            ));
        }
        if !matches!(mode, EditModeInput::Insert) && input.cell_id.is_none() {
            return Err(ToolError::new(
                "cell_id is required to replace or delete a cell.",
            ));
        }
        Ok(())
    }

    async fn preview(
        &self,
        input: &NotebookEditInput,
        ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        let (path, applied) = apply(input, ctx).await?;
        let change = Change::Write(&applied.text);
        self.prepared
            .preview(&ctx.session, &ctx.call_id, &path, change)
            .await
            .map(Some)
    }

    async fn call(
        &self,
        input: NotebookEditInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let (path, applied) = apply(&input, ctx).await?;
        let summary = applied.summary.clone();
        self.prepared
            .commit(ctx, &path, Change::Write(&applied.text), |_| {
                format!("{summary} in {}.", path.display())
            })
            .await
    }
}
