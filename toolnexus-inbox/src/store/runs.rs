//! `toolnexus_inbox_runs`: one row per parked run — its transcript, its state, the claim a
//! worker holds on it (a lease fenced by the attempt counter) and its outcome.
//!
//! Every write a worker makes under a claim names the attempt it claimed with, so a worker
//! whose lease lapsed can never write over the worker that took the run over.

use sqlx::{AnyConnection, AnyPool, Row};

use super::row::row;

use super::planning::SQLITE_STABLE;
use super::requests::StoredAnswer;
use super::Dialect;
use crate::error::InboxError;
use crate::records::state::ParkedState;

/// A halted run, ready to be inserted.
pub(crate) struct NewRun<'a> {
    pub(crate) id: &'a str,
    pub(crate) agent: &'a str,
    pub(crate) messages: &'a str,
    pub(crate) model: &'a str,
    pub(crate) turns: i64,
    /// When it is parked.
    pub(crate) at: i64,
    /// Its requests' ids in call order, as a JSON list.
    pub(crate) request_ids: &'a str,
    /// Who asked for it, when known.
    pub(crate) requested_by: Option<&'a str>,
}

/// Inserts a waiting run; `false` when a run with its id exists already.
pub(crate) async fn insert(conn: &mut AnyConnection, run: &NewRun<'_>) -> Result<bool, InboxError> {
    let inserted = sqlx::query(
        "INSERT INTO toolnexus_inbox_runs (id, agent, state, messages, model, turns, \
         parked_at, attempts, updated_at, request_ids, requested_by) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $7, $8, $9) ON CONFLICT (id) DO NOTHING",
    )
    .bind(run.id)
    .bind(run.agent)
    .bind(ParkedState::Waiting.as_str())
    .bind(run.messages)
    .bind(run.model)
    .bind(run.turns)
    .bind(run.at)
    .bind(run.request_ids)
    .bind(run.requested_by)
    .execute(&mut *conn)
    .await?;
    Ok(inserted.rows_affected() > 0)
}

/// A run whose row this transaction holds locked.
pub(crate) struct Locked {
    pub(crate) id: String,
    pub(crate) state: ParkedState,
    pub(crate) agent: String,
}

row! {
    struct LockedRow {
        id: String,
        state: String,
        agent: String,
    }
}

/// Locks run `run`'s row until the transaction ends — the one way a run is locked. A write
/// that changes nothing takes the row's lock on PostgreSQL (SQLite's write transaction
/// holds the database's already), so changes of one run take turns: whichever comes
/// later sees what the earlier committed, and the audit entries each appends never race
/// for a number.
pub(crate) async fn lock(
    conn: &mut AnyConnection,
    run: &str,
) -> Result<Option<Locked>, InboxError> {
    const LOCK: &str = "UPDATE toolnexus_inbox_runs SET updated_at = updated_at WHERE id = $1 \
                        RETURNING id, state, agent";
    locked(sqlx::query_as(LOCK).bind(run).fetch_optional(conn).await?)
}

/// [`lock`]s the run request `request` belongs to.
pub(crate) async fn lock_of_request(
    conn: &mut AnyConnection,
    request: &str,
) -> Result<Option<Locked>, InboxError> {
    const LOCK: &str = "UPDATE toolnexus_inbox_runs SET updated_at = updated_at \
                        WHERE id = (SELECT run_id FROM toolnexus_inbox_requests WHERE id = $1) \
                        RETURNING id, state, agent";
    locked(
        sqlx::query_as(LOCK)
            .bind(request)
            .fetch_optional(conn)
            .await?,
    )
}

fn locked(row: Option<LockedRow>) -> Result<Option<Locked>, InboxError> {
    row.map(|row| {
        Ok(Locked {
            state: state_of(&row.id, &row.state)?,
            id: row.id,
            agent: row.agent,
        })
    })
    .transpose()
}

/// A state column read back; anything but a [`ParkedState`] is a corrupt row.
pub(crate) fn state_of(id: &str, text: &str) -> Result<ParkedState, InboxError> {
    ParkedState::parse(text).ok_or_else(|| InboxError::Corrupt {
        id: id.to_owned(),
        reason: format!("unknown state {text:?}"),
    })
}

