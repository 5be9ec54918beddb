//! Hot paths of the model layer: SSE parsing, building a client (on the start-up path), and a
//! whole one-turn request against the scripted server in both wire formats.

use std::time::Duration;

use cairn::llm::ModelEndpoint;
use cairn::llm::scripted::{Script, ScriptedServer, Turn};
use cairn::llm::sse::SseParser;
use cairn::llm::{ClientOptions, Message, ModelRequest, Provider, build_client};
use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;

fn sse_stream(deltas: usize) -> Vec<u8> {
    let mut s = String::new();
    for i in 0..deltas {
        s.push_str(&format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"word {i} \"}}}}\n\n"
        ));
    }
    s.into_bytes()
}

fn bench_sse(c: &mut Criterion) {
    let bytes = sse_stream(1000);
    let mut group = c.benchmark_group("sse");
    group.throughput(criterion::Throughput::Bytes(bytes.len() as u64));
    group.bench_function("parse_1000_events_in_1k_chunks", |b| {
        b.iter(|| {
            let mut p = SseParser::new();
            let mut frames = Vec::new();
            for chunk in bytes.chunks(1024) {
                p.push(chunk, &mut frames).expect("within the limits");
            }
            assert_eq!(frames.len(), 1000);
        })
    });
    group.finish();
}

fn bench_client(c: &mut Criterion) {
    let endpoint = |base_url: &str| ModelEndpoint {
        provider: Provider::Anthropic,
        model: "m".into(),
        base_url: base_url.into(),
        api_key: Some("k".into()),
        login: Default::default(),
    };
    let local = endpoint("http://127.0.0.1:8080");
    c.bench_function("build_client_http_loopback", |b| {
        b.iter(|| build_client(&local, &ClientOptions::default()).unwrap())
    });
    let remote = endpoint("https://api.anthropic.com");
    c.bench_function("build_client_https", |b| {
        b.iter(|| build_client(&remote, &ClientOptions::default()).unwrap())
    });
}

fn bench_round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(async { ScriptedServer::start(Script::new(vec![Turn::text("x".repeat(2000))])) })
        .unwrap();
    let request = ModelRequest {
        model: "m".into(),
        system: "system".into(),
        messages: vec![Message::user_text("hi")],
        tools: vec![],
        max_tokens: 1000,
        thinking_budget: None,
        reasoning_effort: None,
        server_tools: Vec::new(),
    };
    for (name, provider, base) in [
        (
            "one_turn_anthropic_250_deltas",
            Provider::Anthropic,
            server.anthropic_base_url(),
        ),
        (
            "one_turn_openai_250_deltas",
            Provider::OpenAi,
            server.openai_base_url(),
        ),
    ] {
        let endpoint = ModelEndpoint {
            provider,
            model: "m".into(),
            base_url: base,
            api_key: None,
            login: Default::default(),
        };
        let client = build_client(
            &endpoint,
            &ClientOptions {
                idle_timeout: Duration::from_secs(5),
            },
        )
        .unwrap();
        c.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut stream = client.send(&request).await.unwrap();
                    let mut n = 0;
                    while let Some(e) = stream.next().await {
                        e.unwrap();
                        n += 1;
                    }
                    n
                })
            })
        });
    }
    drop(server);
}

criterion_group!(benches, bench_sse, bench_client, bench_round_trip);
criterion_main!(benches);
