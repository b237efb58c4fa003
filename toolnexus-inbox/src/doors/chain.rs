//! Following a run to the run it became: a resumed run that halts again is parked anew,
//! under its new request, and the old run records it as its `next`. A door keeps the first
//! run of what it serves; where that stands now is at the end of the chain.

use std::collections::BTreeSet;

use toolnexus::{Message, Request};

use crate::error::{InboxError, MAX_CHAIN};
use crate::inbox::Inbox;
use crate::policy::people::Person;
use crate::records::parked::Parked;
use crate::records::state::ParkedState;
use crate::store::runs;

/// How many waiting requests are read at once while looking for those someone may answer.
const WAITING_BATCH: usize = 200;

/// The run a chain ends at, as it stands now ([`Inbox::follow`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Latest {
    /// The run's id (the id of its first request).
    pub run: String,
    /// Its requests, in call order; never empty.
    pub requests: Vec<Parked>,
    /// The transcript it halted with, when it was reached through a resume that halted
    /// again; `None` for the first run of the chain, whose transcript the door kept.
    pub halted: Option<Vec<Message>>,
}

impl Latest {
    /// Its first request, which carries the run's state, result and error.
    pub fn head(&self) -> &Parked {
        // `follow` never builds a `Latest` without requests.
        &self.requests[0]
    }

    /// Where the run as a whole stands.
    pub fn run_state(&self) -> ParkedState {
        self.head().run_state
    }

    /// The requests still waiting for their answers, in call order, as doors show them
    /// ([`Parked::shown`]: with how far their approvals came, when several people must
    /// give them).
    pub fn open(&self) -> Vec<Request> {
        self.requests
            .iter()
            .filter(|p| p.state == ParkedState::Waiting)
            .map(Parked::shown)
            .collect()
    }
}

impl Inbox {
    /// Follows run `run` (any of its requests' ids) through the runs it halted on again, to
    /// the last: the one still waiting, being resumed, or ended. Refused with
    /// [`InboxError::UnknownRequest`] when a run of the chain is not in the inbox, and
    /// [`InboxError::ChainTooLong`] past [`MAX_CHAIN`] runs.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:").await?;
    /// assert!(matches!(
    ///     inbox.follow("no-such-run").await,
    ///     Err(toolnexus_inbox::InboxError::UnknownRequest(_))
    /// ));
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn follow(&self, run: &str) -> Result<Latest, InboxError> {
        let mut run = run.to_owned();
        let mut halted = None;
        for _ in 0..MAX_CHAIN {
            let requests = self.run_requests(&run).await?;
            let Some(head) = requests.first() else {
                return Err(InboxError::UnknownRequest(run));
            };
            if let (ParkedState::Done, Some(result), Some(next)) =
                (head.run_state, &head.result, &head.next)
            {
                halted = Some(result.messages.clone());
                run = next.clone();
                continue;
            }
            let run = head.run.clone();
            return Ok(Latest {
                run,
                requests,
                halted,
            });
        }
        Err(InboxError::ChainTooLong(run))
    }

    /// The first runs of the chains that now wait on a request `who`
    /// [may answer](Self::may_answer): the runs a door keeps its records under, so it
    /// finds what someone may answer (and so see the question of) among what it keeps.
    /// The waiting requests are read a batch at a time; each chain is walked back from
    /// its waiting run, [`MAX_CHAIN`] runs at most.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus_inbox::{Inbox, Person};
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// assert!(inbox.answerable_chains(&Person::new("ada@example.com")).await?.is_empty());
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn answerable_chains(&self, who: &Person) -> Result<Vec<String>, InboxError> {
        let mut waiting = BTreeSet::new();
        let mut offset = 0;
        loop {
            let page = self.waiting_page(offset, WAITING_BATCH).await?;
            let read = page.runs.len();
            waiting.extend(
                page.runs
                    .into_iter()
                    .filter(|p| self.may_answer(p, Some(who)))
                    .map(|p| p.run),
            );
            offset += read;
            if read < WAITING_BATCH {
                break;
            }
        }
        let mut first = BTreeSet::new();
        for run in waiting {
            first.insert(self.first_of(run).await?);
        }
        Ok(first.into_iter().collect())
    }

    /// The first run of the chain `run` belongs to.
    async fn first_of(&self, run: String) -> Result<String, InboxError> {
        let mut run = run;
        for _ in 0..MAX_CHAIN {
            match runs::previous(&self.inner.store.pool, &run).await? {
                Some(before) => run = before,
                None => return Ok(run),
            }
        }
        Err(InboxError::ChainTooLong(run))
    }
}
