//! `toolnexus_inbox_posts`: notifications to URLs a caller gave at run time, in series
//! delivered one at a time in the order they were written, each claimed under a short
//! lease, posted, and recorded.

use std::sync::LazyLock;

use sqlx::{AnyConnection, AnyPool};

use super::row::row;

use super::Dialect;
use crate::error::InboxError;
use crate::records::state::DeliveryState;

/// A post, ready to be written.
pub(crate) struct NewPost<'a> {
    pub(crate) id: &'a str,
    pub(crate) series: &'a str,
    pub(crate) url: &'a str,
    /// The headers as a JSON list of `[name, value]` pairs.
    pub(crate) headers: &'a str,
    pub(crate) content_type: &'a str,
    pub(crate) body: &'a str,
    pub(crate) at: i64,
    pub(crate) expires_at: i64,
}

/// Writes a post, due at once, after every post of its series written before; one with its
/// id already written stays as it is. `seq` is one more than the series' highest, so
/// writes that follow one another keep their order whatever the clocks say; two written at
/// once to one series may share a number, and then their ids order them.
pub(crate) async fn insert(pool: &AnyPool, post: &NewPost<'_>) -> Result<bool, InboxError> {
    let written = sqlx::query(
        "INSERT INTO toolnexus_inbox_posts (id, series, seq, url, headers, content_type, body, \
         state, attempts, next_at, created_at, expires_at) \
         SELECT $1, $2, COALESCE(MAX(seq), 0) + 1, $3, $4, $5, $6, $7, 0, $8, $8, $9 \
         FROM toolnexus_inbox_posts WHERE series = $2 \
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(post.id)
    .bind(post.series)
    .bind(post.url)
    .bind(post.headers)
    .bind(post.content_type)
    .bind(post.body)
    .bind(DeliveryState::Pending.as_str())
    .bind(post.at)
    .bind(post.expires_at)
    .execute(pool)
    .await?;
    Ok(written.rows_affected() > 0)
}

/// The rows that may be claimed at `$now` (pending being `$pending`): due, not leased, and
/// first of their series among the pending ones, so a series goes one post at a time and
/// in order.
fn due(now: usize, pending: usize) -> String {
    format!(
        "p.state = ${pending} AND p.next_at <= ${now} \
         AND (p.lease_until IS NULL OR p.lease_until <= ${now}) \
         AND NOT EXISTS (SELECT 1 FROM toolnexus_inbox_posts e WHERE e.series = p.series \
         AND e.state = ${pending} AND (e.seq < p.seq OR (e.seq = p.seq AND e.id < p.id)))"
    )
}

static ANY_DUE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT 1 AS due FROM toolnexus_inbox_posts p WHERE {} LIMIT 1",
        due(1, 2)
    )
});

/// Claims a batch of due posts at time $2 under a lease until $1, at most $3, pending
/// being $4; `lock` chooses how concurrent claims pass each other by
/// ([`Dialect::claim_posts`]). The lease is checked again outside the subquery, which
/// PostgreSQL re-checks after waiting for a row: one another claim took meanwhile is then
/// left out.
pub(crate) fn claim_sql(lock: &str) -> String {
    format!(
        "UPDATE toolnexus_inbox_posts SET attempts = attempts + 1, lease_until = $1 \
         WHERE id IN (SELECT p.id FROM toolnexus_inbox_posts p WHERE {} \
         ORDER BY p.next_at, p.id LIMIT $3{lock}) \
         AND state = $4 AND (lease_until IS NULL OR lease_until <= $2) \
         RETURNING id, url, headers, content_type, body, attempts, expires_at",
        due(2, 4)
    )
}

row! {
    /// A claimed post.
    pub(crate) struct ClaimedPost {
        pub(crate) id: String,
        pub(crate) url: String,
        pub(crate) headers: String,
        pub(crate) content_type: String,
        pub(crate) body: String,
        /// The attempt this claim makes, which fences its record.
        pub(crate) attempts: i64,
        pub(crate) expires_at: i64,
    }
}

