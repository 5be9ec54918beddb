//! Building the right [`ModelClient`] for a resolved endpoint.
//!
//! Construction is cheap and does no I/O: no connection is opened until the first request, and
//! a plain `http://` endpoint loads no TLS roots (see `http::http_client`).

use std::sync::Arc;
use std::time::Duration;

use super::StreamEvent;
use super::anthropic::{AnthropicClient, AnthropicDecoder};
use super::auth::Login;
use super::http::Decoder;
use super::openai::{OpenAiClient, OpenAiDecoder};
use super::sse::SseFrame;
use super::{LlmError, ModelClient, Provider};

/// Environment variable overriding [`ClientOptions::idle_timeout`], in milliseconds.
pub const IDLE_TIMEOUT_ENV: &str = "CAIRN_STREAM_IDLE_TIMEOUT_MS";

/// Knobs shared by every client.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientOptions {
    /// A response that sends no bytes for this long is treated as broken (`LlmError::Idle`).
    pub idle_timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            idle_timeout: Duration::from_secs(120),
        }
    }
}

impl ClientOptions {
    /// The defaults with `CAIRN_STREAM_IDLE_TIMEOUT_MS` applied when it is a positive number.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> ClientOptions {
        let mut options = ClientOptions::default();
        if let Some(ms) = env(IDLE_TIMEOUT_ENV)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|ms| *ms > 0)
        {
            options.idle_timeout = Duration::from_millis(ms);
        }
        options
    }
}

/// A resolved endpoint: which wire format, model, base URL and key (resolved from flags,
/// settings and environment by `config::model`).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEndpoint {
    pub provider: Provider,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<String>,
    /// A login token, an `apiKeyHelper`, custom headers.
    pub login: Login,
}

impl ModelEndpoint {
    /// Where the key sent as `x-api-key` (or the bearer token) comes from, in the words of
    /// Claude Code's `apiKeySource`: `ANTHROPIC_API_KEY`, `apiKeyHelper`,
    /// `ANTHROPIC_AUTH_TOKEN`, `OPENAI_API_KEY`, or `none`.
    pub fn key_source(&self) -> &'static str {
        match self.provider {
            Provider::Anthropic if self.api_key.is_some() => "ANTHROPIC_API_KEY",
            Provider::Anthropic if self.login.key_helper.is_some() => "apiKeyHelper",
            Provider::Anthropic if self.login.auth_token.is_some() => "ANTHROPIC_AUTH_TOKEN",
            Provider::OpenAi if self.api_key.is_some() => "OPENAI_API_KEY",
            _ => "none",
        }
    }
}

/// The client for `endpoint`'s provider, base URL and key.
pub fn build_client(
    endpoint: &ModelEndpoint,
    opts: &ClientOptions,
) -> Result<Arc<dyn ModelClient>, LlmError> {
    let key = endpoint.api_key.clone();
    Ok(match endpoint.provider {
        Provider::Anthropic => Arc::new(AnthropicClient::new(
            &endpoint.base_url,
            key,
            endpoint.login.clone(),
            opts.idle_timeout,
        )?),
        Provider::OpenAi => Arc::new(OpenAiClient::new(
            &endpoint.base_url,
            key,
            endpoint.login.clone(),
            opts.idle_timeout,
        )?),
    })
}

/// Decode a whole sequence of SSE frames as `provider`'s client does: the events, and the error
/// that ended decoding. A sequence that stops before the message finished ends with the same
/// `LlmError::Stream` a connection closing there gives. (For tests and fuzzing of the decoders.)
pub fn decode_frames(
    provider: Provider,
    frames: &[SseFrame],
) -> (Vec<StreamEvent>, Option<LlmError>) {
    fn run(d: &mut dyn Decoder, frames: &[SseFrame]) -> (Vec<StreamEvent>, Option<LlmError>) {
        let mut out = Vec::new();
        for frame in frames {
            if let Err(e) = d.frame(frame, &mut out) {
                return (out, Some(e));
            }
            if d.is_done() {
                return (out, None);
            }
        }
        let cut = d.cut_short();
        (out, Some(LlmError::Stream(cut)))
    }
    match provider {
        Provider::Anthropic => run(&mut AnthropicDecoder::default(), frames),
        Provider::OpenAi => run(&mut OpenAiDecoder::default(), frames),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_both_providers_and_reads_the_env() {
        for provider in [Provider::Anthropic, Provider::OpenAi] {
            let endpoint = ModelEndpoint {
                provider,
                model: "m".into(),
                base_url: "http://127.0.0.1:9".into(),
                api_key: None,
                login: Login::default(),
            };
            let client = build_client(&endpoint, &ClientOptions::default()).unwrap();
            assert_eq!(client.provider(), provider);
        }
        let opts = ClientOptions::from_env(|k| (k == IDLE_TIMEOUT_ENV).then(|| "250".into()));
        assert_eq!(opts.idle_timeout, Duration::from_millis(250));
        assert_eq!(
            ClientOptions::from_env(|_| Some("-5".into())),
            ClientOptions::default()
        );
    }
}