/// Records that run `run` changed at `now` (an answer to one of its requests).
pub(crate) async fn touch(conn: &mut AnyConnection, run: &str, now: i64) -> Result<(), InboxError> {
    sqlx::query("UPDATE toolnexus_inbox_runs SET updated_at = $1 WHERE id = $2")
        .bind(now)
        .bind(run)
        .execute(conn)
        .await?;
    Ok(())
}

/// Marks run $2 answered at $1 once none of its requests is open; a row comes back when it
/// did. The dialect may wrap it (PostgreSQL announces the answer in the same statement).
pub(crate) const MARK_ANSWERED: &str =
    "UPDATE toolnexus_inbox_runs SET state = $3, answered_at = $1, updated_at = $1 \
     WHERE id = $2 AND state = $4 AND NOT EXISTS (SELECT 1 FROM toolnexus_inbox_requests \
     WHERE run_id = $2 AND answered_at IS NULL) RETURNING agent";

/// Marks run `run` answered when its last open request has just been answered: `true`
/// when it did, so the run is now ready to resume.
pub(crate) async fn mark_answered(
    conn: &mut AnyConnection,
    dialect: &Dialect,
    run: &str,
    now: i64,
) -> Result<bool, InboxError> {
    let answered = sqlx::query(dialect.mark_answered.as_str())
        .bind(now)
        .bind(run)
        .bind(ParkedState::Answered.as_str())
        .bind(ParkedState::Waiting.as_str())
        .fetch_optional(conn)
        .await?;
    Ok(answered.is_some())
}

/// What a claim is made on: this agent's runs with attempts left, at `now`, under a
/// lease lasting until `lease_until`.
pub(crate) struct Terms<'a> {
    pub(crate) agent: &'a str,
    pub(crate) now: i64,
    pub(crate) lease_until: i64,
    pub(crate) max_attempts: i64,
}

row! {
    /// A run a claim took: what resuming it needs, and the attempt number that fences its
    /// writes.
    pub(crate) struct Claimed {
        pub(crate) id: String,
        pub(crate) messages: String,
        pub(crate) attempts: i64,
        pub(crate) turns: i64,
    }
}

/// Which runs a claim may take: this agent's ($3) rows with attempts left ($4) that are
/// answered ($6) and not in a failed attempt's back-off, or running ($5) under a lease that
/// lapsed at now ($2) (their worker died). `plus` goes before the parameters compared for
/// equality: [`SQLITE_STABLE`] on SQLite.
fn claimable(plus: &str) -> String {
    format!(
        "agent = {plus}$3 AND attempts < $4 \
         AND ((state = {plus}$6 AND (lease_until IS NULL OR lease_until <= $2)) \
         OR (state = {plus}$5 AND lease_until <= $2))"
    )
}

/// A claim: the [`claimable`] row(s) matched by `target` become running under the lease
/// ($1, now being $2), and their attempt counter — the fencing token — goes up by one.
fn claim_update(target: &str, plus: &str) -> String {
    format!(
        "UPDATE toolnexus_inbox_runs SET state = $5, attempts = attempts + 1, \
         lease_until = $1, updated_at = $2 WHERE {target} AND {}",
        claimable(plus)
    )
}

/// [`claim_update`] in one statement that returns everything the resume needs.
fn claim_sql(target: &str) -> String {
    format!(
        "{} RETURNING id, messages, attempts, turns",
        claim_update(target, "")
    )
}

