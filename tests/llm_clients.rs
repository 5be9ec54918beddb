//! The real model clients (reqwest over loopback) against the scripted model server, in both
//! wire formats: streaming, tool calls, thinking, retries, faults and timeouts.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn::llm::ModelEndpoint;
use cairn::llm::auth::{DEFAULT_HELPER_TTL, KeyHelper, Login, parse_custom_headers};
use cairn::llm::retry::{RetryNotice, RetryPolicy, stream_with_retry};
use cairn::llm::scripted::{NO_MORE_TURNS, Script, ScriptedServer, Turn};
use cairn::llm::{
    ClientOptions, ContentBlock, EventStream, LlmError, Message, ModelClient, ModelRequest,
    Provider, Role, StopReason, StreamEvent, ToolSpec, build_client,
};
use cairn::protocol::Usage;
use futures::StreamExt;
use serde_json::json;

#[path = "support/llm.rs"]
mod llm;

use llm::{BOTH, client, text_deltas};

fn start(turns: Vec<Turn>) -> ScriptedServer {
    ScriptedServer::start(Script::new(turns)).unwrap()
}

fn request(text: &str) -> ModelRequest {
    llm::request("You are a test.", text)
}

fn fast_policy() -> RetryPolicy {
    llm::fast_retry(4, 10, 50)
}

/// Every event of `stream`, and the error that ended it, if any.
async fn collect(mut stream: EventStream) -> (Vec<StreamEvent>, Option<LlmError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(e) => events.push(e),
            Err(e) => {
                // Nothing may follow an error.
                assert!(stream.next().await.is_none(), "events after an error");
                return (events, Some(e));
            }
        }
    }
    (events, None)
}

/// A request made with retries: the events of the attempt that counted (a `Restart` voids
/// what came before it), every restart, and the error that ended the stream.
struct Retried {
    events: Vec<StreamEvent>,
    notices: Vec<RetryNotice>,
    err: Option<LlmError>,
}

async fn retried(stream: EventStream) -> Retried {
    let (all, err) = collect(stream).await;
    let mut r = Retried {
        events: Vec::new(),
        notices: Vec::new(),
        err,
    };
    for e in all {
        match e {
            StreamEvent::Restart(n) => {
                r.events.clear();
                r.notices.push(n);
            }
            e => r.events.push(e),
        }
    }
    r
}

async fn send_with_retry(client: &Arc<dyn ModelClient>, request: &ModelRequest) -> Retried {
    retried(stream_with_retry(
        Arc::clone(client),
        request.clone(),
        fast_policy(),
    ))
    .await
}

fn blocks(events: &[StreamEvent]) -> Vec<ContentBlock> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::BlockComplete(b) => Some(b.clone()),
            _ => None,
        })
        .collect()
}

fn last_usage(events: &[StreamEvent]) -> Option<Usage> {
    events.iter().rev().find_map(|e| match e {
        StreamEvent::Usage(u) => Some(*u),
        _ => None,
    })
}

fn text_turn(text: &str) -> Turn {
    Turn {
        chunk_chars: 4,
        ..Turn::text(text)
    }
}