/// Whether any post may be claimed at `now`: a read, so an idle deliverer polling for
/// other processes' posts does not take SQLite's write lock for nothing.
pub(crate) async fn any_due(pool: &AnyPool, now: i64) -> Result<bool, InboxError> {
    let found = sqlx::query(ANY_DUE.as_str())
        .bind(now)
        .bind(DeliveryState::Pending.as_str())
        .fetch_optional(pool)
        .await?;
    Ok(found.is_some())
}

/// Claims up to `batch` posts due at `now`, leased until `lease_until`.
pub(crate) async fn claim(
    pool: &AnyPool,
    dialect: &Dialect,
    now: i64,
    lease_until: i64,
    batch: i64,
) -> Result<Vec<ClaimedPost>, InboxError> {
    Ok(sqlx::query_as(dialect.claim_posts.as_str())
        .bind(lease_until)
        .bind(now)
        .bind(batch)
        .bind(DeliveryState::Pending.as_str())
        .fetch_all(pool)
        .await?)
}

/// What one claim came to.
pub(crate) struct PostAttempt<'a> {
    pub(crate) id: &'a str,
    /// The claim's attempt number.
    pub(crate) claimed: i64,
    /// The attempts made, as recorded: the claim's, or one fewer when nothing was sent.
    pub(crate) attempts: i64,
    pub(crate) state: DeliveryState,
    pub(crate) next_at: i64,
    pub(crate) status: Option<u16>,
    pub(crate) error: Option<&'a str>,
    pub(crate) at: i64,
}

/// Records a claim's attempt; `false` when another worker took the post over after this
/// claim's lease lapsed (its record stands), or the post was dropped meanwhile.
pub(crate) async fn record(
    conn: &mut AnyConnection,
    attempt: &PostAttempt<'_>,
) -> Result<bool, InboxError> {
    let delivered = attempt.state == DeliveryState::Delivered;
    let written = sqlx::query(
        "UPDATE toolnexus_inbox_posts SET state = $1, lease_until = NULL, next_at = $2, \
         last_status = $3, last_error = $4, delivered_at = $5, attempts = $6 \
         WHERE id = $7 AND attempts = $8 AND state = $9",
    )
    .bind(attempt.state.as_str())
    .bind(attempt.next_at)
    .bind(attempt.status.map(i64::from))
    .bind(attempt.error)
    .bind(delivered.then_some(attempt.at))
    .bind(attempt.attempts)
    .bind(attempt.id)
    .bind(attempt.claimed)
    .bind(DeliveryState::Pending.as_str())
    .execute(conn)
    .await?;
    Ok(written.rows_affected() > 0)
}

row! {
    /// A post as [`of_series`] reads it: never its headers.
    pub(crate) struct PostRow {
        pub(crate) id: String,
        pub(crate) url: String,
        pub(crate) state: String,
        pub(crate) attempts: i64,
        pub(crate) last_status: Option<i64>,
        pub(crate) last_error: Option<String>,
        pub(crate) created_at: i64,
        pub(crate) next_at: i64,
        pub(crate) delivered_at: Option<i64>,
    }
}

/// Every post of `series`, in the order they are delivered.
pub(crate) async fn of_series(pool: &AnyPool, series: &str) -> Result<Vec<PostRow>, InboxError> {
    Ok(sqlx::query_as(
        "SELECT id, url, state, attempts, last_status, last_error, created_at, next_at, \
         delivered_at FROM toolnexus_inbox_posts WHERE series = $1 ORDER BY seq, id",
    )
    .bind(series)
    .fetch_all(pool)
    .await?)
}

/// Deletes the posts of `series` not yet delivered nor failed; how many.
pub(crate) async fn drop_pending(pool: &AnyPool, series: &str) -> Result<u64, InboxError> {
    let done = sqlx::query("DELETE FROM toolnexus_inbox_posts WHERE series = $1 AND state = $2")
        .bind(series)
        .bind(DeliveryState::Pending.as_str())
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}
