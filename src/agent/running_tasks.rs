//! The background agents still running, by id, each with the token that stops it: filled by
//! `background.rs` as runs start and end, read by the core when the person stops one from
//! `/tasks` ([`Op::StopTask`](crate::protocol::Op::StopTask)). Apart from both so neither
//! refers to the other.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use crate::protocol::Event;
use crate::session::context::EventSender;

#[derive(Default)]
pub(crate) struct RunningTasks {
    tokens: Mutex<HashMap<String, CancellationToken>>,
}

impl RunningTasks {
    /// A poisoned lock only means a run's task panicked; the map is still usable.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn insert(&self, id: &str, token: CancellationToken) {
        self.lock().insert(id.to_string(), token);
    }

    pub fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    /// The person stops run `id`; a notice on `events` when there is no such run going.
    pub fn stop(&self, id: &str, events: &EventSender) {
        match self.lock().get(id) {
            Some(token) => token.cancel(),
            None => events.send(Event::Notice {
                message: format!("No background agent {id} is running."),
            }),
        }
    }
}
