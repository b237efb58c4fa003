//! The claim: taking an answered run under a lease, in the transaction that appends it to
//! the run's audit trail, and its stored parts read back. The attempt number it carries
//! fences every later write, so a worker whose lease lapsed never writes over the one that
//! took over; and a run that cannot be claimed is told why.

use toolnexus::{Answer, Message};

use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::records::state::ParkedState;
use crate::store::requests::{self, StoredAnswer};
use crate::store::runs::{self, Taken, Terms};
use crate::store::{AuditedClaims, Claims};

/// The claim of the run of request `id`, with `id` to bind, or else of the oldest run.
fn pick(claims: AuditedClaims, id: Option<&str>) -> (&'static str, Option<&str>) {
    match id {
        Some(id) => (claims.run_of.as_str(), Some(id)),
        None => (claims.next.as_str(), None),
    }
}

/// A run this worker holds: its stored parts, and the attempt number that fences its writes.
pub(crate) struct Claim {
    pub(super) id: String,
    pub(super) fence: i64,
    pub(super) turns: i64,
    pub(super) messages: String,
    /// Each request's id and stored answer, in call order.
    pub(super) answers: Vec<StoredAnswer>,
}

impl Claim {
    /// The claimed run's row, and its requests' answers, as the claim read them or else
    /// read after it: an answered run's answers never change, so this second read sees
    /// what the claim saw.
    pub(crate) async fn read(inbox: &Inbox, taken: Taken) -> Result<Self, InboxError> {
        let claimed = taken.run;
        let answers = match taken.answers {
            Some(answers) => answers,
            None => requests::answers_of(&inbox.inner.store.pool, &claimed.id).await?,
        };
        Ok(Claim {
            id: claimed.id,
            fence: claimed.attempts,
            turns: claimed.turns,
            messages: claimed.messages,
            answers,
        })
    }

    /// The stored parts, read back; `Err` names what is unreadable.
    pub(super) fn decode(&self) -> Result<(Vec<Message>, Vec<Answer>), String> {
        let messages: Vec<Message> =
            serde_json::from_str(&self.messages).map_err(|e| format!("transcript: {e}"))?;
        if self.answers.is_empty() {
            return Err("requests: none stored for the run".to_owned());
        }
        let answers = self
            .answers
            .iter()
            .map(|StoredAnswer { id, answer, .. }| match answer {
                Some(text) => {
                    serde_json::from_str(text).map_err(|e| format!("answer to `{id}`: {e}"))
                }
                None => Err(format!("answer to `{id}`: missing on an answered run")),
            })
            .collect::<Result<Vec<Answer>, String>>()?;
        Ok((messages, answers))
    }
}

impl Inbox {
    /// Claims the run of request `id`, or else the oldest run ready to resume, and, in the
    /// same transaction, appends the claim to the run's audit trail.
    pub(crate) async fn claim(&self, id: Option<&str>) -> Result<Option<Taken>, InboxError> {
        let now = self.now();
        let terms = Terms {
            agent: &self.inner.agent,
            now,
            lease_until: now.saturating_add(self.lease_ms()),
            max_attempts: i64::from(self.inner.max_attempts),
        };
        let store = &self.inner.store;
        let worker = &self.inner.worker;
        match store.dialect.claims {
            Claims::Audited(claims) => {
                let (sql, request) = pick(claims, id);
                runs::claim_audited(&store.pool, sql, &terms, request, worker).await
            }
            Claims::Batched(claims) => {
                let (sql, request) = pick(claims, id);
                let mut conn = store.single().await?;
                let taken = runs::claim_batched(&mut conn, sql, &terms, request, worker).await;
                conn.settle(taken)
            }
        }
    }

    pub(crate) async fn why_unclaimable(&self, id: &str) -> Result<InboxError, InboxError> {
        let requests = self.run_requests(id).await?;
        let Some(parked) = requests.first().filter(|p| p.agent == self.inner.agent) else {
            return Ok(InboxError::UnknownRequest(id.to_owned()));
        };
        if let Some(open) = requests.iter().find(|p| p.state == ParkedState::Waiting) {
            return Ok(InboxError::NotAnswered(open.id().to_owned()));
        }
        let id = id.to_owned();
        Ok(match parked.run_state {
            ParkedState::Done | ParkedState::Failed => InboxError::Finished {
                id,
                state: parked.run_state,
            },
            _ if parked.attempts >= self.inner.max_attempts => {
                self.give_up(&parked.run, "no attempts left").await?;
                InboxError::Finished {
                    id,
                    state: ParkedState::Failed,
                }
            }
            _ => InboxError::Claimed(id),
        })
    }
}