#[tokio::test]
async fn one_turn_text_in_both_formats() {
    for provider in BOTH {
        let server = start(vec![Turn {
            usage: Some(cairn::llm::scripted::ScriptUsage {
                input_tokens: Some(100),
                output_tokens: Some(20),
                cache_read_input_tokens: 30,
                cache_creation_input_tokens: 0,
            }),
            ..text_turn("Hello, world!")
        }]);
        let c = client(provider, &server, Duration::from_secs(5));
        let (events, err) = collect(c.send(&request("hi")).await.unwrap()).await;
        assert_eq!(err, None, "{provider:?}");
        assert_eq!(text_deltas(&events), vec!["Hell", "o, w", "orld", "!"]);
        assert_eq!(
            blocks(&events),
            vec![ContentBlock::Text {
                text: "Hello, world!".into()
            }]
        );
        assert_eq!(
            last_usage(&events),
            Some(Usage {
                input_tokens: 100,
                output_tokens: 20,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 30
            }),
            "{provider:?}"
        );
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished(StopReason::EndTurn))
        );

        let recorded = server.requests();
        assert_eq!(recorded.len(), 1);
        let r = &recorded[0];
        assert_eq!(r.method, "POST");
        match provider {
            Provider::Anthropic => {
                assert_eq!(r.path, "/v1/messages");
                assert_eq!(r.header("x-api-key"), Some("test-key"));
                assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(r.body["messages"][0]["role"], "user");
            }
            Provider::OpenAi => {
                assert_eq!(r.path, "/v1/chat/completions");
                assert_eq!(r.header("authorization"), Some("Bearer test-key"));
                assert_eq!(r.body["stream_options"], json!({"include_usage": true}));
                assert_eq!(r.body["messages"][0]["role"], "system");
            }
        }
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.body["stream"], json!(true));
        assert_eq!(r.body["model"], "test-model");
    }
}

#[tokio::test]
async fn tool_call_is_assembled_from_split_input() {
    for provider in BOTH {
        let input = json!({"file_path": "src/main.rs", "limit": 5, "note": "naïve ✓"});
        let server = start(vec![Turn {
            text: Some("Reading.".into()),
            chunk_chars: 5,
            ..Turn::tool_call("toolu_7", "Read", input.clone())
        }]);
        let c = client(provider, &server, Duration::from_secs(5));
        let (events, err) = collect(c.send(&request("read")).await.unwrap()).await;
        assert_eq!(err, None);
        assert_eq!(
            blocks(&events),
            vec![
                ContentBlock::Text {
                    text: "Reading.".into()
                },
                ContentBlock::ToolUse {
                    id: "toolu_7".into(),
                    name: "Read".into(),
                    input
                }
            ],
            "{provider:?}"
        );
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished(StopReason::ToolUse))
        );
    }
}

#[tokio::test]
async fn thinking_streams_and_completes() {
    for provider in BOTH {
        let server = start(vec![Turn {
            thinking: Some("Let me think about it.".into()),
            ..text_turn("Done.")
        }]);
        let c = client(provider, &server, Duration::from_secs(5));
        let (events, err) = collect(c.send(&request("think")).await.unwrap()).await;
        assert_eq!(err, None);
        let thinking: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(thinking, "Let me think about it.");
        let signature = match provider {
            Provider::Anthropic => Some("scripted-signature".to_string()),
            Provider::OpenAi => None,
        };
        assert_eq!(
            blocks(&events),
            vec![
                ContentBlock::Thinking {
                    thinking: "Let me think about it.".into(),
                    signature
                },
                ContentBlock::Text {
                    text: "Done.".into()
                }
            ],
            "{provider:?}"
        );
    }
}

