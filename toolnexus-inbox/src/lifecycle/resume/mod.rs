//! The workers' side of an [`Inbox`]: claiming an answered run under a lease, resuming it
//! with `run_with_answers` (every request of it answered), and recording what came of it — fenced by the claim's attempt
//! number, so a worker whose lease lapsed can never write over the worker that took over.

mod journal;

use std::future::IntoFuture;
use std::time::Duration;

use toolnexus::{Answer, ClientError, LlmClient, Message, RunResult, RunStatus, Toolkit};
use tracing::Instrument;

use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::lifecycle::park::ToPark;
use crate::notify::Outcome;
use crate::records::audit::{AuditKind, Record};
use crate::records::parked::Resumed;
use crate::records::spans;
use crate::records::state::ParkedState;
use crate::store::requests::{self, StoredAnswer};
use crate::store::runs::{self, Claimed, Failure, Finished, Terms};
use crate::store::{json, Tx};
use journal::ClaimJournal;

/// A run this worker holds: its stored parts, and the attempt number that fences its writes.
pub(crate) struct Claim {
    id: String,
    fence: i64,
    turns: i64,
    messages: String,
    /// Each request's id and stored answer, in call order.
    answers: Vec<StoredAnswer>,
}

impl Claim {
    /// The claimed run's row, and its requests' answers read after it: an answered run's
    /// answers never change, so this second read sees what the claim saw.
    pub(crate) async fn read(inbox: &Inbox, claimed: Claimed) -> Result<Self, InboxError> {
        let answers = requests::answers_of(&inbox.inner.store.pool, &claimed.id).await?;
        Ok(Claim {
            id: claimed.id,
            fence: claimed.attempts,
            turns: claimed.turns,
            messages: claimed.messages,
            answers,
        })
    }

