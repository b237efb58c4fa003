//! What the inbox tells about a parked run ([`Parked`]) and about a resume ([`Resumed`]),
//! and how a stored row reads back into them.

use std::time::SystemTime;

use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;
use toolnexus::{Answer, Request, RunResult};

use crate::clock::from_ms;
use crate::{InboxError, ParkedState};

/// The columns a [`Parked`] is read from (everything but the transcript).
macro_rules! parked_columns {
    () => {
        "id, agent, state, request, model, turns, tool_name, tool_args, parked_at, \
         expires_at, answer, answered_by, answered_at, attempts, lease_until, last_error, \
         result, next_id, updated_at"
    };
}
pub(crate) use parked_columns;

/// A run parked in the inbox, as people and workers see it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Parked {
    /// The request the run halted on; its `id` keys the row.
    pub request: Request,
    /// Where the run stands.
    pub state: ParkedState,
    /// The answer, once given (the first answer; later ones were refused).
    pub answer: Option<Answer>,
    /// Who gave the answer (`answer_as`), kept as an audit trail.
    pub answered_by: Option<String>,
    /// When the answer was given.
    pub answered_at: Option<SystemTime>,
    /// The resumed run's result, once it ended or halted again.
    pub result: Option<RunResult>,
    /// When the resumed run halted again: the id of the request it is now parked on.
    pub next: Option<String>,
    /// How many times a worker claimed the run to resume it.
    pub attempts: u32,
    /// The error of the last failed attempt (or why the row is unreadable).
    pub last_error: Option<String>,
    /// The agent the run was parked under; only that agent's workers resume it.
    pub agent: String,
    /// The name of the tool whose call halted the run, when the transcript shows it.
    pub tool: Option<String>,
    /// The arguments of that call.
    pub args: Option<Value>,
    /// The model the run talked to.
    pub model: String,
    /// Model turns the run took before it halted.
    pub turns: usize,
    /// When the run was parked.
    pub parked_at: SystemTime,
    /// The request's `expiresAt`, read as a time.
    pub expires_at: Option<SystemTime>,
    /// When the row last changed.
    pub updated_at: SystemTime,
    /// While a worker resumes the run: when its lease lapses.
    pub lease_until: Option<SystemTime>,
}

impl Parked {
    /// The request id.
    pub fn id(&self) -> &str {
        &self.request.id
    }

    /// Reads a row selected with [`parked_columns!`].
    pub(crate) fn from_row(row: &AnyRow) -> Result<Self, InboxError> {
        let id: String = row.try_get("id")?;
        let corrupt = |what: &str, e: &dyn std::fmt::Display| InboxError::Corrupt {
            id: id.clone(),
            reason: format!("{what}: {e}"),
        };
        let state_text: String = row.try_get("state")?;
        let state = ParkedState::parse(&state_text)
            .ok_or_else(|| corrupt("state", &format!("unknown state {state_text:?}")))?;
        let request: Request = serde_json::from_str(&row.try_get::<String, _>("request")?)
            .map_err(|e| corrupt("request", &e))?;
        let answer = json_column::<Answer>(row, "answer").map_err(|e| corrupt("answer", &e))?;
        let result = json_column::<RunResult>(row, "result").map_err(|e| corrupt("result", &e))?;
        let args = json_column::<Value>(row, "tool_args").map_err(|e| corrupt("tool_args", &e))?;
        let time = |col: &str| -> Result<Option<SystemTime>, InboxError> {
            Ok(row.try_get::<Option<i64>, _>(col)?.map(from_ms))
        };
        Ok(Parked {
            state,
            answer,
            answered_by: row.try_get("answered_by")?,
            answered_at: time("answered_at")?,
            result,
            next: row.try_get("next_id")?,
            attempts: u32::try_from(row.try_get::<i64, _>("attempts")?).unwrap_or(u32::MAX),
            last_error: row.try_get("last_error")?,
            agent: row.try_get("agent")?,
            tool: row.try_get("tool_name")?,
            args,
            model: row.try_get("model")?,
            turns: usize::try_from(row.try_get::<i64, _>("turns")?).unwrap_or(0),
            parked_at: from_ms(row.try_get("parked_at")?),
            expires_at: time("expires_at")?,
            updated_at: from_ms(row.try_get("updated_at")?),
            lease_until: time("lease_until")?,
            request,
        })
    }
}

fn json_column<T: serde::de::DeserializeOwned>(
    row: &AnyRow,
    column: &str,
) -> Result<Option<T>, Box<dyn std::error::Error + Send + Sync>> {
    match row.try_get::<Option<String>, _>(column)? {
        Some(text) => Ok(Some(serde_json::from_str(&text)?)),
        None => Ok(None),
    }
}

/// A page of the waiting runs ([`Inbox::waiting_page`](crate::Inbox::waiting_page)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WaitingPage {
    /// The runs on this page, oldest first.
    pub runs: Vec<Parked>,
    /// The position of the first of them among all waiting runs (0-based).
    pub offset: usize,
    /// How many runs are waiting in all.
    pub total: usize,
}

/// A run the inbox resumed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Resumed {
    /// The request that was answered.
    pub id: String,
    /// The resumed run's result. When it halted again (`RunStatus::Pending`), its new
    /// request is already parked, under [`next`](Self::next).
    pub result: RunResult,
    /// The id of the request the run halted on again, now parked.
    pub next: Option<String>,
    /// Which claim of the run this was (1 for the first).
    pub attempt: u32,
}
