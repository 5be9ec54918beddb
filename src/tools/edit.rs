//! The Edit tool: replace one exact string in a file (or every occurrence with replace_all).
//!
//! All the guarding, matching, merging and writing lives in `edit_core`; this file is the
//! tool's face: input, title, permissions, preview and result wording.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::edit_commit::PreparedWrites;
use super::edit_core::{self, Change, EditSpec};
use super::file_common::{check_path_no_io, input_path, title_path};
use super::{Access, Preview, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::session::context::SessionContext;

/// The most of an Edit result (its diff snippet) the model gets before the rest spills.
pub const MAX_RESULT_CHARS: usize = 100_000;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// Absolute path.
    pub file_path: String,
    /// The exact text to replace.
    pub old_string: String,
    /// The replacement (must differ).
    pub new_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: bool,
    /// How many occurrences you expect; a different count refuses the edit.
    #[serde(default)]
    pub expected_replacements: Option<usize>,
}

impl EditInput {
    fn spec(&self) -> [EditSpec; 1] {
        [EditSpec {
            old_string: self.old_string.clone(),
            new_string: self.new_string.clone(),
            replace_all: self.replace_all,
            expected_replacements: self.expected_replacements,
        }]
    }
}

#[derive(Debug, Default)]
pub struct EditTool {
    prepared: PreparedWrites,
}

#[async_trait]
impl Tool for EditTool {
    type Input = EditInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("Edit", ToolKind::Edit).aliases(&["edit_file"])
    }

    fn description(&self) -> String {
        "Replaces exact text in a file you have read. old_string must match exactly and be \
unique unless replace_all; an empty old_string creates a new file."
            .into()
    }

    fn prompt(&self) -> String {
        "- Prefer Edit over Write for changes to existing files; include enough surrounding lines in \
old_string to make it unique.\n\
- Keep the file's indentation exactly; never include Read's line-number prefix in old_string."
            .into()
    }

    fn max_result_chars(&self) -> Option<usize> {
        Some(MAX_RESULT_CHARS)
    }

    fn title(&self, input: &EditInput, ctx: &SessionContext) -> String {
        format!("Edit {}", title_path(&input.file_path, ctx))
    }

    fn accesses(&self, input: &EditInput, ctx: &SessionContext) -> Vec<Access> {
        input_path(&input.file_path, ctx)
            .map(|p| vec![Access::Write(p)])
            .unwrap_or_default()
    }

    async fn validate(&self, input: &EditInput, ctx: &ToolContext) -> Result<(), ToolError> {
        edit_core::check_edits_in_memory(&input.spec())?;
        let path = input_path(&input.file_path, &ctx.session)?;
        check_path_no_io(&path)
    }

    async fn preview(
        &self,
        input: &EditInput,
        ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        let path = input_path(&input.file_path, &ctx.session)?;
        let spec = input.spec();
        self.prepared
            .preview(&ctx.session, &ctx.call_id, &path, Change::Edits(&spec))
            .await
            .map(Some)
    }

    async fn call(&self, input: EditInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = input_path(&input.file_path, &ctx.session)?;
        check_path_no_io(&path)?;
        let spec = input.spec();
        self.prepared
            .commit(ctx, &path, Change::Edits(&spec), |existed| {
                if existed {
                    format!("The file {} has been updated successfully.", path.display())
                } else {
                    format!("File created successfully at: {}", path.display())
                }
            })
            .await
    }
}
