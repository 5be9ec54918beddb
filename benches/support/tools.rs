//! Running a tool as the executor does, for the benches that time tool calls.

use std::sync::Arc;

use cairn::session::context::SessionContext;
use cairn::tools::{DynTool, ProgressSender, ToolContext};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A call's context in `session`, with nothing approved yet.
pub fn ctx(session: &Arc<SessionContext>) -> ToolContext {
    ToolContext {
        called_as: None,
        session: session.clone(),
        call_id: "bench".into(),
        cancel: CancellationToken::new(),
        progress: ProgressSender::new("bench".into(), session.events.clone()),
        preview: None,
        content_override: None,
        answers: None,
        deferred: Default::default(),
        conflict: None,
    }
}

/// The executor's steps: parse, validate, preview, call with that preview.
pub async fn run(tool: &dyn DynTool, ctx: &mut ToolContext, input: &Value) -> String {
    let parsed = tool.parse(input).expect("parse");
    tool.validate(&parsed, ctx).await.expect("validate");
    ctx.preview = tool.preview(&parsed, ctx).await.expect("preview");
    let out = tool.call(parsed, ctx).await.expect("call");
    ctx.preview = None;
    out.content.into_text()
}
