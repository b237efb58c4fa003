//! A clock the test moves on, for code that takes one (`InboxBuilder::clock`): a lease or
//! a deadline lapses when the test says so, instead of after a wall-clock wait that a
//! loaded machine may stretch past what the test allows.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The system's time plus what the test has added; clones share the offset.
#[derive(Clone, Debug, Default)]
pub struct TestClock(Arc<AtomicU64>);

impl TestClock {
    /// The time it reads now.
    pub fn now(&self) -> SystemTime {
        SystemTime::now() + Duration::from_millis(self.0.load(Ordering::SeqCst))
    }

    /// Moves it on by `by`, for every holder of a clone.
    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.0.fetch_add(by, Ordering::SeqCst);
    }

    /// A reader of it, to hand to the code under test (`InboxBuilder::clock`).
    pub fn reader(&self) -> impl Fn() -> SystemTime + Send + Sync + 'static {
        let clock = self.clone();
        move || clock.now()
    }
}