/// The claim of the run `target` matches, its audit entry and its answers as the whole
/// transaction, statements sent together in one request, for an engine that runs
/// several at once (SQLite); `begin` begins it, taking the write lock. Numbered as
/// [`audited`] numbers its own: the entry's kind and actor are the parameters numbered
/// `first` and `first + 1`.
///
/// The entry is appended first, for the run the claim is about to take: both statements
/// choose it by the same `target` from the same rows (the entry writes no run, and the
/// write lock lets no one else in between), so the entry is the claim's, with the attempt
/// number the claim gives it; when the claim takes nothing, neither appends anything. The
/// claim then returns the run with its answers as a JSON list of [`StoredAnswer`]s in call
/// order, and the transaction commits.
pub(crate) fn claim_batched_sql(target: &str, first: usize, begin: &str) -> String {
    let actor = first + 1;
    format!(
        "{begin}; INSERT INTO toolnexus_inbox_audit (run_id, seq, at, kind, request_id, actor, \
         attempt, detail) SELECT id, (SELECT COALESCE(MAX(a.seq), 0) + 1 FROM \
         toolnexus_inbox_audit a WHERE a.run_id = toolnexus_inbox_runs.id), $2, ${first}, NULL, \
         ${actor}, attempts + 1, NULL FROM toolnexus_inbox_runs WHERE {target} AND {}; \
         {} RETURNING id, messages, attempts, turns, (SELECT json_group_array(json_object(\
         'id', q.id, 'answer', q.answer, 'tool_name', q.tool_name, 'tool_args', q.tool_args) \
         ORDER BY q.position) FROM toolnexus_inbox_requests q \
         WHERE q.run_id = toolnexus_inbox_runs.id) AS answers; COMMIT",
        claimable(SQLITE_STABLE),
        claim_update(target, SQLITE_STABLE)
    )
}

/// The claim of the oldest run ready to resume, `lock` choosing how concurrent claims
/// pass each other by.
///
/// Two lookups, each a walk down the claim index in its own order, so a claim costs the
/// same with ten thousand runs answered as with one: first a run whose worker died (few,
/// and the oldest claims), else the oldest answer. The second runs only when the first
/// finds nothing.
pub(crate) fn claim_next_sql(lock: &str) -> String {
    claim_sql(&next_target(lock, ""))
}

/// The `target` of [`claim_next_sql`]: the two lookups, `plus` before the parameters
/// compared for equality ([`SQLITE_STABLE`] on SQLite).
pub(crate) fn next_target(lock: &str, plus: &str) -> String {
    format!(
        "id = COALESCE((SELECT id FROM toolnexus_inbox_runs WHERE agent = {plus}$3 \
         AND state = {plus}$5 AND lease_until <= $2 AND attempts < $4 \
         ORDER BY answered_at, id LIMIT 1{lock}), (SELECT id FROM toolnexus_inbox_runs \
         WHERE agent = {plus}$3 AND state = {plus}$6 AND attempts < $4 \
         AND (lease_until IS NULL OR lease_until <= $2) ORDER BY answered_at, id LIMIT 1{lock}))"
    )
}

/// The `target` of a claim of the run any of whose requests ($7) names.
pub(crate) const RUN_OF_TARGET: &str =
    "id = (SELECT run_id FROM toolnexus_inbox_requests WHERE id = $7)";

/// Any request of the run ($7) names it.
pub(crate) static CLAIM_RUN_OF: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| claim_sql(RUN_OF_TARGET));

/// `claim` (a claim statement) and the claim's audit entry in one statement, for an engine
/// whose statements may write in a `WITH` (PostgreSQL): one round trip instead of a
/// transaction's four. The entry's kind and actor are the parameters numbered `first` and
/// `first + 1`. The claim's `UPDATE` holds the run's row until the statement ends, so the
/// entry's number is the run's next, as in [`audit::append`](super::audit::append).
///
/// With `answers`, the statement also returns the run's answers ([`ANSWERS`]), read in its
/// snapshot. Only for a claim that never waits on the run's row (`SKIP LOCKED`): a run it
/// finds answered was answered before the snapshot, so every answer is in it. A claim
/// that waited for the transaction of the run's last answer would take the run without
/// seeing that answer, and reads them after it instead ([`Claimed::answers`]).
pub(crate) fn audited(claim: &str, first: usize, answers: bool) -> String {
    let actor = first + 1;
    let answers = if answers { ANSWERS } else { "NULL::text" };
    format!(
        "WITH claimed AS ({claim}), entry AS (INSERT INTO toolnexus_inbox_audit (run_id, seq, \
         at, kind, request_id, actor, attempt, detail) SELECT claimed.id, COALESCE((SELECT \
         MAX(a.seq) FROM toolnexus_inbox_audit a WHERE a.run_id = claimed.id), 0) + 1, $2, \
         ${first}, NULL, ${actor}, claimed.attempts, NULL FROM claimed) \
         SELECT id, messages, attempts, turns, {answers} AS answers FROM claimed"
    )
}