    /// The stored parts, read back; `Err` names what is unreadable.
    fn decode(&self) -> Result<(Vec<Message>, Vec<Answer>), String> {
        let messages: Vec<Message> =
            serde_json::from_str(&self.messages).map_err(|e| format!("transcript: {e}"))?;
        if self.answers.is_empty() {
            return Err("requests: none stored for the run".to_owned());
        }
        let answers = self
            .answers
            .iter()
            .map(|StoredAnswer { id, answer, .. }| match answer {
                Some(text) => {
                    serde_json::from_str(text).map_err(|e| format!("answer to `{id}`: {e}"))
                }
                None => Err(format!("answer to `{id}`: missing on an answered run")),
            })
            .collect::<Result<Vec<Answer>, String>>()?;
        Ok((messages, answers))
    }
}

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
    ///     is_error: true, pending: Some(request.clone()), pending_more: vec![], answered: vec![], approval: None, trace: None, call_digest: None,
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

    /// Claims the run of request `id`, or else the oldest run ready to resume, and, in the
    /// same transaction, appends the claim to the run's audit trail.
    pub(crate) async fn claim(&self, id: Option<&str>) -> Result<Option<Claimed>, InboxError> {
        let now = self.now();
        let terms = Terms {
            agent: &self.inner.agent,
            now,
            lease_until: now.saturating_add(self.lease_ms()),
            max_attempts: i64::from(self.inner.max_attempts),
        };
        let store = &self.inner.store;
        if let Some(claims) = store.dialect.audited_claims {
            let (sql, request) = match id {
                Some(id) => (claims.run_of, Some(id)),
                None => (claims.next, None),
            };
            let worker = &self.inner.worker;
            return runs::claim_audited(&store.pool, sql.as_str(), &terms, request, worker).await;
        }
        let mut tx = store.write().await?;
        let claimed = match id {
            Some(id) => runs::claim_run_of(&mut tx, &terms, id).await?,
            None => runs::claim_next(&mut tx, store.dialect, &terms).await?,
        };
        if let Some(claimed) = &claimed {
            Record {
                actor: Some(&self.inner.worker),
                attempt: Some(claimed.attempts),
                ..Record::new(&claimed.id, AuditKind::Claimed)
            }
            .append(&mut tx, now)
            .await?;
        }
        tx.commit().await?;
        Ok(claimed)
    }

    pub(crate) async fn why_unclaimable(&self, id: &str) -> Result<InboxError, InboxError> {
        let requests = self.run_requests(id).await?;
        let Some(parked) = requests.first().filter(|p| p.agent == self.inner.agent) else {
            return Ok(InboxError::UnknownRequest(id.to_owned()));
        };
        if let Some(open) = requests.iter().find(|p| p.state == ParkedState::Waiting) {
            return Ok(InboxError::NotAnswered(open.id().to_owned()));
        }
        let id = id.to_owned();
        Ok(match parked.run_state {
            ParkedState::Done | ParkedState::Failed => InboxError::Finished {
                id,
                state: parked.run_state,
            },
            _ if parked.attempts >= self.inner.max_attempts => {
                self.give_up(&parked.run, "no attempts left").await?;
                InboxError::Finished {
                    id,
                    state: ParkedState::Failed,
                }
            }
            _ => InboxError::Claimed(id),
        })
    }

    /// Marks `Failed` the runs of this agent whose last allowed attempt died with its
    /// worker (its lease lapsed with no attempts left). Returns how many.
    pub async fn fail_exhausted(&self) -> Result<usize, InboxError> {
        let now = self.now();
        let mut tx = self.inner.store.write().await?;
        let max = i64::from(self.inner.max_attempts);
        let failed = runs::fail_exhausted(&mut tx, &self.inner.agent, max, now).await?;
        for run in &failed {
            self.failed(&run.id, Some(run.attempts), &run.last_error)
                .append(&mut tx, now)
                .await?;
            self.notify_resumed(&mut tx, &run.id, Outcome::Failed(&run.last_error))
                .await?;
        }
        tx.commit().await?;
        self.wake_deliverers();
        self.wake_outcome_waiters();
        Ok(failed.len())
    }

    async fn give_up(&self, id: &str, why: &str) -> Result<(), InboxError> {
        let now = self.now();
        let mut tx = self.inner.store.write().await?;
        if runs::give_up(&mut tx, id, why, now).await? {
            self.failed(id, None, why).append(&mut tx, now).await?;
            self.notify_resumed(&mut tx, id, Outcome::Failed(why))
                .await?;
        }
        tx.commit().await?;
        self.wake_deliverers();
        self.wake_outcome_waiters();
        Ok(())
    }

    /// Tells the webhooks how resuming run `run` ended, inside the transaction recording it.
    async fn notify_resumed(
        &self,
        tx: &mut Tx,
        run: &str,
        outcome: Outcome<'_>,
    ) -> Result<(), InboxError> {
        let notice = || self.notice_resumed(run, &self.inner.agent, outcome);
        self.enqueue(tx, notice, None).await
    }

    /// The audit entry of run `run` given up, by this handle's worker.
    fn failed<'a>(&'a self, run: &'a str, attempt: Option<i64>, why: &'a str) -> Record<'a> {
        Record {
            actor: Some(&self.inner.worker),
            attempt,
            detail: Some(why),
            ..Record::new(run, AuditKind::Failed)
        }
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

    /// Stores the result: a run that ended keeps it on its row; a run that halted again
    /// has its new requests parked and the old row marked done, in one transaction.
    async fn record_outcome(
        &self,
        claim: &Claim,
        result: RunResult,
        answers: Vec<Answer>,
    ) -> Result<Resumed, InboxError> {
        let stored = json(&claim.id, &result)?;
        let now = self.now();
        let next = match (&result.status, &result.pending) {
            (RunStatus::Pending, Some(request)) => Some(request.id.clone()),
            _ => None,
        };
        let mut parked = match next
            .as_ref()
            .map(|_| ToPark::of(self, &result, claim.turns))
        {
            Some(Err(e)) => {
                // The new request cannot be kept (an unreadable expiresAt): resuming again
                // would only meet it again.
                self.record_failure(claim, &e.to_string(), true).await?;
                return Err(e);
            }
            Some(Ok(parked)) => Some(parked),
            None => None,
        };
        let done = Finished {
            run: &claim.id,
            fence: claim.fence,
            result: &stored,
            next: next.as_deref(),
            at: now,
        };
        let mut tx = self.inner.store.write().await?;
        if !runs::finish(&mut tx, &done).await? {
            return Err(InboxError::Claimed(claim.id.clone()));
        }
        crate::store::journal::clear(&mut tx, &claim.id).await?;
        let outcome = match &next {
            Some(next) => format!("halted again on request {next}"),
            None => result.status.as_str().to_owned(),
        };
        Record {
            actor: Some(&self.inner.worker),
            attempt: Some(claim.fence),
            detail: Some(&outcome),
            ..Record::new(&claim.id, AuditKind::Resumed)
        }
        .append(&mut tx, now)
        .await?;
        let told = match &next {
            Some(next) => Outcome::HaltedAgain(next),
            None => Outcome::Done(&result.text),
        };
        self.notify_resumed(&mut tx, &claim.id, told).await?;
        if let Some(parked) = &mut parked {
            // The run it became was asked for by the same person.
            parked.requested_by = runs::requester_of(&mut tx, &claim.id).await?;
            if let Some(taken) = parked.insert(&mut tx, self).await? {
                tx.rollback().await?;
                let why =
                    format!("the resumed run halted on request `{taken}`, which is already parked");
                self.record_failure(claim, &why, true).await?;
                return Err(InboxError::AlreadyParked(taken));
            }
        }
        tx.commit().await?;
        self.wake_deliverers();
        self.wake_outcome_waiters();
        Ok(resumed(claim, result, answers, next))
    }

    /// Gives the run up, refused: a call one of its answers would settle is not the call
    /// it was parked for, so no attempt could ever run it. The audit trail records the
    /// refusal, then the failure.
    async fn refuse(&self, claim: &Claim, changed: ClientError) -> Result<InboxError, InboxError> {
        let request = match &changed {
            ClientError::CallChanged { request, .. } => Some(request.as_str()),
            _ => None,
        };
        self.fail_attempt(claim, &changed.to_string(), true, request)
            .await?;
        Ok(InboxError::Resume(changed))
    }

    /// Records a failed attempt: back to `Answered` after the lease, or `Failed` when the
    /// attempts are spent or the row cannot be resumed at all (`fatal`).
    async fn record_failure(
        &self,
        claim: &Claim,
        error: &str,
        fatal: bool,
    ) -> Result<(), InboxError> {
        self.fail_attempt(claim, error, fatal, None).await
    }

    /// [`Inbox::record_failure`], with a `Refused` entry for request `refused` first.
    async fn fail_attempt(
        &self,
        claim: &Claim,
        error: &str,
        fatal: bool,
        refused: Option<&str>,
    ) -> Result<(), InboxError> {
        let now = self.now();
        let exhausted = fatal || claim.fence >= i64::from(self.inner.max_attempts);
        let (then, retry_at) = if exhausted {
            (ParkedState::Failed, None)
        } else {
            (
                ParkedState::Answered,
                Some(now.saturating_add(self.lease_ms())),
            )
        };
        tracing::warn!(id = %claim.id, attempt = claim.fence, state = %then, error, "a resume failed");
        let failure = Failure {
            run: &claim.id,
            fence: claim.fence,
            then,
            error,
            retry_at,
            at: now,
        };
        let mut tx = self.inner.store.write().await?;
        if !runs::fail_attempt(&mut tx, &failure).await? {
            return Err(InboxError::Claimed(claim.id.clone()));
        }
        if let Some(request) = refused {
            Record {
                request: Some(request),
                actor: Some(&self.inner.worker),
                attempt: Some(claim.fence),
                detail: Some(error),
                ..Record::new(&claim.id, AuditKind::Refused)
            }
            .append(&mut tx, now)
            .await?;
        }
        let entry = if exhausted {
            self.failed(&claim.id, Some(claim.fence), error)
        } else {
            Record {
                kind: AuditKind::AttemptFailed,
                ..self.failed(&claim.id, Some(claim.fence), error)
            }
        };
        entry.append(&mut tx, now).await?;
        if exhausted {
            self.notify_resumed(&mut tx, &claim.id, Outcome::Failed(error))
                .await?;
        }
        tx.commit().await?;
        self.wake_deliverers();
        self.wake_outcome_waiters();
        Ok(())
    }
}

