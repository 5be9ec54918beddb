//! The time budget of one Grep or Glob walk (10 s by default, `CAIRN_SEARCH_TIMEOUT_MS` in the
//! session's environment changes it): past it the walk stops, the result holds what was found
//! and a note says the search was cut short.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::session::context::SessionContext;

/// The default budget of one search.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(10);
/// The variable that changes it (milliseconds).
pub const BUDGET_VAR: &str = "CAIRN_SEARCH_TIMEOUT_MS";

/// One search's deadline, and whether it was reached.
#[derive(Debug)]
pub struct Budget {
    limit: Duration,
    deadline: Instant,
    spent: AtomicBool,
}

impl Budget {
    /// The budget of a search starting now in `session`.
    pub fn start(session: &SessionContext) -> Budget {
        let limit = crate::shell::env_policy::tool_var(session.tool_env(), BUDGET_VAR)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_BUDGET);
        Budget {
            limit,
            deadline: Instant::now() + limit,
            spent: AtomicBool::new(false),
        }
    }

    /// Whether the deadline has passed (remembered once it has).
    pub fn spent(&self) -> bool {
        if self.spent.load(Ordering::Relaxed) {
            return true;
        }
        let over = Instant::now() >= self.deadline;
        if over {
            self.spent.store(true, Ordering::Relaxed);
        }
        over
    }

    /// The note for a result cut short, if it was.
    pub fn note(&self) -> Option<String> {
        self.spent.load(Ordering::Relaxed).then(|| {
            format!(
                "(The search stopped at its time budget of {} ms: these results are partial. \
                 Search a narrower path or pattern for the rest.)",
                self.limit.as_millis()
            )
        })
    }
}
