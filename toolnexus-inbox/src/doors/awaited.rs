//! "Resume this run, or wait for whoever resumes it": what every door does once a run's
//! requests are answered. The answer may have come through this door or another (the page,
//! a second server, a worker), so the door claims the run if it can, and otherwise waits
//! for the claim holder's outcome — taking the run over if that holder's lease lapses.

use toolnexus::{Answer, ClientError, LlmClient, Message, RunResult, Toolkit};

use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::lifecycle::resume::claim::Claim;
use crate::records::parked::Parked;

/// A run ready for this handle: claimed by it, or settled by someone.
enum Turn {
    Claimed(Claim),
    Settled(Box<Parked>),
}

impl Inbox {
    /// Resumes run `run` (any of its requests' ids) with `client` and `tk` as
    /// [`resume`](Self::resume) does, or, when another worker holds it, waits for that
    /// worker's outcome; either way returns the run's first request as it then stands:
    /// `Done` with its [`result`](Parked::result), or `Failed` with its
    /// [`last_error`](Parked::last_error). A run already finished returns at once.
    ///
    /// Refused as [`resume`](Self::resume) refuses ([`InboxError::UnknownRequest`],
    /// [`InboxError::NotAnswered`]); this handle's own attempt failing is
    /// [`InboxError::Resume`], recorded and retried after the lease as any attempt is.
    /// While it waits it takes the run over when the holder's lease lapses, so a holder
    /// that died does not leave it waiting for ever.
    pub async fn resume_or_await(
        &self,
        run: &str,
        client: &LlmClient,
        tk: &Toolkit,
    ) -> Result<Parked, InboxError> {
        match self.turn(run).await? {
            Turn::Claimed(claim) => {
                self.run_claim(claim, client, tk).await?;
            }
            Turn::Settled(parked) => return Ok(*parked),
        }
        self.settled(run).await
    }

    /// [`resume_or_await`](Self::resume_or_await), going on with `settle` instead of a
    /// model when this handle claims the run, as [`resume_with`](Self::resume_with) does.
    pub async fn resume_with_or_await<F, Fut>(
        &self,
        run: &str,
        settle: F,
    ) -> Result<Parked, InboxError>
    where
        F: FnOnce(Vec<Message>, Vec<Answer>) -> Fut,
        Fut: std::future::Future<Output = Result<RunResult, ClientError>>,
    {
        match self.turn(run).await? {
            Turn::Claimed(claim) => {
                self.settle_claim(claim, settle).await?;
            }
            Turn::Settled(parked) => return Ok(*parked),
        }
        self.settled(run).await
    }

    /// Claims `run`, or waits until it is settled or can be claimed.
    async fn turn(&self, run: &str) -> Result<Turn, InboxError> {
        loop {
            // Registered before the claim, so an outcome recorded meanwhile still wakes it.
            let finished = self.inner.finished.notified();
            tokio::pin!(finished);
            finished.as_mut().enable();
            if let Some(claimed) = self.claim(Some(run)).await? {
                return Ok(Turn::Claimed(Claim::read(self, claimed).await?));
            }
            match self.why_unclaimable(run).await? {
                InboxError::Claimed(_) => {}
                InboxError::Finished { .. } => {
                    return self.settled(run).await.map(|p| Turn::Settled(Box::new(p)))
                }
                refused => return Err(refused),
            }
            tokio::select! {
                _ = finished => {}
                _ = tokio::time::sleep(self.inner.poll_interval) => {}
            }
        }
    }

    async fn settled(&self, run: &str) -> Result<Parked, InboxError> {
        self.get(run)
            .await?
            .ok_or_else(|| InboxError::UnknownRequest(run.to_owned()))
    }
}
