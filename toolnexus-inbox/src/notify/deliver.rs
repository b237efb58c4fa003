//! Delivering the outbox: each due notification is claimed under a short lease (so two
//! workers never send it at once, and a worker that dies mid-send leaves it to another),
//! posted, and recorded as delivered or retried later.

use std::time::{Duration, SystemTime};

use sqlx::Connection;

use crate::audit::{AuditKind, Record};
use crate::clock::{from_ms, ms, to_ms};
use crate::store::Engine;
use crate::{Inbox, InboxError};

use super::{Event, Target};

/// Where a notification stands ([`Delivery::state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeliveryState {
    /// Not delivered yet: waiting for its first attempt or for its next.
    Pending,
    /// The webhook answered an attempt with a 2xx status.
    Delivered,
    /// Every attempt failed; it is not tried again.
    Failed,
}

impl DeliveryState {
    fn parse(text: &str) -> Option<DeliveryState> {
        match text {
            "pending" => Some(DeliveryState::Pending),
            "delivered" => Some(DeliveryState::Delivered),
            "failed" => Some(DeliveryState::Failed),
            _ => None,
        }
    }
}

/// One notification of a run to one webhook, and how its delivery went
/// ([`Inbox::deliveries`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Delivery {
    /// Its `webhook-id`: the same on every attempt, for the receiver to deduplicate by.
    pub id: String,
    /// What it tells of.
    pub event: Event,
    /// The request it is about, for an event of one request.
    pub request: Option<String>,
    /// The webhook's name.
    pub webhook: String,
    /// Where it stands.
    pub state: DeliveryState,
    /// Attempts made so far.
    pub attempts: u32,
    /// The HTTP status of the last attempt that got an answer.
    pub last_status: Option<u16>,
    /// Why the last attempt failed, when it did.
    pub last_error: Option<String>,
    /// When it was written, with the change it tells of.
    pub created_at: SystemTime,
    /// When the next attempt is due, while pending.
    pub next_attempt_at: Option<SystemTime>,
    /// When an attempt succeeded.
    pub delivered_at: Option<SystemTime>,
    /// The JSON body, as posted.
    pub body: String,
}

/// How many notifications to one webhook are claimed, posted and recorded together.
const BATCH: i64 = 16;

/// Claims a batch of due notifications of webhook $2 at time $3 under a lease until $1.
/// The conditions are repeated outside the subquery, which PostgreSQL re-checks after
/// waiting for a row: a row another claim took in the meantime is then left out.
macro_rules! claim {
    ($lock:literal) => {
        concat!(
            "UPDATE toolnexus_inbox_outbox SET attempts = attempts + 1, lease_until = $1 \
             WHERE id IN (SELECT id FROM toolnexus_inbox_outbox WHERE target = $2 \
             AND state = 'pending' AND next_at <= $3 \
             AND (lease_until IS NULL OR lease_until <= $3) ORDER BY next_at, id LIMIT $4",
            $lock,
            ") AND state = 'pending' AND (lease_until IS NULL OR lease_until <= $3) \
             RETURNING id, run_id, event, body, attempts"
        )
    };
}

const CLAIM_SQLITE: &str = claim!("");
// SKIP LOCKED: concurrent deliverers each take other rows instead of queueing on, or
// deadlocking over, the same ones.
const CLAIM_POSTGRES: &str = claim!(" FOR UPDATE SKIP LOCKED");

/// A claimed notification.
struct Claimed {
    id: String,
    run: String,
    event: String,
    body: String,
    attempts: i64,
}

type DeliveryRow = (
    String,
    String,
    Option<String>,
    String,
    String,
    i64,
    Option<i64>,
    Option<String>,
    i64,
    i64,
    Option<i64>,
    String,
);

/// The wait before attempt `attempt + 1`, after `attempt` failed: the first backoff,
/// doubled after each further failure, at most an hour.
fn backoff(target: &Target, attempt: i64) -> Duration {
    let doublings = u32::try_from(attempt.saturating_sub(1).clamp(0, 20)).unwrap_or(20);
    target
        .backoff
        .saturating_mul(1 << doublings)
        .min(Duration::from_secs(3600))
}

impl Inbox {
    /// Delivers the notifications that are due to this inbox's webhooks, and returns how
    /// many were delivered. A [`Worker`](crate::Worker) does this on its own, at once for
    /// this process's notifications and by polling for other processes'; call it where no
    /// worker runs. A notification for a webhook this handle does not know waits for a
    /// process that does.
    pub async fn deliver_due(&self) -> Result<usize, InboxError> {
        self.deliver_due_until(&|| false).await
    }

