//! Following a run to the run it became: a resumed run that halts again is parked anew,
//! under its new request, and the old run records it as its `next`. A door keeps the first
//! run of what it serves; where that stands now is at the end of the chain.

use toolnexus::{Message, Request};

use crate::error::{InboxError, MAX_CHAIN};
use crate::inbox::Inbox;
use crate::records::parked::Parked;
use crate::records::state::ParkedState;

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
}