#[tokio::test]
async fn rate_limit_honours_retry_after() {
    for provider in BOTH {
        let script = Script::from_json(
            r#"{"turns": [{"text": "after the wait", "faults": [{"status": 429, "retry_after": 1}]}]}"#,
        )
        .unwrap();
        let server = ScriptedServer::start(script).unwrap();
        let c = client(provider, &server, Duration::from_secs(5));
        let started = Instant::now();
        let Retried {
            events,
            notices,
            err,
        } = send_with_retry(&c, &request("hi")).await;
        assert_eq!(err, None);
        assert!(started.elapsed() >= Duration::from_secs(1));
        assert_eq!(text_deltas(&events).concat(), "after the wait");
        assert_eq!(notices.len(), 1, "{provider:?}");
        assert_eq!(notices[0].attempt, 2);
        assert_eq!(notices[0].max_attempts, 4);
        assert_eq!(notices[0].delay, Duration::from_secs(1));
        assert!(
            matches!(
                &notices[0].error,
                LlmError::Http { status: 429, message, retry_after: Some(d) }
                    if message == "Rate limited" && *d == Duration::from_secs(1)
            ),
            "{:?}",
            notices[0].error
        );
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn overloaded_is_retried_then_succeeds() {
    for provider in BOTH {
        let script = Script::from_json(
            r#"{"turns": [{"text": "finally", "faults": [
                {"status": 529, "times": 2},
                {"stream_error": "overloaded_error"}]}]}"#,
        )
        .unwrap();
        let server = ScriptedServer::start(script).unwrap();
        let c = client(provider, &server, Duration::from_secs(5));
        let Retried {
            events,
            notices,
            err,
        } = send_with_retry(&c, &request("hi")).await;
        assert_eq!(err, None);
        assert_eq!(text_deltas(&events).concat(), "finally");
        let errors: Vec<String> = notices.iter().map(|n| n.error.to_string()).collect();
        assert_eq!(
            errors,
            vec![
                "HTTP 529: the API is overloaded (Overloaded)",
                "HTTP 529: the API is overloaded (Overloaded)",
                "API error (overloaded_error): Overloaded",
            ],
            "{provider:?}"
        );
        let attempts: Vec<u32> = notices.iter().map(|n| n.attempt).collect();
        assert_eq!(attempts, vec![2, 3, 4]);
        assert!(notices.iter().all(|n| n.delay <= Duration::from_millis(50)));
        assert_eq!(server.requests().len(), 4);
    }
}

