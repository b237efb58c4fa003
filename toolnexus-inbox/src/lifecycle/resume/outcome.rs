//! Recording what came of a resume: the result kept (and the run it halted into parked),
//! or the attempt failed, retried after the lease or given up; each with its audit entry
//! and its notification, in one transaction fenced by the claim's attempt number.

use toolnexus::{Answer, ClientError, RunResult, RunStatus};

use super::claim::Claim;
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::lifecycle::park::ToPark;
use crate::notify::Outcome;
use crate::records::audit::{AuditKind, Record};
use crate::records::parked::Resumed;
use crate::records::state::ParkedState;
use crate::store::runs::{self, Failure, Finished};
use crate::store::{json, Tx};

impl Inbox {
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

    pub(super) async fn give_up(&self, id: &str, why: &str) -> Result<(), InboxError> {
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
    pub(super) async fn notify_resumed(
        &self,
        tx: &mut Tx,
        run: &str,
        outcome: Outcome<'_>,
    ) -> Result<(), InboxError> {
        let notice = || self.notice_resumed(run, &self.inner.agent, outcome);
        self.enqueue(tx, notice, None).await
    }

    /// The audit entry of run `run` given up, by this handle's worker.
    pub(super) fn failed<'a>(
        &'a self,
        run: &'a str,
        attempt: Option<i64>,
        why: &'a str,
    ) -> Record<'a> {
        Record {
            actor: Some(&self.inner.worker),
            attempt,
            detail: Some(why),
            ..Record::new(run, AuditKind::Failed)
        }
    }

    /// Stores the result: a run that ended keeps it on its row; a run that halted again
    /// has its new requests parked and the old row marked done, in one transaction.
    pub(super) async fn record_outcome(
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
        let outcome = match &next {
            Some(next) => format!("halted again on request {next}"),
            None => result.status.as_str().to_owned(),
        };
        // A run that ended, with no webhook to tell: one statement where the engine has it.
        let store = &self.inner.store;
        if let Some(sql) = store.dialect.finish_audited
            && parked.is_none()
            && self.inner.targets.all.is_empty()
        {
            let worker = &self.inner.worker;
            match runs::finish_audited(&store.pool, sql.as_str(), &done, worker, &outcome).await? {
                Some(true) => {
                    self.wake_outcome_waiters();
                    return Ok(resumed(claim, result, answers, next));
                }
                Some(false) => return Err(InboxError::Claimed(claim.id.clone())),
                // Another entry of the run raced this one's number: the transaction below
                // reads it under the run's lock.
                None => {}
            }
        }
        // The same on SQLite: the transaction whole in one request.
        if let Some(sql) = store.dialect.finish_alone
            && parked.is_none()
            && self.inner.targets.all.is_empty()
        {
            let worker = &self.inner.worker;
            let mut conn = store.single().await?;
            let written =
                runs::finish_batched(&mut conn, sql.as_str(), &done, worker, &outcome).await;
            if !conn.settle(written)? {
                return Err(InboxError::Claimed(claim.id.clone()));
            }
            self.wake_outcome_waiters();
            return Ok(resumed(claim, result, answers, next));
        }
        let mut tx = store.write().await?;
        if let Some(sql) = store.dialect.finish_batched {
            let worker = &self.inner.worker;
            if !runs::finish_batched(&mut tx, sql, &done, worker, &outcome).await? {
                return Err(InboxError::Claimed(claim.id.clone()));
            }
        } else {
            if !runs::finish(&mut tx, &done).await? {
                return Err(InboxError::Claimed(claim.id.clone()));
            }
            crate::store::journal::clear(&mut tx, &claim.id).await?;
            Record {
                actor: Some(&self.inner.worker),
                attempt: Some(claim.fence),
                detail: Some(&outcome),
                ..Record::new(&claim.id, AuditKind::Resumed)
            }
            .append(&mut tx, now)
            .await?;
        }
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
    pub(super) async fn refuse(
        &self,
        claim: &Claim,
        changed: ClientError,
    ) -> Result<InboxError, InboxError> {
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
    pub(super) async fn record_failure(
        &self,
        claim: &Claim,
        error: &str,
        fatal: bool,
    ) -> Result<(), InboxError> {
        self.fail_attempt(claim, error, fatal, None).await
    }

    /// [`Inbox::record_failure`], with a `Refused` entry for request `refused` first.
    pub(super) async fn fail_attempt(
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