/// The first answered request whose call the transcript no longer shows as it was parked
/// (the stored tool and arguments, kept apart from the transcript), as the error refusing
/// it. A request whose placeholder or call the transcript lacks is left to the resume,
/// which refuses such a transcript itself.
fn changed_call(messages: &[Message], stored: &[StoredAnswer]) -> Option<ClientError> {
    let placeholders = match messages.last()? {
        Message::ToolResults { results } => results,
        _ => return None,
    };
    let calls = messages.iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => Some(tool_calls),
        _ => None,
    })?;
    stored.iter().find_map(|parked| {
        let (tool, args) = (parked.tool_name.as_deref()?, parked.tool_args.as_deref()?);
        let call_id = placeholders
            .iter()
            .find(|p| p.requests().any(|r| r.id == parked.id))?
            .call_id
            .as_str();
        let call = calls.iter().find(|c| c.id == call_id)?;
        let as_parked = serde_json::from_str::<serde_json::Value>(args)
            .map(|args| toolnexus::call_digest(tool, &args));
        let now = toolnexus::call_digest(&call.name, &call.args);
        (as_parked.ok() != Some(now)).then(|| ClientError::CallChanged {
            call: call.id.clone(),
            tool: call.name.clone(),
            request: parked.id.clone(),
        })
    })
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

fn resumed(
    claim: &Claim,
    result: RunResult,
    answers: Vec<Answer>,
    next: Option<String>,
) -> Resumed {
    Resumed {
        id: claim.id.clone(),
        answers,
        result,
        next,
        attempt: u32::try_from(claim.fence).unwrap_or(u32::MAX),
    }
}