/// The claimed run's requests' answers as a JSON list of [`StoredAnswer`]s in call order
/// (PostgreSQL).
const ANSWERS: &str = "(SELECT json_agg(json_build_object('id', q.id, 'answer', q.answer, \
     'tool_name', q.tool_name, 'tool_args', q.tool_args) ORDER BY q.position) \
     FROM toolnexus_inbox_requests q WHERE q.run_id = claimed.id)::text";

row! {
    /// A run an audited claim took, with its answers when the statement read them.
    struct AuditedClaim {
        id: String,
        messages: String,
        attempts: i64,
        turns: i64,
        answers: Option<String>,
    }
}

/// A run taken, and its requests' answers when the claim's statement read them too.
pub(crate) struct Taken {
    pub(crate) run: Claimed,
    pub(crate) answers: Option<Vec<StoredAnswer>>,
}

/// Claims with a statement of [`audited`], recording `worker` as the claimant.
pub(crate) async fn claim_audited(
    pool: &sqlx::AnyPool,
    sql: &'static str,
    terms: &Terms<'_>,
    request: Option<&str>,
    worker: &str,
) -> Result<Option<Taken>, InboxError> {
    let claim = bound(sql, terms, request, worker);
    let Some(row) = claim.fetch_optional(pool).await? else {
        return Ok(None);
    };
    Ok(Some(taken(row)))
}

/// Claims with a statement of [`claim_batched_sql`] on `conn`, outside any transaction
/// (the statements are one), recording `worker` as the claimant.
pub(crate) async fn claim_batched(
    conn: &mut AnyConnection,
    sql: &'static str,
    terms: &Terms<'_>,
    request: Option<&str>,
    worker: &str,
) -> Result<Option<Taken>, InboxError> {
    // Every row is read: the statements after the claim's (its commit) would not run once
    // a row came back to a read of one.
    let rows = bound(sql, terms, request, worker).fetch_all(conn).await?;
    Ok(rows.into_iter().next().map(taken))
}

/// The run a claim returned, with its answers when they read back.
fn taken(row: AuditedClaim) -> Taken {
    // Answers that do not read back are read again by themselves, as any claim's are.
    let answers = row.answers.and_then(|list| {
        serde_json::from_str::<Vec<StoredAnswer>>(&list)
            .inspect_err(|e| tracing::warn!(id = %row.id, error = %e, "the claim's answers did not read back"))
            .ok()
    });
    let run = Claimed {
        id: row.id,
        messages: row.messages,
        attempts: row.attempts,
        turns: row.turns,
    };
    Taken { run, answers }
}

/// A claim statement with its terms bound, in the order [`claim_sql`] numbers them, then
/// its audit entry's kind and actor (`worker`).
fn bound<'q>(
    sql: &'static str,
    terms: &'q Terms<'_>,
    request: Option<&'q str>,
    worker: &'q str,
) -> sqlx::query::QueryAs<'q, sqlx::Any, AuditedClaim, sqlx::any::AnyArguments> {
    let mut claim = sqlx::query_as(sql)
        .bind(terms.lease_until)
        .bind(terms.now)
        .bind(terms.agent)
        .bind(terms.max_attempts)
        .bind(ParkedState::Running.as_str())
        .bind(ParkedState::Answered.as_str());
    if let Some(request) = request {
        claim = claim.bind(request);
    }
    claim
        .bind(crate::records::audit::AuditKind::Claimed.as_str())
        .bind(worker)
}

