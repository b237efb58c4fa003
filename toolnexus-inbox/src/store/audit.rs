//! `toolnexus_inbox_audit`: every change of a run, appended in the transaction that makes
//! it and never rewritten.

use std::sync::LazyLock;

use sqlx::{AnyConnection, AnyPool};

use super::row::row;

use crate::error::InboxError;

/// The PostgreSQL channel every change of a run is announced on (its payload the run's
/// id), so a process showing runs as they go looks again at once. Every change appends
/// an audit entry, which is why the trail owns it.
pub(crate) const CHANGED: &str = "toolnexus_inbox_changed";

/// The append, `plus` before the run's parameter where it finds the run's last entry
/// ([`SQLITE_STABLE`](super::planning::SQLITE_STABLE) on SQLite).
fn append_sql(plus: &str) -> String {
    format!(
        "INSERT INTO toolnexus_inbox_audit (run_id, seq, at, kind, request_id, actor, attempt, \
         detail) SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6, $7 \
         FROM toolnexus_inbox_audit WHERE run_id = {plus}$1"
    )
}

static APPEND_SQLITE: LazyLock<String> =
    LazyLock::new(|| append_sql(super::planning::SQLITE_STABLE));

// `pg_notify` returns `void`, which no row may carry: it runs in a lateral subquery of its
// own, once per appended row (PostgreSQL folds a transaction's equal notifications).
static APPEND_ANNOUNCED: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH appended AS ({} RETURNING run_id) SELECT appended.run_id FROM appended, \
         LATERAL (SELECT pg_notify('{}', appended.run_id)) AS announced",
        append_sql(""),
        CHANGED
    )
});

/// An entry about to be appended to run `run`'s trail.
pub(crate) struct NewEntry<'a> {
    pub(crate) run: &'a str,
    /// What happened, as the trail spells it.
    pub(crate) kind: &'a str,
    pub(crate) request: Option<&'a str>,
    pub(crate) actor: Option<&'a str>,
    pub(crate) attempt: Option<i64>,
    pub(crate) detail: Option<&'a str>,
    pub(crate) at: i64,
}

/// Appends an entry inside the caller's transaction. Every caller has locked the run's row
/// in that transaction ([`runs::lock`](super::runs::lock), or a write to it), which holds
/// until commit, so two entries of one run never race for a number.
///
/// On PostgreSQL the same statement announces the change to every process listening
/// ([`CHANGED`]): every change of a run appends an entry, so
/// nothing changes unannounced, and the announcement goes out as the change commits.
pub(crate) async fn append(
    conn: &mut AnyConnection,
    entry: &NewEntry<'_>,
) -> Result<(), InboxError> {
    let statement = if conn.backend_name() == "PostgreSQL" {
        APPEND_ANNOUNCED.as_str()
    } else {
        APPEND_SQLITE.as_str()
    };
    sqlx::query(statement)
        .bind(entry.run)
        .bind(entry.at)
        .bind(entry.kind)
        .bind(entry.request)
        .bind(entry.actor)
        .bind(entry.attempt)
        .bind(entry.detail)
        .execute(conn)
        .await?;
    Ok(())
}

row! {
    /// An entry as [`of_run`] reads it.
    pub(crate) struct EntryRow {
        pub(crate) at: i64,
        pub(crate) kind: String,
        pub(crate) request_id: Option<String>,
        pub(crate) actor: Option<String>,
        pub(crate) attempt: Option<i64>,
        pub(crate) detail: Option<String>,
    }
}

/// The trail of the run request `id` belongs to, oldest first; when no request has that
/// id, the trail kept under `id` itself (a delegation's, `delegation:ID`).
pub(crate) async fn of_run(pool: &AnyPool, id: &str) -> Result<Vec<EntryRow>, InboxError> {
    Ok(sqlx::query_as(
        "SELECT at, kind, request_id, actor, attempt, detail FROM toolnexus_inbox_audit \
         WHERE run_id = COALESCE((SELECT run_id FROM toolnexus_inbox_requests WHERE id = $1), $1) \
         ORDER BY seq",
    )
    .bind(id)
    .fetch_all(pool)
    .await?)
}
