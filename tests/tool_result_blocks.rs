//! Tool results with images end to end: a test-only `Snap` tool, registered through the library
//! API, returns images, documents and text; the real agent loop sends its results to the
//! scripted model server over HTTP in both wire formats, and the tests assert the request bodies
//! the model got, the events people see, and the transcript.

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use cairn::llm::Provider;
use cairn::protocol::{Display, Event, TurnEnd};
use cairn::session::context::SessionContext;
use cairn::tools::{
    Tool, ToolContext, ToolError, ToolHandle, ToolInfo, ToolKind, ToolOutput, ToolResultBlock,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;

use agent::{Agent, Setup, finished};

#[derive(Deserialize, JsonSchema)]
struct SnapInput {
    /// `image`, `text`, `huge_text_and_image`, `oversized_image` or `document`.
    kind: String,
}

/// Returns whatever kind of result the model asks for.
struct Snap;

/// A PNG signature and IHDR chunk for a 640×480 image: all the size sniffing reads.
fn png() -> String {
    let mut v = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    v.extend_from_slice(&640u32.to_be_bytes());
    v.extend_from_slice(&480u32.to_be_bytes());
    v.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    base64::engine::general_purpose::STANDARD.encode(v)
}

fn huge_text() -> String {
    (0..10_000).map(|i| format!("row {i}\n")).collect()
}

#[async_trait]
impl Tool for Snap {
    type Input = SnapInput;
    fn info(&self) -> ToolInfo {
        ToolInfo::new("Snap", ToolKind::Other)
            .read_only()
            .concurrency_safe()
    }
    fn description(&self) -> String {
        "Take a screenshot".into()
    }
    fn title(&self, input: &SnapInput, _: &SessionContext) -> String {
        format!("Snap {}", input.kind)
    }
    async fn call(&self, input: SnapInput, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(match input.kind.as_str() {
            "image" => ToolOutput::image("image/png", png()),
            "text" => ToolOutput::text("plain text"),
            "huge_text_and_image" => ToolOutput::blocks(
                vec![
                    ToolResultBlock::Text { text: huge_text() },
                    ToolResultBlock::image("image/png", png()),
                ],
                Display::Empty,
            ),
            "oversized_image" => ToolOutput::image("image/png", "A".repeat(6 * 1024 * 1024)),
            "document" => ToolOutput::blocks(
                vec![ToolResultBlock::Document {
                    media_type: "application/pdf".into(),
                    data: "JVBERi0xLjQK".into(),
                    title: Some("report.pdf".into()),
                }],
                Display::Empty,
            ),
            other => return Err(ToolError::new(format!("unknown kind {other}"))),
        })
    }
}

/// A session over the agent harness, in a temp project, with Snap registered.
struct Harness {
    agent: Agent,
    dir: tempfile::TempDir,
}

/// A session whose model calls Snap once per kind (all in one assistant message), then ends.
fn harness(provider: Provider, kinds: &[&str]) -> Harness {
    let calls: Vec<Value> = kinds
        .iter()
        .enumerate()
        .map(|(i, k)| json!({"id": format!("c{}", i + 1), "name": "Snap", "input": {"kind": k}}))
        .collect();
    let script = json!({"turns": [{"tool_calls": calls}, {"text": "Seen."}]});
    let dir = tempfile::tempdir().unwrap();
    let tools: Vec<ToolHandle> = vec![Arc::new(Snap)];
    let agent = Agent::start(
        &script,
        Setup {
            session_id: "s-blocks",
            retry: llm::fast_retry(2, 20, 100),
            tools,
            ..Setup::in_dir(dir.path(), provider)
        },
    );
    Harness { agent, dir }
}

impl Harness {
    /// Submit a prompt and collect events until the turn finishes, allowing every request.
    async fn run(&mut self) -> Vec<Event> {
        let events = self.agent.prompt("look").await;
        assert_eq!(finished(&events).0, TurnEnd::Completed, "{events:#?}");
        events
    }

    /// The messages of the second request: the one carrying the tool results.
    fn messages(&self) -> Vec<Value> {
        let requests = self.agent.server.requests();
        assert_eq!(requests.len(), 2);
        requests[1].body["messages"].as_array().unwrap().clone()
    }

    /// The `content` of each tool_result block of the last Anthropic message.
    fn anthropic_results(&self) -> Vec<Value> {
        let messages = self.messages();
        let last = messages.last().unwrap();
        assert_eq!(last["role"], "user");
        last["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                assert_eq!(b["type"], "tool_result");
                b["content"].clone()
            })
            .collect()
    }
}

