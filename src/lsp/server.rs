//! One running language server: its process (own process group, stderr to a log file), the
//! async-lsp main loop over its stdio, the `initialize` handshake, the documents cairn has
//! opened in it (`didOpen` then `didChange` with increasing versions, the text always as on
//! disk when synced), requests with a time limit, and `shutdown`/`exit` when it is let go.
//! It never restarts itself: the manager (`super`) decides that.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_lsp::lsp_types::notification::{
    DidChangeConfiguration, DidChangeTextDocument, DidOpenTextDocument, Exit, Initialized,
};
use async_lsp::lsp_types::request::{Initialize, Request, Shutdown};
use async_lsp::lsp_types::{
    CallHierarchyClientCapabilities, ClientCapabilities, DidChangeConfigurationParams,
    DidChangeTextDocumentParams, DidOpenTextDocumentParams, DocumentSymbolClientCapabilities,
    GotoCapability, HoverClientCapabilities, InitializeParams, InitializedParams, MarkupKind,
    PublishDiagnosticsClientCapabilities, ServerCapabilities, TextDocumentClientCapabilities,
    TextDocumentContentChangeEvent, TextDocumentItem, Url, VersionedTextDocumentIdentifier,
    WindowClientCapabilities, WorkspaceClientCapabilities, WorkspaceFolder,
};
use async_lsp::{ErrorCode, MainLoop, ServerSocket};
use tokio::task::JoinHandle;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::handlers::{Handler, router};
use super::spec::ServerSpec;
use super::state::ServerState;

/// How long one request may take before cairn gives up on it.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A failure talking to a server, worded for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LspError(pub String);

/// A document as last sent to the server.
struct Doc {
    version: i32,
    text: String,
}

pub struct Server {
    pub spec: Arc<ServerSpec>,
    pub root: PathBuf,
    socket: ServerSocket,
    pub state: Arc<ServerState>,
    pub capabilities: ServerCapabilities,
    docs: tokio::sync::Mutex<HashMap<Url, Doc>>,
    /// The process and the main loop, taken by shutdown.
    process: Mutex<Option<(tokio::process::Child, JoinHandle<()>)>>,
    pub log_path: PathBuf,
}

