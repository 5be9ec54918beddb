//! Streams that break after they started, and hostile streams, through the real clients and
//! `stream_with_retry` against the scripted server on 127.0.0.1, in both wire formats:
//! truncation, unclosed tool calls, the caps on `retry-after` and on the total retry time,
//! keep-alives that must not hold off the idle deadline, oversized lines and tool inputs, and
//! twenty requests through chaos.

use std::sync::Arc;
use std::time::Duration;

use cairn::llm::ModelEndpoint;
use cairn::llm::retry::{RetryNotice, RetryPolicy, stream_with_retry};
use cairn::llm::scripted::{Chaos, Script, ScriptedServer, Turn};
use cairn::llm::{
    ContentBlock, EventStream, LlmError, Message, ModelClient, ModelRequest, Provider, StreamEvent,
};
use futures::StreamExt;
use serde_json::json;

#[path = "support/llm.rs"]
mod llm;

use llm::BOTH;

/// The real client of `provider`'s wire format talking to `server`, with no API key.
fn client(provider: Provider, server: &ScriptedServer, idle: Duration) -> Arc<dyn ModelClient> {
    let endpoint = ModelEndpoint {
        api_key: None,
        login: Default::default(),
        ..llm::endpoint(server, provider)
    };
    llm::client_for(&endpoint, idle)
}

fn request(text: &str) -> ModelRequest {
    llm::request("", text)
}

fn fast_policy() -> RetryPolicy {
    llm::fast_retry(4, 5, 20)
}

/// Every item of a retried stream: the events of each attempt (split at the restarts), the
/// restarts, and the final error. Nothing may follow an error.
struct Run {
    attempts: Vec<Vec<StreamEvent>>,
    notices: Vec<RetryNotice>,
    err: Option<LlmError>,
}

impl Run {
    fn last(&self) -> &[StreamEvent] {
        self.attempts.last().map(Vec::as_slice).unwrap_or_default()
    }

    fn text(&self) -> String {
        text(self.last())
    }
}

fn text(events: &[StreamEvent]) -> String {
    llm::text_deltas(events).concat()
}

async fn run(mut stream: EventStream) -> Run {
    let mut r = Run {
        attempts: vec![Vec::new()],
        notices: Vec::new(),
        err: None,
    };
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamEvent::Restart(n)) => {
                r.notices.push(n);
                r.attempts.push(Vec::new());
            }
            Ok(e) => r.attempts.last_mut().unwrap().push(e),
            Err(e) => {
                assert!(stream.next().await.is_none(), "items after an error");
                r.err = Some(e);
                break;
            }
        }
    }
    r
}

async fn retried(c: &Arc<dyn ModelClient>, policy: RetryPolicy) -> Run {
    run(stream_with_retry(Arc::clone(c), request("hi"), policy)).await
}

#[tokio::test]
async fn a_truncated_stream_is_retried_not_accepted() {
    for provider in BOTH {
        let s = llm::scripted(&json!({"turns": [
            {"text": "the whole answer", "chunk_chars": 4, "faults": [{"truncate": true}]}]}));
        let c = client(provider, &s, Duration::from_secs(5));
        let r = retried(&c, fast_policy()).await;
        assert_eq!(r.err, None, "{provider:?}");
        // The truncated attempt had every text delta but not the final event: not complete.
        assert_eq!(text(&r.attempts[0]), "the whole answer");
        assert!(
            !r.attempts[0]
                .iter()
                .any(|e| matches!(e, StreamEvent::Finished(_))),
            "{provider:?}: a truncated stream finished"
        );
        let expected = match provider {
            Provider::Anthropic => "the connection closed before `message_stop`",
            Provider::OpenAi => "the connection closed before `data: [DONE]`",
        };
        assert_eq!(r.notices.len(), 1);
        assert_eq!(r.notices[0].error, LlmError::Stream(expected.into()));
        assert_eq!(r.text(), "the whole answer");
        assert!(matches!(r.last().last(), Some(StreamEvent::Finished(_))));
        assert_eq!(s.requests().len(), 2);
    }
}

