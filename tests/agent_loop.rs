//! The agent loop end to end over real HTTP: the real streaming clients (both wire formats)
//! against the scripted model server on 127.0.0.1, the real executor and permission gate, and
//! two small tools defined here to observe scheduling.

use std::ops::Deref;
use std::ops::DerefMut;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use cairn::llm::Provider;
use cairn::llm::retry::RetryPolicy;
use cairn::protocol::{Decision, Display, Event, Op, PermissionMode, TurnEnd};
use cairn::session::context::SessionContext;
use cairn::tools::{Tool, ToolContext, ToolError, ToolHandle, ToolInfo, ToolKind, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;

use agent::{Agent, Setup, finished, streamed_text, tool_results};

const FORMATS: [Provider; 2] = llm::BOTH;

/// When each call of the test tools ran.
type Log = Arc<Mutex<Vec<(String, Instant, Instant)>>>;

#[derive(Deserialize, JsonSchema)]
struct WaitInput {
    label: String,
    ms: u64,
}

/// Sleeps, and records when. `safe` decides concurrency safety and read-only-ness.
struct Wait {
    name: &'static str,
    safe: bool,
    log: Log,
}

#[async_trait]
impl Tool for Wait {
    type Input = WaitInput;
    fn info(&self) -> ToolInfo {
        let info = ToolInfo::new(self.name, ToolKind::Other);
        if self.safe {
            info.read_only().concurrency_safe()
        } else {
            info
        }
    }
    fn description(&self) -> String {
        "Wait a while".into()
    }
    fn title(&self, input: &WaitInput, _: &SessionContext) -> String {
        format!("{} {}", self.name, input.label)
    }
    async fn call(&self, input: WaitInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let start = Instant::now();
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(input.ms)) => {}
            _ = ctx.cancel.cancelled() => return Err(ToolError::new("cancelled")),
        }
        self.log
            .lock()
            .unwrap()
            .push((input.label.clone(), start, Instant::now()));
        Ok(ToolOutput::text(format!("waited {}", input.label)))
    }
}

/// A session over the agent harness, in a temp project, with the two test tools.
struct Harness {
    agent: Agent,
    log: Log,
    _dir: tempfile::TempDir,
}

impl Deref for Harness {
    type Target = Agent;
    fn deref(&self) -> &Agent {
        &self.agent
    }
}

impl DerefMut for Harness {
    fn deref_mut(&mut self) -> &mut Agent {
        &mut self.agent
    }
}

async fn harness_with(
    provider: Provider,
    script: Value,
    max_turns: Option<u32>,
    idle: Duration,
) -> Harness {
    harness_retrying(
        provider,
        script,
        max_turns,
        idle,
        llm::fast_retry(4, 20, 200),
    )
    .await
}

async fn harness_retrying(
    provider: Provider,
    script: Value,
    max_turns: Option<u32>,
    idle: Duration,
    retry: RetryPolicy,
) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let log: Log = Arc::default();
    let tools: Vec<ToolHandle> = vec![
        Arc::new(Wait {
            name: "SafeWait",
            safe: true,
            log: log.clone(),
        }),
        Arc::new(Wait {
            name: "UnsafeWait",
            safe: false,
            log: log.clone(),
        }),
    ];
    let agent = Agent::start(
        &script,
        Setup {
            max_turns,
            idle,
            retry,
            tools,
            ..Setup::in_dir(dir.path(), provider)
        },
    );
    Harness {
        agent,
        log,
        _dir: dir,
    }
}