#[tokio::test]
async fn retries_stop_at_max_attempts() {
    let script = Script::from_json(
        r#"{"turns": [{"text": "never", "faults": [{"status": 503, "times": 9}]}]}"#,
    )
    .unwrap();
    let server = ScriptedServer::start(script).unwrap();
    let c = client(Provider::Anthropic, &server, Duration::from_secs(5));
    let Retried { notices, err, .. } = send_with_retry(&c, &request("hi")).await;
    let Some(LlmError::GaveUp {
        attempts: 4, last, ..
    }) = &err
    else {
        panic!("{err:?}")
    };
    assert!(matches!(**last, LlmError::Http { status: 503, .. }));
    assert!(
        err.as_ref().is_some_and(|e| e
            .to_string()
            .ends_with("the attempt limit, CAIRN_MAX_ATTEMPTS=4)")),
        "{err:?}"
    );
    assert_eq!(notices.len(), 3);
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn stream_dropped_before_content_is_retried_transparently() {
    for provider in BOTH {
        let server =
            start(vec![text_turn("whole answer").with_fault(
                cairn::llm::scripted::FaultKind::DropAfterEvents(1),
                1,
            )]);
        let c = client(provider, &server, Duration::from_secs(5));
        let Retried {
            events,
            notices,
            err,
        } = send_with_retry(&c, &request("hi")).await;
        assert_eq!(err, None);
        assert_eq!(
            text_deltas(&events).concat(),
            "whole answer",
            "{provider:?}"
        );
        assert_eq!(notices.len(), 1);
        let last_event = match provider {
            Provider::Anthropic => "`message_stop`",
            Provider::OpenAi => "`data: [DONE]`",
        };
        assert_eq!(
            notices[0].error,
            LlmError::Stream(format!("the connection closed before {last_event}"))
        );
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn stream_dropped_after_content_is_retried_whole() {
    for provider in BOTH {
        // Anthropic: message_start, ping, block start, two deltas. OpenAI: role chunk, two deltas.
        let keep = match provider {
            Provider::Anthropic => 5,
            Provider::OpenAi => 3,
        };
        let server =
            start(vec![text_turn("partial text here").with_fault(
                cairn::llm::scripted::FaultKind::DropAfterEvents(keep),
                1,
            )]);
        let c = client(provider, &server, Duration::from_secs(5));
        let stream = stream_with_retry(Arc::clone(&c), request("hi"), fast_policy());
        let (all, err) = collect(stream).await;
        assert_eq!(err, None);
        // The first attempt's two deltas, the restart that voids them, then the whole answer.
        let restart = all
            .iter()
            .position(|e| matches!(e, StreamEvent::Restart(_)))
            .unwrap();
        assert_eq!(
            text_deltas(&all[..restart]),
            vec!["part", "ial "],
            "{provider:?}"
        );
        assert_eq!(blocks(&all[..restart]), vec![]);
        assert_eq!(
            text_deltas(&all[restart + 1..]).concat(),
            "partial text here"
        );
        assert_eq!(
            blocks(&all[restart + 1..]),
            vec![ContentBlock::Text {
                text: "partial text here".into()
            }]
        );
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn malformed_event_is_retried_with_a_clear_reason() {
    for provider in BOTH {
        let server =
            start(vec![text_turn("x").with_fault(
                cairn::llm::scripted::FaultKind::MalformedEventAt(0),
                1,
            )]);
        let c = client(provider, &server, Duration::from_secs(5));
        let Retried {
            events,
            notices,
            err,
        } = send_with_retry(&c, &request("hi")).await;
        assert_eq!(err, None);
        assert_eq!(text_deltas(&events).concat(), "x");
        assert_eq!(notices.len(), 1, "{provider:?}");
        let err = notices[0].error.to_string();
        let expected = match provider {
            Provider::Anthropic => {
                "the model server sent something unreadable: event `content_block_delta` is not JSON"
            }
            Provider::OpenAi => {
                "the model server sent something unreadable: a stream chunk is not JSON"
            }
        };
        assert!(err.starts_with(expected), "{err}");
    }
}

/// Issue 22 §6: an event whose JSON was cut in half (the event itself complete) fails the
/// attempt, whatever came before it: the partial text is voided and the retry answers whole.
#[tokio::test]
async fn an_event_cut_in_half_fails_the_attempt_and_is_retried_whole() {
    for provider in BOTH {
        // The second text delta: Anthropic message_start, ping, block start, delta, delta;
        // OpenAI role chunk, delta, delta.
        let at = match provider {
            Provider::Anthropic => 4,
            Provider::OpenAi => 2,
        };
        let server =
            start(vec![text_turn("partial text here").with_fault(
                cairn::llm::scripted::FaultKind::CutEventAt(at),
                1,
            )]);
        let c = client(provider, &server, Duration::from_secs(5));
        let stream = stream_with_retry(Arc::clone(&c), request("hi"), fast_policy());
        let (all, err) = collect(stream).await;
        assert_eq!(err, None, "{provider:?}");
        let restart = all
            .iter()
            .position(|e| matches!(e, StreamEvent::Restart(_)))
            .expect("the cut event was read on without a retry");
        assert_eq!(text_deltas(&all[..restart]), vec!["part"], "{provider:?}");
        assert_eq!(blocks(&all[..restart]), vec![]);
        let StreamEvent::Restart(notice) = &all[restart] else {
            unreachable!()
        };
        let expected = match provider {
            Provider::Anthropic => {
                "the model server sent something unreadable: event `content_block_delta` is not \
                 JSON (EOF while parsing a string"
            }
            Provider::OpenAi => {
                "the model server sent something unreadable: a stream chunk is not JSON (EOF \
                 while parsing"
            }
        };
        let got = notice.error.to_string();
        assert!(got.starts_with(expected), "{provider:?}: {got}");
        assert_eq!(
            text_deltas(&all[restart + 1..]).concat(),
            "partial text here"
        );
        assert_eq!(
            blocks(&all[restart + 1..]),
            vec![ContentBlock::Text {
                text: "partial text here".into()
            }]
        );
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn invalid_tool_json_becomes_invalid_tool_use() {
    for provider in BOTH {
        let server = start(vec![
            Turn::tool_call("toolu_1", "Read", json!({"file_path": "a.txt"}))
                .with_fault(cairn::llm::scripted::FaultKind::InvalidToolJson, 1),
        ]);
        let c = client(provider, &server, Duration::from_secs(5));
        let (events, err) = collect(c.send(&request("hi")).await.unwrap()).await;
        assert_eq!(err, None);
        let invalid: Vec<_> = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::InvalidToolUse { .. }))
            .collect();
        assert_eq!(invalid.len(), 1, "{provider:?}");
        let StreamEvent::InvalidToolUse {
            id,
            name,
            raw_input,
            error,
        } = invalid[0]
        else {
            unreachable!()
        };
        assert_eq!((id.as_str(), name.as_str()), ("toolu_1", "Read"));
        assert_eq!(raw_input, r#"{"file_path":"a.txt""#);
        assert!(
            error.starts_with("the tool input is not valid JSON"),
            "{error}"
        );
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished(StopReason::ToolUse))
        );
    }
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_names_the_key() {
    for provider in BOTH {
        let script =
            Script::from_json(r#"{"turns": [{"text": "x", "faults": [{"status": 401}]}]}"#)
                .unwrap();
        let server = ScriptedServer::start(script).unwrap();
        let c = client(provider, &server, Duration::from_secs(5));
        let Retried { notices, err, .. } = send_with_retry(&c, &request("hi")).await;
        let err = err.unwrap();
        assert_eq!(
            err.to_string(),
            "HTTP 401: the credentials were refused; check ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, \
             apiKeyHelper or OPENAI_API_KEY (invalid x-api-key)"
        );
        assert!(notices.is_empty());
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn idle_stream_times_out() {
    for provider in BOTH {
        let server = start(vec![Turn {
            delay_ms: 2000,
            ..Turn::text("slow")
        }]);
        let idle = Duration::from_millis(300);
        let c = client(provider, &server, idle);
        let stream = c.send(&request("hi")).await.unwrap();
        let (events, err) = collect(stream).await;
        assert_eq!(events, vec![]);
        assert_eq!(err, Some(LlmError::Idle(idle)), "{provider:?}");
    }
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let endpoint = ModelEndpoint {
        provider: Provider::OpenAi,
        model: "m".into(),
        base_url: format!("http://127.0.0.1:{port}/v1"),
        api_key: None,
        login: Default::default(),
    };
    let c = build_client(&endpoint, &ClientOptions::default()).unwrap();
    let policy = RetryPolicy {
        max_attempts: 2,
        ..fast_policy()
    };
    let Retried { notices, err, .. } = retried(stream_with_retry(c, request("hi"), policy)).await;
    let err = err.unwrap();
    assert!(
        matches!(&err, LlmError::GaveUp { last, .. } if matches!(**last, LlmError::Connect(_))),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("could not connect to the model server")
    );
    assert_eq!(notices.len(), 1);
}

#[tokio::test]
async fn anthropic_cache_control_placement() {
    let server = start(vec![text_turn("one"), text_turn("two")]);
    let c = client(Provider::Anthropic, &server, Duration::from_secs(5));
    let schema = json!({"type": "object", "properties": {}});
    let request = ModelRequest {
        tools: vec![
            ToolSpec {
                name: "Glob".into(),
                description: "find files".into(),
                input_schema: schema.clone(),
                defer_loading: false,
            },
            ToolSpec {
                name: "Read".into(),
                description: "read a file".into(),
                input_schema: schema.clone(),
                defer_loading: false,
            },
        ],
        messages: vec![
            Message::user_text("first"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::Text { text: "one".into() }],
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "toolu_1".into(),
                        content: "result".into(),
                        is_error: false,
                    },
                    ContentBlock::Text {
                        text: "second".into(),
                    },
                ],
            },
        ],
        thinking_budget: Some(2048),
        reasoning_effort: None,
        server_tools: Vec::new(),
        ..request("unused")
    };
    let (events, err) = collect(c.send(&request).await.unwrap()).await;
    assert_eq!(err, None);
    // Two assistant messages would pick turn 2; one picks turn 1.
    assert_eq!(text_deltas(&events).concat(), "two");
    let body = &server.requests()[0].body;
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are a test.", "cache_control": ephemeral}])
    );
    assert_eq!(body["tools"][0].get("cache_control"), None);
    assert_eq!(body["tools"][1]["cache_control"], ephemeral);
    assert_eq!(body["messages"][0]["content"][0].get("cache_control"), None);
    assert_eq!(body["messages"][2]["content"][0].get("cache_control"), None);
    assert_eq!(
        body["messages"][2]["content"][1],
        json!({"type": "text", "text": "second", "cache_control": ephemeral})
    );
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    let marked = body.to_string().matches("cache_control").count();
    assert_eq!(marked, 3);
}

#[tokio::test]
async fn past_the_last_turn_says_so() {
    for provider in BOTH {
        let server = start(vec![]);
        let c = client(provider, &server, Duration::from_secs(5));
        let (events, err) = collect(c.send(&request("hi")).await.unwrap()).await;
        assert_eq!(err, None);
        assert_eq!(
            blocks(&events),
            vec![ContentBlock::Text {
                text: NO_MORE_TURNS.into()
            }]
        );
    }
}

#[tokio::test]
async fn past_the_last_turn_a_script_can_say_what_to_do_next() {
    let mut script = Script::new(vec![]);
    script.after_last = Some("That was the whole demo.".into());
    let server = ScriptedServer::start(script).unwrap();
    let c = client(Provider::Anthropic, &server, Duration::from_secs(5));
    let (events, err) = collect(c.send(&request("hi")).await.unwrap()).await;
    assert_eq!(err, None);
    assert_eq!(
        blocks(&events),
        vec![ContentBlock::Text {
            text: "That was the whole demo.".into()
        }]
    );
}

#[tokio::test]
async fn unknown_route_is_not_found() {
    let server = start(vec![]);
    let endpoint = ModelEndpoint {
        provider: Provider::OpenAi,
        model: "m".into(),
        base_url: format!("{}/wrong", server.anthropic_base_url()),
        api_key: None,
        login: Default::default(),
    };
    let c = build_client(&endpoint, &ClientOptions::default()).unwrap();
    let err = c.send(&request("hi")).await.err().unwrap();
    assert_eq!(
        err.to_string(),
        "HTTP 404: not found; check the base URL and the model name (no route for POST /wrong/chat/completions)"
    );
    assert_eq!(server.requests()[0].header("authorization"), None);
}

/// A raw HTTP client, as outside tools (curl) talk to `cairn mock-server`.
#[tokio::test]
async fn raw_http_with_expect_continue() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = start(vec![Turn {
        chunk_chars: 100,
        ..Turn::text("raw")
    }]);
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "x".repeat(2000)}]})
        .to_string();
    let mut s = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let head = format!(
        "POST /chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut buf = [0u8; 25];
    s.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(body.as_bytes()).await.unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.contains("content-type: text/event-stream\r\n"));
    assert!(
        response.contains(r#""delta":{"content":"raw"}"#),
        "{response}"
    );
    assert!(response.ends_with("data: [DONE]\n\n"));
    assert_eq!(server.requests()[0].path, "/chat/completions");
}

