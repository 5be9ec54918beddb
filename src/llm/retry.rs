//! Retry with exponential backoff and jitter around [`ModelClient::send`].
//!
//! [`stream_with_retry`] turns one request into one stream that survives failures: a failed
//! send, a stream that breaks, ends before it is complete, or carries an undecodable event is
//! retried as a whole request while the policy allows it. Each retry appears in the stream as
//! [`StreamEvent::Restart`], yielded *before* the wait: it tells the consumer to drop
//! everything the stream yielded since its start (or the previous restart), because the next
//! attempt answers from scratch. A consumer that cannot drop what it has (a tool call of the
//! attempt already started) stops reading there, which also cancels the wait and the new
//! attempt. An error that is not retried, or a limit reached, ends the stream with one `Err`.
//!
//! Limits (all in [`RetryPolicy`]): attempts in total, the backoff, the longest `retry-after`
//! honoured (longer ones are shortened to it), and the total time one request may spend
//! retrying: a retry whose wait would end past that budget is not made. The budget counts
//! attempts that deliver nothing and the waits; time spent receiving an answer does not use it
//! up (so a long answer that breaks late can still be retried).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tokio::time::Instant;

use super::{EventStream, LlmError, ModelClient, ModelRequest, StreamEvent};

/// How often and how patiently to retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts, the first included (1 means never retry).
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// The longest `retry-after` honoured; a longer one is shortened to this.
    pub max_retry_after: Duration,
    /// The longest one request may spend retrying: from the start of a stretch of attempts
    /// that deliver nothing (or the failure of one that delivered something) to the start of
    /// the next attempt, waits included.
    pub max_total: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 8,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(32),
            max_retry_after: Duration::from_secs(60),
            max_total: Duration::from_secs(300),
        }
    }
}

/// Environment variable overriding [`RetryPolicy::max_attempts`].
pub const MAX_ATTEMPTS_ENV: &str = "CAIRN_MAX_ATTEMPTS";
/// Environment variable overriding [`RetryPolicy::max_retry_after`], in milliseconds.
pub const MAX_RETRY_AFTER_ENV: &str = "CAIRN_MAX_RETRY_AFTER_MS";
/// Environment variable overriding [`RetryPolicy::max_total`], in milliseconds.
pub const MAX_RETRY_TOTAL_ENV: &str = "CAIRN_MAX_RETRY_TOTAL_MS";

fn positive(env: &impl Fn(&str) -> Option<String>, key: &str) -> Option<u64> {
    env(key)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|n| *n > 0)
}

