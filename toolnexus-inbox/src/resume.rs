//! The workers' side of an [`Inbox`]: claiming an answered run under a lease, resuming it
//! with `run_with_answers` (every request of it answered), and recording what came of it — fenced by the claim's attempt
//! number, so a worker whose lease lapsed can never write over the worker that took over.

use std::future::IntoFuture;
use std::time::Duration;

use sqlx::any::AnyRow;
use sqlx::{Connection, Row};
use toolnexus::{Answer, ClientError, LlmClient, Message, RunResult, RunStatus, Toolkit};
use tracing::Instrument;

use crate::audit::{AuditKind, Record};
use crate::inbox::{insert, lease_ms, to_json, ToPark};
use crate::notify::Outcome;
use crate::spans;
use crate::store::Engine;
use crate::{Inbox, InboxError, ParkedState, Resumed};

/// A claim: the row(s) matched by `$target` become `running` under this worker's lease
/// ($1, now being $2), and their attempt counter — the fencing token — goes up by one.
/// Eligible are this agent's ($3) rows with attempts left ($4) that are answered and not in
/// a failed attempt's back-off, or running under a lease that lapsed (their worker died).
/// One statement: the claim returns everything the resume needs.
macro_rules! claim {
    (where $($target:tt)+) => {
        concat!(
            "UPDATE toolnexus_inbox_runs SET state = 'running', attempts = attempts + 1, \
             lease_until = $1, updated_at = $2 WHERE ",
            $($target)+,
            " AND agent = $3 AND attempts < $4 AND ((state = 'answered' AND (lease_until IS \
             NULL OR lease_until <= $2)) OR (state = 'running' AND lease_until <= $2)) \
             RETURNING id, messages, attempts, turns"
        )
    };
    // Two lookups, each a walk down the claim index in its own order, so a claim costs
    // the same with ten thousand runs answered as with one: first a run whose worker died
    // (few, and the oldest claims), else the oldest answer. The second runs only when the
    // first finds nothing.
    (oldest $lock:literal) => {
        claim!(where concat!(
            "id = COALESCE((SELECT id FROM toolnexus_inbox_runs WHERE agent = $3 \
             AND state = 'running' AND lease_until <= $2 AND attempts < $4 \
             ORDER BY answered_at, id LIMIT 1",
            $lock,
            "), (SELECT id FROM toolnexus_inbox_runs WHERE agent = $3 AND state = 'answered' \
             AND attempts < $4 AND (lease_until IS NULL OR lease_until <= $2) \
             ORDER BY answered_at, id LIMIT 1",
            $lock,
            "))"
        ))
    };
}

const CLAIM_NEXT_SQLITE: &str = claim!(oldest "");
// SKIP LOCKED: concurrent workers each take a different row instead of queueing on one.
const CLAIM_NEXT_POSTGRES: &str = claim!(oldest " FOR UPDATE SKIP LOCKED");
// Any request of the run names it.
const CLAIM_ONE: &str =
    claim!(where "id = (SELECT run_id FROM toolnexus_inbox_requests WHERE id = $5)");

/// A run this worker holds: its stored parts, and the attempt number that fences its writes.
struct Claim {
    id: String,
    fence: i64,
    turns: i64,
    messages: String,
    /// Each request's id and stored answer, in call order.
    answers: Vec<(String, Option<String>)>,
}