#[tokio::test]
async fn serve_forever_serves_on_the_given_port() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let script = Script::new(vec![Turn::text("forever")]);
    let task = tokio::spawn(cairn::llm::scripted::serve_forever(script, port));
    let endpoint = ModelEndpoint {
        provider: Provider::Anthropic,
        model: "m".into(),
        base_url: format!("http://127.0.0.1:{port}"),
        api_key: None,
        login: Default::default(),
    };
    let c = build_client(&endpoint, &ClientOptions::default()).unwrap();
    // The listener may not be bound yet when the first request goes out.
    let Retried { events, err, .. } = send_with_retry(&c, &request("hi")).await;
    assert_eq!(err, None);
    assert_eq!(text_deltas(&events).concat(), "forever");
    task.abort();
}

#[tokio::test]
async fn a_login_token_goes_as_bearer_with_the_custom_headers() {
    let server = start(vec![Turn::text("hi")]);
    let (headers, _) =
        parse_custom_headers("ANTHROPIC_CUSTOM_HEADERS", "X-Team: core\nX-Trace: 42");
    let endpoint = ModelEndpoint {
        api_key: None,
        login: Login {
            auth_token: Some("tok-123".into()),
            headers,
            ..Login::default()
        },
        ..llm::endpoint(&server, Provider::Anthropic)
    };
    let c = llm::client_for(&endpoint, Duration::from_secs(5));
    let Retried { err, .. } = send_with_retry(&c, &request("hi")).await;
    assert!(err.is_none(), "{err:?}");
    let sent = &server.requests()[0];
    assert_eq!(sent.header("authorization"), Some("Bearer tok-123"));
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(sent.header("x-team"), Some("core"));
    assert_eq!(sent.header("x-trace"), Some("42"));
}

