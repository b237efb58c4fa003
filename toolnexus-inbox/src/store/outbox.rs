//! `toolnexus_inbox_outbox`: a notification per webhook, written in the transaction of the
//! change it tells of, then claimed under a short lease, posted, and recorded.

use sqlx::{AnyConnection, AnyPool};

use super::row::row;

use super::Dialect;
use crate::error::InboxError;
use crate::records::state::DeliveryState;

/// A notification, ready to be written.
pub(crate) struct NewNotification<'a> {
    /// Its `webhook-id`, stable across retries and rewrites.
    pub(crate) id: &'a str,
    pub(crate) run: &'a str,
    pub(crate) request: Option<&'a str>,
    pub(crate) event: &'a str,
    pub(crate) webhook: &'a str,
    pub(crate) body: &'a str,
    pub(crate) at: i64,
}

/// Writes a notification, due at once; one with its id already written stays as it is.
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    notification: &NewNotification<'_>,
) -> Result<(), InboxError> {
    sqlx::query(
        "INSERT INTO toolnexus_inbox_outbox (id, run_id, request_id, event, target, body, \
         state, attempts, next_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $8) \
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(notification.id)
    .bind(notification.run)
    .bind(notification.request)
    .bind(notification.event)
    .bind(notification.webhook)
    .bind(notification.body)
    .bind(DeliveryState::Pending.as_str())
    .bind(notification.at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Claims a batch of due notifications of webhook $2 at time $3 under a lease until $1,
/// at most $4, pending being $5; `lock` chooses how concurrent claims pass each other by
/// ([`Dialect::claim_deliveries`]). The conditions are repeated outside the subquery,
/// which PostgreSQL re-checks after waiting for a row: a row another claim took in the
/// meantime is then left out.
pub(crate) fn claim_sql(lock: &str) -> String {
    format!(
        "UPDATE toolnexus_inbox_outbox SET attempts = attempts + 1, lease_until = $1 \
         WHERE id IN (SELECT id FROM toolnexus_inbox_outbox WHERE target = $2 \
         AND state = $5 AND next_at <= $3 \
         AND (lease_until IS NULL OR lease_until <= $3) ORDER BY next_at, id LIMIT $4{lock}) \
         AND state = $5 AND (lease_until IS NULL OR lease_until <= $3) \
         RETURNING id, run_id, event, body, attempts"
    )
}

row! {
    /// A claimed notification.
    pub(crate) struct Claimed {
        pub(crate) id: String,
        pub(crate) run_id: String,
        pub(crate) event: String,
        pub(crate) body: String,
        /// The attempt this claim makes, which fences its record.
        pub(crate) attempts: i64,
    }
}

/// Claims up to `batch` notifications due to `webhook` at `now`, leased until `lease_until`.
pub(crate) async fn claim(
    pool: &AnyPool,
    dialect: &Dialect,
    webhook: &str,
    now: i64,
    lease_until: i64,
    batch: i64,
) -> Result<Vec<Claimed>, InboxError> {
    Ok(sqlx::query_as(dialect.claim_deliveries.as_str())
        .bind(lease_until)
        .bind(webhook)
        .bind(now)
        .bind(batch)
        .bind(DeliveryState::Pending.as_str())
        .fetch_all(pool)
        .await?)
}

/// What one attempt came to.
pub(crate) struct Attempt<'a> {
    pub(crate) id: &'a str,
    /// The claim's attempt number.
    pub(crate) attempts: i64,
    pub(crate) state: DeliveryState,
    pub(crate) next_at: i64,
    pub(crate) status: Option<u16>,
    pub(crate) error: Option<&'a str>,
    pub(crate) at: i64,
}

/// Records an attempt; `false` when another worker took the notification over after this
/// claim's lease lapsed (its record stands).
pub(crate) async fn record(
    conn: &mut AnyConnection,
    attempt: &Attempt<'_>,
) -> Result<bool, InboxError> {
    let delivered = attempt.state == DeliveryState::Delivered;
    let written = sqlx::query(
        "UPDATE toolnexus_inbox_outbox SET state = $1, lease_until = NULL, next_at = $2, \
         last_status = $3, last_error = $4, delivered_at = $5 \
         WHERE id = $6 AND attempts = $7 AND state = $8",
    )
    .bind(attempt.state.as_str())
    .bind(attempt.next_at)
    .bind(attempt.status.map(i64::from))
    .bind(attempt.error)
    .bind(delivered.then_some(attempt.at))
    .bind(attempt.id)
    .bind(attempt.attempts)
    .bind(DeliveryState::Pending.as_str())
    .execute(conn)
    .await?;
    Ok(written.rows_affected() > 0)
}

row! {
    /// A notification as [`of_run`] reads it.
    pub(crate) struct NotificationRow {
        pub(crate) id: String,
        pub(crate) event: String,
        pub(crate) request_id: Option<String>,
        pub(crate) target: String,
        pub(crate) state: String,
        pub(crate) attempts: i64,
        pub(crate) last_status: Option<i64>,
        pub(crate) last_error: Option<String>,
        pub(crate) created_at: i64,
        pub(crate) next_at: i64,
        pub(crate) delivered_at: Option<i64>,
        pub(crate) body: String,
    }
}

/// Every notification of the run request `id` belongs to, oldest first.
pub(crate) async fn of_run(pool: &AnyPool, id: &str) -> Result<Vec<NotificationRow>, InboxError> {
    Ok(sqlx::query_as(
        "SELECT id, event, request_id, target, state, attempts, last_status, last_error, \
         created_at, next_at, delivered_at, body FROM toolnexus_inbox_outbox \
         WHERE run_id = (SELECT run_id FROM toolnexus_inbox_requests WHERE id = $1) \
         ORDER BY created_at, id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?)
}