    /// [`deliver_due`](Self::deliver_due), claiming nothing more once `stopping` says so;
    /// an attempt under way is finished and recorded, so stopping sends nothing twice.
    pub(crate) async fn deliver_due_until(
        &self,
        stopping: &(dyn Fn() -> bool + Sync),
    ) -> Result<usize, InboxError> {
        let targets = &self.inner.targets.all;
        let each = targets
            .iter()
            .map(|target| self.deliver_due_to(target, stopping));
        let mut delivered = 0;
        for done in futures::future::join_all(each).await {
            delivered += done?;
        }
        Ok(delivered)
    }

    async fn deliver_due_to(
        &self,
        target: &Target,
        stopping: &(dyn Fn() -> bool + Sync),
    ) -> Result<usize, InboxError> {
        let mut delivered = 0;
        while !stopping() {
            let batch = self.claim_deliveries(target).await?;
            if batch.is_empty() {
                break;
            }
            // A batch is posted at once and recorded in one transaction: on SQLite, where
            // writes take turns, that is two writes per batch instead of two per attempt.
            let sent = futures::future::join_all(batch.iter().map(|c| post(self, target, c))).await;
            delivered += self.record_attempts(target, batch, sent).await?;
        }
        Ok(delivered)
    }

    /// Claims up to [`BATCH`] due notifications for `target`.
    async fn claim_deliveries(&self, target: &Target) -> Result<Vec<Claimed>, InboxError> {
        let now = self.now();
        // Long enough for the attempt and its recording; a worker that dies holds it no
        // longer than that.
        let lease = now.saturating_add(ms(target.timeout)).saturating_add(5_000);
        let claim = match self.inner.engine {
            Engine::Sqlite => CLAIM_SQLITE,
            Engine::Postgres => CLAIM_POSTGRES,
        };
        let rows: Vec<(String, String, String, String, i64)> = sqlx::query_as(claim)
            .bind(lease)
            .bind(&target.name)
            .bind(now)
            .bind(BATCH)
            .fetch_all(&self.inner.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, run, event, body, attempts)| Claimed {
                id,
                run,
                event,
                body,
                attempts,
            })
            .collect())
    }

    /// Records a batch's attempts in one transaction; how many were delivered.
    async fn record_attempts(
        &self,
        target: &Target,
        batch: Vec<Claimed>,
        sent: Vec<Result<u16, String>>,
    ) -> Result<usize, InboxError> {
        let now = self.now();
        let mut conn = self.inner.pool.acquire().await?;
        let mut tx = conn.begin_with(self.inner.engine.begin_write()).await?;
        let mut delivered = 0;
        let mut batch: Vec<_> = batch.iter().zip(sent).collect();
        // Runs' rows are locked in one order by every batch, so two batches that share
        // runs wait for each other instead of deadlocking.
        batch.sort_by(|(a, _), (b, _)| a.run.cmp(&b.run));
        for (claimed, sent) in batch {
            if self
                .record_attempt(&mut tx, now, target, claimed, sent)
                .await?
            {
                delivered += 1;
            }
        }
        tx.commit().await?;
        Ok(delivered)
    }

    /// One attempt's record, inside the batch's transaction; `true` when it was delivered.
    async fn record_attempt(
        &self,
        conn: &mut sqlx::AnyConnection,
        now: i64,
        target: &Target,
        claimed: &Claimed,
        sent: Result<u16, String>,
    ) -> Result<bool, InboxError> {
        let (state, status, error) = match sent {
            Ok(status) if (200..300).contains(&status) => ("delivered", Some(status), None),
            Ok(status) => ("pending", Some(status), Some(format!("HTTP {status}"))),
            Err(error) => ("pending", None, Some(error)),
        };
        let exhausted = claimed.attempts >= i64::from(target.max_attempts);
        let state = if state == "pending" && exhausted {
            "failed"
        } else {
            state
        };
        let next_at = now.saturating_add(ms(backoff(target, claimed.attempts)));
        if let Some(error) = &error {
            tracing::warn!(
                webhook = %target.name,
                id = %claimed.id,
                attempt = claimed.attempts,
                error = %error,
                "a webhook delivery failed"
            );
        }
        let written = sqlx::query(
            "UPDATE toolnexus_inbox_outbox SET state = $1, lease_until = NULL, next_at = $2, \
             last_status = $3, last_error = $4, delivered_at = $5 \
             WHERE id = $6 AND attempts = $7 AND state = 'pending'",
        )
        .bind(state)
        .bind(next_at)
        .bind(status.map(i64::from))
        .bind(&error)
        .bind((state == "delivered").then_some(now))
        .bind(&claimed.id)
        .bind(claimed.attempts)
        .execute(&mut *conn)
        .await?;
        // Another worker took it over after this one's lease lapsed: its record stands.
        if written.rows_affected() == 0 {
            return Ok(false);
        }
        let kind = match state {
            "delivered" => AuditKind::Notified,
            "failed" => AuditKind::NotificationFailed,
            _ => return Ok(false),
        };
        lock_run(conn, &claimed.run).await?;
        let detail = match &error {
            Some(error) => format!("{} to {}: {error}", claimed.event, target.name),
            None => format!("{} to {}", claimed.event, target.name),
        };
        Record {
            actor: Some(&target.name),
            attempt: Some(claimed.attempts),
            detail: Some(&detail),
            ..Record::new(&claimed.run, kind)
        }
        .append(conn, now)
        .await?;
        Ok(state == "delivered")
    }

    /// Every notification of the run that request `id` belongs to (any of its requests),
    /// oldest first, with how its delivery went.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:").await?;
    /// assert!(inbox.deliveries("no-such-request").await?.is_empty());
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn deliveries(&self, id: &str) -> Result<Vec<Delivery>, InboxError> {
        let rows: Vec<DeliveryRow> = sqlx::query_as(
            "SELECT id, event, request_id, target, state, attempts, last_status, last_error, \
             created_at, next_at, delivered_at, body FROM toolnexus_inbox_outbox \
             WHERE run_id = (SELECT run_id FROM toolnexus_inbox_requests WHERE id = $1) \
             ORDER BY created_at, id",
        )
        .bind(id)
        .fetch_all(&self.inner.pool)
        .await?;
        rows.into_iter().map(|row| delivery(id, row)).collect()
    }
}

