//! What cairn answers when a server speaks first: its notifications (diagnostics, progress,
//! messages) go into the [`ServerState`]; its requests (`workspace/configuration`, progress
//! tokens, capability registration, workspace folders) get the small answers an editor gives.
//! Unknown notifications are ignored rather than treated as fatal, as an editor would.

use std::ops::ControlFlow;
use std::sync::Arc;

use async_lsp::lsp_types::notification::{LogMessage, Progress, PublishDiagnostics, ShowMessage};
use async_lsp::lsp_types::request::{
    RegisterCapability, UnregisterCapability, WorkDoneProgressCreate, WorkspaceConfiguration,
    WorkspaceFoldersRequest,
};
use async_lsp::lsp_types::{
    NumberOrString, ProgressParamsValue, Url, WorkDoneProgress, WorkspaceFolder,
};
use async_lsp::router::Router;
use async_lsp::{ResponseError, ServerSocket};
use serde_json::Value;

use super::state::ServerState;

/// The router's state.
pub struct Handler {
    pub state: Arc<ServerState>,
    /// The server's `settings`, for `workspace/configuration`.
    pub settings: Option<Value>,
    pub root: Url,
    pub name: String,
    /// Held so the main loop's channel stays open as long as it runs.
    pub _socket: ServerSocket,
}

/// The router for one server.
pub fn router(handler: Handler) -> Router<Handler> {
    let mut router = Router::new(handler);
    router
        .notification::<PublishDiagnostics>(|h, p| {
            h.state.publish(p.uri, p.version, p.diagnostics);
            ControlFlow::Continue(())
        })
        .notification::<Progress>(|h, p| {
            let token = match p.token {
                NumberOrString::Number(n) => n.to_string(),
                NumberOrString::String(s) => s,
            };
            match p.value {
                ProgressParamsValue::WorkDone(WorkDoneProgress::Begin(_)) => h.state.begin(token),
                ProgressParamsValue::WorkDone(WorkDoneProgress::End(_)) => h.state.end(&token),
                ProgressParamsValue::WorkDone(WorkDoneProgress::Report(_)) => {}
            }
            ControlFlow::Continue(())
        })
        .notification::<ShowMessage>(|h, p| {
            tracing::info!(server = %h.name, "{:?}: {}", p.typ, p.message);
            ControlFlow::Continue(())
        })
        .notification::<LogMessage>(|h, p| {
            tracing::debug!(server = %h.name, "{:?}: {}", p.typ, p.message);
            ControlFlow::Continue(())
        })
        .unhandled_notification(|_, _| ControlFlow::Continue(()))
        .unhandled_event(|_, _| ControlFlow::Continue(()))
        .request::<WorkDoneProgressCreate, _>(|_, _| async { Ok(()) })
        .request::<RegisterCapability, _>(|_, _| async { Ok(()) })
        .request::<UnregisterCapability, _>(|_, _| async { Ok(()) })
        .request::<WorkspaceFoldersRequest, _>(|h, _| {
            let folder = WorkspaceFolder {
                uri: h.root.clone(),
                name: "root".into(),
            };
            async move { Ok::<_, ResponseError>(Some(vec![folder])) }
        })
        .request::<WorkspaceConfiguration, _>(|h, p| {
            let answers: Vec<Value> = p
                .items
                .iter()
                .map(|item| section(h.settings.as_ref(), item.section.as_deref()))
                .collect();
            async move { Ok(answers) }
        });
    router
}

/// The part of `settings` a `workspace/configuration` item asks for (`python.analysis`), or
/// null.
fn section(settings: Option<&Value>, name: Option<&str>) -> Value {
    let Some(mut value) = settings else {
        return Value::Null;
    };
    for part in name.unwrap_or("").split('.').filter(|p| !p.is_empty()) {
        match value.get(part) {
            Some(v) => value = v,
            None => return Value::Null,
        }
    }
    value.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_sections_are_looked_up_by_dotted_name() {
        let settings = serde_json::json!({"python": {"analysis": {"typeCheckingMode": "strict"}}});
        assert_eq!(
            section(Some(&settings), Some("python.analysis")),
            serde_json::json!({"typeCheckingMode": "strict"})
        );
        assert_eq!(section(Some(&settings), Some("nope")), Value::Null);
        assert_eq!(section(None, Some("python")), Value::Null);
        assert_eq!(section(Some(&settings), None), settings);
    }
}
