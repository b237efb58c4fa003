//! The workers' side of an [`Inbox`]: claiming an answered run under a lease ([`claim`]),
//! holding it to the calls its requests were parked for ([`check`]), resuming it with
//! `run_with_answers` (every request of it answered) while its steps are journaled
//! ([`journal`]), and recording what came of it ([`outcome`]) — fenced by the claim's
//! attempt number, so a worker whose lease lapsed can never write over the worker that took
//! over. This file drives those parts in order and renews the lease meanwhile.

mod check;
pub(crate) mod claim;
mod journal;
mod outcome;

use std::future::IntoFuture;
use std::time::Duration;

use toolnexus::{Answer, ClientError, LlmClient, Message, RunResult, Toolkit};
use tracing::Instrument;

use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::records::parked::Resumed;
use crate::records::spans;
use crate::store::runs;
use check::changed_call;
use claim::Claim;
use journal::ClaimJournal;

impl Inbox {
    /// Claims the oldest answered run of this handle's agent (one whose every request is
    /// answered) and resumes it with `run_with_answers`, giving it all its answers at once.
    /// `Ok(None)`: nothing is waiting to be resumed.
    ///
    /// While the run goes on, the claim's lease is renewed; if it is lost anyway (the
    /// database was unreachable for longer than the lease and another worker took over),
    /// the run is dropped and the result is [`InboxError::Claimed`]. A run that fails
    /// records its error and is retried after the lease ([`InboxError::Resume`]); a row that
    /// cannot be read is marked `Failed` ([`InboxError::Corrupt`]), and so is a run whose
    /// transcript no longer shows the call a request was parked for, refused before anything
    /// ran (`InboxError::Resume(ClientError::CallChanged { .. })`, audited as
    /// [`AuditKind::Refused`](crate::AuditKind::Refused)). Either way the next call goes on
    /// with the other runs.
    pub async fn resume_next(
        &self,
        client: &LlmClient,
        tk: &Toolkit,
    ) -> Result<Option<Resumed>, InboxError> {
        match self.claim(None).await? {
            Some(claimed) => self
                .run_claim(Claim::read(self, claimed).await?, client, tk)
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    /// Claims the run parked on request `id` (any of its requests, of this handle's agent)
    /// and resumes it.
    ///
    /// Refused, changing nothing: [`InboxError::UnknownRequest`],
    /// [`InboxError::NotAnswered`] (a request of the run still waits: it names the first), [`InboxError::Claimed`] (another worker
    /// holds it, or a failed attempt's back-off runs), [`InboxError::Finished`].
    pub async fn resume(
        &self,
        id: &str,
        client: &LlmClient,
        tk: &Toolkit,
    ) -> Result<Resumed, InboxError> {
        match self.claim(Some(id)).await? {
            Some(claimed) => {
                self.run_claim(Claim::read(self, claimed).await?, client, tk)
                    .await
            }
            None => Err(self.why_unclaimable(id).await?),
        }
    }

    /// Claims the run parked on request `id` like [`resume`](Self::resume), but goes on
    /// with `settle` instead of a model: it is handed the run's transcript and every
    /// request's answer, in call order, and returns what the run came to. For a host whose
    /// parked runs are not a model's, such as a protocol server parking one tool call: the
    /// claim, its lease, the check that each answered call is still the call it was parked
    /// for, the recorded outcome, the audit trail and the webhooks are the inbox's as for
    /// any run. A result that halted again (`RunStatus::Pending`) has its new requests
    /// parked, under [`Resumed::next`]; an `Err` from `settle` is a failed attempt, retried
    /// after the lease as a model's would be.
    ///
    /// ```
    /// use toolnexus::{Answer, Message, Request, RunResult, RunStatus, ToolCall, ToolOutput, Usage};
    /// use toolnexus_inbox::{Inbox, ParkedState};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// // A run of the host's own: one call, waiting on one request.
    /// let request = Request::new("approval", "Delete report.txt?").with_id("delete-1");
    /// let call = ToolCall { id: "c1".into(), name: "delete".into(), args: serde_json::json!({"path": "report.txt"}) };
    /// let placeholder = ToolOutput {
    ///     call_id: "c1".into(), name: "delete".into(), output: request.prompt.clone(),
    ///     is_error: true, pending: Some(request.clone()), pending_more: vec![], answered: vec![], approval: None, trace: None, call_digest: None, resume: None,
    /// };
    /// let messages = vec![
    ///     Message::user("delete report.txt"),
    ///     Message::Assistant { content: String::new(), tool_calls: vec![call], state: None },
    ///     Message::ToolResults { results: vec![placeholder] },
    /// ];
    /// let halted = RunResult {
    ///     status: RunStatus::Pending, text: request.prompt.clone(), tool_calls: Vec::new(),
    ///     pending: Some(request.clone()), waiting: vec![request.clone()], limit: None,
    ///     turns: 0, usage: Usage::default(), messages, model: "none".into(),
    /// };
    /// let id = inbox.park(&halted).await?;
    /// inbox.answer_as(Answer::ok(&id), "ada@example.com").await?;
    ///
    /// let resumed = inbox
    ///     .resume_with(&id, |messages, answers| async move {
    ///         assert!(answers[0].ok);
    ///         Ok(RunResult { status: RunStatus::Done, text: "deleted".into(), pending: None, waiting: Vec::new(), messages, ..halted })
    ///     })
    ///     .await?;
    /// assert_eq!(resumed.result.text, "deleted");
    /// assert_eq!(inbox.get(&id).await?.map(|p| p.run_state), Some(ParkedState::Done));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn resume_with<F, Fut>(&self, id: &str, settle: F) -> Result<Resumed, InboxError>
    where
        F: FnOnce(Vec<Message>, Vec<Answer>) -> Fut,
        Fut: std::future::Future<Output = Result<RunResult, ClientError>>,
    {
        let Some(claimed) = self.claim(Some(id)).await? else {
            return Err(self.why_unclaimable(id).await?);
        };
        self.settle_claim(Claim::read(self, claimed).await?, settle)
            .await
    }

    /// Claims the oldest answered run of this handle's agent, like
    /// [`resume_next`](Self::resume_next), and goes on with `settle` as
    /// [`resume_with`](Self::resume_with) does: for a host that hands a run's answers on
    /// to where the run lives (another workflow engine) and polls for them under an agent
    /// name of its own. `Ok(None)`: nothing is waiting to be resumed.
    pub async fn resume_next_with<F, Fut>(&self, settle: F) -> Result<Option<Resumed>, InboxError>
    where
        F: FnOnce(Vec<Message>, Vec<Answer>) -> Fut,
        Fut: std::future::Future<Output = Result<RunResult, ClientError>>,
    {
        match self.claim(None).await? {
            Some(claimed) => self
                .settle_claim(Claim::read(self, claimed).await?, settle)
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    /// Goes on with a claimed run by `settle` ([`resume_with`](Self::resume_with)).
    pub(crate) async fn settle_claim<F, Fut>(
        &self,
        claim: Claim,
        settle: F,
    ) -> Result<Resumed, InboxError>
    where
        F: FnOnce(Vec<Message>, Vec<Answer>) -> Fut,
        Fut: std::future::Future<Output = Result<RunResult, ClientError>>,
    {
        let span = spans::resume(&self.inner.agent, &claim.id, claim.fence);
        let resumed = async {
            let (messages, answers) = self.opened(&claim).await?;
            let run = settle(messages, answers.clone());
            self.finish_claim(&claim, answers, run).await
        }
        .instrument(span.clone())
        .await;
        record_resume(&span, &resumed);
        resumed
    }

    /// Resumes a claimed run in its `inbox resume` span, which the resumed run's own span
    /// is a child of.
    pub(crate) async fn run_claim(
        &self,
        claim: Claim,
        client: &LlmClient,
        tk: &Toolkit,
    ) -> Result<Resumed, InboxError> {
        let span = spans::resume(&self.inner.agent, &claim.id, claim.fence);
        let resumed = self
            .run_claim_in_span(&claim, client, tk)
            .instrument(span.clone())
            .await;
        record_resume(&span, &resumed);
        resumed
    }

    async fn run_claim_in_span(
        &self,
        claim: &Claim,
        client: &LlmClient,
        tk: &Toolkit,
    ) -> Result<Resumed, InboxError> {
        let (messages, answers) = self.opened(claim).await?;
        let journal = ClaimJournal::open(self, &claim.id, claim.fence).await?;
        let run = client
            .run_with_answers(messages, answers.clone(), tk)
            .journal(&journal)
            .into_future();
        self.finish_claim(claim, answers, run).await
    }

    /// The claimed run's transcript and answers, read back and held to the calls their
    /// requests were parked for; a run that fails either is given up, and the error says
    /// why.
    async fn opened(&self, claim: &Claim) -> Result<(Vec<Message>, Vec<Answer>), InboxError> {
        let (messages, answers) = match claim.decode() {
            Ok(parts) => parts,
            Err(reason) => {
                self.record_failure(claim, &reason, true).await?;
                return Err(InboxError::Corrupt {
                    id: claim.id.clone(),
                    reason,
                });
            }
        };
        if let Some(changed) = changed_call(&messages, &claim.answers) {
            return Err(self.refuse(claim, changed).await?);
        }
        Ok((messages, answers))
    }

    /// Drives a claimed run's resume under its lease and records what it came to.
    async fn finish_claim(
        &self,
        claim: &Claim,
        answers: Vec<Answer>,
        run: impl std::future::Future<Output = Result<RunResult, ClientError>>,
    ) -> Result<Resumed, InboxError> {
        let outcome = match self.renewing(claim, run).await? {
            Some(outcome) => outcome,
            None => return Err(InboxError::Claimed(claim.id.clone())),
        };
        match outcome {
            Ok(result) => self.record_outcome(claim, result, answers).await,
            Err(e @ ClientError::CallChanged { .. }) => Err(self.refuse(claim, e).await?),
            Err(e) => {
                self.record_failure(claim, &e.to_string(), false).await?;
                Err(InboxError::Resume(e))
            }
        }
    }

    /// Drives the run while renewing the lease every third of it; `None` when the lease
    /// was lost (the run is dropped: its outcome could not be recorded anyway).
    async fn renewing(
        &self,
        claim: &Claim,
        run: impl std::future::Future<Output = Result<RunResult, ClientError>>,
    ) -> Result<Option<Result<RunResult, ClientError>>, InboxError> {
        let every = (self.inner.lease / 3).max(Duration::from_millis(5));
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        tokio::pin!(run);
        loop {
            tokio::select! {
                outcome = &mut run => return Ok(Some(outcome)),
                _ = ticks.tick() => {
                    let until = self.now().saturating_add(self.lease_ms());
                    let renewed =
                        runs::renew(&self.inner.store.pool, &claim.id, claim.fence, until).await;
                    match renewed {
                        Ok(false) => return Ok(None),
                        Ok(true) => {}
                        // The lease may still be ours; the recording at the end will tell.
                        Err(e) => tracing::warn!(id = %claim.id, error = %e, "could not renew a lease"),
                    }
                }
            }
        }
    }
}

/// Marks a resume's span with how it ended.
fn record_resume(span: &tracing::Span, resumed: &Result<Resumed, InboxError>) {
    match resumed {
        Ok(done) => {
            span.record("toolnexus.status", done.result.status.as_str());
        }
        Err(e) => spans::failed(span, e),
    }
}
