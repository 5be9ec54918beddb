//! Chaos mode of the scripted server: random faults on any request, drawn from a seeded RNG,
//! the way a flaky network in front of an overloaded provider produces them — rate limits with
//! `retry-after`, 503s, connections cut in the middle of the text, streams that end cleanly but
//! without their final event, and chunks that are not JSON. The same seed and the same order of
//! requests give the same faults, so a test that passes keeps passing.

use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;

/// The `chaos` section of a script. Each probability is per request; they add up to at most 1
/// and the rest of the requests are answered normally. Defaults reproduce the third-party chaos
/// server of issue 16: 429 25 %, 503 15 %, disconnect 10 %, truncation 10 %, malformed 10 %.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Chaos {
    pub seed: u64,
    /// HTTP 429 with `retry-after` / `retry-after-ms` headers.
    pub rate_limit: f64,
    /// The wait a 429 asks for, in milliseconds.
    pub retry_after_ms: u64,
    /// HTTP 503.
    pub unavailable: f64,
    /// The connection closes in the middle of a text delta (mid-frame).
    pub disconnect: f64,
    /// The stream ends cleanly without its final event (`message_stop` / `[DONE]`).
    pub truncate: f64,
    /// One event, chosen at random, is replaced by one whose data is not JSON.
    pub malformed: f64,
}

impl Default for Chaos {
    fn default() -> Self {
        Chaos {
            seed: 0,
            rate_limit: 0.25,
            retry_after_ms: 1000,
            unavailable: 0.15,
            disconnect: 0.10,
            truncate: 0.10,
            malformed: 0.10,
        }
    }
}

impl Chaos {
    /// Why the probabilities are unusable, if they are.
    pub(crate) fn check(&self) -> Result<(), String> {
        let all = [
            ("rate_limit", self.rate_limit),
            ("unavailable", self.unavailable),
            ("disconnect", self.disconnect),
            ("truncate", self.truncate),
            ("malformed", self.malformed),
        ];
        if let Some((name, p)) = all.iter().find(|(_, p)| !(0.0..=1.0).contains(p)) {
            return Err(format!("chaos.{name} must be between 0 and 1 (got {p})"));
        }
        let sum: f64 = all.iter().map(|(_, p)| p).sum();
        if sum > 1.0 + 1e-9 {
            return Err(format!(
                "the chaos probabilities add up to {sum:.2}, more than 1"
            ));
        }
        Ok(())
    }
}

/// What chaos does to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChaosFault {
    RateLimit(Duration),
    Unavailable,
    /// Cut inside a text frame; `pick` chooses which.
    Disconnect {
        pick: u64,
    },
    Truncate,
    /// Replace a frame; `pick` chooses which.
    Malformed {
        pick: u64,
    },
}

/// The chaos settings and their RNG, shared by the server's connections.
pub(crate) struct ChaosState {
    config: Chaos,
    rng: Mutex<fastrand::Rng>,
}

impl ChaosState {
    pub(crate) fn new(config: Chaos) -> ChaosState {
        let rng = fastrand::Rng::with_seed(config.seed);
        ChaosState {
            config,
            rng: Mutex::new(rng),
        }
    }

    /// The fault for the next request, if any.
    pub(crate) fn draw(&self) -> Option<ChaosFault> {
        let (roll, pick) = {
            let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
            (rng.f64(), rng.u64(..))
        };
        let c = &self.config;
        let mut edge = 0.0;
        let mut hit = |p: f64| {
            edge += p;
            roll < edge
        };
        if hit(c.rate_limit) {
            Some(ChaosFault::RateLimit(Duration::from_millis(
                c.retry_after_ms,
            )))
        } else if hit(c.unavailable) {
            Some(ChaosFault::Unavailable)
        } else if hit(c.disconnect) {
            Some(ChaosFault::Disconnect { pick })
        } else if hit(c.truncate) {
            Some(ChaosFault::Truncate)
        } else if hit(c.malformed) {
            Some(ChaosFault::Malformed { pick })
        } else {
            None
        }
    }
}

/// Where to cut for a disconnect: the index of a frame carrying text (any frame but the last
/// when there is none), chosen by `pick`, and how many of its bytes still go out (half).
pub(crate) fn disconnect_point(frames: &[String], pick: u64) -> Option<(usize, usize)> {
    let texty: Vec<usize> = frames
        .iter()
        .enumerate()
        .filter(|(_, f)| f.contains("\"text_delta\"") || f.contains("{\"content\":"))
        .map(|(i, _)| i)
        .collect();
    let candidates: Vec<usize> = if texty.is_empty() {
        (0..frames.len().saturating_sub(1)).collect()
    } else {
        texty
    };
    let n = u64::try_from(candidates.len()).ok().filter(|n| *n > 0)?;
    let index = candidates[usize::try_from(pick % n).ok()?];
    Some((index, frames[index].len() / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_probabilities_and_the_seed() {
        let state = ChaosState::new(Chaos::default());
        let draws: Vec<Option<ChaosFault>> = (0..4000).map(|_| state.draw()).collect();
        let count = |f: fn(&ChaosFault) -> bool| draws.iter().flatten().filter(|d| f(d)).count();
        let rate = count(|d| matches!(d, ChaosFault::RateLimit(_)));
        let clean = draws.iter().filter(|d| d.is_none()).count();
        assert!((800..1200).contains(&rate), "{rate}");
        assert!((1000..1400).contains(&clean), "{clean}");
        let again = ChaosState::new(Chaos::default());
        let replay: Vec<Option<ChaosFault>> = (0..4000).map(|_| again.draw()).collect();
        assert_eq!(draws, replay);
    }

    #[test]
    fn probabilities_are_checked() {
        let bad = Chaos {
            rate_limit: 0.9,
            ..Chaos::default()
        };
        assert_eq!(
            bad.check(),
            Err("the chaos probabilities add up to 1.35, more than 1".into())
        );
        let bad = Chaos {
            malformed: -0.1,
            ..Chaos::default()
        };
        assert!(
            bad.check()
                .unwrap_err()
                .starts_with("chaos.malformed must be")
        );
    }

    #[test]
    fn disconnect_cuts_inside_a_text_frame() {
        let frames = vec![
            "data: {\"role\"}\n\n".to_string(),
            "data: {\"content\":\"Hello\"}\n\n".to_string(),
            "data: [DONE]\n\n".to_string(),
        ];
        assert_eq!(disconnect_point(&frames, 7), Some((1, 13)));
        assert_eq!(disconnect_point(&frames[2..], 7), None);
    }
}
