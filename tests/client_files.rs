//! The file tools through the client's files (an editor's buffers, `cairn::files::client`):
//! Read, Write, Edit and MultiEdit on a real session whose client serves files from memory
//! (`support/client_files.rs`), driven through the executor's steps (parse, validate,
//! preview, call with the preview); and the real agent with a deny rule, which refuses
//! before the client is asked anything.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cairn::config::LoadedSettings;
use cairn::files::client::ClientFiles;
use cairn::llm::Provider;
use cairn::permissions::{GateConfig, PermissionGate};
use cairn::protocol::{Decision, PermissionMode};
use cairn::session::context::{EventSender, SessionContext};
use cairn::tools::edit::EditTool;
use cairn::tools::multi_edit::MultiEditTool;
use cairn::tools::read::ReadTool;
use cairn::tools::write::WriteTool;
use cairn::tools::{DynTool, ToolOutput};
use serde_json::{Value, json};
use tempfile::TempDir;

#[path = "support/agent.rs"]
mod agent;
#[path = "support/client_files.rs"]
mod client_files;
#[path = "support/llm.rs"]
mod llm;
#[path = "support/workspace.rs"]
mod workspace;

use client_files::{Buffers, Request};

const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

/// A project on disk and an editor serving its files from buffers.
struct Editor {
    _project: TempDir,
    _data: TempDir,
    root: PathBuf,
    buffers: Arc<Buffers>,
    session: Arc<SessionContext>,
}

