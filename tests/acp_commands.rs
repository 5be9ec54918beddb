//! `cairn acp` answering what the TUI has beside the model, in process (the Rust crate's client,
//! the scripted model on 127.0.0.1): a sub-agent's own tool calls shown as calls of their own
//! under its Agent call, `/compact` and `/clear` as prompts cairn answers itself (advertised as
//! commands), and `authenticate` refused with where the credentials go.

#[path = "support/acp_env.rs"]
mod acp_env;
#[path = "support/llm.rs"]
mod llm;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest,
    SessionNotification, StopReason, TextContent,
};
use agent_client_protocol::{Agent, Client};
use serde_json::{Value, json};

async fn prompt(
    cx: &ConnectionTo<Agent>,
    session: &str,
    text: &str,
) -> Result<StopReason, agent_client_protocol::Error> {
    let blocks = vec![ContentBlock::Text(TextContent::new(text))];
    let answer = cx
        .send_request(PromptRequest::new(session.to_string(), blocks))
        .block_task()
        .await?;
    Ok(answer.stop_reason)
}

/// The text of the thought chunks in `updates`.
fn thoughts(updates: &[Value]) -> String {
    updates
        .iter()
        .filter(|u| u["update"]["sessionUpdate"] == "agent_thought_chunk")
        .filter_map(|u| u["update"]["content"]["text"].as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_agent_calls_compact_clear_and_authenticate_over_acp() {
    let home = tempfile::tempdir().unwrap();
    acp_env::isolate(home.path());
    let root = tempfile::tempdir().unwrap();
    let project = root.path().canonicalize().unwrap();
    std::fs::write(project.join("notes.txt"), "NOTES-CONTENT\n").unwrap();
    let server = llm::scripted(&json!({
        "turns": [
            {"tool_calls": [{"id": "a1", "name": "Agent", "input": {
                "description": "look at the notes", "prompt": "read notes.txt"}}]},
            {"text": "agent done"},
            // The summary `/compact` asks for.
            {"text": "SUMMARY-OF-THE-WORK"},
        ],
        "by_system": [{"system_contains": "general-purpose agent", "turns": [
            {"tool_calls": [{"id": "r2", "name": "Read", "input": {"file_path": "notes.txt"}}]},
            {"text": "found the notes"}
        ]}]
    }));
    let agent = acp_env::agent(server.anthropic_base_url());
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let on_update = Arc::clone(&seen);
    let updates = || seen.lock().unwrap().drain(..).collect::<Vec<Value>>();
    let client = Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                on_update
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&n).unwrap());
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(agent, async |cx: ConnectionTo<Agent>| {
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            assert!(init.auth_methods.is_empty());
            let refused = cx
                .send_request(AuthenticateRequest::new("api-key"))
                .block_task()
                .await
                .expect_err("no method to authenticate with");
            let said = refused.data.map(|d| d.to_string()).unwrap_or_default();
            assert!(said.contains("ANTHROPIC_API_KEY"), "{said}");

            let session = cx
                .send_request(NewSessionRequest::new(project.clone()))
                .block_task()
                .await?
                .session_id
                .0
                .to_string();
            // The sub-agent's Read is a call of its own, under the Agent call.
            assert_eq!(prompt(&cx, &session, "look").await?, StopReason::EndTurn);
            let turn = updates();
            // (The session's first updates come after the answer to session/new.)
            let commands: Vec<&str> = turn
                .iter()
                .filter(|u| u["update"]["sessionUpdate"] == "available_commands_update")
                .flat_map(|u| u["update"]["availableCommands"].as_array().unwrap())
                .filter_map(|c| c["name"].as_str())
                .collect();
            assert!(
                commands.contains(&"clear") && commands.contains(&"compact"),
                "{commands:?}"
            );
            let inner = turn
                .iter()
                .map(|u| &u["update"])
                .find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "r2")
                .unwrap_or_else(|| panic!("the sub-agent's Read was not shown: {turn:?}"));
            assert_eq!(inner["title"], "general-purpose › Read notes.txt");
            assert_eq!(inner["kind"], "read");
            assert_eq!(inner["_meta"]["cairn"]["parentToolCallId"], "a1");
            let mut statuses: Vec<&str> = turn
                .iter()
                .map(|u| &u["update"])
                .filter(|u| u["toolCallId"] == "r2")
                .map(|u| u["status"].as_str().unwrap_or("pending"))
                .collect();
            statuses.dedup();
            assert_eq!(statuses, ["pending", "in_progress", "completed"]);
            let outer = turn
                .iter()
                .map(|u| &u["update"])
                .position(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "a1");
            let inner_at = turn.iter().position(|u| u["update"]["toolCallId"] == "r2");
            assert!(outer < inner_at, "the Agent call is announced first");

            // `/compact` with instructions: the model summarises, the prompt ends the turn.
            let before = server.requests().len();
            assert_eq!(
                prompt(&cx, &session, "/compact keep the notes").await?,
                StopReason::EndTurn
            );
            assert_eq!(server.requests().len(), before + 1);
            let asked = server.requests()[before].body.to_string();
            assert!(asked.contains("keep the notes"), "{asked}");
            assert!(thoughts(&updates()).contains("compacted (manual)"));

            // `/clear`: forgotten, so the next `/compact` has nothing to summarise and asks
            // the model nothing.
            assert_eq!(prompt(&cx, &session, "/clear").await?, StopReason::EndTurn);
            assert!(thoughts(&updates()).contains("Conversation cleared"));
            assert_eq!(
                prompt(&cx, &session, "/compact").await?,
                StopReason::EndTurn
            );
            assert!(thoughts(&updates()).contains("Nothing to compact"));
            assert_eq!(server.requests().len(), before + 1);
            Ok(())
        });
    tokio::time::timeout(Duration::from_secs(90), client)
        .await
        .expect("the conversation ends within 90 s")
        .expect("the connection works");
}
