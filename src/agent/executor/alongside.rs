//! Running a piece of synchronous work while a future makes progress, on the same task: the
//! future is polled once first, so whatever it starts (a hook's processes) runs while the work
//! computes. The permission check's stage 3 uses it: the PreToolUse hooks and the call's
//! analysis (paths, shell commands) start together instead of one after the other.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;

/// `fut`'s output and `work`'s result. `fut` is polled once before `work` runs, then awaited;
/// a future that finishes on its first poll (no hook configured) costs nothing more.
pub async fn alongside<F: Future, T>(fut: F, work: impl FnOnce() -> T) -> (F::Output, T) {
    let mut fut = pin!(fut);
    let first = poll_fn(|cx| {
        Poll::Ready(match fut.as_mut().poll(cx) {
            Poll::Ready(out) => Some(out),
            Poll::Pending => None,
        })
    })
    .await;
    let done = work();
    let out = match first {
        Some(out) => out,
        None => fut.await,
    };
    (out, done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The future waits for something only the work does: run one after the other this would
    /// never finish.
    #[tokio::test]
    async fn the_work_runs_while_the_future_waits() {
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        let both = alongside(async { rx.await.unwrap_or(0) + 1 }, move || {
            tx.send(41).is_ok()
        });
        let (out, sent) = tokio::time::timeout(Duration::from_secs(10), both)
            .await
            .expect("the future should be woken by the work's send");
        assert!(sent);
        assert_eq!(out, 42);
    }

    /// The future has started before the work runs: its first poll happened.
    #[tokio::test]
    async fn the_future_starts_first() {
        let order = std::sync::Mutex::new(Vec::new());
        let ((), ()) = alongside(
            async {
                order.lock().unwrap().push("future started");
                tokio::task::yield_now().await;
                order.lock().unwrap().push("future done");
            },
            || order.lock().unwrap().push("work"),
        )
        .await;
        assert_eq!(
            *order.lock().unwrap(),
            ["future started", "work", "future done"]
        );
    }

    #[tokio::test]
    async fn a_ready_future_is_not_polled_again() {
        let (out, work) = alongside(async { 7 }, || "w").await;
        assert_eq!((out, work), (7, "w"));
    }
}
