//! The MultiEdit tool: several replacements in one file, applied in order in memory, each on
//! the result of the previous; all or nothing, one write, one diff. The shared machinery is in
//! `edit_core`.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::edit_commit::PreparedWrites;
use super::edit_core::{self, Change, EditSpec};
use super::file_common::{check_path_no_io, input_path, title_path};
use super::{Access, Preview, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::session::context::SessionContext;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultiEditItem {
    /// Exact text, unique unless replace_all.
    pub old_string: String,
    /// The replacement.
    pub new_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: bool,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultiEditInput {
    /// Absolute path.
    pub file_path: String,
    /// Applied in order, each to the result of the last.
    pub edits: Vec<MultiEditItem>,
}

impl MultiEditInput {
    fn specs(&self) -> Vec<EditSpec> {
        self.edits
            .iter()
            .map(|e| EditSpec {
                old_string: e.old_string.clone(),
                new_string: e.new_string.clone(),
                replace_all: e.replace_all,
                expected_replacements: None,
            })
            .collect()
    }
}

#[derive(Debug, Default)]
pub struct MultiEditTool {
    prepared: PreparedWrites,
}

#[async_trait]
impl Tool for MultiEditTool {
    type Input = MultiEditInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("MultiEdit", ToolKind::Edit)
    }

    fn description(&self) -> String {
        "Several Edits of one file you have read, in order, all or none; each follows Edit's \
rules."
            .into()
    }

    fn prompt(&self) -> String {
        "- Use MultiEdit for several changes to one file; later edits see the result of earlier ones, \
so do not repeat text an earlier edit already replaced."
            .into()
    }

    fn title(&self, input: &MultiEditInput, ctx: &SessionContext) -> String {
        let n = input.edits.len();
        format!(
            "MultiEdit {} ({n} edit{})",
            title_path(&input.file_path, ctx),
            if n == 1 { "" } else { "s" }
        )
    }

    fn accesses(&self, input: &MultiEditInput, ctx: &SessionContext) -> Vec<Access> {
        input_path(&input.file_path, ctx)
            .map(|p| vec![Access::Write(p)])
            .unwrap_or_default()
    }

    async fn validate(&self, input: &MultiEditInput, ctx: &ToolContext) -> Result<(), ToolError> {
        edit_core::check_edits_in_memory(&input.specs())?;
        let path = input_path(&input.file_path, &ctx.session)?;
        check_path_no_io(&path)
    }

    async fn preview(
        &self,
        input: &MultiEditInput,
        ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        let path = input_path(&input.file_path, &ctx.session)?;
        let specs = input.specs();
        self.prepared
            .preview(&ctx.session, &ctx.call_id, &path, Change::Edits(&specs))
            .await
            .map(Some)
    }

    async fn call(
        &self,
        input: MultiEditInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let path = input_path(&input.file_path, &ctx.session)?;
        check_path_no_io(&path)?;
        let specs = input.specs();
        let n = specs.len();
        self.prepared
            .commit(ctx, &path, Change::Edits(&specs), |existed| {
                if existed {
                    format!(
                        "Applied {n} edit{} to {}: the file has been updated successfully.",
                        if n == 1 { "" } else { "s" },
                        path.display()
                    )
                } else {
                    format!("File created successfully at: {}", path.display())
                }
            })
            .await
    }
}
