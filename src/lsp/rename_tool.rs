//! The `rename` operation of the LSP tool: planned in the call's preview (the server asked,
//! the edits applied to each file's text, nothing written; the files it touches become the
//! call's write accesses, so deny rules and the prompt cover every one), kept by call id, and
//! written by the call as the person approved it — their per-file choice of hunks included.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_lsp::lsp_types::{TextDocumentIdentifier, TextDocumentPositionParams};

use super::format::position;
use super::rename::{self, PlannedFile};
use super::server::LspError;
use super::state::ServerStateView;
use super::{INDEXING_WAIT, LspManager, after_edit, root_for};
use crate::protocol::{Display, FileTexts};
use crate::tools::diff_snippet::diff_snippet;
use crate::tools::file_common::{client_for, shown_path};
use crate::tools::{ToolContext, ToolError, ToolOutput};

/// Planned renames kept for their call; the oldest (denied calls) are dropped.
const MAX_KEPT: usize = 8;

/// Renames planned and shown for review, waiting for their call.
#[derive(Debug, Default)]
pub struct Renames(Mutex<VecDeque<(String, Vec<PlannedFile>)>>);

impl Renames {
    /// Keep `call_id`'s plan, in place of one planned before for it.
    pub fn keep(&self, call_id: &str, planned: Vec<PlannedFile>) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|(id, _)| id != call_id);
        if kept.len() >= MAX_KEPT {
            kept.pop_front();
        }
        kept.push_back((call_id.to_string(), planned));
    }

    fn take(&self, call_id: &str) -> Option<Vec<PlannedFile>> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let i = kept.iter().position(|(id, _)| id == call_id)?;
        kept.remove(i).map(|(_, planned)| planned)
    }

    /// Plan the rename of the symbol at `path`'s 1-based `(line, character)` to `new_name`
    /// through `manager`'s server, keep it for the call, and return what the person reviews.
    pub async fn plan(
        &self,
        manager: &Arc<LspManager>,
        path: &Path,
        (line, character): (u32, u32),
        new_name: &str,
        ctx: &ToolContext,
    ) -> Result<Display, ToolError> {
        let planned = plan(manager, path, (line, character), new_name.trim(), ctx).await?;
        let display = Display::Diffs {
            files: planned.iter().map(PlannedFile::diff).collect(),
        };
        self.keep(&ctx.call_id, planned);
        Ok(display)
    }

    /// Write the rename the person approved (their own version of any file included).
    pub fn write(&self, new_name: &str, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let planned = self.take(&ctx.call_id).ok_or_else(|| {
            ToolError::new("The rename was not planned before its call; ask for it again.")
        })?;
        write(&planned, new_name.trim(), ctx)
    }
}

/// Ask the server for the rename and plan it (see the module docs).
async fn plan(
    manager: &Arc<LspManager>,
    path: &Path,
    (line, character): (u32, u32),
    new_name: &str,
    ctx: &ToolContext,
) -> Result<Vec<PlannedFile>, ToolError> {
    if !path.is_file() {
        return Err(ToolError::new(format!(
            "File does not exist: {}",
            path.display()
        )));
    }
    after_edit::attach(manager, &ctx.session);
    let root = root_for(path, &ctx.session.working_dirs());
    let ask = async {
        let (server, language) = manager.server_for(path, &root).await?;
        let since = server.state.generation();
        let (uri, version) = server.sync(path, &language).await?;
        // A server just started may not know the workspace's other files yet (pyright
        // finds them in the background) and would rename in this file alone: wait until
        // it has analysed this one (its diagnostics for it came), then until it is idle.
        let analysed = |v: &ServerStateView<'_>| {
            v.published_since(&uri, since, version) || v.has_published(&uri, version)
        };
        server.state.wait_for(INDEXING_WAIT, analysed).await;
        server.state.wait_for(INDEXING_WAIT, |v| !v.busy()).await;
        let at = TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri },
            position: position(path, line, character),
        };
        rename::plan(&server, at, new_name).await
    };
    let planned = tokio::select! {
        r = ask => r.map_err(|LspError(e)| ToolError::new(format!("Cannot rename: {e}")))?,
        () = ctx.cancel.cancelled() => return Err(ToolError::new("Interrupted by the user.")),
    };
    let shown = shown_path(path, &ctx.session);
    let planned: Vec<PlannedFile> = planned
        .into_iter()
        .filter(|p| p.before != p.after)
        .collect();
    if planned.is_empty() {
        return Err(ToolError::new(format!(
            "Nothing to rename at {shown}:{line}:{character}: the language server found no \
                 symbol there that it can rename to `{new_name}`."
        )));
    }
    for p in &planned {
        // An editor's buffer may differ from the disk the server's edits were planned on.
        if client_for(&p.path, &ctx.session).is_some() {
            return Err(ToolError::new(format!(
                "Cannot rename: {} is open in the editor, whose buffer may differ from the \
                     disk; use the editor's own rename.",
                shown_path(&p.path, &ctx.session)
            )));
        }
        ctx.session
            .check_settings_write(&p.path, &p.before, &p.after)
            .map_err(ToolError::new)?;
    }
    Ok(planned)
}

/// Write `planned` as the person approved it.
fn write(
    planned: &[PlannedFile],
    new_name: &str,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let edited = ctx
        .content_override
        .as_ref()
        .map(|o| o.files.as_slice())
        .unwrap_or_default();
    for e in edited {
        let Some(p) = planned.iter().find(|p| p.path == e.path) else {
            continue;
        };
        ctx.session
            .check_settings_write(&p.path, &p.before, &e.content)
            .map_err(ToolError::new)?;
    }
    let written = rename::commit(&ctx.session.read_files, planned, edited, &ctx.call_id)
        .map_err(ToolError::new)?;
    let mut text = format!(
        "Renamed to `{new_name}` in {} file{}:",
        written.len(),
        if written.len() == 1 { "" } else { "s" }
    );
    for f in &written {
        let d = diff_snippet(&f.before, &f.after);
        let shown = shown_path(&f.path, &ctx.session);
        text.push_str(&format!("\n{shown} (+{} -{})", d.added, d.removed));
    }
    let kept: Vec<&PlannedFile> = planned
        .iter()
        .filter(|p| !written.iter().any(|w| w.path == p.path))
        .collect();
    if !kept.is_empty() {
        let names: Vec<String> = kept
            .iter()
            .map(|p| shown_path(&p.path, &ctx.session))
            .collect();
        text.push_str(&format!(
            "\nLeft unchanged at the user's choice: {}",
            names.join(", ")
        ));
    }
    if let Some(note) = ctx.content_override.as_ref().map(|o| o.note.trim())
        && !note.is_empty()
    {
        text.push_str("\n\n");
        text.push_str(note);
    }
    let files: Vec<FileTexts> = written;
    Ok(ToolOutput::with_display(text, Display::Diffs { files }))
}
