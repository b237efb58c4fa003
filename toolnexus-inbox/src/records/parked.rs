//! What the inbox tells about a parked run ([`Parked`]) and about a resume ([`Resumed`]),
//! and how a stored row reads back into them.

use std::time::SystemTime;

use serde_json::Value;
use toolnexus::{Answer, Request, RunResult};

use crate::clock::from_ms;
use crate::error::InboxError;
use crate::lifecycle::vote::{self, Approvals, Vote};
use crate::policy::people::{stored_responders, Responder};
use crate::records::state::ParkedState;
use crate::store::requests::ParkedRow;
use crate::store::{decode_json, runs};

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
    pub escalated_to: Vec<Responder>,
    /// Every person's answer as it came, oldest first: the approvals a quorum collected
    /// (and the refusal that declined it), each with who gave it and for whom.
    pub votes: Vec<Vote>,
    /// How many distinct people must approve the request ([`Request::quorum`]).
    pub quorum: u32,
}

impl Parked {
    /// The request id.
    pub fn id(&self) -> &str {
        &self.request.id
    }

    /// How far its approvals have come ("1 of 2 approvals"), for a request that needs
    /// several people; `None` for one that needs one.
    pub fn approvals(&self) -> Option<Approvals> {
        (self.quorum > 1).then(|| Approvals::from_votes(&self.votes, self.quorum))
    }

    /// The request as a door shows it to whoever may answer: as asked, and for one that
    /// needs several people, with how far its approvals came at `data.approvals`
    /// (`{"count": 1, "quorum": 2, "by": ["ada@example.com"]}`), so every protocol says
    /// what the page says.
    pub fn shown(&self) -> Request {
        let request = self.request.clone();
        match self.approvals() {
            Some(approvals) => request.with_approvals(&(&approvals).into()),
            None => request,
        }
    }
}

impl TryFrom<ParkedRow> for Parked {
    type Error = InboxError;

    /// Reads a stored request back; `Err` names what is unreadable.
    fn try_from(row: ParkedRow) -> Result<Self, InboxError> {
        let id = row.id;
        let corrupt = |what: &str, e: &dyn std::fmt::Display| InboxError::Corrupt {
            id: id.clone(),
            reason: format!("{what}: {e}"),
        };
        let run_state = runs::state_of(&id, &row.state)?;
        let request: Request =
            serde_json::from_str(&row.request).map_err(|e| corrupt("request", &e))?;
        let answer =
            decode_json::<Answer>(row.answer.as_deref()).map_err(|e| corrupt("answer", &e))?;
        let result =
            decode_json::<RunResult>(row.result.as_deref()).map_err(|e| corrupt("result", &e))?;
        let args =
            decode_json::<Value>(row.tool_args.as_deref()).map_err(|e| corrupt("tool_args", &e))?;
        let run = row.run_id;
        let requests = decode_json::<Vec<String>>(row.request_ids.as_deref())
            .map_err(|e| corrupt("request_ids", &e))?
            .unwrap_or_else(|| vec![run.clone()]);
        let state = match (run_state, &answer) {
            (ParkedState::Waiting, Some(_)) => ParkedState::Answered,
            _ => run_state,
        };
        Ok(Parked {
            state,
            run_state,
            run,
            requests,
            answer,
            answered_by: row.answered_by,
            answered_at: row.answered_at.map(from_ms),
            result,
            next: row.next_id,
            attempts: u32::try_from(row.attempts).unwrap_or(u32::MAX),
            last_error: row.last_error,
            agent: row.agent,
            tool: row.tool_name,
            args,
            model: row.model,
            turns: usize::try_from(row.turns).unwrap_or(0),
            parked_at: from_ms(row.parked_at),
            escalated_at: row.escalated_at.map(from_ms),
            escalated_to: stored_responders(row.escalated_to.as_deref()),
            expires_at: row.expires_at.map(from_ms),
            updated_at: from_ms(row.updated_at),
            lease_until: row.lease_until.map(from_ms),
            votes: vote::stored(row.votes.as_deref())
                .into_iter()
                .map(Vote::from)
                .collect(),
            quorum: request.quorum(),
            request,
        })
    }
}

/// The rows that read back, in their order; one that does not is left out (and logged).
pub(crate) fn readable(rows: Vec<ParkedRow>) -> Vec<Parked> {
    rows.into_iter()
        .filter_map(|row| match Parked::try_from(row) {
            Ok(p) => Some(p),
            Err(e) => {
                tracing::warn!(error = %e, "skipping an unreadable inbox row");
                None
            }
        })
        .collect()
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
