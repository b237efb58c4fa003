//! What the inbox tells about a parked run ([`Parked`]) and about a resume ([`Resumed`]),
//! and how a stored row reads back into them.

use std::time::SystemTime;

use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;
use toolnexus::{Answer, Request, RunResult};

use crate::clock::from_ms;
use crate::{InboxError, ParkedState};

/// The columns a [`Parked`] is read from (everything but the transcript), of a request
/// (`q`) and its run (`r`) joined by [`parked_from!`].
macro_rules! parked_columns {
    () => {
        "q.id, q.run_id, r.agent, r.state, q.request, r.model, r.turns, q.tool_name, \
         q.tool_args, q.parked_at, q.expires_at, q.answer, q.answered_by, q.answered_at, \
         r.attempts, r.lease_until, r.last_error, r.result, r.next_id, r.updated_at, \
         r.request_ids, q.escalated_at, q.escalated_to"
    };
}
pub(crate) use parked_columns;

/// The requests joined with their runs, as [`parked_columns!`] names them.
macro_rules! parked_from {
    () => {
        " FROM toolnexus_inbox_requests q JOIN toolnexus_inbox_runs r ON r.id = q.run_id"
    };
}
pub(crate) use parked_from;

/// One request of a run parked in the inbox, as people and workers see it.
///
/// A halted turn may wait on several calls at once ([`RunResult::waiting`]): the run is
/// parked once, with one `Parked` per request. Each is answered on its own; the run is
/// resumed once every one of them is answered. [`run`](Self::run) and
/// [`requests`](Self::requests) tie the requests of one run together.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Parked {
    /// The request the run halted on; its `id` keys the row.
    pub request: Request,
    /// Where this request stands: `Waiting` until it is answered, `Answered` once it is
    /// (while the run waits for its other requests, or for a worker), then as its run.
    pub state: ParkedState,
    /// Where the run as a whole stands: `Waiting` until every one of its requests is
    /// answered, then `Answered`, `Running`, `Done` or `Failed`.
    pub run_state: ParkedState,
    /// The id of the run: the id of its first request, which [`Inbox::park`] returned.
    ///
    /// [`Inbox::park`]: crate::Inbox::park
    pub run: String,
    /// The ids of every request of the run, this one included, in call order.
    pub requests: Vec<String>,
    /// This request's answer, once given (the first answer; later ones were refused).
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
    /// The name of the tool whose call asked this request, when the transcript shows it.
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
    /// When the run last changed (an answer to any of its requests changes it).
    pub updated_at: SystemTime,
    /// While a worker resumes the run: when its lease lapses.
    pub lease_until: Option<SystemTime>,
    /// When the request was escalated for waiting too long
    /// ([`Escalation`](crate::Escalation)).
    pub escalated_at: Option<SystemTime>,
    /// Who the escalation added to those who may answer.
    pub escalated_to: Vec<String>,
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
        let run_state = ParkedState::parse(&state_text)
            .ok_or_else(|| corrupt("state", &format!("unknown state {state_text:?}")))?;
        let request: Request = serde_json::from_str(&row.try_get::<String, _>("request")?)
            .map_err(|e| corrupt("request", &e))?;
        let answer = json_column::<Answer>(row, "answer").map_err(|e| corrupt("answer", &e))?;
        let result = json_column::<RunResult>(row, "result").map_err(|e| corrupt("result", &e))?;
        let args = json_column::<Value>(row, "tool_args").map_err(|e| corrupt("tool_args", &e))?;
        let run: String = row.try_get("run_id")?;
        let requests = json_column::<Vec<String>>(row, "request_ids")
            .map_err(|e| corrupt("request_ids", &e))?
            .unwrap_or_else(|| vec![run.clone()]);
        let state = match (run_state, &answer) {
            (ParkedState::Waiting, Some(_)) => ParkedState::Answered,
            _ => run_state,
        };
        let time = |col: &str| -> Result<Option<SystemTime>, InboxError> {
            Ok(row.try_get::<Option<i64>, _>(col)?.map(from_ms))
        };
        Ok(Parked {
            state,
            run_state,
            run,
            requests,
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
            escalated_at: time("escalated_at")?,
            escalated_to: row
                .try_get::<Option<String>, _>("escalated_to")?
                .as_deref()
                .map(crate::inbox::strings_of)
                .unwrap_or_default(),
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

/// A page of the waiting requests ([`Inbox::waiting_page`](crate::Inbox::waiting_page)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WaitingPage {
    /// The waiting requests on this page, oldest first.
    pub runs: Vec<Parked>,
    /// The position of the first of them among all waiting requests (0-based).
    pub offset: usize,
    /// How many requests are waiting in all.
    pub total: usize,
}

impl WaitingPage {
    pub(crate) fn of(runs: Vec<Parked>, offset: usize, total: usize) -> WaitingPage {
        WaitingPage {
            runs,
            offset,
            total,
        }
    }
}

/// A run the inbox resumed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Resumed {
    /// The run: the id of its first request (the only one, when it waited on one).
    pub id: String,
    /// The answers it was resumed with, one per request, in call order.
    pub answers: Vec<Answer>,
    /// The resumed run's result. When it halted again (`RunStatus::Pending`), its new
    /// request is already parked, under [`next`](Self::next).
    pub result: RunResult,
    /// The id of the run's new parking (its first request) when it halted again.
    pub next: Option<String>,
    /// Which claim of the run this was (1 for the first).
    pub attempt: u32,
}
