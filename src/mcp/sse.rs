//! The legacy HTTP+SSE transport of MCP (protocol 2024-11-05), which rmcp 3 does not ship: a
//! long-lived `GET` whose event stream first names, in an `endpoint` event, the URL to `POST`
//! messages to, and then carries the server's messages as `message` events.
//!
//! This module only moves messages: it implements rmcp's [`Transport`] so rmcp does the
//! JSON-RPC (no request or response is built here). The stream is parsed by cairn's own bounded
//! SSE parser. The endpoint is untrusted: one on another origin than the stream's is refused,
//! so a server cannot send the configured headers (tokens) elsewhere. A message that is not
//! JSON-RPC is logged and skipped; the end of the stream ends the transport.

use std::borrow::Cow;

use futures::StreamExt as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};

use crate::llm::sse::SseParser;

/// Messages read but not yet taken by rmcp, at most.
const QUEUE: usize = 64;

/// Why a message could not be sent.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SseSendError(String);

/// A connected SSE session: where to post, and the server's messages as they arrive.
pub struct SseTransport {
    client: reqwest::Client,
    headers: HeaderMap,
    endpoint: reqwest::Url,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Open the event stream at `url` and wait for its `endpoint` event.
/// Errors are one-line messages (`HTTP 401 ...`, `the server sent no endpoint`).
pub async fn connect(url: &str, headers: HeaderMap) -> Result<SseTransport, String> {
    let base = reqwest::Url::parse(url).map_err(|e| format!("bad URL {url:?}: {e}"))?;
    let client = reqwest::Client::new();
    let response = client
        .get(base.clone())
        .headers(headers.clone())
        .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
        .send()
        .await
        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(http_error(url, status));
    }
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let (tx, incoming) = mpsc::channel(QUEUE);
    let reader = tokio::spawn(read_events(response, base.clone(), endpoint_tx, tx));
    let endpoint = match endpoint_rx.await {
        Ok(endpoint) => endpoint?,
        Err(_) => {
            return Err(format!(
                "{url}: the event stream ended before naming an endpoint"
            ));
        }
    };
    Ok(SseTransport {
        client,
        headers,
        endpoint,
        incoming,
        reader,
    })
}

/// What a server that answers 401 is told, on either HTTP transport.
pub const NEEDS_OAUTH: &str = "the server needs authorisation; OAuth for MCP servers is not \
                               supported yet (a token in \"headers\" works)";

/// The message for a refused connection; a 401 says OAuth is not supported yet.
fn http_error(url: &str, status: reqwest::StatusCode) -> String {
    if status == reqwest::StatusCode::UNAUTHORIZED {
        format!("{url} answered HTTP 401: {NEEDS_OAUTH}")
    } else {
        format!("{url} answered HTTP {status}")
    }
}

/// Reads the event stream: the first `endpoint` event goes to `endpoint`, every `message`
/// event after it to `messages`. Ends with the stream, or when rmcp drops the receiver.
async fn read_events(
    response: reqwest::Response,
    base: reqwest::Url,
    endpoint: oneshot::Sender<Result<reqwest::Url, String>>,
    messages: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
) {
    let mut endpoint = Some(endpoint);
    let mut parser = SseParser::new();
    let mut frames = Vec::new();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let Ok(chunk) = chunk else { break };
        if let Err(e) = parser.push(&chunk, &mut frames) {
            tracing::debug!(target: "cairn::mcp", "SSE stream refused: {e}");
            break;
        }
        for frame in frames.drain(..) {
            match frame.event.as_str() {
                "endpoint" => {
                    if let Some(tx) = endpoint.take() {
                        let _ = tx.send(resolve_endpoint(&base, frame.data.trim()));
                    }
                }
                "message" => match serde_json::from_str(&frame.data) {
                    Ok(message) => {
                        if messages.send(message).await.is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        tracing::debug!(target: "cairn::mcp", "SSE message skipped: {e}");
                    }
                },
                _ => {}
            }
        }
    }
}

/// The URL to post to: `data` resolved against the stream's URL, on the same origin only.
fn resolve_endpoint(base: &reqwest::Url, data: &str) -> Result<reqwest::Url, String> {
    let url = base
        .join(data)
        .map_err(|e| format!("the server named a bad endpoint {data:?}: {e}"))?;
    if url.origin() != base.origin() {
        return Err(format!(
            "the server named an endpoint on another origin ({}), refused",
            url.origin().ascii_serialization()
        ));
    }
    Ok(url)
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseSendError;

    fn name() -> Cow<'static, str> {
        "sse".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .json(&item);
        async move {
            let response = request
                .send()
                .await
                .map_err(|e| SseSendError(format!("posting a message failed: {e}")))?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(SseSendError(format!(
                    "the server answered a message with HTTP {status}"
                )))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.incoming.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_is_resolved_against_the_stream_and_kept_on_its_origin() {
        let base = reqwest::Url::parse("http://127.0.0.1:3001/sse").unwrap();
        let url = resolve_endpoint(&base, "/message?sessionId=abc").unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:3001/message?sessionId=abc");
        let err = resolve_endpoint(&base, "http://evil.example/steal").unwrap_err();
        assert!(
            err.contains("another origin (http://evil.example)"),
            "{err}"
        );
        let err = resolve_endpoint(&base, "http://127.0.0.1:4000/message").unwrap_err();
        assert!(err.contains("another origin"), "{err}");
    }

    #[test]
    fn a_401_names_oauth() {
        let msg = http_error("http://h/sse", reqwest::StatusCode::UNAUTHORIZED);
        assert!(
            msg.contains("OAuth for MCP servers is not supported yet"),
            "{msg}"
        );
        let msg = http_error("http://h/sse", reqwest::StatusCode::NOT_FOUND);
        assert_eq!(msg, "http://h/sse answered HTTP 404 Not Found");
    }
}
