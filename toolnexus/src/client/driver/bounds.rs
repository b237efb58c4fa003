//! The two ways a run is cut short from outside: the whole-run timeout and the host's
//! cancellation token. Both drop the run's future, which aborts the in-flight request
//! (reqwest closes its connection) and any running tool; neither is ever retried.

use std::future::Future;
use std::time::Duration;

use futures::future::Either;
use tokio_util::sync::CancellationToken;

use crate::client::error::ClientError;

/// Runs `work` within `timeout` and `cancel`; with neither set it is `work` itself.
///
/// Not an `async fn`, and `work` is boxed before the bounded case's `async` block takes it:
/// either would hold `work`, the whole run, twice in the state (as what it was given and
/// as what it awaits), doubling what every run in flight keeps and copies.
pub(super) fn bounded<'a, T: 'a>(
    timeout: Option<Duration>,
    cancel: Option<&'a CancellationToken>,
    work: impl Future<Output = Result<T, ClientError>> + 'a,
) -> impl Future<Output = Result<T, ClientError>> + 'a {
    if timeout.is_none() && cancel.is_none() {
        return Either::Left(work);
    }
    let work = Box::pin(work);
    Either::Right(async move {
        let expired = async {
            match timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let cancelled = async {
            match cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        // Biased so a token cancelled before the start stops the run before it sends anything.
        tokio::select! {
            biased;
            () = cancelled => Err(ClientError::Cancelled),
            () = expired => Err(ClientError::TimedOut),
            result = work => result,
        }
    })
}
