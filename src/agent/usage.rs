//! Usage and cost accounting of one conversation: the totals so far, the context the last
//! request filled (auto-compaction reads it), and for a sub-agent the report of each request
//! to the session that counts it.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::llm::pricing;
use crate::protocol::{Event, Usage};

/// Each request of a sub-agent: the model and its usage, for the session to count.
pub type UsageSink = Arc<Mutex<Vec<(String, Usage)>>>;

/// A poisoned lock only means a task panicked while holding it; the data is still usable.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// What a conversation's requests used.
#[derive(Default)]
pub(crate) struct UsageMeter {
    pub total: Usage,
    pub cost_usd: f64,
    /// Tokens of context the last request used (input, cache, output).
    pub last_context: u64,
    /// A sub-agent's: each request's usage is also reported to the session.
    pub reports_to_session: bool,
}

impl UsageMeter {
    /// A sub-agent's meter.
    pub fn for_subagent() -> UsageMeter {
        UsageMeter {
            reports_to_session: true,
            ..UsageMeter::default()
        }
    }

    /// Count a request of `model` that used `usage`, the context it filled with it.
    pub fn add_request(&mut self, model: &str, usage: &Usage) {
        self.add(model, usage);
        self.last_context = usage.input_tokens
            + usage.cache_read_input_tokens
            + usage.cache_creation_input_tokens
            + usage.output_tokens;
    }

    /// Count `usage` of `model` in the totals.
    pub fn add(&mut self, model: &str, usage: &Usage) {
        self.total.add(usage);
        self.cost_usd += pricing::cost_usd(model, usage);
    }

    /// Start again from what `usage` (a resumed session's requests) adds up to.
    pub fn restore(&mut self, usage: &[(String, Usage)]) {
        self.total = Usage::default();
        self.cost_usd = 0.0;
        for (model, u) in usage {
            self.add(model, u);
        }
    }

    /// The event telling the client: `last` (of `model`), the totals, and the window of
    /// `window_model`.
    pub fn event(&self, last: Usage, model: String, window_model: &str) -> Event {
        Event::Usage {
            last,
            total: self.total,
            total_cost_usd: self.cost_usd,
            context_window: pricing::context_window(window_model),
            model,
        }
    }
}