impl Claim {
    /// The claimed run's row, and its requests' answers read after it: an answered run's
    /// answers never change, so this second read sees what the claim saw.
    async fn read(inbox: &Inbox, row: &AnyRow) -> Result<Self, InboxError> {
        let id: String = row.try_get("id")?;
        let answers = sqlx::query_as(
            "SELECT id, answer FROM toolnexus_inbox_requests WHERE run_id = $1 \
             ORDER BY position",
        )
        .bind(&id)
        .fetch_all(&inbox.inner.pool)
        .await?;
        Ok(Claim {
            id,
            fence: row.try_get("attempts")?,
            turns: row.try_get("turns")?,
            messages: row.try_get("messages")?,
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
            .map(|(id, answer)| match answer {
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
    /// cannot be read is marked `Failed` ([`InboxError::Corrupt`]). Either way the next call
    /// goes on with the other runs.
    pub async fn resume_next(
        &self,
        client: &LlmClient,
        tk: &Toolkit,
    ) -> Result<Option<Resumed>, InboxError> {
        let sql = match self.inner.engine {
            Engine::Sqlite => CLAIM_NEXT_SQLITE,
            Engine::Postgres => CLAIM_NEXT_POSTGRES,
        };
        let row = self.claim(sql, None).await?;
        match row {
            Some(row) => self
                .run_claim(Claim::read(self, &row).await?, client, tk)
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
        let row = self.claim(CLAIM_ONE, Some(id)).await?;
        match row {
            Some(row) => {
                self.run_claim(Claim::read(self, &row).await?, client, tk)
                    .await
            }
            None => Err(self.why_unclaimable(id).await?),
        }
    }

    /// Runs claim statement `sql` (for the run of request `id`, when it names one as `$5`)
    /// and, in the same transaction, appends the claim to the run's audit trail.
    async fn claim(
        &self,
        sql: &'static str,
        id: Option<&str>,
    ) -> Result<Option<AnyRow>, InboxError> {
        let now = self.now();
        let mut conn = self.inner.pool.acquire().await?;
        let mut tx = conn.begin_with(self.inner.engine.begin_write()).await?;
        let mut claim = sqlx::query(sql)
            .bind(now.saturating_add(lease_ms(self)))
            .bind(now)
            .bind(&self.inner.agent)
            .bind(i64::from(self.inner.max_attempts));
        if let Some(id) = id {
            claim = claim.bind(id);
        }
        let row = claim.fetch_optional(&mut *tx).await?;
        if let Some(row) = &row {
            let run: String = row.try_get("id")?;
            Record {
                actor: Some(&self.inner.worker),
                attempt: Some(row.try_get("attempts")?),
                ..Record::new(&run, AuditKind::Claimed)
            }
            .append(&mut tx, now)
            .await?;
        }
        tx.commit().await?;
        Ok(row)
    }

    async fn why_unclaimable(&self, id: &str) -> Result<InboxError, InboxError> {
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
        let mut conn = self.inner.pool.acquire().await?;
        let mut tx = conn.begin_with(self.inner.engine.begin_write()).await?;
        let failed: Vec<(String, i64, String)> = sqlx::query_as(
            "UPDATE toolnexus_inbox_runs SET state = 'failed', lease_until = NULL, \
             last_error = COALESCE(last_error, 'the worker stopped during the last allowed attempt'), \
             updated_at = $1 WHERE agent = $2 AND attempts >= $3 \
             AND state IN ('running', 'answered') AND lease_until <= $1 \
             RETURNING id, attempts, last_error",
        )
        .bind(now)
        .bind(&self.inner.agent)
        .bind(i64::from(self.inner.max_attempts))
        .fetch_all(&mut *tx)
        .await?;
        for (run, attempt, why) in &failed {
            self.failed(run, Some(*attempt), why)
                .append(&mut tx, now)
                .await?;
            self.notify_resumed(&mut tx, run, Outcome::Failed(why))
                .await?;
        }
        tx.commit().await?;
        self.wake_deliverers();
        Ok(failed.len())
    }

    async fn give_up(&self, id: &str, why: &str) -> Result<(), InboxError> {
        let now = self.now();
        let mut conn = self.inner.pool.acquire().await?;
        let mut tx = conn.begin_with(self.inner.engine.begin_write()).await?;
        let given_up = sqlx::query(
            "UPDATE toolnexus_inbox_runs SET state = 'failed', lease_until = NULL, \
             last_error = $1, updated_at = $2 WHERE id = $3 AND state IN ('running', 'answered')",
        )
        .bind(why)
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if given_up.rows_affected() > 0 {
            self.failed(id, None, why).append(&mut tx, now).await?;
            self.notify_resumed(&mut tx, id, Outcome::Failed(why))
                .await?;
        }
        tx.commit().await?;
        self.wake_deliverers();
        Ok(())
    }

    /// Tells the webhooks how resuming run `run` ended, inside the transaction recording it.
    async fn notify_resumed(
        &self,
        conn: &mut sqlx::AnyConnection,
        run: &str,
        outcome: Outcome<'_>,
    ) -> Result<(), InboxError> {
        let notice = || self.notice_resumed(run, &self.inner.agent, outcome);
        self.enqueue(conn, notice, None).await
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
    async fn run_claim(
        &self,
        claim: Claim,
        client: &LlmClient,
        tk: &Toolkit,
    ) -> Result<Resumed, InboxError> {
        let span = spans::resume(&self.inner.agent, &claim.id, claim.fence);
        let resumed = self
            .run_claim_in_span(claim, client, tk)
            .instrument(span.clone())
            .await;
        match &resumed {
            Ok(done) => {
                let status = format!("{:?}", done.result.status).to_lowercase();
                span.record("toolnexus.status", status.as_str());
            }
            Err(e) => spans::failed(&span, e),
        }
        resumed
    }

    async fn run_claim_in_span(
        &self,
        claim: Claim,
        client: &LlmClient,
        tk: &Toolkit,
    ) -> Result<Resumed, InboxError> {
        let (messages, answers) = match claim.decode() {
            Ok(parts) => parts,
            Err(reason) => {
                self.record_failure(&claim, &reason, true).await?;
                return Err(InboxError::Corrupt {
                    id: claim.id,
                    reason,
                });
            }
        };
        let run = client
            .run_with_answers(messages, answers.clone(), tk)
            .into_future();
        let outcome = match self.renewing(&claim, run).await? {
            Some(outcome) => outcome,
            None => return Err(InboxError::Claimed(claim.id)),
        };
        match outcome {
            Ok(result) => self.record_outcome(&claim, result, answers).await,
            Err(e) => {
                self.record_failure(&claim, &e.to_string(), false).await?;
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
                    let renewed = sqlx::query(
                        "UPDATE toolnexus_inbox_runs SET lease_until = $1 \
                         WHERE id = $2 AND attempts = $3 AND state = 'running'",
                    )
                    .bind(self.now().saturating_add(lease_ms(self)))
                    .bind(&claim.id)
                    .bind(claim.fence)
                    .execute(&self.inner.pool)
                    .await;
                    match renewed {
                        Ok(r) if r.rows_affected() == 0 => return Ok(None),
                        Ok(_) => {}
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
        let stored = to_json(&claim.id, &result)?;
        let now = self.now();
        let next = match (&result.status, &result.pending) {
            (RunStatus::Pending, Some(request)) => Some(request.id.clone()),
            _ => None,
        };
        let parked = match next
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
        let done = sqlx::query(
            "UPDATE toolnexus_inbox_runs SET state = 'done', result = $1, next_id = $2, \
             lease_until = NULL, last_error = NULL, updated_at = $3 \
             WHERE id = $4 AND attempts = $5 AND state = 'running'",
        )
        .bind(stored)
        .bind(&next)
        .bind(now)
        .bind(&claim.id)
        .bind(claim.fence);
        let mut conn = self.inner.pool.acquire().await?;
        let mut tx = conn.begin_with(self.inner.engine.begin_write()).await?;
        if done.execute(&mut *tx).await?.rows_affected() == 0 {
            return Err(InboxError::Claimed(claim.id.clone()));
        }
        let outcome = match &next {
            Some(next) => format!("halted again on request {next}"),
            None => format!("{:?}", result.status).to_lowercase(),
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
        if let Some(parked) = &parked {
            if let Some(taken) = insert(&mut tx, self, parked).await? {
                tx.rollback().await?;
                let why =
                    format!("the resumed run halted on request `{taken}`, which is already parked");
                self.record_failure(claim, &why, true).await?;
                return Err(InboxError::AlreadyParked(taken));
            }
        }
        tx.commit().await?;
        self.wake_deliverers();
        Ok(resumed(claim, result, answers, next))
    }

    /// Records a failed attempt: back to `Answered` after the lease, or `Failed` when the
    /// attempts are spent or the row cannot be resumed at all (`fatal`).
    async fn record_failure(
        &self,
        claim: &Claim,
        error: &str,
        fatal: bool,
    ) -> Result<(), InboxError> {
        let now = self.now();
        let exhausted = fatal || claim.fence >= i64::from(self.inner.max_attempts);
        let (state, retry_at) = if exhausted {
            ("failed", None)
        } else {
            ("answered", Some(now.saturating_add(lease_ms(self))))
        };
        tracing::warn!(id = %claim.id, attempt = claim.fence, state, error, "a resume failed");
        let mut conn = self.inner.pool.acquire().await?;
        let mut tx = conn.begin_with(self.inner.engine.begin_write()).await?;
        let written = sqlx::query(
            "UPDATE toolnexus_inbox_runs SET state = $1, last_error = $2, lease_until = $3, \
             updated_at = $4 WHERE id = $5 AND attempts = $6 AND state = 'running'",
        )
        .bind(state)
        .bind(error)
        .bind(retry_at)
        .bind(now)
        .bind(&claim.id)
        .bind(claim.fence)
        .execute(&mut *tx)
        .await?;
        if written.rows_affected() == 0 {
            return Err(InboxError::Claimed(claim.id.clone()));
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