fn image_block() -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png()}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_result_reaches_anthropic_as_an_image_block() {
    let mut h = harness(Provider::Anthropic, &["image"]);
    let events = h.run().await;
    let messages = h.messages();
    assert_eq!(
        messages.last().unwrap()["content"],
        json!([{"type": "tool_result", "tool_use_id": "c1", "content": [image_block()],
                "cache_control": {"type": "ephemeral"}}])
    );
    // People see one attachment line's worth of facts, not the data.
    let display = events.iter().find_map(|e| match e {
        Event::ToolCallFinished { display, .. } => Some(display.clone()),
        _ => None,
    });
    let image = ToolResultBlock::image("image/png", png());
    assert_eq!(display, cairn::tools::attachment::display(&image));
    assert!(matches!(
        display,
        Some(Display::Attachment { bytes: 33, .. })
    ));
    // stream-json's `user` message carries the results in Claude Code's shape.
    let results = events.iter().find_map(|e| match e {
        Event::ToolResults { content } => Some(content.clone()),
        _ => None,
    });
    assert_eq!(
        results,
        Some(json!([{"type": "tool_result", "tool_use_id": "c1", "content": [image_block()]}]))
    );
    // The transcript stores the blocks, and they read back as the same message.
    let transcript = std::fs::read_to_string(h.dir.path().join(".data/t.jsonl")).unwrap();
    let line = transcript
        .lines()
        .find(|l| l.contains("\"tool_result\""))
        .expect("no tool result in the transcript");
    let entry: Value = serde_json::from_str(line).unwrap();
    let message: cairn::llm::Message = serde_json::from_value(entry["message"].clone()).unwrap();
    let cairn::llm::ContentBlock::ToolResult { content, .. } = &message.content[0] else {
        panic!("{message:?}");
    };
    assert_eq!(
        content.blocks(),
        &[ToolResultBlock::image("image/png", png())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_result_reaches_openai_as_tool_text_and_a_user_image() {
    let mut h = harness(Provider::OpenAi, &["image", "text", "image"]);
    h.run().await;
    let messages = h.messages();
    let tail: Vec<Value> = messages[messages.len() - 4..].to_vec();
    let note = "[image: image/png, 33 bytes, sent in the next message]";
    let url = format!("data:image/png;base64,{}", png());
    assert_eq!(
        tail,
        vec![
            json!({"role": "tool", "tool_call_id": "c1", "content": note}),
            json!({"role": "tool", "tool_call_id": "c2", "content": "plain text"}),
            json!({"role": "tool", "tool_call_id": "c3", "content": note}),
            json!({"role": "user", "content": [
                {"type": "text", "text": "Images returned by tool call c1:"},
                {"type": "image_url", "image_url": {"url": url}},
                {"type": "text", "text": "Images returned by tool call c3:"},
                {"type": "image_url", "image_url": {"url": url}},
            ]}),
        ]
    );
    assert_eq!(messages[messages.len() - 5]["role"], "assistant");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_only_result_is_sent_as_a_plain_string_in_both_formats() {
    let mut h = harness(Provider::Anthropic, &["text"]);
    h.run().await;
    assert_eq!(
        h.messages().last().unwrap()["content"],
        json!([{"type": "tool_result", "tool_use_id": "c1", "content": "plain text",
                "cache_control": {"type": "ephemeral"}}])
    );
    let mut h = harness(Provider::OpenAi, &["text"]);
    h.run().await;
    assert_eq!(
        h.messages().last().unwrap(),
        &json!({"role": "tool", "tool_call_id": "c1", "content": "plain text"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spilled_huge_text_next_to_an_image_keeps_the_image() {
    let mut h = harness(Provider::Anthropic, &["huge_text_and_image"]);
    h.run().await;
    let results = h.anthropic_results();
    let blocks = results[0].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0]["type"], "text");
    let text = blocks[0]["text"].as_str().unwrap();
    assert!(text.chars().count() <= 30_000, "{}", text.chars().count());
    assert!(text.starts_with("row 0\nrow 1\n"));
    let spill = h.dir.path().join(".data/spill/c1.txt");
    assert!(text.contains(&spill.display().to_string()), "{text}");
    assert_eq!(std::fs::read_to_string(&spill).unwrap(), huge_text());
    assert_eq!(blocks[1], image_block());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_image_becomes_an_explanation_and_documents_reach_each_api_their_way() {
    let mut h = harness(Provider::Anthropic, &["oversized_image", "document"]);
    let events = h.run().await;
    let results = h.anthropic_results();
    let why = "[image not sent: image/png, 6291456 bytes of base64, over the limit of 5242880 \
               bytes (5 MiB)]";
    assert_eq!(results[0], json!(why));
    assert_eq!(
        results[1],
        json!([{"type": "document", "title": "report.pdf", "source":
            {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQK"}}])
    );
    let shown = events.iter().find_map(|e| match e {
        Event::ToolCallFinished {
            call_id, display, ..
        } if call_id == "c1" => Some(display.clone()),
        _ => None,
    });
    assert_eq!(shown, Some(Display::Text { text: why.into() }));

    let mut h = harness(Provider::OpenAi, &["document"]);
    h.run().await;
    assert_eq!(
        h.messages().last().unwrap(),
        &json!({"role": "tool", "tool_call_id": "c1", "content":
            "[document: report.pdf, application/pdf, 9 bytes, not sent: this API cannot take \
             document attachments]"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_stream_json_prints_image_results_in_claude_codes_shape() {
    let h = harness(Provider::Anthropic, &["image"]);
    let (outcome, out) = h
        .agent
        .headless("look", cairn::cli::OutputFormat::StreamJson)
        .await;
    assert_eq!(outcome.end, TurnEnd::Completed);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let user = lines
        .iter()
        .find(|l| l["type"] == "user")
        .expect("no user line");
    assert_eq!(
        user["message"],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": [image_block()]}]})
    );
    assert_eq!(user["session_id"], "s-blocks");
}