impl Editor {
    fn new() -> Editor {
        let project = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(project.path()).unwrap();
        let buffers = Arc::new(Buffers::default());
        let (events, _rx) = EventSender::channel();
        let files: Arc<dyn ClientFiles> = buffers.clone();
        let session = SessionContext::new(
            "test".into(),
            root.clone(),
            Vec::new(),
            data.path().to_path_buf(),
            events,
        )
        .with_client_files(Some(files));
        Editor {
            _project: project,
            _data: data,
            root,
            buffers,
            session: Arc::new(session),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn p(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }

    /// Put `text` on disk at `rel`.
    fn save(&self, rel: &str, text: &str) {
        std::fs::write(self.path(rel), text).unwrap();
    }

    fn disk(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    /// Open `rel` in the editor with `text` (or type it there).
    fn type_in(&self, rel: &str, text: &str) {
        self.buffers.set(&self.path(rel), text);
    }

    fn buffer(&self, rel: &str) -> Option<String> {
        self.buffers.get(&self.path(rel))
    }

    /// The executor's steps: parse, validate, preview, call with that preview.
    async fn run(&self, tool: &dyn DynTool, input: Value) -> Result<ToolOutput, String> {
        let ctx = workspace::tool_context(&self.session, "call_1");
        workspace::run_previewed(tool, input, ctx).await
    }

    async fn read(&self, rel: &str) -> String {
        self.run(&ReadTool, json!({"file_path": self.p(rel)}))
            .await
            .unwrap()
            .content
            .into_text()
    }

    async fn edit(&self, rel: &str, old: &str, new: &str) -> Result<ToolOutput, String> {
        let input = json!({"file_path": self.p(rel), "old_string": old, "new_string": new});
        self.run(&EditTool::default(), input).await
    }
}

#[tokio::test]
async fn read_gives_the_buffer_not_the_disk() {
    let e = Editor::new();
    e.save("a.txt", "saved line\n");
    e.type_in("a.txt", "unsaved line\nsecond\n");
    let out = e.read("a.txt").await;
    assert_eq!(out, "     1\tunsaved line\n     2\tsecond");
    assert_eq!(e.buffers.requests(), [Request::Read(e.path("a.txt"))]);
    // A file with no open buffer: the editor answers from disk, through the same request.
    e.save("b.txt", "only on disk\n");
    assert_eq!(e.read("b.txt").await, "     1\tonly on disk");
    assert_eq!(e.buffers.requests().len(), 2);
}

#[tokio::test]
async fn an_unchanged_buffer_read_again_is_answered_briefly_and_a_changed_one_in_full() {
    let e = Editor::new();
    e.save("a.txt", "disk\n");
    e.type_in("a.txt", "one\n");
    e.read("a.txt").await;
    assert!(
        e.read("a.txt")
            .await
            .starts_with("File unchanged since last read.")
    );
    // Typed in the editor; the disk (mtime, size) is as it was.
    e.type_in("a.txt", "two\n");
    assert_eq!(e.read("a.txt").await, "     1\ttwo");
}

#[tokio::test]
async fn an_edit_goes_through_the_client_and_leaves_the_disk_alone() {
    let e = Editor::new();
    e.save("a.rs", "fn main() {}\n");
    e.type_in("a.rs", "fn main() {\n    old();\n}\n");
    e.read("a.rs").await;
    let out = e.edit("a.rs", "old();", "new();").await.unwrap();
    assert!(
        out.content
            .into_text()
            .starts_with(&format!("The file {} has been updated", e.p("a.rs")))
    );
    assert_eq!(e.buffer("a.rs").unwrap(), "fn main() {\n    new();\n}\n");
    assert_eq!(e.disk("a.rs"), "fn main() {}\n");
    let writes: Vec<Request> = e
        .buffers
        .requests()
        .into_iter()
        .filter(|r| matches!(r, Request::Write(..)))
        .collect();
    assert_eq!(
        writes,
        [Request::Write(
            e.path("a.rs"),
            "fn main() {\n    new();\n}\n".into()
        )]
    );
    // What was written is what the model knows: a second edit needs no new Read.
    e.edit("a.rs", "new();", "newer();").await.unwrap();
    assert_eq!(e.buffer("a.rs").unwrap(), "fn main() {\n    newer();\n}\n");
}

#[tokio::test]
async fn a_crlf_buffer_keeps_its_line_endings() {
    let e = Editor::new();
    e.type_in("w.txt", "one\r\ntwo\r\n");
    assert_eq!(e.read("w.txt").await, "     1\tone\n     2\ttwo");
    e.edit("w.txt", "one\ntwo", "1\n2").await.unwrap();
    assert_eq!(e.buffer("w.txt").unwrap(), "1\r\n2\r\n");
}

#[tokio::test]
async fn multi_edit_and_write_go_through_the_client() {
    let e = Editor::new();
    e.save("m.txt", "a\nb\n");
    e.read("m.txt").await;
    let input = json!({"file_path": e.p("m.txt"), "edits": [
        {"old_string": "a", "new_string": "x"}, {"old_string": "b", "new_string": "y"}]});
    e.run(&MultiEditTool::default(), input).await.unwrap();
    assert_eq!(e.buffer("m.txt").unwrap(), "x\ny\n");
    let input = json!({"file_path": e.p("m.txt"), "content": "whole\n"});
    e.run(&WriteTool::default(), input).await.unwrap();
    assert_eq!(e.buffer("m.txt").unwrap(), "whole\n");
    assert_eq!(e.disk("m.txt"), "a\nb\n");
}

#[tokio::test]
async fn a_new_file_is_created_through_the_client() {
    let e = Editor::new();
    let input = json!({"file_path": e.p("new.txt"), "content": "fresh\n"});
    let out = e.run(&WriteTool::default(), input).await.unwrap();
    assert!(
        out.content
            .into_text()
            .starts_with("File created successfully")
    );
    assert_eq!(e.buffer("new.txt").unwrap(), "fresh\n");
    assert!(!e.path("new.txt").exists());
}

#[tokio::test]
async fn a_buffer_changed_after_the_read_where_the_edit_is_refuses_the_edit() {
    let e = Editor::new();
    e.save("a.txt", "one\ntwo\nthree\n");
    e.read("a.txt").await;
    // The person types on the very line the model is about to change; nothing is saved.
    e.type_in("a.txt", "one\nTWO!\nthree\n");
    let err = e.edit("a.txt", "two", "2").await.unwrap_err();
    assert!(err.starts_with(MODIFIED), "{err}");
    assert!(err.contains("-     2 two\n+     2 TWO!"), "{err}");
    assert_eq!(e.buffer("a.txt").unwrap(), "one\nTWO!\nthree\n");
    assert_eq!(e.buffers.writes(), 0);
    // Write, which has no merge, is refused outright.
    let input = json!({"file_path": e.p("a.txt"), "content": "mine\n"});
    let err = e.run(&WriteTool::default(), input).await.unwrap_err();
    assert_eq!(err, MODIFIED);
    assert_eq!(e.buffers.writes(), 0);
}

#[tokio::test]
async fn a_buffer_changed_elsewhere_after_the_read_is_merged() {
    let e = Editor::new();
    e.save("a.txt", "one\ntwo\nthree\nfour\nfive\n");
    e.read("a.txt").await;
    e.type_in("a.txt", "ONE\ntwo\nthree\nfour\nfive\n");
    let out = e
        .edit("a.txt", "five", "5")
        .await
        .unwrap()
        .content
        .into_text();
    assert!(
        out.contains("was modified outside cairn after you read it"),
        "{out}"
    );
    assert_eq!(e.buffer("a.txt").unwrap(), "ONE\ntwo\nthree\nfour\n5\n");
}

#[tokio::test]
async fn a_buffer_changed_between_the_preview_and_the_call_is_refused() {
    let e = Editor::new();
    e.save("a.txt", "one\ntwo\n");
    e.read("a.txt").await;
    let tool = EditTool::default();
    let input = json!({"file_path": e.p("a.txt"), "old_string": "two", "new_string": "2"});
    let mut ctx = workspace::tool_context(&e.session, "call_1");
    let parsed = DynTool::parse(&tool, &input).unwrap();
    ctx.preview = DynTool::preview(&tool, &parsed, &ctx).await.unwrap();
    // While the person looks at the proposal, they change the same line in the editor.
    e.type_in("a.txt", "one\ntwo, changed\n");
    let err = DynTool::call(&tool, parsed, &ctx)
        .await
        .unwrap_err()
        .message;
    assert!(err.starts_with(MODIFIED), "{err}");
    assert_eq!(e.buffer("a.txt").unwrap(), "one\ntwo, changed\n");
    assert_eq!(e.buffers.writes(), 0);
}

#[tokio::test]
async fn an_edit_without_a_read_is_refused_and_nothing_is_written() {
    let e = Editor::new();
    e.type_in("a.txt", "one\n");
    let err = e.edit("a.txt", "one", "1").await.unwrap_err();
    assert_eq!(err, NOT_READ);
    let input = json!({"file_path": e.p("a.txt"), "content": "x\n"});
    assert_eq!(
        e.run(&WriteTool::default(), input).await.unwrap_err(),
        NOT_READ
    );
    assert_eq!(e.buffers.writes(), 0);
    assert_eq!(e.buffer("a.txt").unwrap(), "one\n");
}

#[tokio::test]
async fn notebooks_and_binary_formats_stay_on_disk() {
    let e = Editor::new();
    let nb = json!({"cells": [{"cell_type": "code", "source": ["print(1)"], "metadata": {},
        "outputs": [], "execution_count": null}], "metadata": {}, "nbformat": 4,
        "nbformat_minor": 5});
    e.save("n.ipynb", &nb.to_string());
    let out = e.read("n.ipynb").await;
    assert!(out.contains("print(1)"), "{out}");
    let err = e
        .run(&ReadTool, json!({"file_path": e.p("x.zip")}))
        .await
        .unwrap_err();
    assert!(err.contains("binary"), "{err}");
    assert_eq!(e.buffers.requests(), []);
}

#[tokio::test]
async fn a_file_the_client_cannot_give_is_read_from_disk() {
    let e = Editor::new();
    // Not UTF-8: this editor cannot give it as text; Read answers as without an editor.
    std::fs::write(e.path("latin1.txt"), b"caf\xe9\n").unwrap();
    let out = e.read("latin1.txt").await;
    assert!(out.starts_with("     1\tcaf\u{FFFD}"), "{out}");
    assert!(out.contains("the file is not valid UTF-8"), "{out}");
    let err = e
        .run(&ReadTool, json!({"file_path": e.p("missing.txt")}))
        .await
        .unwrap_err();
    assert!(err.starts_with("File does not exist."), "{err}");
    assert_eq!(
        e.buffers.requests(),
        [
            Request::Read(e.path("latin1.txt")),
            Request::Read(e.path("missing.txt"))
        ]
    );
}

/// The real agent: the gate refuses a denied path before the tool runs, so the client is
/// never asked for it; an allowed Read in the same turn does reach the client (the session's
/// client files are wired through the agent's setup).
#[tokio::test]
async fn a_deny_rule_refuses_before_the_client_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("secret.txt"), "on disk\n").unwrap();
    let buffers = Arc::new(Buffers::default());
    buffers.set(&root.join("secret.txt"), "the secret, unsaved\n");
    buffers.set(&root.join("open.txt"), "an open buffer\n");
    let settings = LoadedSettings {
        project_root: root.clone(),
        project_dir: root.clone(),
        ..LoadedSettings::default()
    };
    let gate = PermissionGate::new(GateConfig {
        settings: &settings,
        cli_allow: Vec::new(),
        cli_deny: vec!["Read(./secret.txt)".into(), "Edit(./secret.txt)".into()],
        mode: PermissionMode::Default,
        interactive: true,
        project_dir: root.clone(),
        additional_dirs: Vec::new(),
        session_data_dir: root.join(".data"),
        running_as_root: false,
        sandboxed: false,
    })
    .unwrap();
    let secret = root.join("secret.txt").display().to_string();
    let open = root.join("open.txt").display().to_string();
    let calls = json!([
        {"id": "c0", "name": "Read", "input": {"file_path": secret}},
        {"id": "c1", "name": "Edit", "input": {"file_path": secret, "old_string": "the",
            "new_string": "a"}},
        {"id": "c2", "name": "Read", "input": {"file_path": open}},
    ]);
    let script = json!({"turns": [{"tool_calls": calls}, {"text": "done"}]});
    let files: Arc<dyn ClientFiles> = buffers.clone();
    let mut a = agent::Agent::start(
        &script,
        agent::Setup {
            gate,
            client_files: Some(files),
            transcript: false,
            checkpoints: false,
            idle: Duration::from_secs(30),
            ..agent::Setup::in_dir(&root, Provider::Anthropic)
        },
    );
    a.submit("go");
    let mut asked = 0;
    a.run_turn_answering(|_| {
        asked += 1;
        Decision::DenyOnce
    })
    .await;
    let results = agent::tool_results(&a.request_body(1));
    assert_eq!(asked, 0, "a deny rule never asks");
    assert_eq!(results.len(), 3, "{results:?}");
    for (text, is_error) in &results[..2] {
        assert!(*is_error, "{text}");
        assert!(text.contains("denied"), "{text}");
        assert!(!text.contains("secret, unsaved"), "{text}");
    }
    assert_eq!(results[2], ("     1\tan open buffer".to_string(), false));
    assert_eq!(
        buffers.requests(),
        [Request::Read(Path::new(&open).to_path_buf())]
    );
    assert_eq!(
        buffers.get(&root.join("secret.txt")).unwrap(),
        "the secret, unsaved\n"
    );
}