impl RetryPolicy {
    /// The default policy with `CAIRN_MAX_ATTEMPTS`, `CAIRN_MAX_RETRY_AFTER_MS` and
    /// `CAIRN_MAX_RETRY_TOTAL_MS` applied when they are positive numbers (`env` is a lookup
    /// function so tests need not touch the process environment).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> RetryPolicy {
        let mut policy = RetryPolicy::default();
        if let Some(n) = positive(&env, MAX_ATTEMPTS_ENV) {
            policy.max_attempts = u32::try_from(n).unwrap_or(u32::MAX);
        }
        if let Some(ms) = positive(&env, MAX_RETRY_AFTER_ENV) {
            policy.max_retry_after = Duration::from_millis(ms);
        }
        if let Some(ms) = positive(&env, MAX_RETRY_TOTAL_ENV) {
            policy.max_total = Duration::from_millis(ms);
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
    /// gave one (at most `max_retry_after`), else the backoff plus up to 25% jitter (so many
    /// clients do not retry in step), never more than `max_delay`.
    pub fn delay_for(&self, retry: u32, error: &LlmError) -> Duration {
        if let LlmError::Http {
            retry_after: Some(wait),
            ..
        } = error
        {
            return (*wait).min(self.max_retry_after);
        }
        let backoff = self.backoff(retry);
        let jitter = backoff.mul_f64(fastrand::f64() * 0.25);
        (backoff + jitter).min(self.max_delay)
    }

    /// What to do after attempt number `attempt` (1-based) failed with `error`, with `elapsed`
    /// of the time budget spent: the notice of the next attempt, or the error to give up with.
    pub fn next(
        &self,
        attempt: u32,
        error: LlmError,
        elapsed: Duration,
    ) -> Result<RetryNotice, LlmError> {
        let max_attempts = self.max_attempts.max(1);
        if !error.is_retryable() {
            return Err(error);
        }
        let give_up = |limit: String, error: LlmError| {
            if attempt <= 1 {
                // Nothing was retried: the error says it all.
                return error;
            }
            LlmError::GaveUp {
                attempts: attempt,
                elapsed,
                limit,
                last: Box::new(error),
            }
        };
        if attempt >= max_attempts {
            return Err(give_up(
                format!("the attempt limit, {MAX_ATTEMPTS_ENV}={max_attempts}"),
                error,
            ));
        }
        let delay = self.delay_for(attempt, &error);
        if elapsed.saturating_add(delay) > self.max_total {
            return Err(LlmError::GaveUp {
                attempts: attempt,
                elapsed,
                limit: format!(
                    "the next try would start past the retry time limit, {MAX_RETRY_TOTAL_ENV}={}",
                    self.max_total.as_millis()
                ),
                last: Box::new(error),
            });
        }
        Ok(RetryNotice {
            attempt: attempt + 1,
            max_attempts,
            delay,
            error,
        })
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

struct State {
    client: Arc<dyn ModelClient>,
    request: ModelRequest,
    policy: RetryPolicy,
    /// The attempt being made (1-based).
    attempt: u32,
    /// When the current stretch of unproductive trying began: the start of the first attempt
    /// that has delivered nothing so far, or the failure of the last one that delivered
    /// something. `None` while an attempt is delivering. The time budget runs from here, so a
    /// long answer that breaks late does not use up the budget by itself.
    trying_since: Option<Instant>,
    current: Option<EventStream>,
    /// Wait this long before the next attempt.
    wait: Option<Duration>,
    ended: bool,
}

/// Send `request`, retrying retryable failures as a whole within `policy`. The stream yields
/// the events of the attempts, a [`StreamEvent::Restart`] between two attempts (before the
/// wait), and at most one `Err`, last; polling it after its end is harmless. It is lazy:
/// nothing is sent until it is first polled.
/// Dropping it cancels the request, a wait, or both.
pub fn stream_with_retry(
    client: Arc<dyn ModelClient>,
    request: ModelRequest,
    policy: RetryPolicy,
) -> EventStream {
    let state = State {
        client,
        request,
        policy,
        attempt: 1,
        trying_since: None,
        current: None,
        wait: None,
        ended: false,
    };
    futures::stream::unfold(state, |mut st| async move {
        if st.ended {
            return None;
        }
        if let Some(wait) = st.wait.take() {
            tokio::time::sleep(wait).await;
        }
        let mut stream = match st.current.take() {
            Some(s) => s,
            None => {
                st.trying_since.get_or_insert_with(Instant::now);
                match st.client.send(&st.request).await {
                    Ok(s) => s,
                    Err(e) => return Some(st.failed(e)),
                }
            }
        };
        match stream.next().await {
            Some(Ok(event)) => {
                st.trying_since = None;
                st.current = Some(stream);
                Some((Ok(event), st))
            }
            Some(Err(e)) => Some(st.failed(e)),
            // The client's streams end only after the message is complete.
            None => None,
        }
    })
    .fuse()
    .boxed()
}

impl State {
    fn failed(mut self, error: LlmError) -> (Result<StreamEvent, LlmError>, State) {
        self.current = None;
        let since = *self.trying_since.get_or_insert_with(Instant::now);
        match self.policy.next(self.attempt, error, since.elapsed()) {
            Ok(notice) => {
                self.attempt = notice.attempt;
                self.wait = Some(notice.delay);
                (Ok(StreamEvent::Restart(notice)), self)
            }
            Err(e) => {
                self.ended = true;
                (Err(e), self)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 8,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(3),
            ..RetryPolicy::default()
        }
    }

    fn http(status: u16, retry_after: Option<Duration>) -> LlmError {
        LlmError::Http {
            status,
            message: String::new(),
            retry_after,
        }
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let p = policy();
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
    fn retry_after_wins_up_to_its_cap() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay_for(1, &http(429, Some(Duration::from_secs(7)))),
            Duration::from_secs(7)
        );
        // A server asking for an hour gets the cap, 60 s by default.
        assert_eq!(
            p.delay_for(1, &http(429, Some(Duration::from_secs(3600)))),
            Duration::from_secs(60)
        );
        let p = RetryPolicy::from_env(|k| (k == MAX_RETRY_AFTER_ENV).then(|| "1500".into()));
        assert_eq!(
            p.delay_for(1, &http(429, Some(Duration::from_secs(3600)))),
            Duration::from_millis(1500)
        );
    }

    #[test]
    fn limits_from_env() {
        let p = RetryPolicy::from_env(|k| match k {
            MAX_ATTEMPTS_ENV => Some("3".into()),
            MAX_RETRY_TOTAL_ENV => Some("9000".into()),
            _ => None,
        });
        assert_eq!(p.max_attempts, 3);
        assert_eq!(p.max_total, Duration::from_secs(9));
        assert_eq!(p.max_retry_after, Duration::from_secs(60));
        let p = RetryPolicy::from_env(|_| Some("zero".to_string()));
        assert_eq!(p, RetryPolicy::default());
    }

    #[test]
    fn next_gives_up_at_each_limit_and_says_which() {
        let p = RetryPolicy {
            max_attempts: 3,
            max_total: Duration::from_secs(10),
            ..policy()
        };
        let n = p.next(1, http(503, None), Duration::ZERO).unwrap();
        assert_eq!((n.attempt, n.max_attempts), (2, 3));
        // Not retryable: the error as it is.
        assert_eq!(
            p.next(1, http(401, None), Duration::ZERO),
            Err(http(401, None))
        );
        // The attempt limit.
        let e = p
            .next(3, http(503, None), Duration::from_secs(2))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "HTTP 503: the model server had an error (gave up after 3 attempts in 2 s: \
             the attempt limit, CAIRN_MAX_ATTEMPTS=3)"
        );
        // The time limit: 9.9 s spent and a 7 s wait asked for.
        let e = p
            .next(
                2,
                http(429, Some(Duration::from_secs(7))),
                Duration::from_millis(9_900),
            )
            .unwrap_err();
        assert!(
            matches!(&e, LlmError::GaveUp { attempts: 2, last, .. } if **last == http(429, Some(Duration::from_secs(7))))
        );
        assert!(
            e.to_string()
                .ends_with("past the retry time limit, CAIRN_MAX_RETRY_TOTAL_MS=10000)"),
            "{e}"
        );
        // A single attempt allowed: no "gave up" wrapping.
        let once = RetryPolicy {
            max_attempts: 1,
            ..policy()
        };
        assert_eq!(
            once.next(1, http(503, None), Duration::ZERO),
            Err(http(503, None))
        );
    }
}
