//! `toolnexus_inbox_journal`: the steps a resumed run completed, fenced by the claim's
//! attempt number, so a worker whose lease lapsed never records for the one that took over.

use std::collections::HashMap;

use sqlx::{AnyConnection, AnyPool, Row};

use crate::error::InboxError;
use crate::records::state::ParkedState;

/// A step attempt `fence` of run `run` completed.
pub(crate) struct NewStep<'a> {
    pub(crate) run: &'a str,
    pub(crate) fence: i64,
    pub(crate) key: &'a str,
    pub(crate) step: &'a str,
    pub(crate) at: i64,
}

/// Records the step, in one statement fenced by the claim: nothing is written unless the
/// run is still running under attempt `fence`. The first record of a step wins, so every
/// worker that comes later replays the same one. `false` when the claim is no longer this
/// attempt's.
pub(crate) async fn record(
    conn: &mut AnyConnection,
    new: &NewStep<'_>,
) -> Result<bool, InboxError> {
    let written = sqlx::query(
        "INSERT INTO toolnexus_inbox_journal (run_id, step_key, step, attempt, at) \
         SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM toolnexus_inbox_runs \
         WHERE id = $6 AND attempts = $7 AND state = $8) \
         ON CONFLICT (run_id, step_key) DO NOTHING",
    )
    .bind(new.run)
    .bind(new.key)
    .bind(new.step)
    .bind(new.fence)
    .bind(new.at)
    .bind(new.run)
    .bind(new.fence)
    .bind(ParkedState::Running.as_str())
    .execute(&mut *conn)
    .await?;
    if written.rows_affected() > 0 {
        return Ok(true);
    }
    // Nothing written: the step was recorded already, or the claim is lost.
    let held = sqlx::query(
        "SELECT 1 AS held FROM toolnexus_inbox_runs WHERE id = $1 AND attempts = $2 AND state = $3",
    )
    .bind(new.run)
    .bind(new.fence)
    .bind(ParkedState::Running.as_str())
    .fetch_optional(&mut *conn)
    .await?;
    Ok(held.is_some())
}

/// Every step run `run` recorded, by key.
pub(crate) async fn all(pool: &AnyPool, run: &str) -> Result<HashMap<String, String>, InboxError> {
    let rows = sqlx::query("SELECT step_key, step FROM toolnexus_inbox_journal WHERE run_id = $1")
        .bind(run)
        .fetch_all(pool)
        .await?;
    let mut steps = HashMap::with_capacity(rows.len());
    for row in rows {
        steps.insert(row.try_get("step_key")?, row.try_get("step")?);
    }
    Ok(steps)
}

/// Forgets run `run`'s steps, in the transaction recording its outcome: a run that ended
/// is never replayed.
pub(crate) async fn clear(conn: &mut AnyConnection, run: &str) -> Result<(), InboxError> {
    sqlx::query("DELETE FROM toolnexus_inbox_journal WHERE run_id = $1")
        .bind(run)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