fn delivery(id: &str, row: DeliveryRow) -> Result<Delivery, InboxError> {
    let (msg, event, request, webhook, state, attempts, status, error, created, next, at, body) =
        row;
    let corrupt = |what: String| InboxError::Corrupt {
        id: id.to_owned(),
        reason: what,
    };
    let event = Event::parse(&event)
        .ok_or_else(|| corrupt(format!("a notification of unknown type {event:?}")))?;
    let state = DeliveryState::parse(&state)
        .ok_or_else(|| corrupt(format!("a notification in unknown state {state:?}")))?;
    Ok(Delivery {
        id: msg,
        event,
        request,
        webhook,
        state,
        attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
        last_status: status.and_then(|s| u16::try_from(s).ok()),
        last_error: error,
        created_at: from_ms(created),
        next_attempt_at: (state == DeliveryState::Pending).then(|| from_ms(next)),
        delivered_at: at.map(from_ms),
        body,
    })
}

/// Takes run `run`'s row lock inside the transaction, so the audit entry appended next
/// does not race another change of the run for its number.
pub(crate) async fn lock_run(conn: &mut sqlx::AnyConnection, run: &str) -> Result<(), InboxError> {
    sqlx::query("UPDATE toolnexus_inbox_runs SET updated_at = updated_at WHERE id = $1")
        .bind(run)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Posts one attempt: the status the webhook answered, or why none came. The signature's
/// timestamp is the wall clock's, as the receiver checks it against its own.
async fn post(inbox: &Inbox, target: &Target, claimed: &Claimed) -> Result<u16, String> {
    let timestamp = to_ms(SystemTime::now()) / 1000;
    let mut request = inbox
        .inner
        .targets
        .http
        .post(target.url.clone())
        .timeout(target.timeout)
        .header("content-type", "application/json")
        .header("webhook-id", &claimed.id)
        .header("webhook-timestamp", timestamp.to_string());
    if let Some(key) = &target.key {
        request = request.header(
            "webhook-signature",
            key.sign(&claimed.id, timestamp, &claimed.body),
        );
    }
    match request.body(claimed.body.clone()).send().await {
        Ok(response) => Ok(response.status().as_u16()),
        // The URL may be a credential (Slack's are): the error never names it.
        Err(e) => Err(describe(e.without_url())),
    }
}

fn describe(error: reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else {
        "failed"
    };
    let mut text = kind.to_owned();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_up_to_an_hour() {
        let target = super::super::Webhook::new("http://127.0.0.1:1/")
            .retries(30, Duration::from_secs(5))
            .target()
            .unwrap();
        let waits: Vec<u64> = [1, 2, 3, 4]
            .into_iter()
            .map(|a| backoff(&target, a).as_secs())
            .collect();
        assert_eq!(waits, [5, 10, 20, 40]);
        assert_eq!(backoff(&target, 25), Duration::from_secs(3600));
    }
}