#[tokio::test]
async fn an_unclosed_tool_call_is_an_error_and_retried() {
    for provider in BOTH {
        let s = llm::scripted(&json!({"turns": [
            {"text": "Reading.", "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": "a"}}],
             "faults": [{"unclosed_tool_use": true}]}]}));
        let c = client(provider, &s, Duration::from_secs(5));
        let r = retried(&c, fast_policy()).await;
        assert_eq!(r.err, None, "{provider:?}");
        // The broken attempt never yielded the tool call.
        assert!(
            !r.attempts[0].iter().any(|e| matches!(
                e,
                StreamEvent::BlockComplete(ContentBlock::ToolUse { .. })
                    | StreamEvent::InvalidToolUse { .. }
            )),
            "{provider:?}"
        );
        let why = r.notices[0].error.to_string();
        let expected = match provider {
            Provider::Anthropic => "`message_stop` while tool call `Read` was never closed",
            Provider::OpenAi => "(tool call `Read` was never completed)",
        };
        assert!(why.contains(expected), "{why}");
        let tools: Vec<&StreamEvent> = r
            .last()
            .iter()
            .filter(|e| matches!(e, StreamEvent::BlockComplete(ContentBlock::ToolUse { .. })))
            .collect();
        assert_eq!(tools.len(), 1);
    }
}

#[tokio::test]
async fn retry_after_is_capped() {
    for provider in BOTH {
        // The server asks for an hour; the policy honours at most 30 ms.
        let s = llm::scripted(&json!({"turns": [
            {"text": "ok", "faults": [{"status": 429, "retry_after": 3600}]}]}));
        let c = client(provider, &s, Duration::from_secs(5));
        let policy = RetryPolicy {
            max_retry_after: Duration::from_millis(30),
            ..fast_policy()
        };
        let r = retried(&c, policy).await;
        assert_eq!(r.err, None);
        assert_eq!(r.notices.len(), 1);
        assert_eq!(
            r.notices[0].delay,
            Duration::from_millis(30),
            "{provider:?}"
        );
        assert!(matches!(
            r.notices[0].error,
            LlmError::Http {
                status: 429,
                retry_after: Some(d),
                ..
            } if d == Duration::from_secs(3600)
        ));
        assert_eq!(r.text(), "ok");
    }
}

#[tokio::test]
async fn total_retry_time_is_capped_and_the_error_says_so() {
    let s = llm::scripted(&json!({"turns": [
        {"text": "never", "faults": [{"status": 503, "times": 1000}]}]}));
    let c = client(Provider::Anthropic, &s, Duration::from_secs(5));
    // Plenty of attempts, but at most 100 ms of retrying, 20 ms per wait.
    let policy = RetryPolicy {
        max_attempts: 1000,
        base_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(20),
        max_total: Duration::from_millis(100),
        ..RetryPolicy::default()
    };
    let r = retried(&c, policy).await;
    let Some(LlmError::GaveUp { attempts, last, .. }) = &r.err else {
        panic!("{:?}", r.err)
    };
    assert!(matches!(**last, LlmError::Http { status: 503, .. }));
    assert!(*attempts >= 2 && *attempts < 1000, "{attempts}");
    assert_eq!(r.notices.len() as u32, attempts - 1);
    let message = r.err.as_ref().unwrap().to_string();
    assert!(
        message.starts_with("HTTP 503: the model server had an error")
            && message.contains(
                "the next try would start past the retry time limit, CAIRN_MAX_RETRY_TOTAL_MS=100"
            ),
        "{message}"
    );
}

#[tokio::test]
async fn endless_keep_alives_end_at_the_idle_deadline() {
    for provider in BOTH {
        // A keep-alive every 10 ms, an idle limit of 200 ms: the keep-alives must not count.
        let s = llm::scripted(&json!({"turns": [
            {"text": "never sent", "faults": [{"keep_alive_forever_ms": 10}]}]}));
        let idle = Duration::from_millis(200);
        let c = client(provider, &s, idle);
        let drain = async {
            let mut stream = c.send(&request("hi")).await.unwrap();
            let mut events = Vec::new();
            let mut err = None;
            while let Some(item) = stream.next().await {
                match item {
                    Ok(e) => events.push(e),
                    Err(e) => err = Some(e),
                }
            }
            (events, err)
        };
        // Were keep-alives to count as progress, the stream would never end.
        let (events, err) = tokio::time::timeout(Duration::from_secs(20), drain)
            .await
            .expect("the keep-alives held the stream open");
        assert_eq!(err, Some(LlmError::Idle(idle)), "{provider:?}");
        assert_eq!(text(&events), "");
    }
}

