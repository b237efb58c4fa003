//! `toolnexus_inbox_doors`: what each door keeps about a run it serves, one JSON record per
//! door and door's id.

use sqlx::{AnyPool, Row};

use crate::error::InboxError;

/// Writes `record` for `door`'s `id`, replacing what was there.
pub(crate) async fn put(
    pool: &AnyPool,
    door: &str,
    id: &str,
    record: &str,
    at: i64,
) -> Result<(), InboxError> {
    sqlx::query(
        "INSERT INTO toolnexus_inbox_doors (door, id, record, updated_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (door, id) DO UPDATE SET record = excluded.record, \
         updated_at = excluded.updated_at",
    )
    .bind(door)
    .bind(id)
    .bind(record)
    .bind(at)
    .execute(pool)
    .await?;
    Ok(())
}

/// Marks `door`'s `id` as changed at `at`; `false` when there is no such record.
pub(crate) async fn touch(
    pool: &AnyPool,
    door: &str,
    id: &str,
    at: i64,
) -> Result<bool, InboxError> {
    let done =
        sqlx::query("UPDATE toolnexus_inbox_doors SET updated_at = $3 WHERE door = $1 AND id = $2")
            .bind(door)
            .bind(id)
            .bind(at)
            .execute(pool)
            .await?;
    Ok(done.rows_affected() > 0)
}

/// The record of `door`'s `id` and when it last changed, if there is one.
pub(crate) async fn get(
    pool: &AnyPool,
    door: &str,
    id: &str,
) -> Result<Option<(String, i64)>, InboxError> {
    let row = sqlx::query(
        "SELECT record, updated_at FROM toolnexus_inbox_doors WHERE door = $1 AND id = $2",
    )
    .bind(door)
    .bind(id)
    .fetch_optional(pool)
    .await?;
    row.map(|r| Ok((r.try_get("record")?, r.try_get("updated_at")?)))
        .transpose()
}