/// Renews attempt `fence`'s lease on run `run` until `until`; `false` when the claim is
/// lost.
pub(crate) async fn renew(
    pool: &AnyPool,
    run: &str,
    fence: i64,
    until: i64,
) -> Result<bool, InboxError> {
    let renewed = sqlx::query(
        "UPDATE toolnexus_inbox_runs SET lease_until = $1 \
         WHERE id = $2 AND attempts = $3 AND state = $4",
    )
    .bind(until)
    .bind(run)
    .bind(fence)
    .bind(ParkedState::Running.as_str())
    .execute(pool)
    .await?;
    Ok(renewed.rows_affected() > 0)
}

/// The outcome attempt `fence` records on run `run`.
pub(crate) struct Finished<'a> {
    pub(crate) run: &'a str,
    pub(crate) fence: i64,
    /// The resumed run's result, as JSON.
    pub(crate) result: &'a str,
    /// The request the run halted on again, if it did.
    pub(crate) next: Option<&'a str>,
    pub(crate) at: i64,
}

/// Records a resumed run's outcome: done, with its result; `false` when the claim is lost.
pub(crate) async fn finish(
    conn: &mut AnyConnection,
    done: &Finished<'_>,
) -> Result<bool, InboxError> {
    let written = sqlx::query(
        "UPDATE toolnexus_inbox_runs SET state = $1, result = $2, next_id = $3, \
         lease_until = NULL, last_error = NULL, updated_at = $4 \
         WHERE id = $5 AND attempts = $6 AND state = $7",
    )
    .bind(ParkedState::Done.as_str())
    .bind(done.result)
    .bind(done.next)
    .bind(done.at)
    .bind(done.run)
    .bind(done.fence)
    .bind(ParkedState::Running.as_str())
    .execute(conn)
    .await?;
    Ok(written.rows_affected() > 0)
}

/// A resumed run's end recorded by statements sent together inside the caller's
/// transaction, for an engine that runs several at once (SQLite), numbered as
/// [`finish_audited_sql`] numbers its own, the request the run halted on again being $10:
/// the run done with its result, fenced by the attempt; then, only when that attempt's
/// outcome is now recorded, its journal cleared and its audit entry appended. The row is
/// done under the attempt only when these statements made it so: an attempt records its
/// outcome once, and no other attempt writes a row it does not hold. The transaction holds
/// the database's write lock, so the entry's number is the run's next. (The trail's run is
/// [`SQLITE_STABLE`].)
pub(crate) const FINISH_BATCHED: &str = "UPDATE toolnexus_inbox_runs SET state = $1, \
     result = $2, next_id = $10, lease_until = NULL, last_error = NULL, updated_at = $3 \
     WHERE id = $4 AND attempts = $5 AND state = $6; \
     DELETE FROM toolnexus_inbox_journal WHERE run_id = $4 AND EXISTS (SELECT 1 FROM \
     toolnexus_inbox_runs WHERE id = $4 AND attempts = $5 AND state = $1); \
     INSERT INTO toolnexus_inbox_audit (run_id, seq, at, kind, request_id, actor, attempt, \
     detail) SELECT $4, (SELECT COALESCE(MAX(seq), 0) + 1 FROM toolnexus_inbox_audit \
     WHERE run_id = +$4), $3, $7, NULL, $8, $5, $9 WHERE EXISTS (SELECT 1 FROM \
     toolnexus_inbox_runs WHERE id = $4 AND attempts = $5 AND state = $1)";

/// [`FINISH_BATCHED`] as the whole transaction, in one request: `begin` begins it, taking
/// the write lock, and it commits after them. Sent on a connection outside any transaction;
/// one that failed part-way may leave the transaction open, so that connection is let go
/// ([`Single::discard`](super::Single::discard)).
pub(crate) fn finish_alone_sql(begin: &str) -> String {
    format!("{begin}; {FINISH_BATCHED}; COMMIT")
}

/// Records a resumed run's end with [`FINISH_BATCHED`] (or [`finish_alone_sql`]), `worker` the entry's actor and
/// `outcome` its detail; `false` when the claim is lost and nothing was written.
pub(crate) async fn finish_batched(
    conn: &mut AnyConnection,
    sql: &'static str,
    done: &Finished<'_>,
    worker: &str,
    outcome: &str,
) -> Result<bool, InboxError> {
    let written = finish_bound(sql, done, worker, outcome)
        .bind(done.next)
        .execute(conn)
        .await?;
    // The three statements' rows together: none when the run was not this attempt's.
    Ok(written.rows_affected() > 0)
}

