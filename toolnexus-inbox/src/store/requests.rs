//! `toolnexus_inbox_requests`: one row per request a parked run waits on — the request as
//! asked, the call that asked it, its deadline, its answer and its escalation — read with
//! its run's row as a [`ParkedRow`].

use std::sync::LazyLock;

use sqlx::{AnyConnection, AnyPool, Row};

use super::row::row;

use crate::error::InboxError;
use crate::records::state::ParkedState;

row! {
    /// A request of a run, with the parts of its run people and workers see: everything but
    /// the transcript.
    pub(crate) struct ParkedRow {
        pub(crate) id: String,
        pub(crate) run_id: String,
        pub(crate) agent: String,
        pub(crate) state: String,
        pub(crate) request: String,
        pub(crate) model: String,
        pub(crate) turns: i64,
        pub(crate) tool_name: Option<String>,
        pub(crate) tool_args: Option<String>,
        pub(crate) parked_at: i64,
        pub(crate) expires_at: Option<i64>,
        pub(crate) answer: Option<String>,
        pub(crate) answered_by: Option<String>,
        pub(crate) answered_at: Option<i64>,
        pub(crate) attempts: i64,
        pub(crate) lease_until: Option<i64>,
        pub(crate) last_error: Option<String>,
        pub(crate) result: Option<String>,
        pub(crate) next_id: Option<String>,
        pub(crate) updated_at: i64,
        pub(crate) request_ids: Option<String>,
        pub(crate) escalated_at: Option<i64>,
        pub(crate) escalated_to: Option<String>,
        pub(crate) votes: Option<String>,
    }
}

/// The requests (`q`) joined with their runs (`r`).
const FROM: &str =
    " FROM toolnexus_inbox_requests q JOIN toolnexus_inbox_runs r ON r.id = q.run_id";

/// The columns of a [`ParkedRow`], [`FROM`] the join.
const PARKED: &str = "SELECT q.id, q.run_id, r.agent, r.state, q.request, r.model, r.turns, \
     q.tool_name, q.tool_args, q.parked_at, q.expires_at, q.answer, q.answered_by, \
     q.answered_at, r.attempts, r.lease_until, r.last_error, r.result, r.next_id, \
     r.updated_at, r.request_ids, q.escalated_at, q.escalated_to, q.votes";

/// What "open" means — a request still waiting for its answer: unanswered, of a run that
/// waits. The waiting state is `$1` of every statement that asks for open requests.
const OPEN: &str = " WHERE q.answered_at IS NULL AND r.state = $1";

static GET: LazyLock<String> = LazyLock::new(|| format!("{PARKED}{FROM} WHERE q.id = $1"));
static OF_RUN: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{PARKED}{FROM} WHERE q.run_id = (SELECT run_id FROM toolnexus_inbox_requests \
         WHERE id = $1) ORDER BY q.position"
    )
});
static WAITING: LazyLock<String> =
    LazyLock::new(|| format!("{PARKED}{FROM}{OPEN} ORDER BY q.parked_at, q.id"));
static WAITING_PAGE: LazyLock<String> =
    LazyLock::new(|| format!("{PARKED}{FROM}{OPEN} ORDER BY q.parked_at, q.id LIMIT $2 OFFSET $3"));
static COUNT_WAITING: LazyLock<String> = LazyLock::new(|| format!("SELECT COUNT(*){FROM}{OPEN}"));
static RECENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{PARKED}{FROM} WHERE q.answered_at IS NOT NULL \
         ORDER BY r.updated_at DESC, q.run_id, q.position LIMIT $1"
    )
});
static DUE_TO_EXPIRE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT q.id, q.request{FROM}{OPEN} AND q.expires_at IS NOT NULL \
         AND q.expires_at <= $2"
    )
});
static DUE_TO_ESCALATE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT q.id, q.run_id, r.agent, q.request, q.parked_at{FROM}{OPEN} \
         AND q.escalated_at IS NULL AND q.parked_at <= $2 ORDER BY q.parked_at, q.id"
    )
});

fn waiting() -> &'static str {
    ParkedState::Waiting.as_str()
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Request `id`, whatever its state.
pub(crate) async fn get(pool: &AnyPool, id: &str) -> Result<Option<ParkedRow>, InboxError> {
    Ok(sqlx::query_as(GET.as_str())
        .bind(id)
        .fetch_optional(pool)
        .await?)
}

