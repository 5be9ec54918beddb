//! `cairn acp` at the protocol level, in process: the Rust crate's own client
//! (`agent_client_protocol`'s `Client`) against `cairn::acp::agent` over the crate's in-memory
//! transport, the scripted model on 127.0.0.1. What the TypeScript end-to-end test does not
//! cover: trust vouched for by the client (`_meta.cairn.trustFolder`) against trust as recorded,
//! modes set by the client, a linked file attached, and the errors of unknown sessions and modes.

#[path = "support/acp_env.rs"]
mod acp_env;
#[path = "support/llm.rs"]
mod llm;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, Meta, NewSessionRequest, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, ResourceLink,
    SelectedPermissionOutcome, SessionNotification, SetSessionModeRequest, StopReason, TextContent,
};
use agent_client_protocol::{Agent, Client, Responder, V1};
use serde_json::{Value, json};

/// What the client saw: every update, every permission question.
#[derive(Default)]
struct Seen {
    updates: Mutex<Vec<Value>>,
    asked: Mutex<Vec<Value>>,
}

fn text(t: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(t))
}

async fn prompt(
    cx: &ConnectionTo<Agent>,
    session: &str,
    blocks: Vec<ContentBlock>,
) -> Result<StopReason, agent_client_protocol::Error> {
    let answer = cx
        .send_request(PromptRequest::new(session.to_string(), blocks))
        .block_task()
        .await?;
    Ok(answer.stop_reason)
}

async fn new_session(
    cx: &ConnectionTo<Agent>,
    cwd: &Path,
    trust: bool,
) -> Result<String, agent_client_protocol::Error> {
    let mut request = NewSessionRequest::new(cwd.to_path_buf());
    if trust {
        let meta: Meta =
            serde_json::from_value(json!({"cairn": {"trustFolder": true}})).unwrap_or_default();
        request = request.meta(meta);
    }
    let answer = cx.send_request(request).block_task().await?;
    Ok(answer.session_id.0.to_string())
}

/// A project whose settings allow `touch made-by-allow-rule` — an allow rule, which applies only
/// in a trusted folder.
fn project(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(
        dir.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Bash(touch made-by-allow-rule)"]}}).to_string(),
    )
    .unwrap();
    std::fs::write(dir.join("linked.txt"), "LINKED-FILE-CONTENT\n").unwrap();
    dir.canonicalize().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_modes_links_and_errors_over_the_rust_client() {
    let home = tempfile::tempdir().unwrap();
    acp_env::isolate(home.path());
    let touch = json!({"tool_calls": [{"id": "t", "name": "Bash",
        "input": {"command": "touch made-by-allow-rule", "description": "touch"}}]});
    let write = json!({"tool_calls": [{"id": "w", "name": "Write",
        "input": {"file_path": "new.txt", "content": "written\n"}}]});
    // The scripted model picks a turn by the conversation's length, so both sessions follow
    // one script: each starts at its first turn.
    let server = llm::scripted(&json!({"turns": [
        // Both sessions' first prompt runs the command: the trusted one's allow rule lets it
        // run without a question; in the untrusted one the rule does not apply and the
        // question is refused.
        touch, {"text": "done"},
        // acceptEdits: a new file is written without a question.
        write, {"text": "wrote"},
        // A linked file is attached to the prompt.
        {"text": "read the link"},
    ]}));
    let root = tempfile::tempdir().unwrap();
    let trusted = project(root.path(), "trusted");
    let untrusted = project(root.path(), "untrusted");

    let agent = acp_env::agent(server.anthropic_base_url());

    let seen = Arc::new(Seen::default());
    let (on_update, on_ask) = (Arc::clone(&seen), Arc::clone(&seen));
    let client = Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                on_update
                    .updates
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&n).unwrap());
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse, V1>,
                        _cx| {
                on_ask
                    .asked
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&r).unwrap());
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        "reject-once",
                    )),
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(agent, async |cx: ConnectionTo<Agent>| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;

            // Trusted by the client's word: the folder's allow rule applies.
            let a = new_session(&cx, &trusted, true).await?;
            assert_eq!(
                prompt(&cx, &a, vec![text("touch it")]).await?,
                StopReason::EndTurn
            );
            assert!(trusted.join("made-by-allow-rule").exists());
            assert!(
                seen.asked.lock().unwrap().is_empty(),
                "the trusted folder's rule allowed it"
            );

            // Not vouched for (and never trusted): the rule is left out, the person is asked.
            let b = new_session(&cx, &untrusted, false).await?;
            assert_eq!(
                prompt(&cx, &b, vec![text("touch it")]).await?,
                StopReason::EndTurn
            );
            assert!(!untrusted.join("made-by-allow-rule").exists());
            assert_eq!(
                seen.asked.lock().unwrap().len(),
                1,
                "the untrusted folder asks"
            );

            // Modes: acceptEdits from the client; a new file is written without a question.
            cx.send_request(SetSessionModeRequest::new(b.clone(), "acceptEdits"))
                .block_task()
                .await?;
            assert_eq!(
                prompt(&cx, &b, vec![text("write it")]).await?,
                StopReason::EndTurn
            );
            assert_eq!(
                std::fs::read_to_string(untrusted.join("new.txt"))
                    .ok()
                    .as_deref(),
                Some("written\n"),
                "{:#?}",
                seen.updates
                    .lock()
                    .unwrap()
                    .iter()
                    .map(|u| format!(
                        "{} {} {} {} {}",
                        &u["sessionId"].as_str().unwrap_or("")[..4],
                        u["update"]["sessionUpdate"],
                        u["update"]["toolCallId"],
                        u["update"]["status"],
                        u["update"]["content"]["text"]
                    ))
                    .collect::<Vec<_>>()
            );
            assert_eq!(
                seen.asked.lock().unwrap().len(),
                1,
                "acceptEdits did not ask"
            );
            let refused = cx
                .send_request(SetSessionModeRequest::new(b.clone(), "yolo"))
                .block_task()
                .await;
            assert!(refused.is_err(), "an unknown mode is refused");

            // A linked local file is attached as Read shows it.
            let link = ResourceLink::new(
                "linked.txt",
                format!("file://{}", untrusted.join("linked.txt").display()),
            );
            let blocks = vec![text("look at"), ContentBlock::ResourceLink(link)];
            assert_eq!(prompt(&cx, &b, blocks).await?, StopReason::EndTurn);

            // Unknown sessions are errors, not silence.
            assert!(
                prompt(&cx, "no-such-session", vec![text("hi")])
                    .await
                    .is_err()
            );
            Ok(())
        });
    tokio::time::timeout(Duration::from_secs(90), client)
        .await
        .expect("the conversation ends within 90 s")
        .expect("the connection works");

    let last = server.requests().last().unwrap().body.to_string();
    assert!(last.contains("LINKED-FILE-CONTENT"), "{last}");
    let updates = seen.updates.lock().unwrap();
    assert!(
        updates
            .iter()
            .any(|u| u["update"]["sessionUpdate"] == "current_mode_update"
                && u["update"]["currentModeId"] == "acceptEdits"),
        "the mode change was announced"
    );
    let asked = seen.asked.lock().unwrap();
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "t");
    assert_eq!(asked[0]["options"][0]["optionId"], "allow-once");
}
