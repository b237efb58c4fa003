//! `toolnexus_inbox_notes`: what a host keeps beside the runs, one text per key.

use sqlx::{AnyPool, Row};

use crate::error::InboxError;

/// Writes `value` under `key`, replacing what was there.
pub(crate) async fn put(pool: &AnyPool, key: &str, value: &str, at: i64) -> Result<(), InboxError> {
    sqlx::query(
        "INSERT INTO toolnexus_inbox_notes (key, value, updated_at) VALUES ($1, $2, $3) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    )
    .bind(key)
    .bind(value)
    .bind(at)
    .execute(pool)
    .await?;
    Ok(())
}

/// The text under `key`, if any.
pub(crate) async fn get(pool: &AnyPool, key: &str) -> Result<Option<String>, InboxError> {
    let row = sqlx::query("SELECT value FROM toolnexus_inbox_notes WHERE key = $1")
        .bind(key)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|r| r.try_get("value")).transpose()?)
}
