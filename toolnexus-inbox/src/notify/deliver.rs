//! Delivering the outbox: each due notification is claimed under a short lease (so two
//! workers never send it at once, and a worker that dies mid-send leaves it to another),
//! posted, and recorded as delivered or retried later.

use std::time::{Duration, SystemTime};

use super::webhook::{Event, Target};
use crate::clock::{from_ms, ms, to_ms};
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::records::audit::{AuditKind, Record};
use crate::records::state::DeliveryState;
use crate::store::outbox::{self, Attempt, Claimed, NotificationRow};
use crate::store::runs;
use crate::store::Conn;

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
    /// Delivers what is due: the notifications to this inbox's webhooks, then the posts
    /// ([`Inbox::post`]), and returns how many of both were delivered. A
    /// [`Worker`](crate::Worker) does this on its own, at once for this process's
    /// notifications and posts and by polling for other processes'; call it where no
    /// worker runs. A notification for a webhook this handle does not know waits for a
    /// process that does; a post needs no configuration and goes from any process.
    pub async fn deliver_due(&self) -> Result<usize, InboxError> {
        let notified = self.deliver_due_until(&|| false).await?;
        let posted = self.deliver_posts_until(&|| false).await?;
        Ok(notified + posted)
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
        let store = &self.inner.store;
        outbox::claim(&store.pool, store.dialect, &target.name, now, lease, BATCH).await
    }

    /// Records a batch's attempts in one transaction; how many were delivered.
    async fn record_attempts(
        &self,
        target: &Target,
        batch: Vec<Claimed>,
        sent: Vec<Result<u16, String>>,
    ) -> Result<usize, InboxError> {
        let now = self.now();
        let mut tx = self.inner.store.write().await?;
        let mut delivered = 0;
        let mut batch: Vec<_> = batch.iter().zip(sent).collect();
        // Runs' rows are locked in one order by every batch, so two batches that share
        // runs wait for each other instead of deadlocking.
        batch.sort_by(|(a, _), (b, _)| a.run_id.cmp(&b.run_id));
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
        conn: &mut Conn,
        now: i64,
        target: &Target,
        claimed: &Claimed,
        sent: Result<u16, String>,
    ) -> Result<bool, InboxError> {
        let (state, status, error) = match sent {
            Ok(status) if (200..300).contains(&status) => {
                (DeliveryState::Delivered, Some(status), None)
            }
            Ok(status) => (
                DeliveryState::Pending,
                Some(status),
                Some(format!("HTTP {status}")),
            ),
            Err(error) => (DeliveryState::Pending, None, Some(error)),
        };
        let exhausted = claimed.attempts >= i64::from(target.max_attempts);
        let state = match state {
            DeliveryState::Pending if exhausted => DeliveryState::Failed,
            state => state,
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
        let attempt = Attempt {
            id: &claimed.id,
            attempts: claimed.attempts,
            state,
            next_at,
            status,
            error: error.as_deref(),
            at: now,
        };
        // Another worker took it over after this one's lease lapsed: its record stands.
        if !outbox::record(conn, &attempt).await? {
            return Ok(false);
        }
        let kind = match state {
            DeliveryState::Delivered => AuditKind::Notified,
            DeliveryState::Failed => AuditKind::NotificationFailed,
            DeliveryState::Pending => return Ok(false),
        };
        runs::lock(conn, &claimed.run_id).await?;
        let detail = match &error {
            Some(error) => format!("{} to {}: {error}", claimed.event, target.name),
            None => format!("{} to {}", claimed.event, target.name),
        };
        Record {
            actor: Some(&target.name),
            attempt: Some(claimed.attempts),
            detail: Some(&detail),
            ..Record::new(&claimed.run_id, kind)
        }
        .append(conn, now)
        .await?;
        Ok(state == DeliveryState::Delivered)
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
        let rows = outbox::of_run(&self.inner.store.pool, id).await?;
        rows.into_iter().map(|row| delivery(id, row)).collect()
    }
}

fn delivery(id: &str, row: NotificationRow) -> Result<Delivery, InboxError> {
    let corrupt = |what: String| InboxError::Corrupt {
        id: id.to_owned(),
        reason: what,
    };
    let event = Event::parse(&row.event)
        .ok_or_else(|| corrupt(format!("a notification of unknown type {:?}", row.event)))?;
    let state = DeliveryState::parse(&row.state)
        .ok_or_else(|| corrupt(format!("a notification in unknown state {:?}", row.state)))?;
    Ok(Delivery {
        id: row.id,
        event,
        request: row.request_id,
        webhook: row.target,
        state,
        attempts: u32::try_from(row.attempts).unwrap_or(u32::MAX),
        last_status: row.last_status.and_then(|s| u16::try_from(s).ok()),
        last_error: row.last_error,
        created_at: from_ms(row.created_at),
        next_attempt_at: (state == DeliveryState::Pending).then(|| from_ms(row.next_at)),
        delivered_at: row.delivered_at.map(from_ms),
        body: row.body,
    })
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

/// What went wrong with a request, with its causes: give it the error `without_url()`.
pub(crate) fn describe(error: reqwest::Error) -> String {
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
        let target = crate::notify::webhook::Webhook::new("http://127.0.0.1:1/")
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
