//! The Write tool: create a file or replace all of its content. An existing file must have
//! been read and be unchanged since; the file keeps its encoding and line endings. The shared
//! machinery is in `edit_core`.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::edit_commit::PreparedWrites;
use super::edit_core::Change;
use super::file_common::{check_path_no_io, input_path, title_path};
use super::{Access, Preview, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::session::context::SessionContext;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// Absolute path.
    pub file_path: String,
    /// The whole content.
    pub content: String,
}

#[derive(Debug, Default)]
pub struct WriteTool {
    prepared: PreparedWrites,
}

#[async_trait]
impl Tool for WriteTool {
    type Input = WriteInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("Write", ToolKind::Edit).aliases(&["write_file"])
    }

    fn description(&self) -> String {
        "Writes a whole file, creating parent directories. An existing file must have been \
read first."
            .into()
    }

    fn prompt(&self) -> String {
        "- Use Write for new files or complete rewrites; use Edit for changes to existing files."
            .into()
    }

    fn title(&self, input: &WriteInput, ctx: &SessionContext) -> String {
        format!("Write {}", title_path(&input.file_path, ctx))
    }

    fn accesses(&self, input: &WriteInput, ctx: &SessionContext) -> Vec<Access> {
        input_path(&input.file_path, ctx)
            .map(|p| vec![Access::Write(p)])
            .unwrap_or_default()
    }

    async fn validate(&self, input: &WriteInput, ctx: &ToolContext) -> Result<(), ToolError> {
        let path = input_path(&input.file_path, &ctx.session)?;
        check_path_no_io(&path)
    }

    async fn preview(
        &self,
        input: &WriteInput,
        ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        let path = input_path(&input.file_path, &ctx.session)?;
        self.prepared
            .preview(
                &ctx.session,
                &ctx.call_id,
                &path,
                Change::Write(&input.content),
            )
            .await
            .map(Some)
    }

    async fn call(&self, input: WriteInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = input_path(&input.file_path, &ctx.session)?;
        check_path_no_io(&path)?;
        self.prepared
            .commit(ctx, &path, Change::Write(&input.content), |existed| {
                if existed {
                    format!("The file {} has been updated successfully.", path.display())
                } else {
                    format!("File created successfully at: {}", path.display())
                }
            })
            .await
    }
}
