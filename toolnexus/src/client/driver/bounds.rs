//! The two ways a run is cut short from outside: the whole-run timeout and the host's
//! cancellation token. Both drop the run's future, which aborts the in-flight request
//! (reqwest closes its connection) and any running tool; neither is ever retried.

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::client::error::ClientError;

/// Runs `work` within `timeout` and `cancel`; with neither set it is awaited as it is.
pub(super) async fn bounded<T>(
    timeout: Option<Duration>,
    cancel: Option<&CancellationToken>,
    work: impl Future<Output = Result<T, ClientError>>,
) -> Result<T, ClientError> {
    if timeout.is_none() && cancel.is_none() {
        return work.await;
    }
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
}