/// A statement recording a run's end with the parameters [`finish_audited_sql`] numbers.
fn finish_bound<'q>(
    sql: &'static str,
    done: &'q Finished<'_>,
    worker: &'q str,
    outcome: &'q str,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    sqlx::query(sql)
        .bind(ParkedState::Done.as_str())
        .bind(done.result)
        .bind(done.at)
        .bind(done.run)
        .bind(done.fence)
        .bind(ParkedState::Running.as_str())
        .bind(crate::records::audit::AuditKind::Resumed.as_str())
        .bind(worker)
        .bind(outcome)
}

/// A resumed run's end recorded in one statement, for an engine whose statements may write
/// in a `WITH` (PostgreSQL): the run done with its result ($2, at $3), its journal cleared,
/// and its audit entry (kind $7, actor $8, detail $9) appended and announced, fenced by the
/// attempt ($4 the run, $5 the attempt): one round trip instead of a transaction's five. A
/// row comes back when it was written. The entry's number is read in the statement's
/// snapshot: should another transaction have appended one to the run meanwhile, the two
/// numbers meet on the trail's key, the statement fails whole, and the caller records the
/// outcome in a transaction instead ([`finish_audited`]).
pub(crate) fn finish_audited_sql(changed: &str) -> String {
    format!(
        "WITH finished AS (UPDATE toolnexus_inbox_runs SET state = $1, result = $2, \
         next_id = NULL, lease_until = NULL, last_error = NULL, updated_at = $3 \
         WHERE id = $4 AND attempts = $5 AND state = $6 RETURNING id, attempts), \
         cleared AS (DELETE FROM toolnexus_inbox_journal \
         WHERE run_id IN (SELECT id FROM finished)), \
         entry AS (INSERT INTO toolnexus_inbox_audit (run_id, seq, at, kind, request_id, actor, \
         attempt, detail) SELECT finished.id, COALESCE((SELECT MAX(a.seq) FROM \
         toolnexus_inbox_audit a WHERE a.run_id = finished.id), 0) + 1, $3, $7, NULL, $8, \
         finished.attempts, $9 FROM finished RETURNING run_id) \
         SELECT entry.run_id FROM entry, LATERAL (SELECT pg_notify('{changed}', entry.run_id)) \
         AS announced"
    )
}