async fn harness(provider: Provider, script: Value) -> Harness {
    harness_with(provider, script, None, Duration::from_secs(30)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_turn_text_streams_and_finishes() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [{"text": "Hello from the model.", "chunk_chars": 4,
                              "usage": {"input_tokens": 12, "output_tokens": 5}}]}),
        )
        .await;
        let events = h.prompt("hi").await;
        assert!(
            matches!(events[0], Event::SessionConfigured(_)),
            "{provider:?}"
        );
        assert_eq!(streamed_text(&events), "Hello from the model.");
        assert_eq!(
            finished(&events),
            (TurnEnd::Completed, "Hello from the model.".into(), 1)
        );
        let usage = events.iter().find_map(|e| match e {
            Event::Usage { total, .. } => Some(*total),
            _ => None,
        });
        assert_eq!(usage.map(|u| u.output_tokens), Some(5), "{provider:?}");
        let body = h.request_body(0);
        assert_eq!(body["stream"], true);
        assert_eq!(body["model"], "test-model");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_loop_sends_results_back_in_order() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [
                {"text": "Checking.", "tool_calls": [
                    {"id": "call_a", "name": "SafeWait", "input": {"label": "a", "ms": 60}},
                    {"id": "call_b", "name": "SafeWait", "input": {"label": "b", "ms": 1}}]},
                {"text": "All done."}]}),
        )
        .await;
        let events = h.prompt("go").await;
        assert_eq!(
            finished(&events),
            (TurnEnd::Completed, "All done.".into(), 2)
        );
        let results = tool_results(&h.request_body(1));
        assert_eq!(
            results,
            vec![
                ("waited a".to_string(), false),
                ("waited b".to_string(), false)
            ],
            "{provider:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_tools_overlap_and_an_unsafe_one_runs_alone() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [
                {"tool_calls": [
                    {"id": "c1", "name": "SafeWait", "input": {"label": "s1", "ms": 400}},
                    {"id": "c2", "name": "SafeWait", "input": {"label": "s2", "ms": 400}},
                    {"id": "c3", "name": "UnsafeWait", "input": {"label": "u", "ms": 200}},
                    {"id": "c4", "name": "SafeWait", "input": {"label": "s3", "ms": 100}}]},
                {"text": "ok"}]}),
        )
        .await;
        let events = h.prompt("go").await;
        assert_eq!(finished(&events).0, TurnEnd::Completed);
        let log = h.log.lock().unwrap().clone();
        let get = |l: &str| log.iter().find(|(x, _, _)| x == l).unwrap().clone();
        let (s1, s2, u, s3) = (get("s1"), get("s2"), get("u"), get("s3"));
        assert!(s1.1 < s2.2 && s2.1 < s1.2, "s1 and s2 should overlap");
        for other in [&s1, &s2, &s3] {
            let overlaps = u.1 < other.2 && other.1 < u.2;
            assert!(!overlaps, "the unsafe call overlapped {}", other.0);
        }
        assert!(u.2 <= s3.1, "calls after an unsafe one wait for it");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_retry_after_is_honoured() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [{"text": "after the wait",
                "faults": [{"status": 429, "body": "{\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}",
                            "retry_after": 1, "times": 1}]}]}),
        )
        .await;
        let started = Instant::now();
        let events = h.prompt("hi").await;
        assert_eq!(finished(&events).1, "after the wait");
        let retry = events
            .iter()
            .find_map(|e| match e {
                Event::Retrying {
                    delay_ms, attempt, ..
                } => Some((*delay_ms, *attempt)),
                _ => None,
            })
            .expect("a retry was announced");
        assert!(
            retry.0 >= 1000,
            "retry-after: 1 means at least 1 s, got {retry:?}"
        );
        assert!(started.elapsed() >= Duration::from_millis(950));
        assert_eq!(h.server.requests().len(), 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overloaded_is_retried_until_it_succeeds() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [{"text": "finally",
                "faults": [{"status": 529, "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}", "times": 2}]}]}),
        )
        .await;
        let events = h.prompt("hi").await;
        assert_eq!(finished(&events), (TurnEnd::Completed, "finally".into(), 1));
        let retries = events
            .iter()
            .filter(|e| matches!(e, Event::Retrying { .. }))
            .count();
        assert_eq!(retries, 2, "{provider:?}");
        assert_eq!(h.server.requests().len(), 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_dropped_before_content_is_retried_transparently() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [{"text": "whole answer",
                "faults": [{"drop_after_events": 1, "times": 1}]}]}),
        )
        .await;
        let events = h.prompt("hi").await;
        assert_eq!(
            finished(&events),
            (TurnEnd::Completed, "whole answer".into(), 1),
            "{provider:?}"
        );
        assert_eq!(streamed_text(&events), "whole answer");
        assert!(!events.iter().any(|e| matches!(e, Event::Error { .. })));
    }
}

fn assistant_messages(events: &[Event]) -> Vec<(Value, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::AssistantMessage {
                content,
                incomplete,
            } => Some((content.clone(), *incomplete)),
            _ => None,
        })
        .collect()
}

fn retries(events: &[Event]) -> Vec<(String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Retrying {
                reason, discarded, ..
            } => Some((reason.clone(), *discarded)),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_mid_text_is_retried_and_the_partial_text_discarded() {
    // The connection dropped after six events, or the seventh event's JSON cut in half
    // (issue 22 §6: the event arrives whole, its data does not decode).
    let faults = [
        json!({"drop_after_events": 6, "times": 1}),
        json!({"cut_event_at": 6, "times": 1}),
    ];
    for (provider, fault) in FORMATS
        .into_iter()
        .flat_map(|p| faults.iter().map(move |f| (p, f)))
    {
        let full = "a long answer that breaks off";
        let mut h = harness(
            provider,
            json!({"turns": [{"text": full, "chunk_chars": 3, "faults": [fault]}]}),
        )
        .await;
        let events = h.prompt("hi").await;
        assert_eq!(
            finished(&events),
            (TurnEnd::Completed, full.into(), 1),
            "{provider:?} {fault}"
        );
        // The client saw part of the first attempt, was told to discard it, then the whole.
        let cut = events
            .iter()
            .position(|e| matches!(e, Event::Retrying { .. }))
            .unwrap();
        let before = streamed_text(&events[..cut]);
        assert!(!before.is_empty() && full.starts_with(&before), "{before}");
        assert_eq!(retries(&events).len(), 1);
        assert!(retries(&events)[0].1, "the partial answer is discarded");
        assert_eq!(streamed_text(&events[cut..]), full);
        // One message, whole, and the conversation holds no trace of the broken attempt.
        assert_eq!(
            assistant_messages(&events),
            vec![(json!([{"type": "text", "text": full}]), false)]
        );
        assert_eq!(h.request_body(0), h.request_body(1));
        assert!(!events.iter().any(|e| matches!(e, Event::Error { .. })));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_keeps_breaking_fails_and_keeps_the_last_partial_text() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [
                {"text": "a long answer that breaks off", "chunk_chars": 3,
                 "faults": [{"drop_after_events": 6, "times": 5}]},
                {"text": "second try works"}]}),
        )
        .await;
        let events = h.prompt("hi").await;
        let (end, text, _) = finished(&events);
        assert_eq!(end, TurnEnd::Failed, "{provider:?}");
        assert!(!text.is_empty(), "partial text kept");
        assert!("a long answer that breaks off".starts_with(&text));
        let error = events.iter().find_map(|e| match e {
            Event::Error { message } => Some(message.clone()),
            _ => None,
        });
        let error = error.unwrap();
        assert!(
            error.contains("broke off") && error.contains("gave up after 4 attempts"),
            "{error}"
        );
        // Three attempts discarded; only the last one's text is kept, once.
        assert_eq!(retries(&events).len(), 3);
        let messages = assistant_messages(&events);
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0], (json!([{"type": "text", "text": text}]), true));
        // The conversation stays valid: the next prompt works.
        let events = h.prompt("again").await;
        assert_eq!(finished(&events).1, "second try works");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_event_is_retried_then_ends_the_turn_with_a_clear_error() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [{"text": "some text here", "chunk_chars": 2,
                "faults": [{"malformed_event_at": 3, "times": 5}]}]}),
        )
        .await;
        let events = h.prompt("hi").await;
        assert_eq!(finished(&events).0, TurnEnd::Failed, "{provider:?}");
        let error = events
            .iter()
            .find_map(|e| match e {
                Event::Error { message } => Some(message.clone()),
                _ => None,
            })
            .unwrap();
        assert!(
            error.contains("sent something unreadable") && error.contains("gave up after 4"),
            "{error}"
        );
        assert_eq!(h.server.requests().len(), 4);
    }
}