/// Every request of the run request `id` belongs to, in call order.
pub(crate) async fn of_run(pool: &AnyPool, id: &str) -> Result<Vec<ParkedRow>, InboxError> {
    Ok(sqlx::query_as(OF_RUN.as_str())
        .bind(id)
        .fetch_all(pool)
        .await?)
}

/// The open requests, oldest first.
pub(crate) async fn waiting_all(pool: &AnyPool) -> Result<Vec<ParkedRow>, InboxError> {
    Ok(sqlx::query_as(WAITING.as_str())
        .bind(waiting())
        .fetch_all(pool)
        .await?)
}

/// At most `limit` open requests from the `offset`-th, oldest first, and how many are open
/// in all.
pub(crate) async fn waiting_page(
    pool: &AnyPool,
    offset: usize,
    limit: usize,
) -> Result<(i64, Vec<ParkedRow>), InboxError> {
    let total = sqlx::query_scalar::<_, i64>(COUNT_WAITING.as_str())
        .bind(waiting())
        .fetch_one(pool);
    let page = sqlx::query_as(WAITING_PAGE.as_str())
        .bind(waiting())
        .bind(count(limit))
        .bind(count(offset))
        .fetch_all(pool);
    Ok(tokio::try_join!(total, page)?)
}

/// The `limit` answered requests whose runs changed last, newest first.
pub(crate) async fn recent(pool: &AnyPool, limit: usize) -> Result<Vec<ParkedRow>, InboxError> {
    Ok(sqlx::query_as(RECENT.as_str())
        .bind(count(limit))
        .fetch_all(pool)
        .await?)
}

/// A request of a halted run, ready to be inserted.
pub(crate) struct NewRequest<'a> {
    pub(crate) id: &'a str,
    pub(crate) run: &'a str,
    pub(crate) position: i64,
    /// The request as JSON.
    pub(crate) request: &'a str,
    /// The call that asked it, and that call's arguments as JSON.
    pub(crate) tool_name: Option<&'a str>,
    pub(crate) tool_args: Option<&'a str>,
    pub(crate) at: i64,
    pub(crate) expires_at: Option<i64>,
}