/// Records a resumed run's end with a statement of [`finish_audited_sql`], `worker` the
/// entry's actor and `outcome` its detail: `Some(true)` when recorded, `Some(false)` when
/// the claim is lost, `None` when another entry of the run took the number meanwhile and
/// nothing was written.
pub(crate) async fn finish_audited(
    pool: &AnyPool,
    sql: &'static str,
    done: &Finished<'_>,
    worker: &str,
    outcome: &str,
) -> Result<Option<bool>, InboxError> {
    let written = finish_bound(sql, done, worker, outcome)
        .fetch_optional(pool)
        .await;
    match written {
        Ok(row) => Ok(Some(row.is_some())),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A failed attempt `fence` records on run `run`.
pub(crate) struct Failure<'a> {
    pub(crate) run: &'a str,
    pub(crate) fence: i64,
    /// `Answered` to be resumed again at `retry_at`, or `Failed` for good.
    pub(crate) then: ParkedState,
    pub(crate) error: &'a str,
    pub(crate) retry_at: Option<i64>,
    pub(crate) at: i64,
}

/// Records a failed attempt; `false` when the claim is lost.
pub(crate) async fn fail_attempt(
    conn: &mut AnyConnection,
    failure: &Failure<'_>,
) -> Result<bool, InboxError> {
    let written = sqlx::query(
        "UPDATE toolnexus_inbox_runs SET state = $1, last_error = $2, lease_until = $3, \
         updated_at = $4 WHERE id = $5 AND attempts = $6 AND state = $7",
    )
    .bind(failure.then.as_str())
    .bind(failure.error)
    .bind(failure.retry_at)
    .bind(failure.at)
    .bind(failure.run)
    .bind(failure.fence)
    .bind(ParkedState::Running.as_str())
    .execute(conn)
    .await?;
    Ok(written.rows_affected() > 0)
}

row! {
    /// A run given up because its last allowed attempt died with its worker.
    pub(crate) struct Exhausted {
        pub(crate) id: String,
        pub(crate) attempts: i64,
        pub(crate) last_error: String,
    }
}

/// Marks failed the runs of `agent` whose last allowed attempt (of `max_attempts`) died
/// with its worker: their lease lapsed at `now` with no attempts left.
pub(crate) async fn fail_exhausted(
    conn: &mut AnyConnection,
    agent: &str,
    max_attempts: i64,
    now: i64,
) -> Result<Vec<Exhausted>, InboxError> {
    Ok(sqlx::query_as(
        "UPDATE toolnexus_inbox_runs SET state = $4, lease_until = NULL, \
         last_error = COALESCE(last_error, 'the worker stopped during the last allowed attempt'), \
         updated_at = $1 WHERE agent = $2 AND attempts >= $3 \
         AND state IN ($5, $6) AND lease_until <= $1 \
         RETURNING id, attempts, last_error",
    )
    .bind(now)
    .bind(agent)
    .bind(max_attempts)
    .bind(ParkedState::Failed.as_str())
    .bind(ParkedState::Running.as_str())
    .bind(ParkedState::Answered.as_str())
    .fetch_all(conn)
    .await?)
}

/// Marks run `run` failed for `why`, when it is answered or running; `false` when it was
/// neither.
pub(crate) async fn give_up(
    conn: &mut AnyConnection,
    run: &str,
    why: &str,
    now: i64,
) -> Result<bool, InboxError> {
    let from = [ParkedState::Running, ParkedState::Answered];
    fail_from(conn, run, why, now, from).await
}

/// Ends waiting run `run` as cancelled (failed, `why` its error) without a resume; `false`
/// when it was no longer waiting.
pub(crate) async fn cancel(
    conn: &mut AnyConnection,
    run: &str,
    why: &str,
    now: i64,
) -> Result<bool, InboxError> {
    fail_from(conn, run, why, now, [ParkedState::Waiting; 2]).await
}

/// Marks run `run` failed for `why` when it stands in one of the states `from` names (one
/// given twice when only one will do); `false` when it stood in neither.
async fn fail_from(
    conn: &mut AnyConnection,
    run: &str,
    why: &str,
    now: i64,
    from: [ParkedState; 2],
) -> Result<bool, InboxError> {
    let [first, second] = from;
    let failed = sqlx::query(
        "UPDATE toolnexus_inbox_runs SET state = $1, lease_until = NULL, last_error = $2, \
         updated_at = $3 WHERE id = $4 AND state IN ($5, $6)",
    )
    .bind(ParkedState::Failed.as_str())
    .bind(why)
    .bind(now)
    .bind(run)
    .bind(first.as_str())
    .bind(second.as_str())
    .execute(conn)
    .await?;
    Ok(failed.rows_affected() > 0)
}

/// Who asked for run `run`, when a door said.
pub(crate) async fn requester_of(
    conn: &mut AnyConnection,
    run: &str,
) -> Result<Option<String>, InboxError> {
    let found: Option<Option<String>> =
        sqlx::query_scalar("SELECT requested_by FROM toolnexus_inbox_runs WHERE id = $1")
            .bind(run)
            .fetch_optional(conn)
            .await?;
    Ok(found.flatten())
}

/// The run that became `run` when it halted again (whose `next_id` it is), if any.
pub(crate) async fn previous(pool: &AnyPool, run: &str) -> Result<Option<String>, InboxError> {
    let row = sqlx::query("SELECT id FROM toolnexus_inbox_runs WHERE next_id = $1")
        .bind(run)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|r| r.try_get("id")).transpose()?)
}