/// A request answered with `turn` alone, which passes one of the stream's size limits.
async fn oversized(provider: Provider, turn: Turn) -> Run {
    let s = ScriptedServer::start(Script::new(vec![turn])).unwrap();
    let c = client(provider, &s, Duration::from_secs(30));
    retried(&c, fast_policy()).await
}

#[tokio::test]
async fn an_oversized_sse_line_is_a_clear_error() {
    for provider in BOTH {
        // One text delta of 5 MiB: its line passes the 4 MiB limit.
        let big = "a".repeat(5 * 1024 * 1024);
        let r = oversized(
            provider,
            Turn {
                chunk_chars: big.len(),
                ..Turn::text(big)
            },
        )
        .await;
        assert_eq!(
            r.err,
            Some(LlmError::TooLarge(
                "a line of the event stream is longer than 4194304 bytes; stopped reading \
                 (a limit that protects memory)"
                    .into()
            )),
            "{provider:?}"
        );
        assert!(r.notices.is_empty(), "not retried");
        assert_eq!(r.text(), "");
    }
}

#[tokio::test]
async fn an_oversized_tool_input_is_a_clear_error() {
    for provider in BOTH {
        // 17 MiB of input in 1 MiB pieces: every line is fine, the whole is past 16 MiB.
        let input = json!({"file_path": "a", "content": "x".repeat(17 * 1024 * 1024)});
        let r = oversized(
            provider,
            Turn {
                chunk_chars: 1024 * 1024,
                ..Turn::tool_call("t1", "Write", input)
            },
        )
        .await;
        assert_eq!(
            r.err,
            Some(LlmError::TooLarge(
                "the input of tool call `Write` grew past 16 MiB; stopped reading \
                 (a limit that protects memory)"
                    .into()
            )),
            "{provider:?}"
        );
        assert!(r.notices.is_empty());
    }
}

#[tokio::test]
async fn twenty_requests_through_chaos_all_complete_exactly() {
    for provider in BOTH {
        let turns: Vec<Turn> = (0..20)
            .map(|i| Turn {
                chunk_chars: 5,
                ..Turn::text(format!("Answer number {i}: all present and correct."))
            })
            .collect();
        let script = Script::new(turns).with_chaos(Chaos {
            seed: 16,
            retry_after_ms: 2,
            ..Chaos::default()
        });
        let s = ScriptedServer::start(script).unwrap();
        let c = client(provider, &s, Duration::from_secs(5));
        let policy = RetryPolicy {
            max_attempts: 30,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(4),
            ..RetryPolicy::default()
        };
        let mut messages = Vec::new();
        let mut restarts = 0;
        for i in 0..20 {
            messages.push(Message::user_text(format!("question {i}")));
            let req = ModelRequest {
                messages: messages.clone(),
                ..request("")
            };
            let r = run(stream_with_retry(Arc::clone(&c), req, policy.clone())).await;
            assert_eq!(r.err, None, "{provider:?} request {i}");
            restarts += r.notices.len();
            let expected = format!("Answer number {i}: all present and correct.");
            // What the caller keeps is exactly one whole answer: no duplicate, no fragment.
            assert_eq!(r.text(), expected, "{provider:?} request {i}");
            let blocks: Vec<&ContentBlock> = r
                .last()
                .iter()
                .filter_map(|e| match e {
                    StreamEvent::BlockComplete(b) => Some(b),
                    _ => None,
                })
                .collect();
            assert_eq!(
                blocks,
                vec![&ContentBlock::Text {
                    text: expected.clone()
                }]
            );
            messages.push(Message {
                role: cairn::llm::Role::Assistant,
                content: vec![ContentBlock::Text { text: expected }],
            });
        }
        // Chaos really happened (about 70 % of requests fail at this seed's rates).
        assert!(restarts >= 10, "{provider:?}: only {restarts} restarts");
    }
}
