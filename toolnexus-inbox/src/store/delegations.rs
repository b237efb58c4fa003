//! `toolnexus_inbox_delegations`: answering rights one person handed another for a window.

use sqlx::{AnyConnection, AnyPool};

use super::row::row;

use crate::error::InboxError;

row! {
    /// A delegation as stored; ids lowercased.
    pub(crate) struct DelegationRow {
        pub(crate) id: String,
        pub(crate) from_person: String,
        pub(crate) to_id: String,
        pub(crate) until_at: i64,
        pub(crate) created_at: i64,
        pub(crate) revoked_at: Option<i64>,
    }
}

const COLUMNS: &str =
    "SELECT id, from_person, to_id, until_at, created_at, revoked_at FROM toolnexus_inbox_delegations";

/// A delegation about to be inserted.
pub(crate) struct NewDelegation<'a> {
    pub(crate) id: &'a str,
    pub(crate) from_id: &'a str,
    pub(crate) from_person: &'a str,
    pub(crate) to_id: &'a str,
    pub(crate) until: i64,
    pub(crate) at: i64,
}

pub(crate) async fn insert(
    conn: &mut AnyConnection,
    new: &NewDelegation<'_>,
) -> Result<(), InboxError> {
    sqlx::query(
        "INSERT INTO toolnexus_inbox_delegations (id, from_id, from_person, to_id, until_at, \
         created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(new.id)
    .bind(new.from_id)
    .bind(new.from_person)
    .bind(new.to_id)
    .bind(new.until)
    .bind(new.at)
    .execute(conn)
    .await?;
    Ok(())
}

/// The delegations to `to_id` in force at `now`, oldest first: read inside an answer's
/// transaction, so a revocation committed before it is seen.
pub(crate) async fn in_force_to(
    conn: &mut AnyConnection,
    to_id: &str,
    now: i64,
) -> Result<Vec<DelegationRow>, InboxError> {
    in_force(conn, "to_id = $1 AND created_at <= $2", to_id, now).await
}

/// The delegations given by or to `id` that are still in force at `now`, oldest first.
pub(crate) async fn in_force_of(
    pool: &AnyPool,
    id: &str,
    now: i64,
) -> Result<Vec<DelegationRow>, InboxError> {
    in_force(pool, "(from_id = $1 OR to_id = $1)", id, now).await
}

/// The delegations `whose` (a condition on person `$1` at time `$2`) selects that are in
/// force at `now`, oldest first.
async fn in_force<'c, E>(
    conn: E,
    whose: &str,
    id: &str,
    now: i64,
) -> Result<Vec<DelegationRow>, InboxError>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let sql = format!(
        "{COLUMNS} WHERE {whose} AND until_at > $2 AND revoked_at IS NULL \
         ORDER BY created_at, id"
    );
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(now)
        .fetch_all(conn)
        .await?)
}

/// Ends delegation `id` given by `from_id` at `now`; `false` when there is no such
/// delegation in force.
pub(crate) async fn revoke(
    conn: &mut AnyConnection,
    id: &str,
    from_id: Option<&str>,
    now: i64,
) -> Result<bool, InboxError> {
    // `from_id` None: an administrator's revocation, whoever gave it.
    let by_giver = "UPDATE toolnexus_inbox_delegations SET revoked_at = $1 \
                    WHERE id = $2 AND revoked_at IS NULL AND until_at > $1 AND from_id = $3";
    let by_anyone = "UPDATE toolnexus_inbox_delegations SET revoked_at = $1 \
                     WHERE id = $2 AND revoked_at IS NULL AND until_at > $1";
    let query = match from_id {
        Some(from_id) => sqlx::query(by_giver).bind(now).bind(id).bind(from_id),
        None => sqlx::query(by_anyone).bind(now).bind(id),
    };
    let done = query.execute(conn).await?;
    Ok(done.rows_affected() > 0)
}
