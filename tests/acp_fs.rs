//! `cairn acp` with an editor that serves its files (`fs/read_text_file`,
//! `fs/write_text_file`): the crate's own client, in process, answering from a map of buffers,
//! the scripted model on 127.0.0.1 calling Read then Edit. The model must read the unsaved
//! buffer, and the edit must reach the editor, leaving the disk alone.

#[path = "support/acp_env.rs"]
mod acp_env;
#[path = "support/llm.rs"]
mod llm;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, FileSystemCapabilities, InitializeRequest, NewSessionRequest,
    PromptRequest, ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome, StopReason,
    TextContent, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, Client, ErrorCode, Responder, V1};
use serde_json::json;

/// The editor: open buffers by path, and the fs requests it got ("read"/"write", path).
#[derive(Default)]
struct Editor {
    buffers: Mutex<HashMap<PathBuf, String>>,
    requests: Mutex<Vec<(&'static str, PathBuf)>>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_reads_and_edits_the_editors_buffer_over_acp() {
    let home = tempfile::tempdir().unwrap();
    acp_env::isolate(home.path());
    let root = tempfile::tempdir().unwrap();
    let project = root.path().canonicalize().unwrap();
    let file = project.join("a.txt");
    std::fs::write(&file, "the copy on disk\n").unwrap();
    let path = file.display().to_string();
    let server = llm::scripted(&json!({"turns": [
        {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": path}}]},
        {"tool_calls": [{"id": "e", "name": "Edit", "input": {"file_path": path,
            "old_string": "unsaved", "new_string": "edited"}}]},
        {"text": "done"},
    ]}));
    let agent = acp_env::agent(server.anthropic_base_url());

    let editor = Arc::new(Editor::default());
    editor
        .buffers
        .lock()
        .unwrap()
        .insert(file.clone(), "unsaved line\n".into());
    let (on_read, on_write) = (Arc::clone(&editor), Arc::clone(&editor));
    let client = Client
        .v1()
        .on_receive_request(
            async move |r: ReadTextFileRequest,
                        responder: Responder<ReadTextFileResponse, V1>,
                        _cx| {
                on_read
                    .requests
                    .lock()
                    .unwrap()
                    .push(("read", r.path.clone()));
                let text = on_read.buffers.lock().unwrap().get(&r.path).cloned();
                match text {
                    Some(text) => responder.respond(ReadTextFileResponse::new(text)),
                    None => responder.respond_with_error(agent_client_protocol::Error::new(
                        ErrorCode::RESOURCE_NOT_FOUND,
                        "no such file",
                    )),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: WriteTextFileRequest,
                        responder: Responder<WriteTextFileResponse, V1>,
                        _cx| {
                on_write
                    .requests
                    .lock()
                    .unwrap()
                    .push(("write", r.path.clone()));
                on_write.buffers.lock().unwrap().insert(r.path, r.content);
                responder.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_r: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse, V1>,
                        _cx| {
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        "allow-once",
                    )),
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(agent, async |cx: ConnectionTo<Agent>| {
            let fs = FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(true);
            cx.send_request(
                InitializeRequest::new(ProtocolVersion::V1)
                    .client_capabilities(ClientCapabilities::new().fs(fs)),
            )
            .block_task()
            .await?;
            let session = cx
                .send_request(NewSessionRequest::new(project.clone()))
                .block_task()
                .await?
                .session_id;
            let prompt = vec![ContentBlock::Text(TextContent::new("edit it"))];
            let answer = cx
                .send_request(PromptRequest::new(session, prompt))
                .block_task()
                .await?;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            Ok(())
        });
    tokio::time::timeout(Duration::from_secs(90), client)
        .await
        .expect("the conversation ends within 90 s")
        .expect("the connection works");

    // The model read the buffer, not the disk.
    let after_read = server.requests()[1].body.to_string();
    assert!(after_read.contains("unsaved line"), "{after_read}");
    assert!(!after_read.contains("the copy on disk"), "{after_read}");
    // The edit went to the editor; the disk is as it was.
    let edited = editor.buffers.lock().unwrap().get(&file).cloned();
    assert_eq!(edited.as_deref(), Some("edited line\n"));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "the copy on disk\n"
    );
    let requests = editor.requests.lock().unwrap().clone();
    assert!(requests.iter().all(|(_, p)| p == &file), "{requests:?}");
    assert_eq!(
        requests.iter().filter(|(what, _)| *what == "write").count(),
        1,
        "{requests:?}"
    );
    assert_eq!(requests.last().map(|r| r.0), Some("write"));
}
