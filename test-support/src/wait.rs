//! Waiting for what another task, thread or process does, by looking again until it
//! holds: one loop for every suite, so each waits the same way and says what it waited for
//! when it gives up. The pause is tokio's, so a test on paused time moves through it.
//!
//! A limit here is patience for a slow machine, never the behaviour under test: a test of
//! a deadline moves a [`TestClock`](crate::clock::TestClock) instead.

use std::future::Future;
use std::time::Duration;

/// How long to pause between two looks.
pub const PAUSE: Duration = Duration::from_millis(20);

/// Looks with `check` until it yields a value, for up to `limit` (and once more at the
/// end); `None` when it never did, for a caller that reports what it saw instead.
pub async fn within<T, F, Fut>(limit: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(found) = check().await {
            return Some(found);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(PAUSE).await;
    }
}

/// Looks with `check` until it holds; panics naming `what` when `limit` passes first.
pub async fn eventually<F, Fut>(what: &str, limit: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let held = within(limit, || {
        let looked = check();
        async move { looked.await.then_some(()) }
    })
    .await;
    assert!(
        held.is_some(),
        "timed out after {limit:?} waiting for {what}"
    );
}

/// [`within`] for a test without a runtime (its thread blocks between looks).
pub fn within_blocking<T>(limit: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(found) = check() {
            return Some(found);
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(PAUSE);
    }
}

/// [`eventually`] for a test without a runtime (its thread blocks between looks).
pub fn eventually_blocking(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let held = within_blocking(limit, || check().then_some(()));
    assert!(
        held.is_some(),
        "timed out after {limit:?} waiting for {what}"
    );
}