#[tokio::test]
async fn a_refused_helper_key_is_asked_for_again_once() {
    let tmp = tempfile::tempdir().unwrap();
    // Each run of the helper prints a new key: key-1, key-2, ...
    let helper = KeyHelper {
        command: "n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; echo key-$n"
            .into(),
        cwd: tmp.path().to_path_buf(),
        ttl: DEFAULT_HELPER_TTL,
    };
    let script = Script::from_json(
        r#"{"turns": [{"text": "one", "faults": [{"status": 401}]}, {"text": "two"}]}"#,
    )
    .unwrap();
    let server = ScriptedServer::start(script).unwrap();
    let endpoint = ModelEndpoint {
        api_key: None,
        login: Login {
            key_helper: Some(helper),
            ..Login::default()
        },
        ..llm::endpoint(&server, Provider::Anthropic)
    };
    let c = llm::client_for(&endpoint, Duration::from_secs(5));
    let Retried { events, err, .. } = send_with_retry(&c, &request("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_deltas(&events).concat(), "one");
    // Within the key's time to live the helper is not asked again.
    let Retried { err, .. } = send_with_retry(&c, &request("again")).await;
    assert!(err.is_none(), "{err:?}");
    let requests = server.requests();
    let sent: Vec<(Option<&str>, Option<&str>)> = requests
        .iter()
        .map(|r| (r.header("x-api-key"), r.header("authorization")))
        .collect();
    assert_eq!(
        sent,
        [
            (Some("key-1"), Some("Bearer key-1")),
            (Some("key-2"), Some("Bearer key-2")),
            (Some("key-2"), Some("Bearer key-2")),
        ]
    );
    let runs = std::fs::read_to_string(tmp.path().join("runs")).unwrap();
    assert_eq!(runs.trim(), "2");
}

#[tokio::test]
async fn a_failing_helper_is_reported_and_not_retried() {
    let tmp = tempfile::tempdir().unwrap();
    let server = start(vec![Turn::text("never")]);
    let endpoint = ModelEndpoint {
        api_key: None,
        login: Login {
            key_helper: Some(KeyHelper {
                command: "echo 'vault is sealed' >&2; exit 7".into(),
                cwd: tmp.path().to_path_buf(),
                ttl: DEFAULT_HELPER_TTL,
            }),
            ..Login::default()
        },
        ..llm::endpoint(&server, Provider::Anthropic)
    };
    let c = llm::client_for(&endpoint, Duration::from_secs(5));
    let Retried { notices, err, .. } = send_with_retry(&c, &request("hi")).await;
    let err = err.unwrap().to_string();
    assert!(err.contains("apiKeyHelper"), "{err}");
    assert!(err.contains("vault is sealed"), "{err}");
    assert!(notices.is_empty());
    assert!(server.requests().is_empty());
}
