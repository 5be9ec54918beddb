//! Workspaces for tool and permission tests, on real temp dirs. [`Workspace`] is a project
//! dir and a separate data dir with a session and a [`ToolContext`] for calls, plus [`run`]
//! and [`run_previewed`], the executor's steps for one call. [`Homes`] is a temp root holding
//! `home/` (what HOME points at), `proj/` (a git project), `outside/` and `data/`, with the gate
//! configuration over it, for settings and permission tests.
//! Include with `#[path = "support/workspace.rs"] mod workspace;`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn::config::LoadedSettings;
use cairn::permissions::GateConfig;
use cairn::protocol::{Event, PermissionMode};
use cairn::session::context::{EventSender, SessionContext};
use cairn::tools::{DynTool, ProgressSender, ToolContext, ToolError, ToolOutput};
use serde_json::Value;
use tempfile::TempDir;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

/// A session `id` in `project` with data in `data`, and the receiver of its events.
pub fn session(
    id: &str,
    project: PathBuf,
    data: PathBuf,
) -> (Arc<SessionContext>, UnboundedReceiver<Event>) {
    let (events, rx) = EventSender::channel();
    let session = SessionContext::new(id.into(), project, Vec::new(), data, events);
    (Arc::new(session), rx)
}

/// A fresh context for call `call_id` in `session`: not cancelled, no preview, no override.
pub fn tool_context(session: &Arc<SessionContext>, call_id: &str) -> ToolContext {
    ToolContext {
        called_as: None,
        session: session.clone(),
        call_id: call_id.into(),
        cancel: CancellationToken::new(),
        progress: ProgressSender::new(call_id.into(), session.events.clone()),
        preview: None,
        content_override: None,
        answers: None,
        deferred: Default::default(),
        conflict: None,
    }
}

/// Parse, validate and call, as the executor does (without the preview step).
pub async fn run(
    tool: &dyn DynTool,
    input: Value,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let parsed = tool.parse(&input)?;
    tool.validate(&parsed, ctx).await?;
    tool.call(parsed, ctx).await
}

/// The executor's steps with the preview: parse, validate, preview, call with that preview
/// (and whatever override `ctx` carries). Errors as their message.
pub async fn run_previewed(
    tool: &dyn DynTool,
    input: Value,
    mut ctx: ToolContext,
) -> Result<ToolOutput, String> {
    let parsed = tool.parse(&input).map_err(|e| e.message)?;
    tool.validate(&parsed, &ctx).await.map_err(|e| e.message)?;
    ctx.preview = tool.preview(&parsed, &ctx).await.map_err(|e| e.message)?;
    tool.call(parsed, &ctx).await.map_err(|e| e.message)
}

/// A project dir and a separate data dir, with a session `test` and a context for call
/// `call_1` in it.
pub struct Workspace {
    _project: TempDir,
    _data: TempDir,
    pub session: Arc<SessionContext>,
    pub ctx: ToolContext,
    pub events: UnboundedReceiver<Event>,
}

impl Workspace {
    pub fn new() -> Workspace {
        let project = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        // Canonical paths, so `pwd -P` and the tests' expectations agree.
        let root = std::fs::canonicalize(project.path()).unwrap();
        let (session, events) = session("test", root, data.path().to_path_buf());
        Workspace {
            _project: project,
            _data: data,
            ctx: tool_context(&session, "call_1"),
            session,
            events,
        }
    }

    /// The project dir (canonical).
    pub fn root(&self) -> &Path {
        &self.session.project_dir
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    /// A fresh context for call `call_1`, for a call that sets its own preview or override.
    pub fn call_ctx(&self) -> ToolContext {
        tool_context(&self.session, "call_1")
    }

    /// Write `content` to `rel` in the project, parents created; returns the path.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }

    /// The text of `rel` in the project.
    pub fn file(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }
}

/// A canonical temp root with `home/` (what HOME points at), `proj/` (a git project:
/// `proj/.git`), `outside/` (neither) and the path `data/` for session data (not created).
/// Test files add the files and methods of their own layout with `impl Homes`.
pub struct Homes {
    _tmp: TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub proj: PathBuf,
    pub out: PathBuf,
    pub data: PathBuf,
}

impl Homes {
    pub fn new() -> Homes {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (home, proj, out) = (root.join("home"), root.join("proj"), root.join("outside"));
        for d in [&home, &proj.join(".git"), &out] {
            std::fs::create_dir_all(d).unwrap();
        }
        Homes {
            _tmp: tmp,
            data: root.join("data"),
            root,
            home,
            proj,
            out,
        }
    }

    /// The environment settings are loaded with: HOME is `home/`, nothing else is set.
    pub fn env(&self) -> impl Fn(&str) -> Option<String> + use<> {
        let home = self.home.to_string_lossy().into_owned();
        move |k: &str| (k == "HOME").then(|| home.clone())
    }

    /// Write `text` to `rel` under the root, parents created.
    pub fn write(&self, rel: &str, text: impl AsRef<[u8]>) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A session `id` in `proj/` with its data in `data/`.
    pub fn session_as(&self, id: &str) -> (Arc<SessionContext>, UnboundedReceiver<Event>) {
        session(id, self.proj.clone(), self.data.clone())
    }

    /// The gate configuration over `settings` for a session in `proj/`: default mode,
    /// interactive, no command-line rules, data in `data/`.
    pub fn gate_config<'a>(&self, settings: &'a LoadedSettings) -> GateConfig<'a> {
        GateConfig {
            settings,
            cli_allow: Vec::new(),
            cli_deny: Vec::new(),
            mode: PermissionMode::Default,
            interactive: true,
            project_dir: self.proj.clone(),
            additional_dirs: Vec::new(),
            session_data_dir: self.data.clone(),
            running_as_root: false,
            sandboxed: false,
        }
    }
}