/// How many times each label of the test tools ran.
fn runs(h: &Harness, label: &str) -> usize {
    h.log
        .lock()
        .unwrap()
        .iter()
        .filter(|(l, _, _)| l == label)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unclosed_tool_call_is_retried_and_never_runs_from_the_broken_attempt() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [
                {"text": "Waiting.",
                 "tool_calls": [{"id": "w1", "name": "SafeWait", "input": {"label": "w", "ms": 1}}],
                 "faults": [{"unclosed_tool_use": true}]},
                {"text": "done"}]}),
        )
        .await;
        let events = h.prompt("go").await;
        assert_eq!(
            finished(&events),
            (TurnEnd::Completed, "done".into(), 2),
            "{provider:?}"
        );
        let r = retries(&events);
        assert_eq!(r.len(), 1);
        assert!(r[0].0.contains("tool call `SafeWait`"), "{}", r[0].0);
        assert!(r[0].1, "`Waiting.` had streamed and is discarded");
        assert_eq!(
            runs(&h, "w"),
            1,
            "{provider:?}: the tool runs once, from the retry"
        );
        assert_eq!(h.server.requests().len(), 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_after_a_tool_started_never_runs_it_twice() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [
                {"text": "Waiting.",
                 "tool_calls": [{"id": "w1", "name": "SafeWait", "input": {"label": "w", "ms": 1}}],
                 "faults": [{"truncate": true}]},
                {"text": "done"}]}),
        )
        .await;
        let events = h.prompt("go").await;
        assert_eq!(
            finished(&events),
            (TurnEnd::Completed, "done".into(), 2),
            "{provider:?}"
        );
        assert_eq!(runs(&h, "w"), 1, "{provider:?}");
        let results = tool_results(&h.request_body(h.server.requests().len() - 1));
        assert_eq!(results, vec![("waited w".to_string(), false)]);
        match provider {
            // The tool call closed before the cut and started at once: the attempt is kept,
            // the tool's result goes back, and the model is told what happened.
            Provider::Anthropic => {
                assert!(retries(&events).is_empty());
                assert!(events.iter().any(|e| matches!(e, Event::Notice { message }
                    if message.starts_with("The response broke off after a tool call had started"))));
                assert_eq!(h.server.requests().len(), 2);
                let second = h.request_body(1).to_string();
                assert!(
                    second.contains("was cut off by a connection problem"),
                    "{second}"
                );
            }
            // Tool calls are released only at `[DONE]`: nothing ran, so the whole is retried.
            Provider::OpenAi => {
                assert_eq!(retries(&events).len(), 1);
                assert_eq!(h.server.requests().len(), 3);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_prompts_through_chaos_complete_exactly() {
    for provider in FORMATS {
        let mut turns = Vec::new();
        for i in 0..20 {
            turns.push(json!({"text": format!("Checking {i}."), "chunk_chars": 4,
                "tool_calls": [{"id": format!("w{i}"), "name": "SafeWait",
                                "input": {"label": format!("p{i}"), "ms": 1}}]}));
            turns.push(json!({"text": format!("Answer {i} is final."), "chunk_chars": 4}));
        }
        let retry = llm::fast_retry(30, 1, 4);
        let mut h = harness_retrying(
            provider,
            json!({"turns": turns, "chaos": {"seed": 1616, "retry_after_ms": 2}}),
            None,
            Duration::from_secs(10),
            retry,
        )
        .await;
        let mut kept = Vec::new();
        let mut restarts = 0;
        for i in 0..20 {
            let events = h.prompt(&format!("prompt {i}")).await;
            assert_eq!(
                finished(&events),
                (TurnEnd::Completed, format!("Answer {i} is final."), 2),
                "{provider:?} prompt {i}"
            );
            restarts += retries(&events).len();
            kept.extend(assistant_messages(&events).into_iter().map(|(content, _)| {
                content
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .map(|b| b["text"].as_str().unwrap().to_string())
                    .collect::<String>()
            }));
        }
        // Every message the conversation kept is whole, once, in order: no duplicate, no
        // fragment of a discarded attempt.
        let expected: Vec<String> = (0..20)
            .flat_map(|i| [format!("Checking {i}."), format!("Answer {i} is final.")])
            .collect();
        assert_eq!(kept, expected, "{provider:?}");
        // And no tool ran twice (or not at all).
        for i in 0..20 {
            assert_eq!(runs(&h, &format!("p{i}")), 1, "{provider:?} p{i}");
        }
        assert!(
            restarts >= 10,
            "{provider:?}: chaos made only {restarts} retries"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_tool_json_gets_an_error_result_and_the_loop_goes_on() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [
                {"tool_calls": [{"id": "bad1", "name": "SafeWait", "input": {"label": "x", "ms": 1}}],
                 "faults": [{"invalid_tool_json": true, "times": 1}]},
                {"text": "recovered"}]}),
        )
        .await;
        let events = h.prompt("hi").await;
        assert_eq!(
            finished(&events),
            (TurnEnd::Completed, "recovered".into(), 2),
            "{provider:?}"
        );
        let results = tool_results(&h.request_body(1));
        assert_eq!(results.len(), 1);
        assert!(results[0].0.contains("InputValidationError"), "{results:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tools_and_bad_inputs_are_error_results() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [
                {"tool_calls": [
                    {"id": "u1", "name": "SafeWiat", "input": {"label": "x", "ms": 1}},
                    {"id": "u2", "name": "SafeWait", "input": {"label": "x"}}]},
                {"text": "noted"}]}),
        )
        .await;
        let events = h.prompt("hi").await;
        assert_eq!(finished(&events).1, "noted");
        let results = tool_results(&h.request_body(1));
        assert!(
            results[0]
                .0
                .starts_with("Error: No such tool available: SafeWiat"),
            "{results:?}"
        );
        assert!(results[0].0.contains("SafeWait"), "suggests the close name");
        assert!(results[1].0.contains("InputValidationError"));
        assert!(results[1].0.contains("ms"), "names the missing field");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_stops_the_loop() {
    let call = |id: &str| json!({"tool_calls": [{"id": id, "name": "SafeWait", "input": {"label": id, "ms": 1}}]});
    for provider in FORMATS {
        let mut h = harness_with(
            provider,
            json!({"turns": [call("t1"), call("t2"), call("t3"), {"text": "never"}]}),
            Some(2),
            Duration::from_secs(30),
        )
        .await;
        let events = h.prompt("loop").await;
        let (end, _, n) = finished(&events);
        assert_eq!((end, n), (TurnEnd::MaxTurns, 2), "{provider:?}");
        assert_eq!(h.server.requests().len(), 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_mid_stream_stops_quickly_and_keeps_the_conversation_valid() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [
                {"text": "this streams very slowly indeed", "chunk_chars": 1, "delay_ms": 200},
                {"text": "fresh answer"}]}),
        )
        .await;
        h.submit("hi");
        // Wait for the first delta, then interrupt.
        loop {
            let ev = h.handle.events.recv().await.unwrap();
            if matches!(ev, Event::TextDelta { .. }) {
                break;
            }
        }
        let t = Instant::now();
        h.handle.ops.send(Op::Interrupt).unwrap();
        let events = h.run_turn().await;
        assert!(t.elapsed() < Duration::from_secs(2));
        assert_eq!(finished(&events).0, TurnEnd::Interrupted, "{provider:?}");
        let events = h.prompt("next").await;
        assert_eq!(finished(&events).1, "fresh answer");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_mid_tool_gives_interrupted_results() {
    for provider in FORMATS {
        let mut h = harness(
            provider,
            json!({"turns": [
                {"tool_calls": [
                    {"id": "long", "name": "SafeWait", "input": {"label": "long", "ms": 10000}},
                    {"id": "after", "name": "UnsafeWait", "input": {"label": "after", "ms": 1}}]},
                {"text": "continuing"}]}),
        )
        .await;
        h.submit("hi");
        loop {
            let ev = h.handle.events.recv().await.unwrap();
            if matches!(ev, Event::ToolCallStarted { .. }) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let t = Instant::now();
        h.handle.ops.send(Op::Interrupt).unwrap();
        let events = h.run_turn().await;
        assert!(
            t.elapsed() < Duration::from_millis(1000),
            "{:?}",
            t.elapsed()
        );
        assert_eq!(finished(&events).0, TurnEnd::Interrupted);
        let events = h.prompt("go on").await;
        assert_eq!(finished(&events).1, "continuing");
        let results = tool_results(&h.request_body(1));
        assert_eq!(results.len(), 2, "{provider:?}: {results:?}");
        assert!(
            results
                .iter()
                .all(|(c, _)| c.contains("interrupted by the user"))
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_denial_goes_back_to_the_model() {
    let mut h = harness(
        Provider::Anthropic,
        json!({"turns": [
            {"tool_calls": [{"id": "w", "name": "UnsafeWait", "input": {"label": "w", "ms": 1}}]},
            {"text": "understood"}]}),
    )
    .await;
    h.submit("hi");
    let mut saw_request = false;
    loop {
        let ev = h.handle.events.recv().await.unwrap();
        if let Event::PermissionRequest(req) = &ev {
            saw_request = true;
            assert_eq!(req.tool, "UnsafeWait");
            h.handle
                .ops
                .send(Op::PermissionDecision {
                    request_id: req.id,
                    decision: Decision::DenyWithFeedback {
                        feedback: "use the safe one".into(),
                    },
                })
                .unwrap();
        }
        if matches!(ev, Event::TurnFinished { .. }) {
            break;
        }
    }
    assert!(saw_request);
    let results = tool_results(&h.request_body(1));
    assert!(results[0].0.contains("use the safe one"), "{results:?}");
    assert!(results[0].1, "a denial is an error result");
    assert!(
        h.log.lock().unwrap().is_empty(),
        "the denied tool never ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_transcript_is_appended_as_messages_arrive() {
    let mut h = harness(Provider::Anthropic, json!({"turns": [{"text": "logged"}]})).await;
    h.prompt("hi").await;
    let path: &Path = &h._dir.path().join(".data/t.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    // The header, the prompt's mark (for /rewind) and message, the mode and todos, the answer
    // as it streamed, its usage, and the answer.
    assert_eq!(
        kinds,
        [
            "session",
            "prompt",
            "user",
            "state",
            "partial",
            "usage",
            "assistant"
        ]
    );
    assert_eq!(lines[0]["version"], 1);
    assert_eq!(lines[1]["text"], "hi");
    assert_eq!(lines[4]["blocks"][0]["text"], "logged");
    assert_eq!(lines[6]["message"]["content"][0]["text"], "logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outside_change_to_a_read_file_is_reported_and_reminded() {
    let mut h = harness(
        Provider::Anthropic,
        json!({"turns": [
            {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "watched.txt"}}]},
            {"text": "read it"},
            {"text": "noted the change"}]}),
    )
    .await;
    let file = h._dir.path().join("watched.txt");
    std::fs::write(&file, "one\n").unwrap();
    assert_eq!(finished(&h.prompt("read watched.txt").await).1, "read it");
    std::fs::write(&file, "two\n").unwrap();
    let changed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match h.handle.events.recv().await {
                Some(Event::FileChangedOnDisk { path, .. }) => break path,
                Some(_) => continue,
                None => panic!("core stopped"),
            }
        }
    })
    .await
    .expect("no FileChangedOnDisk within 5 s");
    assert!(changed.ends_with("watched.txt"));
    assert_eq!(
        finished(&h.prompt("what changed?").await).1,
        "noted the change"
    );
    let body = h.request_body(2).to_string();
    assert!(body.contains("was modified outside cairn"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_starts_the_conversation_afresh() {
    let mut h = harness(
        Provider::Anthropic,
        json!({"turns": [{"text": "first answer"}]}),
    )
    .await;
    assert_eq!(
        finished(&h.prompt("remember the number 7").await).1,
        "first answer"
    );
    h.handle.ops.send(Op::Clear).unwrap();
    h.submit("what number?");
    // The script picks its turn by the assistant messages in the request: after a clear there
    // are none, so the first turn answers again.
    assert_eq!(finished(&h.run_turn().await).1, "first answer");
    let body = h.request_body(1);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{body}");
    assert!(!body.to_string().contains("number 7"));
}

/// The next event of the running turn (the test fails after 10 s without one).
async fn next_event(h: &mut Harness) -> Event {
    tokio::time::timeout(Duration::from_secs(10), h.handle.events.recv())
        .await
        .expect("no event in time")
        .expect("the core stopped")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_under_an_open_edit_prompt_is_planned_again() {
    let mut h = harness(
        Provider::Anthropic,
        json!({"turns": [
            {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "f.txt"}}]},
            {"tool_calls": [{"id": "e", "name": "Edit", "input":
                {"file_path": "f.txt", "old_string": "b\n", "new_string": "B\n"}}]},
            {"text": "edited"}]}),
    )
    .await;
    let file = h._dir.path().join("f.txt");
    std::fs::write(&file, "a\nb\nc\n").unwrap();
    h.submit("edit f.txt");
    let first = loop {
        if let Event::PermissionRequest(req) = next_event(&mut h).await {
            break req;
        }
    };
    let Some(Display::Diff { after, .. }) = &first.preview else {
        panic!("{:?}", first.preview)
    };
    assert_eq!(after, "a\nB\nc\n");
    // Someone appends a line while the person looks at the diff.
    std::fs::write(&file, "a\nb\nc\nd\n").unwrap();
    let (second, note) = loop {
        if let Event::PermissionRequestUpdated { request, note } = next_event(&mut h).await {
            break (request, note);
        }
    };
    assert_ne!(second.id, first.id);
    assert_eq!(second.call_id, first.call_id);
    assert_eq!(
        note,
        "f.txt changed on disk: the change was planned again against the new content"
    );
    let Some(Display::Diff { before, after, .. }) = &second.preview else {
        panic!("{:?}", second.preview)
    };
    assert_eq!(
        (before.as_str(), after.as_str()),
        ("a\nb\nc\nd\n", "a\nB\nc\nd\n")
    );
    // An answer to the old request is ignored; the new one decides.
    for id in [first.id, second.id] {
        let decision = Decision::AllowOnce;
        let op = Op::PermissionDecision {
            request_id: id,
            decision,
        };
        h.handle.ops.send(op).unwrap();
    }
    let events = h.run_turn().await;
    assert_eq!(finished(&events).1, "edited");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nB\nc\nd\n");
    let results = tool_results(&h.request_body(2));
    assert!(!results[0].1, "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_own_their_effects_and_previews() {
    let mut h = harness(
        Provider::Anthropic,
        json!({"turns": [
            {"tool_calls": [{"id": "b", "name": "Bash", "input":
                {"command": "touch made.txt", "description": "Make a file"}},
                // EnterPlanMode is deferred: loaded first.
                {"id": "s", "name": "ToolSearch", "input": {"query": "select:EnterPlanMode"}}]},
            {"tool_calls": [{"id": "p", "name": "EnterPlanMode", "input": {}}]},
            {"tool_calls": [{"id": "w", "name": "Write", "input":
                {"file_path": "new.txt", "content": "x"}}]},
            {"text": "planning"}]}),
    )
    .await;
    let mut previews = Vec::new();
    h.submit("go");
    let events = h
        .run_turn_answering(|req| {
            previews.push(req.preview.clone());
            Decision::DenyOnce
        })
        .await;
    // Bash's own preview: the command, what it is for, where it runs.
    let [Some(Display::Fields { fields })] = previews.as_slice() else {
        panic!("{previews:?}")
    };
    let shown: Vec<(&str, &str)> = fields
        .iter()
        .map(|f| (f.label.as_str(), f.value.as_str()))
        .collect();
    assert_eq!(
        shown[..2],
        [("$", "touch made.txt"), ("what", "Make a file")]
    );
    assert_eq!(fields[0].syntax.as_deref(), Some("bash"));
    // EnterPlanMode's result switched the mode, so the Write is refused without asking.
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ModeChanged {
            mode: PermissionMode::Plan
        }
    )));
    let results = tool_results(&h.request_body(3));
    assert!(
        results[3]
            .0
            .starts_with("Write is not available in plan mode"),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_image_outside_the_project_is_attached_but_text_files_there_are_not() {
    let mut h = harness(Provider::Anthropic, json!({"turns": [{"text": "seen"}]})).await;
    let outside = tempfile::tempdir().unwrap();
    let shot = outside.path().join("Screen Shot.png");
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::new_rgb8(4, 3)
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    std::fs::write(&shot, png.get_ref()).unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "hunter2\n").unwrap();
    // What the composer sends for a pasted image, and a typed mention of a text file.
    let prompt = format!("look at @\"{}\" and @{}", shot.display(), secret.display());
    let events = h.prompt(&prompt).await;
    let body = h.request_body(0);
    let user = body["messages"][0].to_string();
    assert!(user.contains("\"type\":\"image\""), "{user}");
    assert!(!user.contains("hunter2"), "{user}");
    let notices: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Notice { message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("outside the working directories")),
        "{notices:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn todo_write_updates_the_session_list_without_asking() {
    let todos = json!([
        {"content": "Read the code", "activeForm": "Reading the code", "status": "completed"},
        {"content": "Fix the bug", "activeForm": "Fixing the bug", "status": "in_progress"}
    ]);
    let mut h = harness(
        Provider::Anthropic,
        json!({"turns": [
            {"tool_calls": [{"id": "t", "name": "TodoWrite", "input": {"todos": todos}}]},
            {"tool_calls": [{"id": "bad", "name": "TodoWrite", "input": {"todos": [
                {"content": "", "activeForm": "x", "status": "pending"}]}}]},
            {"text": "tracked"}]}),
    )
    .await;
    // No permission request: run_turn_answering would answer one, so deny to notice it.
    h.submit("track it");
    let events = h.run_turn_answering(|r| panic!("asked: {}", r.tool)).await;
    let updates: Vec<&Vec<cairn::protocol::Todo>> = events
        .iter()
        .filter_map(|e| match e {
            Event::TodosUpdated { todos } => Some(todos),
            _ => None,
        })
        .collect();
    assert_eq!(updates.len(), 1, "the invalid list changes nothing");
    assert_eq!(updates[0].len(), 2);
    assert_eq!(updates[0][1].active_form, "Fixing the bug");
    let results = tool_results(&h.request_body(2));
    assert!(
        results[0]
            .0
            .starts_with("Todos have been modified successfully")
    );
    assert!(
        results[1].1 && results[1].0.contains("empty content"),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_question_puts_the_questions_to_the_person_and_returns_the_answers() {
    let questions = json!([{"question": "Which database?", "header": "Database",
        "options": [{"label": "Postgres", "description": "server"},
                    {"label": "SQLite", "description": "file"}], "multiSelect": false}]);
    let mut h = harness(
        Provider::Anthropic,
        json!({"turns": [
            {"tool_calls": [{"id": "q", "name": "AskUserQuestion", "input": {"questions": questions}}]},
            {"text": "SQLite it is"}]}),
    )
    .await;
    h.submit("set up storage");
    let mut asked = Vec::new();
    h.run_turn_answering(|req| {
        asked.push(req.kind.clone());
        Decision::Answers {
            answers: vec!["SQLite".into()],
        }
    })
    .await;
    let [cairn::protocol::RequestKind::Questions { questions }] = asked.as_slice() else {
        panic!("{asked:?}")
    };
    assert_eq!(questions[0].header, "Database");
    let results = tool_results(&h.request_body(1));
    assert_eq!(
        results[0].0,
        "User has answered your questions: \"Which database?\"=\"SQLite\". You can now continue \
         with the user's answers in mind."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_in_a_subdirectory_brings_its_memory_file_once() {
    let mut h = harness(
        Provider::Anthropic,
        json!({"turns": [
            {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "api/a.rs"}}]},
            {"tool_calls": [{"id": "r2", "name": "Read", "input": {"file_path": "api/b.rs"}}]},
            {"text": "read both"}]}),
    )
    .await;
    let dir = h._dir.path().to_path_buf();
    std::fs::create_dir_all(dir.join("api")).unwrap();
    std::fs::write(dir.join("api/CLAUDE.md"), "api: never panic\n").unwrap();
    std::fs::write(dir.join("api/a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(dir.join("api/b.rs"), "fn b() {}\n").unwrap();
    assert_eq!(finished(&h.prompt("read api").await).1, "read both");
    let second = h.request_body(1).to_string();
    assert!(second.contains("api: never panic"), "{second}");
    // Once: the third request does not repeat it after the second read.
    let third = h.request_body(2)["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(!third.contains("api: never panic"), "{third}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_listed_loaded_by_the_skill_tool_and_run_as_slash_commands() {
    let dir = tempfile::tempdir().unwrap();
    let skill = cairn::commands::skills::Skill {
        name: "pdf-tools".into(),
        dir_name: "pdf".into(),
        description: "Work with PDF files".into(),
        argument_hint: None,
        allowed_tools: Vec::new(),
        model: None,
        disable_model_invocation: false,
        user_invocable: true,
        body: "Use scripts/fill.py to fill forms.".into(),
        dir: dir.path().join(".claude/skills/pdf"),
    };
    let script = json!({"turns": [
        {"tool_calls": [{"id": "s", "name": "Skill", "input": {"skill": "pdf-tools"}}]},
        {"text": "loaded"},
        {"text": "filled"}]});
    let mut agent = Agent::start(
        &script,
        Setup {
            skills: vec![skill],
            ..Setup::in_dir(dir.path(), Provider::Anthropic)
        },
    );
    agent.submit("fill the form");
    // Loading a skill the model chose asks first; the person says yes.
    let mut asked = Vec::new();
    agent
        .run_turn_answering(|r| {
            asked.push(r.tool.clone());
            Decision::AllowOnce
        })
        .await;
    assert_eq!(asked, ["Skill"]);
    let first = agent.request_body(0);
    let tools = first["tools"].to_string();
    assert!(
        tools.contains("- pdf-tools: Work with PDF files"),
        "{tools}"
    );
    assert!(
        !tools.contains("scripts/fill.py"),
        "the body is not in the description"
    );
    let results = tool_results(&agent.request_body(1));
    assert!(
        results[0].0.contains("Use scripts/fill.py to fill forms."),
        "{results:?}"
    );
    // `/pdf-tools args` loads it as the prompt.
    agent.prompt("/pdf-tools invoice.pdf").await;
    let third = agent.request_body(2)["messages"].to_string();
    assert!(third.contains("Skill \\\"pdf-tools\\\" loaded"), "{third}");
    assert!(third.contains("ARGUMENTS: invoice.pdf"), "{third}");
}

#[tokio::test]
async fn opusplan_plans_with_opus_and_slash_model_switches_from_the_next_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.model = "opusplan".into();
    setup.aliases = cairn::config::model::Aliases::anthropic(&|_| None);
    let script = json!({"turns": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]});
    let mut agent = Agent::start(&script, setup);
    let first = agent.prompt("one").await;
    let Some(Event::SessionConfigured(info)) = first.first() else {
        panic!("{first:?}")
    };
    assert_eq!(info.model, "claude-sonnet-4-5");
    assert_eq!(
        info.model_label,
        "opusplan (claude-opus-4-5 planning, claude-sonnet-4-5 otherwise)"
    );
    assert_eq!(info.model_choices.len(), 4);
    let mode = |mode| Op::SetMode { mode };
    agent.handle.ops.send(mode(PermissionMode::Plan)).unwrap();
    agent.prompt("two").await;
    agent
        .handle
        .ops
        .send(mode(PermissionMode::Default))
        .unwrap();
    let model = |m: &str| Op::SetModel { model: m.into() };
    agent.handle.ops.send(model("haiku")).unwrap();
    let third = agent.prompt("three").await;
    assert!(
        third.contains(&Event::ModelChanged {
            model: "claude-haiku-4-5".into(),
            label: "haiku (claude-haiku-4-5)".into()
        }),
        "{third:?}"
    );
    // An id that is no alias is used as it is.
    agent.handle.ops.send(model("claude-3-7-sonnet")).unwrap();
    agent.prompt("four").await;
    let models: Vec<Value> = agent
        .server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            "claude-sonnet-4-5",
            "claude-opus-4-5",
            "claude-haiku-4-5",
            "claude-3-7-sonnet"
        ]
    );
}

#[tokio::test]
async fn a_resumed_session_takes_over_its_conversation_mode_todos_and_usage() {
    use cairn::protocol::{HistoryItem, Todo, TodoStatus, Usage};
    use cairn::session::transcript::{Record, Transcript};
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("old.jsonl");
    let todos = vec![Todo {
        content: "Fix the parser".into(),
        active_form: "Fixing the parser".into(),
        status: TodoStatus::InProgress,
    }];
    let mut t = Transcript::at(path.clone(), "old").with_header(tmp.path(), None);
    t.append(&cairn::llm::Message::user_text("fix the parser"));
    t.record(&Record::Usage {
        model: "claude-sonnet-4-5".into(),
        usage: Usage {
            input_tokens: 1000,
            output_tokens: 100,
            ..Usage::default()
        },
    });
    t.append(&cairn::llm::Message {
        role: cairn::llm::Role::Assistant,
        content: vec![cairn::llm::ContentBlock::Text {
            text: "On it.".into(),
        }],
    });
    t.record(&Record::State {
        mode: PermissionMode::AcceptEdits,
        todos: todos.clone(),
        loaded_tools: Vec::new(),
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.resume = Some(cairn::session::resume::load(&path).unwrap());
    let script = json!({"turns": [{"text": "unused"}, {"text": "Done."}]});
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("is it done?").await;
    assert!(
        events.contains(&Event::TodosUpdated { todos }),
        "{events:?}"
    );
    assert!(events.contains(&Event::ModeChanged {
        mode: PermissionMode::AcceptEdits
    }));
    assert!(events.contains(&Event::HistoryRestored {
        items: vec![
            HistoryItem::Prompt {
                text: "fix the parser".into()
            },
            HistoryItem::Answer {
                text: "On it.".into()
            },
        ]
    }));
    // The usage so far counts: restored first, then the next request adds to it.
    let totals: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            Event::Usage { total, .. } => Some(total.input_tokens),
            _ => None,
        })
        .collect();
    assert_eq!(totals.first(), Some(&1000), "{totals:?}");
    assert!(totals.last().is_some_and(|t| *t > 1000), "{totals:?}");
    let sent = agent.server.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains("fix the parser") && sent.contains("On it."),
        "{sent}"
    );
}

#[tokio::test]
async fn the_agent_tool_runs_a_custom_sub_agent_with_its_own_tools_and_returns_its_report() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("main.rs"), "fn main() { parse(); }\n").unwrap();
    let script = json!({
        "turns": [
            {"tool_calls": [{"id": "a1", "name": "Agent", "input": {
                "description": "find callers",
                "prompt": "Find who calls parse().",
                "subagent_type": "finder"}}]},
            {"text": "The finder says main.rs calls it."}
        ],
        "by_system": [{"system_contains": "FINDER-ROLE", "turns": [
            {"tool_calls": [{"id": "g1", "name": "Grep", "input": {"pattern": "parse\\("}}]},
            {"text": "main.rs calls parse()."}
        ]}]
    });
    let mut setup = Setup::in_dir(tmp.path(), Provider::Anthropic);
    setup.agents = vec![cairn::commands::agents::AgentDef {
        name: "finder".into(),
        description: "Finds the callers of a function".into(),
        tools: Some(vec!["Grep".into(), "Read".into()]),
        disallowed_tools: Vec::new(),
        model: Some("haiku".into()),
        color: None,
        prompt: "FINDER-ROLE: you find callers.".into(),
        path: tmp.path().join("finder.md"),
        ..Default::default()
    }];
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("who calls parse?").await;
    assert_eq!(finished(&events).1, "The finder says main.rs calls it.");
    let requests = agent.server.requests();
    assert_eq!(requests.len(), 4);
    // The main model sees the agents in the tool's description.
    let main_tools = requests[0].body["tools"].to_string();
    assert!(
        main_tools.contains("finder: Finds the callers of a function"),
        "{main_tools}"
    );
    // The sub-agent: its role, its model, only its tools, the task alone.
    let sub = &requests[1].body;
    assert!(sub["system"].to_string().contains("FINDER-ROLE"));
    assert_eq!(sub["model"], "haiku");
    let names: Vec<&str> = sub["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Grep", "Read"]);
    assert_eq!(sub["messages"].as_array().unwrap().len(), 1);
    assert!(
        sub["messages"]
            .to_string()
            .contains("Find who calls parse().")
    );
    assert!(requests[2].body["messages"].to_string().contains("main.rs"));
    // Only the report goes back to the main model.
    let results = tool_results(&requests[3].body);
    assert!(
        results[0]
            .0
            .starts_with("main.rs calls parse().\n\nagentId: a"),
        "{results:?}"
    );
    // The client saw the sub-agent's Grep, tagged with the Agent call, not its streamed text.
    let grep = events.iter().find_map(|e| match e {
        Event::Subagent {
            parent_call_id,
            agent,
            event,
        } => match &**event {
            Event::ToolCallStarted { call_id, title, .. } if call_id == "g1" => {
                Some((parent_call_id.clone(), agent.clone(), title.clone()))
            }
            _ => None,
        },
        _ => None,
    });
    let (parent, name, title) = grep.expect("the sub-agent's Grep reached the client");
    assert_eq!((parent.as_str(), name.as_str()), ("a1", "finder"));
    assert!(title.starts_with("Grep"), "{title}");
    let shown = streamed_text(&events);
    assert!(!shown.contains("calls parse()"), "{shown}");
    let kept: Vec<_> = std::fs::read_dir(tmp.path().join(".data/subagents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    // The sub-agent's two requests count in the session's usage, under its model.
    let sub_usage = events
        .iter()
        .filter(|e| matches!(e, Event::Usage { model, .. } if model == "haiku"))
        .count();
    assert_eq!(sub_usage, 2, "{events:?}");
}

/// Issue 22 §6: in bypassPermissions, a Write that leaves `.claude/settings.json` unparsable
/// and an Edit that drops a deny rule are refused through the real tools (nothing written,
/// the reason given to the model); a change that keeps the rules goes through.
#[tokio::test]
async fn writes_that_break_a_settings_file_are_refused_even_in_bypass_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let file = dir.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let original =
        "{\n  \"permissions\": {\n    \"deny\": [\"Bash(curl *)\", \"Read(./.env)\"]\n  }\n}\n";
    std::fs::write(&file, original).unwrap();
    let path = file.display().to_string();
    let script = json!({"turns": [
        {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": path}}]},
        {"tool_calls": [{"id": "w", "name": "Write", "input": {"file_path": path,
            "content": "{\n  \"permissions\": {\"deny\": [\"Bash(curl *)\"],}\n}\n"}}]},
        {"tool_calls": [{"id": "e", "name": "Edit", "input": {"file_path": path,
            "old_string": "\"Bash(curl *)\", ", "new_string": ""}}]},
        {"tool_calls": [{"id": "m", "name": "MultiEdit", "input": {"file_path": path,
            "edits": [{"old_string": "\"deny\"", "new_string": "\"allow\": [\"Bash(ls)\"],\n    \"deny\""}]}}]},
        {"text": "done"}
    ]});
    let setup = Setup::in_dir(dir, Provider::Anthropic);
    setup.gate.set_mode(PermissionMode::BypassPermissions);
    let mut agent = Agent::start(&script, setup);
    let events = agent.prompt("edit the settings").await;
    assert_eq!(finished(&events).0, TurnEnd::Completed);
    let results = tool_results(&agent.request_body(4));
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(!results[0].1, "{results:?}");
    assert_eq!(
        results[1],
        (
            format!(
                "Refused: this would leave the settings file {path} unusable, and cairn would \
                 lose its deny rules and hooks: {path}:2:44: invalid JSON: trailing comma; the \
                 file cannot be used. Nothing was written; write valid settings JSON."
            ),
            true
        )
    );
    assert_eq!(
        results[2],
        (
            format!(
                "Refused: this would remove the deny rule `Bash(curl *)` from the settings file \
                 {path}. Deny rules are the user's to remove; nothing was written. Keep them, or \
                 ask the user to remove them."
            ),
            true
        )
    );
    assert!(!results[3].1, "{results:?}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls)\"],\n    \"deny\": [\"Bash(curl *)\", \
         \"Read(./.env)\"]\n  }\n}\n"
    );
}
