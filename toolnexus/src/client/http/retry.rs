//! When a failed model request is tried again, and after how long.
//!
//! The default policy retries the request failures [`ClientError::is_transient`] names
//! (HTTP 408, 409, 429 and 5xx) and connection failures. A host can
//! replace it with [`LlmClientBuilder::on_error`](crate::LlmClientBuilder::on_error); either
//! way at most `retries` retries happen, and aborts (timeout, cancellation) and oversized
//! replies are never retried.
//!
//! The wait before a retry is the provider's `Retry-After` when it is whole delay-seconds
//! (digits only, `0` = at once), else an exponential backoff with jitter; every wait is
//! capped by [`max_retry_delay`](crate::LlmClientBuilder::max_retry_delay).

use std::sync::Arc;
use std::time::Duration;

use crate::client::error::ClientError;

/// What to do after a failed model request; returned by the
/// [`on_error`](crate::LlmClientBuilder::on_error) classifier.
///
/// ```
/// use std::time::Duration;
/// use toolnexus::{ClientError, LlmClient, RetryDecision};
///
/// let client = LlmClient::builder()
///     .model("gpt-4o-mini")
///     .api_key("test-key")
///     // Also retry a gateway's 408, otherwise keep the default policy.
///     .on_error(|error: &ClientError| match error {
///         ClientError::Status { status: 408, .. } => RetryDecision::RetryAfter(Duration::from_millis(200)),
///         other => RetryDecision::standard(other),
///     })
///     .build()
///     .unwrap();
/// # drop(client);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryDecision {
    /// Try again (while retries remain) after the provider's `Retry-After` when it is usable,
    /// else after the exponential backoff.
    Retry,
    /// Try again (while retries remain) after this delay, capped by
    /// [`max_retry_delay`](crate::LlmClientBuilder::max_retry_delay).
    RetryAfter(Duration),
    /// Give up: the run fails with this error.
    Fail,
}

impl RetryDecision {
    /// The default policy: retry the request failures that
    /// [`ClientError::is_transient`] names (HTTP 408, 409, 429, 5xx, network failures);
    /// fail on anything else.
    pub fn standard(error: &ClientError) -> Self {
        match error {
            ClientError::Status { .. } | ClientError::Network(_) if error.is_transient() => {
                RetryDecision::Retry
            }
            _ => RetryDecision::Fail,
        }
    }
}

/// A host's retry classifier.
pub(crate) type Classifier = Arc<dyn Fn(&ClientError) -> RetryDecision + Send + Sync>;

/// Caps the exponent so a large retry count cannot overflow the delay.
const MAX_BACKOFF_DOUBLINGS: u32 = 16;

/// The retry settings of a client.
pub(crate) struct RetryPolicy {
    pub(crate) retries: u32,
    pub(crate) base: Duration,
    pub(crate) max_delay: Duration,
    pub(crate) classifier: Option<Classifier>,
}

impl RetryPolicy {
    /// The wait before retry number `attempt + 1`, or `None` to give up, when a request may
    /// be retried `retries` times (the client's count, or a run's
    /// [`RunOptions::retries`](crate::RunOptions::retries)). Only request failures (an error
    /// status, a network failure) get here.
    pub(crate) fn delay(
        &self,
        retries: u32,
        error: &ClientError,
        attempt: u32,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        if attempt >= retries {
            return None;
        }
        let decision = match &self.classifier {
            Some(classify) => classify(error),
            None => RetryDecision::standard(error),
        };
        let delay = match decision {
            RetryDecision::Retry => retry_after.unwrap_or_else(|| self.backoff(attempt)),
            RetryDecision::RetryAfter(delay) => delay,
            RetryDecision::Fail => return None,
        };
        Some(delay.min(self.max_delay))
    }

    /// `base * 2^attempt`, half of it fixed and half random, so many clients failing
    /// together do not retry in lockstep.
    fn backoff(&self, attempt: u32) -> Duration {
        let full = self
            .base
            .saturating_mul(2u32.pow(attempt.min(MAX_BACKOFF_DOUBLINGS)));
        let half = full / 2;
        half + half.mul_f64(jitter())
    }
}

/// Only whole delay-seconds count (`0` = now). An HTTP date, a sign, a fraction, or a
/// number too large for a `u64` is ignored, so the backoff applies.
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok().map(Duration::from_secs)
}

/// A fraction in `[0, 1)` from a v4 uuid's random bits, to avoid a dependency on `rand`.
fn jitter() -> f64 {
    let bits = (uuid::Uuid::new_v4().as_u128() as u64) >> 11;
    bits as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(retries: u32) -> RetryPolicy {
        RetryPolicy {
            retries,
            base: Duration::from_millis(100),
            max_delay: Duration::from_secs(60),
            classifier: None,
        }
    }

    #[test]
    fn retry_after_accepts_only_delay_seconds() {
        assert_eq!(parse_retry_after("0"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("1.5"), None);
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("+1"), None);
        assert_eq!(parse_retry_after(""), None);
        assert_eq!(parse_retry_after("99999999999999999999999999"), None);
    }

    #[test]
    fn every_wait_is_capped_and_backoff_never_overflows() {
        let p = policy(u32::MAX);
        let busy = ClientError::Status {
            status: 503,
            excerpt: String::new(),
        };
        let huge = Some(Duration::from_secs(u64::MAX));
        assert_eq!(
            p.delay(p.retries, &busy, 0, huge),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            p.delay(p.retries, &busy, 1000, None),
            Some(Duration::from_secs(60))
        );
        let first = p.delay(p.retries, &busy, 0, None).unwrap();
        assert!(first >= Duration::from_millis(50) && first < Duration::from_millis(100));
    }

    #[test]
    fn the_retry_budget_and_the_decision_bound_retries() {
        let bad = ClientError::Status {
            status: 400,
            excerpt: String::new(),
        };
        let net = ClientError::Network("reset".into());
        assert_eq!(policy(2).delay(2, &bad, 0, None), None);
        assert!(policy(2).delay(2, &net, 1, None).is_some());
        assert_eq!(policy(2).delay(2, &net, 2, None), None);
        let mut custom = policy(2);
        custom.classifier = Some(Arc::new(|_: &ClientError| {
            RetryDecision::RetryAfter(Duration::from_millis(7))
        }));
        assert_eq!(
            custom.delay(custom.retries, &bad, 0, None),
            Some(Duration::from_millis(7))
        );
    }

    #[test]
    fn jitter_stays_in_unit_interval() {
        for _ in 0..1000 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }
}
