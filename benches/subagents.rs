//! What a sub-agent costs beyond its model requests. The model answers in-process at once, so
//! only cairn's own work is measured. Two turns with the same number of model requests and
//! tool calls are compared: one whose tool call is an Agent call (the sub-agent asks the model
//! once and answers), and one whose tool call is a tool that makes that one model request
//! itself. What is timed is the tool round: from the main conversation's request that asks
//! for the call to its next request, which carries the result (the model stamps both). The
//! difference is the sub-agent's overhead: a fresh core, its tools and system prompt, its
//! session and event forwarding, its transcript, and the result. The turn's start and end
//! (the checkpoint written when a turn ends, with its fsync) are the same in both arms and are
//! left out, as their disk noise would hide a difference of a millisecond.
//! Memory: peak heap (a counting allocator) of a turn with ten Agent calls at once, against the
//! same turn whose ten calls each make their model request directly.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use cairn::agent::{AgentHandle, AgentSetup, SessionServices, start};
use cairn::config::LoadedSettings;
use cairn::config::model::ModelPick;
use cairn::config::snapshot::SessionSettings;
use cairn::llm::retry::RetryPolicy;
use cairn::llm::{
    ContentBlock, EventStream, LlmError, ModelClient, ModelRequest, Provider, StopReason,
    StreamEvent,
};
use cairn::permissions::{GateConfig, PermissionGate};
use cairn::protocol::{Event, Op, PermissionMode, Usage};
use cairn::session::context::SessionContext;
use cairn::tools::{Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{LIVE, PEAK};

/// In the general-purpose agent's role (`agent/subagent.rs`).
const SUB_ROLE: &str = "on a task another agent gave you";

/// The model, in-process: the main conversation calls `tool` `calls` times at once, then ends;
/// a sub-agent (or a direct request) answers with a short report.
struct InstantModel {
    tool: &'static str,
    calls: usize,
    /// When the main conversation last asked for the tool calls, and the time from then to
    /// its request with the results, summed over turns.
    asked: Mutex<Option<Instant>>,
    rounds: Mutex<Duration>,
}

fn reply(events: Vec<StreamEvent>) -> EventStream {
    Box::pin(futures::stream::iter(events.into_iter().map(Ok)))
}

#[async_trait]
impl ModelClient for InstantModel {
    fn provider(&self) -> Provider {
        Provider::Anthropic
    }
    async fn send(&self, request: &ModelRequest) -> Result<EventStream, LlmError> {
        let usage = StreamEvent::Usage(Usage {
            input_tokens: 100,
            output_tokens: 10,
            ..Usage::default()
        });
        let text = |t: &str| {
            vec![
                StreamEvent::TextDelta(t.into()),
                StreamEvent::BlockComplete(ContentBlock::Text { text: t.into() }),
                usage.clone(),
                StreamEvent::Finished(StopReason::EndTurn),
            ]
        };
        let sub = request.system.contains(SUB_ROLE) || request.system.is_empty();
        if sub {
            return Ok(reply(text("The parser is in src/parse.rs:12.")));
        }
        // Tool results came back: the turn ends.
        let answered = request.messages.last().is_some_and(|m| {
            m.content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
        });
        if answered {
            if let Some(asked) = self.asked.lock().expect("not poisoned").take() {
                *self.rounds.lock().expect("not poisoned") += asked.elapsed();
            }
            return Ok(reply(text("Done.")));
        }
        *self.asked.lock().expect("not poisoned") = Some(Instant::now());
        let mut events: Vec<StreamEvent> = (0..self.calls)
            .map(|i| {
                let input = if self.tool == "Agent" {
                    json!({"description": "find the parser", "prompt": "Find parse()."})
                } else {
                    json!({"prompt": "Find parse()."})
                };
                StreamEvent::BlockComplete(ContentBlock::ToolUse {
                    id: format!("call_{i}"),
                    name: self.tool.into(),
                    input,
                })
            })
            .collect();
        events.push(usage);
        events.push(StreamEvent::Finished(StopReason::ToolUse));
        Ok(reply(events))
    }
}

#[derive(Deserialize, JsonSchema)]
struct AskInput {
    prompt: String,
}

/// The baseline: a tool that makes the one model request a sub-agent would, itself.
struct AskDirectly {
    client: Arc<dyn ModelClient>,
}

#[async_trait]
impl Tool for AskDirectly {
    type Input = AskInput;
    fn info(&self) -> ToolInfo {
        ToolInfo::new("AskDirectly", ToolKind::Other)
            .read_only()
            .concurrency_safe()
    }
    fn description(&self) -> String {
        "Ask the model once".into()
    }
    fn title(&self, _: &AskInput, _: &SessionContext) -> String {
        "AskDirectly".into()
    }
    async fn call(&self, input: AskInput, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        let request = ModelRequest {
            model: "bench".into(),
            system: String::new(),
            messages: vec![cairn::llm::Message::user_text(input.prompt)],
            tools: Vec::new(),
            max_tokens: 1024,
            thinking_budget: None,
            reasoning_effort: None,
            server_tools: Vec::new(),
        };
        let mut stream = self
            .client
            .send(&request)
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        let mut text = String::new();
        while let Some(Ok(ev)) = stream.next().await {
            if let StreamEvent::BlockComplete(ContentBlock::Text { text: t }) = ev {
                text = t;
            }
        }
        Ok(ToolOutput::text(text))
    }
}

fn session(
    dir: &std::path::Path,
    tool: &'static str,
    calls: usize,
) -> (AgentHandle, Arc<InstantModel>) {
    let model = Arc::new(InstantModel {
        tool,
        calls,
        asked: Mutex::new(None),
        rounds: Mutex::new(Duration::ZERO),
    });
    let client: Arc<dyn ModelClient> = model.clone();
    let settings = LoadedSettings {
        project_root: dir.to_path_buf(),
        project_dir: dir.to_path_buf(),
        ..LoadedSettings::default()
    };
    let gate = PermissionGate::new(GateConfig {
        settings: &settings,
        cli_allow: Vec::new(),
        cli_deny: Vec::new(),
        mode: PermissionMode::Default,
        interactive: false,
        project_dir: dir.to_path_buf(),
        additional_dirs: Vec::new(),
        session_data_dir: dir.join(".data"),
        running_as_root: false,
        sandboxed: false,
    })
    .expect("a gate without settings");
    let session_settings = SessionSettings {
        auto_compact_pct: 0,
        max_tokens: 1024,
        retry: RetryPolicy::default(),
        ..SessionSettings::default()
    };
    let services = SessionServices::new(Arc::clone(&client), gate, session_settings, dir, None);
    let handle = start(AgentSetup {
        services,
        model: ModelPick::plain("bench"),
        project_dir: dir.to_path_buf(),
        additional_dirs: Vec::new(),
        data_dir: dir.join(".data"),
        transcript_path: None,
        session_id: "bench".into(),
        max_turns: None,
        extra_tools: vec![Arc::new(AskDirectly { client })],
        late_tools: Default::default(),
        resume: None,
        fork: false,
        mode_from_flag: false,
        client_files: None,
        client_terminal: None,
    });
    (handle, model)
}

/// One turn to its end; the events' count (so the work is not optimised away).
async fn turn(handle: &mut AgentHandle) -> usize {
    handle
        .ops
        .send(Op::Submit { text: "go".into() })
        .expect("the core runs");
    let mut n = 0;
    while let Some(ev) = handle.events.recv().await {
        n += 1;
        if let Event::TurnFinished { text, .. } = &ev {
            assert_eq!(text, "Done.");
            return n;
        }
    }
    panic!("the core stopped");
}

fn bench_overhead(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut group = c.benchmark_group("subagent");
    for (name, tool) in [("agent_call", "Agent"), ("direct_request", "AskDirectly")] {
        let (mut handle, model) = rt.block_on(async { session(dir.path(), tool, 1) });
        group.bench_function(format!("{name}: the tool round"), |b| {
            b.iter_custom(|turns| {
                *model.rounds.lock().expect("not poisoned") = Duration::ZERO;
                for _ in 0..turns {
                    rt.block_on(turn(&mut handle));
                }
                *model.rounds.lock().expect("not poisoned")
            })
        });
    }
    group.finish();
}

/// Peak heap above the start of the turn, in bytes, the best of `runs`.
fn peak_of(rt: &tokio::runtime::Runtime, dir: &std::path::Path, tool: &'static str) -> usize {
    let mut best = usize::MAX;
    for _ in 0..5 {
        let (mut handle, _) = rt.block_on(async { session(dir, tool, 10) });
        // A first turn warms up what every session allocates once.
        rt.block_on(turn(&mut handle));
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        rt.block_on(turn(&mut handle));
        best = best.min(PEAK.load(Ordering::Relaxed) - base);
    }
    best
}

fn bench_memory(_: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let dir = tempfile::tempdir().expect("a temp dir");
    let started = Instant::now();
    let agents = peak_of(&rt, dir.path(), "Agent");
    let direct = peak_of(&rt, dir.path(), "AskDirectly");
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    println!(
        "ten parallel Agent calls: peak heap +{:.2} MiB; ten direct requests: +{:.2} MiB; \
         sub-agents add {:.2} MiB ({:?})",
        mib(agents),
        mib(direct),
        mib(agents.saturating_sub(direct)),
        started.elapsed()
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = bench_overhead, bench_memory
}
criterion_main!(benches);
