//! Model clients for tests: the scripted model server on 127.0.0.1 started from a JSON script,
//! the real client of either wire format pointed at it, and retry policies with short waits so
//! retried streams finish fast. Include with `#[path = "support/llm.rs"] mod llm;`.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use cairn::llm::retry::RetryPolicy;
use cairn::llm::scripted::{Script, ScriptedServer};
use cairn::llm::{
    ClientOptions, Message, ModelClient, ModelEndpoint, ModelRequest, Provider, StreamEvent,
    build_client,
};
use serde_json::Value;

/// Both wire formats, for tests that must hold in each.
pub const BOTH: [Provider; 2] = [Provider::Anthropic, Provider::OpenAi];

/// A scripted server playing `script` (the JSON form of [`Script`]).
pub fn scripted(script: &Value) -> ScriptedServer {
    ScriptedServer::start(Script::from_json(&script.to_string()).unwrap()).unwrap()
}

/// The endpoint of `server` in `provider`'s wire format, model `test-model`, key `test-key`.
pub fn endpoint(server: &ScriptedServer, provider: Provider) -> ModelEndpoint {
    ModelEndpoint {
        provider,
        model: "test-model".into(),
        base_url: match provider {
            Provider::Anthropic => server.anthropic_base_url(),
            Provider::OpenAi => server.openai_base_url(),
        },
        api_key: Some("test-key".into()),
        login: Default::default(),
    }
}

/// The real client for `endpoint`, giving up on a stream silent for `idle`.
pub fn client_for(endpoint: &ModelEndpoint, idle: Duration) -> Arc<dyn ModelClient> {
    build_client(endpoint, &ClientOptions { idle_timeout: idle }).unwrap()
}

/// The real client of `provider`'s wire format talking to `server`.
pub fn client(provider: Provider, server: &ScriptedServer, idle: Duration) -> Arc<dyn ModelClient> {
    client_for(&endpoint(server, provider), idle)
}

/// A retry policy of `max_attempts` whose waits run from `base_ms` up to `max_ms`.
pub fn fast_retry(max_attempts: u32, base_ms: u64, max_ms: u64) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(base_ms),
        max_delay: Duration::from_millis(max_ms),
        ..RetryPolicy::default()
    }
}

/// A request to `test-model` with `system` and one user message `text`, no tools.
pub fn request(system: &str, text: &str) -> ModelRequest {
    ModelRequest {
        model: "test-model".into(),
        system: system.into(),
        messages: vec![Message::user_text(text)],
        tools: vec![],
        max_tokens: 1024,
        thinking_budget: None,
        reasoning_effort: None,
        server_tools: Vec::new(),
    }
}

/// The text deltas among `events`, in order.
pub fn text_deltas(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}