/// Inserts a request; `false` when a request with its id exists already.
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    request: &NewRequest<'_>,
) -> Result<bool, InboxError> {
    let inserted = sqlx::query(
        "INSERT INTO toolnexus_inbox_requests (id, run_id, position, request, tool_name, \
         tool_args, parked_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(request.id)
    .bind(request.run)
    .bind(request.position)
    .bind(request.request)
    .bind(request.tool_name)
    .bind(request.tool_args)
    .bind(request.at)
    .bind(request.expires_at)
    .execute(conn)
    .await?;
    Ok(inserted.rows_affected() > 0)
}

row! {
    /// A request as an answer reads it: the request, its deadline, its answer's time and who
    /// an escalation added to its responders (a JSON list).
    pub(crate) struct ToAnswer {
        pub(crate) request: String,
        pub(crate) expires_at: Option<i64>,
        pub(crate) answered_at: Option<i64>,
        pub(crate) escalated_to: Option<String>,
        /// The votes given so far (a JSON list), when any.
        pub(crate) votes: Option<String>,
        /// The call that asked the request, and its arguments as JSON: what a receipt binds.
        pub(crate) tool_name: Option<String>,
        pub(crate) tool_args: Option<String>,
    }
}

/// Request `id` as an answer reads it, inside the answer's transaction.
pub(crate) async fn to_answer(conn: &mut AnyConnection, id: &str) -> Result<ToAnswer, InboxError> {
    Ok(sqlx::query_as(
        "SELECT request, expires_at, answered_at, escalated_to, votes, tool_name, tool_args \
         FROM toolnexus_inbox_requests WHERE id = $1",
    )
    .bind(id)
    .fetch_one(conn)
    .await?)
}

/// Records the answer to request `id`, and the votes that led to it (a JSON list).
pub(crate) async fn record_answer(
    conn: &mut AnyConnection,
    id: &str,
    answer: &str,
    by: Option<&str>,
    votes: Option<&str>,
    now: i64,
) -> Result<(), InboxError> {
    sqlx::query(
        "UPDATE toolnexus_inbox_requests SET answer = $1, answered_by = $2, \
         answered_at = $3, votes = $4 WHERE id = $5 AND answered_at IS NULL",
    )
    .bind(answer)
    .bind(by)
    .bind(now)
    .bind(votes)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// An answer that resolves its request, recorded in one statement on an engine whose
/// statements may write in a `WITH` (PostgreSQL): the answer ($1, by $2, at $3, votes $4) on
/// request $5, its run $6 marked answered ($7) when it waited ($8) and this was its last open
/// request (else only its time of change), and the audit entry (kind $9, detail $1)
/// appended and announced; the run's agent is announced on `answered` when the run became
/// ready. One round trip instead of three or four. The caller's transaction holds the
/// run's row locked, so no other answer to the run is between the snapshot and the
/// statement: the other requests it reads open are open, and this one, which the
/// statement's own snapshot still shows open, is left out of the count.
pub(crate) fn answer_recorded_sql(answered: &str, changed: &str) -> String {
    format!(
        "WITH recorded AS (UPDATE toolnexus_inbox_requests SET answer = $1, answered_by = $2, \
         answered_at = $3, votes = $4 WHERE id = $5 AND answered_at IS NULL RETURNING id), \
         run AS (UPDATE toolnexus_inbox_runs SET updated_at = $3, \
         state = CASE WHEN state = $8 AND NOT EXISTS (SELECT 1 FROM toolnexus_inbox_requests o \
         WHERE o.run_id = $6 AND o.answered_at IS NULL AND o.id <> $5) THEN $7 ELSE state END, \
         answered_at = CASE WHEN state = $8 AND NOT EXISTS (SELECT 1 FROM \
         toolnexus_inbox_requests o WHERE o.run_id = $6 AND o.answered_at IS NULL \
         AND o.id <> $5) THEN $3 ELSE answered_at END WHERE id = $6 RETURNING agent, state), \
         entry AS (INSERT INTO toolnexus_inbox_audit (run_id, seq, at, kind, request_id, \
         actor, attempt, detail) SELECT $6, COALESCE(MAX(seq), 0) + 1, $3, $9, $5, $2, NULL, $1 \
         FROM toolnexus_inbox_audit WHERE run_id = $6 RETURNING run_id) \
         SELECT run.state = $7 AS ready FROM run CROSS JOIN entry \
         CROSS JOIN LATERAL (SELECT pg_notify('{changed}', entry.run_id)) AS told \
         LEFT JOIN LATERAL (SELECT pg_notify('{answered}', run.agent) WHERE run.state = $7) \
         AS woken ON TRUE"
    )
}

/// [`answer_recorded_sql`] for an engine that runs several statements sent together
/// (SQLite), numbered alike, inside the caller's transaction, which holds the database's
/// write lock: the answer, the run's time of change and its state (answered when this
/// answer was its last open request), the audit entry, and `ready` read back. Each
/// statement sees what the ones before it wrote, so the request just answered no longer
/// counts as open. (The trail's run is [`SQLITE_STABLE`](super::planning::SQLITE_STABLE).)
pub(crate) const ANSWER_RECORDED_BATCHED: &str = "UPDATE toolnexus_inbox_requests SET \
     answer = $1, answered_by = $2, answered_at = $3, votes = $4 \
     WHERE id = $5 AND answered_at IS NULL; \
     UPDATE toolnexus_inbox_runs SET updated_at = $3, \
     state = CASE WHEN state = $8 AND NOT EXISTS (SELECT 1 FROM toolnexus_inbox_requests o \
     WHERE o.run_id = $6 AND o.answered_at IS NULL) THEN $7 ELSE state END, \
     answered_at = CASE WHEN state = $8 AND NOT EXISTS (SELECT 1 FROM \
     toolnexus_inbox_requests o WHERE o.run_id = $6 AND o.answered_at IS NULL) \
     THEN $3 ELSE answered_at END WHERE id = $6; \
     INSERT INTO toolnexus_inbox_audit (run_id, seq, at, kind, request_id, actor, attempt, \
     detail) SELECT $6, COALESCE(MAX(seq), 0) + 1, $3, $9, $5, $2, NULL, $1 \
     FROM toolnexus_inbox_audit WHERE run_id = +$6; \
     SELECT state = $7 AS ready FROM toolnexus_inbox_runs WHERE id = $6";

/// The answer that resolves request `id` of run `run`, recorded with a statement of
/// [`answer_recorded_sql`] (or [`ANSWER_RECORDED_BATCHED`]), `kind` the audit entry's kind:
/// `true` when the run is now ready to resume.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn answer_recorded(
    conn: &mut AnyConnection,
    sql: &'static str,
    id: &str,
    run: &str,
    answer: &str,
    by: Option<&str>,
    votes: &str,
    kind: &str,
    now: i64,
) -> Result<bool, InboxError> {
    // Every row is read (SQLite's statements after a row's would not run once one came
    // back); only the last statement returns one.
    let rows = sqlx::query(sql)
        .bind(answer)
        .bind(by)
        .bind(now)
        .bind(votes)
        .bind(id)
        .bind(run)
        .bind(ParkedState::Answered.as_str())
        .bind(ParkedState::Waiting.as_str())
        .bind(kind)
        .fetch_all(conn)
        .await?;
    let Some(row) = rows.last() else {
        return Ok(false);
    };
    // A boolean on PostgreSQL; SQLite's comparison is a number.
    match row.try_get::<bool, _>("ready") {
        Ok(ready) => Ok(ready),
        Err(_) => Ok(row.try_get::<i64, _>("ready")? != 0),
    }
}

/// Records the votes of request `id`, still open: one more approval toward its quorum.
pub(crate) async fn record_votes(
    conn: &mut AnyConnection,
    id: &str,
    votes: &str,
) -> Result<(), InboxError> {
    sqlx::query(
        "UPDATE toolnexus_inbox_requests SET votes = $1 WHERE id = $2 AND answered_at IS NULL",
    )
    .bind(votes)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

row! {
    /// An open request whose deadline passed: its id and the request as JSON.
    pub(crate) struct Due {
        pub(crate) id: String,
        pub(crate) request: String,
    }
}

/// The open requests whose deadline is `now` or earlier.
pub(crate) async fn due_to_expire(pool: &AnyPool, now: i64) -> Result<Vec<Due>, InboxError> {
    Ok(sqlx::query_as(DUE_TO_EXPIRE.as_str())
        .bind(waiting())
        .bind(now)
        .fetch_all(pool)
        .await?)
}

row! {
    /// An open request not escalated yet, with what an escalation needs to know of it.
    pub(crate) struct Unescalated {
        pub(crate) id: String,
        pub(crate) run_id: String,
        pub(crate) agent: String,
        pub(crate) request: String,
        pub(crate) parked_at: i64,
    }
}

/// The open requests not escalated yet that were parked at `before` or earlier, oldest
/// first.
pub(crate) async fn due_to_escalate(
    pool: &AnyPool,
    before: i64,
) -> Result<Vec<Unescalated>, InboxError> {
    Ok(sqlx::query_as(DUE_TO_ESCALATE.as_str())
        .bind(waiting())
        .bind(before)
        .fetch_all(pool)
        .await?)
}

/// Marks request `id` escalated at `now` to `to` (a JSON list), unless it was answered or
/// escalated since it was read: `false` then.
pub(crate) async fn mark_escalated(
    conn: &mut AnyConnection,
    id: &str,
    to: &str,
    now: i64,
) -> Result<bool, InboxError> {
    let marked = sqlx::query(
        "UPDATE toolnexus_inbox_requests SET escalated_at = $1, escalated_to = $2 \
         WHERE id = $3 AND escalated_at IS NULL AND answered_at IS NULL",
    )
    .bind(now)
    .bind(to)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(marked.rows_affected() > 0)
}

row! {
    /// A request's stored answer, and the call it was parked for (its tool's name and its
    /// arguments as JSON), when it was a tool call's.
    #[derive(serde::Deserialize)]
    pub(crate) struct StoredAnswer {
        pub(crate) id: String,
        pub(crate) answer: Option<String>,
        pub(crate) tool_name: Option<String>,
        pub(crate) tool_args: Option<String>,
    }
}

/// The answers to run `run`'s requests, in call order.
pub(crate) async fn answers_of<'e>(
    on: impl sqlx::Executor<'e, Database = sqlx::Any>,
    run: &str,
) -> Result<Vec<StoredAnswer>, InboxError> {
    Ok(sqlx::query_as(
        "SELECT id, answer, tool_name, tool_args FROM toolnexus_inbox_requests \
         WHERE run_id = $1 ORDER BY position",
    )
    .bind(run)
    .fetch_all(on)
    .await?)
}

/// The id of the run request `id` belongs to, if any.
pub(crate) async fn run_of(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<Option<String>, InboxError> {
    Ok(
        sqlx::query_scalar("SELECT run_id FROM toolnexus_inbox_requests WHERE id = $1")
            .bind(id)
            .fetch_optional(conn)
            .await?,
    )
}

/// The ids of run `run`'s requests still unanswered, in call order.
pub(crate) async fn open_of_run(
    conn: &mut AnyConnection,
    run: &str,
) -> Result<Vec<String>, InboxError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM toolnexus_inbox_requests WHERE run_id = $1 AND answered_at IS NULL \
         ORDER BY position",
    )
    .bind(run)
    .fetch_all(conn)
    .await?)
}