impl Server {
    /// Start `spec` for workspace `root`, its stderr appended to `log_path`, and initialise it
    /// within the spec's startup timeout.
    pub async fn start(
        spec: Arc<ServerSpec>,
        root: &Path,
        log_path: PathBuf,
    ) -> Result<Arc<Server>, LspError> {
        let root_uri = Url::from_directory_path(root)
            .map_err(|()| LspError(format!("not an absolute directory: {}", root.display())))?;
        if let Some(dir) = log_path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_or_else(|_| Stdio::null(), Stdio::from);
        let mut child = tokio::process::Command::new(&spec.program)
            .args(&spec.args)
            .envs(&spec.env)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                LspError(format!(
                    "language server `{}` ({}) could not start: {e}",
                    spec.name,
                    spec.program.display()
                ))
            })?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(LspError("language server without stdio".into()));
        };
        let state = Arc::new(ServerState::default());
        let handler_state = Arc::clone(&state);
        let settings = spec.settings.clone();
        let name = spec.name.clone();
        let handler_root = root_uri.clone();
        let (main_loop, socket) = MainLoop::new_client(move |socket| {
            router(Handler {
                state: handler_state,
                settings,
                root: handler_root,
                name,
                _socket: socket,
            })
        });
        let loop_state = Arc::clone(&state);
        let loop_name = spec.name.clone();
        let main = tokio::spawn(async move {
            if let Err(e) = main_loop
                .run_buffered(stdout.compat(), stdin.compat_write())
                .await
            {
                tracing::warn!(server = %loop_name, "language server connection ended: {e}");
            }
            loop_state.close();
        });
        let params = initialize_params(&spec, root, root_uri);
        let init = tokio::time::timeout(spec.startup_timeout, socket.request::<Initialize>(params));
        let capabilities = match init.await {
            Ok(Ok(result)) => result.capabilities,
            Ok(Err(e)) => {
                main.abort();
                return Err(LspError(format!(
                    "language server `{}` failed to initialise: {e} (its log: {})",
                    spec.name,
                    log_path.display()
                )));
            }
            Err(_) => {
                main.abort();
                return Err(LspError(format!(
                    "language server `{}` did not answer `initialize` within {:.1} s (its log: \
                     {})",
                    spec.name,
                    spec.startup_timeout.as_secs_f64(),
                    log_path.display()
                )));
            }
        };
        let _ = socket.notify::<Initialized>(InitializedParams {});
        if let Some(settings) = &spec.settings {
            let _ = socket.notify::<DidChangeConfiguration>(DidChangeConfigurationParams {
                settings: settings.clone(),
            });
        }
        Ok(Arc::new(Server {
            spec,
            root: root.to_path_buf(),
            socket,
            state,
            capabilities,
            docs: tokio::sync::Mutex::new(HashMap::new()),
            process: Mutex::new(Some((child, main))),
            log_path,
        }))
    }

    /// The server's process id (also its process group's), while cairn holds the process.
    pub fn pid(&self) -> Option<u32> {
        self.process
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|(child, _)| child.id())
    }

    /// Whether the connection is gone (the process exited or broke the protocol).
    pub fn is_dead(&self) -> bool {
        self.state.is_closed()
    }

    /// Make the server's copy of `path` what the disk holds now (`didOpen` the first time,
    /// `didChange` with the next version when it changed). Returns the document's URI and
    /// the version the server now has.
    pub async fn sync(&self, path: &Path, language: &str) -> Result<(Url, i32), LspError> {
        let uri = Url::from_file_path(path)
            .map_err(|()| LspError(format!("not an absolute path: {}", path.display())))?;
        let text = tokio::fs::read_to_string(path)
            .await
            .map_err(|e| LspError(format!("cannot read {}: {e}", path.display())))?;
        let mut docs = self.docs.lock().await;
        let mut version = 1;
        let sent = match docs.get_mut(&uri) {
            None => {
                let r = self
                    .socket
                    .notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
                        text_document: TextDocumentItem {
                            uri: uri.clone(),
                            language_id: language.to_string(),
                            version: 1,
                            text: text.clone(),
                        },
                    });
                docs.insert(uri.clone(), Doc { version: 1, text });
                r
            }
            Some(doc) if doc.text != text => {
                doc.version += 1;
                version = doc.version;
                doc.text = text.clone();
                self.socket
                    .notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
                        text_document: VersionedTextDocumentIdentifier {
                            uri: uri.clone(),
                            version: doc.version,
                        },
                        content_changes: vec![TextDocumentContentChangeEvent {
                            range: None,
                            range_length: None,
                            text,
                        }],
                    })
            }
            Some(doc) => {
                version = doc.version;
                Ok(())
            }
        };
        sent.map_err(|e| self.gone(e))?;
        Ok((uri, version))
    }

    /// Whether cairn has opened `path` in this server.
    pub async fn has_open(&self, path: &Path) -> bool {
        match Url::from_file_path(path) {
            Ok(uri) => self.docs.lock().await.contains_key(&uri),
            Err(()) => false,
        }
    }

    /// Send request `R` and wait for its answer, at most [`REQUEST_TIMEOUT`]. A server that
    /// answers "content modified" (its state moved under the request) is asked again, twice.
    pub async fn request<R: Request>(&self, params: R::Params) -> Result<R::Result, LspError>
    where
        R::Params: Clone,
    {
        for _ in 0..3 {
            let call = self.socket.request::<R>(params.clone());
            match tokio::time::timeout(REQUEST_TIMEOUT, call).await {
                Ok(Ok(result)) => return Ok(result),
                Ok(Err(async_lsp::Error::Response(e))) if e.code == ErrorCode::CONTENT_MODIFIED => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Ok(Err(async_lsp::Error::Response(e))) => {
                    return Err(LspError(format!(
                        "language server `{}` refused {}: {}",
                        self.spec.name,
                        R::METHOD,
                        e.message
                    )));
                }
                Ok(Err(e)) => return Err(self.gone(e)),
                Err(_) => {
                    return Err(LspError(format!(
                        "language server `{}` did not answer {} within {} s (its log: {})",
                        self.spec.name,
                        R::METHOD,
                        REQUEST_TIMEOUT.as_secs(),
                        self.log_path.display()
                    )));
                }
            }
        }
        Err(LspError(format!(
            "language server `{}` kept answering {} with \"content modified\"; try again",
            self.spec.name,
            R::METHOD
        )))
    }

    fn gone(&self, e: async_lsp::Error) -> LspError {
        LspError(format!(
            "language server `{}` stopped ({e}); it restarts on the next call (its log: {})",
            self.spec.name,
            self.log_path.display()
        ))
    }

    /// `shutdown` then `exit`, waiting a little for the process; then its process group is
    /// killed whatever it did.
    pub async fn shutdown(&self) {
        let taken = self
            .process
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some((mut child, main)) = taken else {
            return;
        };
        if !self.is_dead() {
            let bye = async {
                let _ = self.socket.request::<Shutdown>(()).await;
                let _ = self.socket.notify::<Exit>(());
                let _ = child.wait().await;
            };
            let _ = tokio::time::timeout(Duration::from_secs(2), bye).await;
        }
        kill_group(&child);
        let _ = child.start_kill();
        main.abort();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Not shut down politely (no runtime left to do it): the process group goes at once.
        if let Some((mut child, main)) = self
            .process
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            kill_group(&child);
            let _ = child.start_kill();
            main.abort();
        }
    }
}

