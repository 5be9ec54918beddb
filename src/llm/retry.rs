//! Retry with exponential backoff and jitter around [`ModelClient::send`].
//!
//! [`stream_with_retry`] owns one rule: a request is retried only while nothing of the answer
//! has reached the caller. It reads the stream until the first content event (text, thinking,
//! a finished block or an invalid tool call) or the end of the message, buffering what came
//! before; a retryable failure in that window starts a new attempt, and the caller never sees
//! the broken one. Once content has arrived the buffered events are replayed and the rest of
//! the stream is the caller's, failures included. Each retry is announced through `on_retry`
//! before the wait, so a person sees "retrying in N s (k of n)" while it waits. Cancellation
//! is by dropping the future.

use std::time::Duration;

use futures::StreamExt;

use super::{EventStream, LlmError, ModelClient, ModelRequest, StreamEvent};

/// How often and how patiently to retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts, the first included (1 means never retry).
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

/// Environment variable overriding [`RetryPolicy::max_attempts`].
pub const MAX_ATTEMPTS_ENV: &str = "CAIRN_MAX_ATTEMPTS";

impl RetryPolicy {
    /// The default policy with `CAIRN_MAX_ATTEMPTS` applied when it is a positive number
    /// (`env` is a lookup function so tests need not touch the process environment).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> RetryPolicy {
        let mut policy = RetryPolicy::default();
        if let Some(n) = env(MAX_ATTEMPTS_ENV)
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|n| *n > 0)
        {
            policy.max_attempts = n;
        }
        policy
    }

    /// The wait before retry number `retry` (1 for the first retry) without jitter:
    /// `base_delay * 2^(retry-1)`, capped at `max_delay`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// The wait before retry number `retry` after `error`: the server's `retry-after` when it
    /// gave one, else the backoff plus up to 25% jitter (so many clients do not retry in step),
    /// never more than `max_delay`.
    pub fn delay_for(&self, retry: u32, error: &LlmError) -> Duration {
        if let LlmError::Http {
            retry_after: Some(wait),
            ..
        } = error
        {
            return *wait;
        }
        let backoff = self.backoff(retry);
        let jitter = backoff.mul_f64(fastrand::f64() * 0.25);
        (backoff + jitter).min(self.max_delay)
    }
}

/// One announced retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// The attempt about to be made (2 for the first retry).
    pub attempt: u32,
    pub max_attempts: u32,
    pub delay: Duration,
    pub error: LlmError,
}

fn is_content(event: &StreamEvent) -> bool {
    match event {
        StreamEvent::TextDelta(_)
        | StreamEvent::ThinkingDelta(_)
        | StreamEvent::BlockComplete(_)
        | StreamEvent::InvalidToolUse { .. }
        | StreamEvent::Finished(_) => true,
        StreamEvent::Usage(_) => false,
    }
}

/// Send `request`, retrying retryable failures (including a stream that breaks before any
/// content) and announcing each retry through `on_retry`. Returns a stream whose first content
/// has arrived; a failure after that is the caller's to report.
pub async fn stream_with_retry(
    client: &dyn ModelClient,
    request: &ModelRequest,
    policy: &RetryPolicy,
    on_retry: &mut (dyn FnMut(RetryNotice) + Send),
) -> Result<EventStream, LlmError> {
    let max_attempts = policy.max_attempts.max(1);
    let mut attempt = 1;
    loop {
        let error = match first_content(client.send(request).await).await {
            Ok(stream) => return Ok(stream),
            Err(e) => e,
        };
        if !error.is_retryable() || attempt >= max_attempts {
            return Err(error);
        }
        let delay = policy.delay_for(attempt, &error);
        attempt += 1;
        on_retry(RetryNotice {
            attempt,
            max_attempts,
            delay,
            error,
        });
        tokio::time::sleep(delay).await;
    }
}

/// Read `sent` up to its first content event. `Err` when the send failed or the stream failed
/// before content; otherwise a stream replaying the buffered events and then the rest.
async fn first_content(sent: Result<EventStream, LlmError>) -> Result<EventStream, LlmError> {
    let mut stream = sent?;
    let mut buffered = Vec::new();
    loop {
        match stream.next().await {
            Some(Err(e)) => return Err(e),
            Some(Ok(event)) => {
                let content = is_content(&event);
                buffered.push(Ok(event));
                if content {
                    break;
                }
            }
            None => break,
        }
    }
    Ok(futures::stream::iter(buffered).chain(stream).boxed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RetryPolicy {
            max_attempts: 8,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(3),
        };
        let waits: Vec<u128> = (1..=5).map(|n| p.backoff(n).as_millis()).collect();
        assert_eq!(waits, vec![500, 1000, 2000, 3000, 3000]);
        assert_eq!(p.backoff(200), Duration::from_secs(3));
        for n in 1..6 {
            let d = p.delay_for(n, &LlmError::Connect("x".into()));
            assert!(d >= p.backoff(n) && d <= p.max_delay, "{d:?}");
            assert!(d <= p.backoff(n).mul_f64(1.25));
        }
    }

    #[test]
    fn retry_after_wins() {
        let e = LlmError::Http {
            status: 429,
            message: String::new(),
            retry_after: Some(Duration::from_secs(7)),
        };
        assert_eq!(
            RetryPolicy::default().delay_for(1, &e),
            Duration::from_secs(7)
        );
    }

    #[test]
    fn max_attempts_from_env() {
        let p = RetryPolicy::from_env(|k| (k == MAX_ATTEMPTS_ENV).then(|| "3".to_string()));
        assert_eq!(p.max_attempts, 3);
        let p = RetryPolicy::from_env(|_| Some("zero".to_string()));
        assert_eq!(p.max_attempts, 8);
    }
}
