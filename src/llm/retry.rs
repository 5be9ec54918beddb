//! Retry with exponential backoff and jitter around [`ModelClient::send`].
//!
//! Placeholder: sends once. Replaced by the model-clients work.

use std::time::Duration;

use super::{EventStream, LlmError, ModelClient, ModelRequest};

/// How often and how patiently to retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 8,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(32),
        }
    }
}

/// One announced retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    pub attempt: u32,
    pub max_attempts: u32,
    pub delay: Duration,
    pub error: LlmError,
}

/// Send `request`, retrying retryable failures (including a stream that breaks before any
/// content) and announcing each retry through `on_retry`. Returns a stream whose first content
/// has arrived; a failure after that is the caller's to report.
pub async fn stream_with_retry(
    client: &dyn ModelClient,
    request: &ModelRequest,
    _policy: &RetryPolicy,
    _on_retry: &mut (dyn FnMut(RetryNotice) + Send),
) -> Result<EventStream, LlmError> {
    client.send(request).await
}
