//! Strategies, clients and guards shared by the reliability tests.

use std::future::Future;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use toolnexus::testing::RecordedRequest;

/// Hang guard for waits that normally take milliseconds.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// Serializes `value` and loads it back; it must come back equal.
pub fn round_trip<T>(value: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let text = serde_json::to_string(value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T = serde_json::from_str(&text)
        .map_err(|e| TestCaseError::fail(format!("{e}: does not load back from {text}")))?;
    prop_assert_eq!(&back, value);
    Ok(())
}

/// How many polls a future that never waits on I/O may take: far more than a tool answering
/// at once needs, few enough that one that does wait fails fast instead of hanging.
const MAX_POLLS: usize = 10_000;

/// Polls a future that never waits on I/O (a tool answering at once) to completion; panics
/// if it is still pending after [`MAX_POLLS`] polls.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..MAX_POLLS {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("the future was still pending after {MAX_POLLS} polls: it waits on something");
}

pub use crate::common::{echo_toolkit, on, STYLES};

/// What the last message of a request says, in either wire format: the tool result it
/// carries, or else the user's text.
pub enum Last {
    ToolResult(String),
    User(String),
}

pub fn last_message(req: &RecordedRequest) -> Last {
    // Each run here is one prompt and at most one tool turn: a request with results is the
    // one continuing that turn, in whichever style it speaks.
    if let Some((_, output)) = req.tool_results().pop() {
        return Last::ToolResult(output);
    }
    let last = req.messages().last().cloned().unwrap_or(Value::Null);
    Last::User(last["content"].as_str().unwrap_or_default().to_owned())
}

/// A reproducible pseudo-random delay of up to `max_ms` milliseconds, derived from `seed`.
pub fn jitter(seed: &str, max_ms: u64) -> Duration {
    let mut h = DefaultHasher::new();
    seed.hash(&mut h);
    Duration::from_millis(h.finish() % (max_ms + 1))
}

/// Sets its flag when dropped: put one in a future to learn that the future was dropped.
pub struct DropFlag(pub Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Waits until the runtime runs no task at all (a hang guard bounds the wait).
pub async fn no_task_left() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let settled = tokio::time::timeout(PATIENCE, async {
        while metrics.num_alive_tasks() > 0 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
    assert!(
        settled.is_ok(),
        "{} task(s) still alive",
        metrics.num_alive_tasks()
    );
}