/// SIGKILL the child's process group (it leads its own: `process_group(0)`).
fn kill_group(child: &tokio::process::Child) {
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: killpg(2) only sends a signal; the group is the child's own.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}

fn initialize_params(spec: &ServerSpec, root: &Path, root_uri: Url) -> InitializeParams {
    let text_document = TextDocumentClientCapabilities {
        hover: Some(HoverClientCapabilities {
            content_format: Some(vec![MarkupKind::Markdown, MarkupKind::PlainText]),
            ..Default::default()
        }),
        definition: Some(GotoCapability {
            link_support: Some(true),
            ..Default::default()
        }),
        implementation: Some(GotoCapability {
            link_support: Some(true),
            ..Default::default()
        }),
        document_symbol: Some(DocumentSymbolClientCapabilities {
            hierarchical_document_symbol_support: Some(true),
            ..Default::default()
        }),
        call_hierarchy: Some(CallHierarchyClientCapabilities::default()),
        rename: Some(async_lsp::lsp_types::RenameClientCapabilities::default()),
        publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
            version_support: Some(true),
            ..Default::default()
        }),
        ..Default::default()
    };
    #[allow(deprecated)]
    InitializeParams {
        process_id: Some(std::process::id()),
        root_path: Some(root.to_string_lossy().into_owned()),
        root_uri: Some(root_uri.clone()),
        initialization_options: spec.initialization_options.clone(),
        capabilities: ClientCapabilities {
            text_document: Some(text_document),
            window: Some(WindowClientCapabilities {
                work_done_progress: Some(true),
                ..Default::default()
            }),
            workspace: Some(WorkspaceClientCapabilities {
                configuration: Some(true),
                workspace_folders: Some(true),
                // Text edits with versions; no file creation, renaming or deletion.
                workspace_edit: Some(async_lsp::lsp_types::WorkspaceEditClientCapabilities {
                    document_changes: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        },
        workspace_folders: Some(vec![WorkspaceFolder {
            uri: root_uri,
            name: "root".into(),
        }]),
        client_info: Some(async_lsp::lsp_types::ClientInfo {
            name: "cairn".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        ..Default::default()
    }
}
