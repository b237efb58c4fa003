//! A Temporal run's waits in a [`toolnexus_inbox::Inbox`], so a person answers them on the
//! inbox's page (and behind its webhooks and doors) as well as through the `answer` update.
//!
//! Two sides share the work, and the inbox's claims make each answer reach the workflow once:
//!
//! - **In the workflow**, a `park` activity parks each halt in the inbox, and a `settled`
//!   activity records in the inbox the answers the run took at its wait, so a request
//!   answered straight to Temporal does not stay on the page.
//! - **Beside every worker**, a forwarder claims the answered Temporal runs
//!   ([`Inbox::resume_next_with`]) and hands each answer to the workflow as its `answer`
//!   update, whose update id is the request's id. Its outcome is recorded in the inbox only
//!   once the workflow took the answers and reached its next wait (parked with it, as the
//!   run it halted again on) or its end, so a forwarder that dies before leaves the claim to
//!   lapse and another delivers the same updates: Temporal keeps one update per id, and the
//!   workflow refuses a request answered already, which counts as delivered.
//!
//! [`parking`] holds the workflow's side, [`forward`] the forwarder's. The workflow uses
//! the first, and the second is a client of the workflow: each knows only what it uses, so
//! the workflow and its forwarder never name each other in a circle.

pub(crate) mod forward;
pub(crate) mod parking;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolnexus_inbox::Door;

/// The door the inbox keeps each parked halt's workflow under, by the halt's run id.
const DOOR: Door = Door::named("temporal");

/// How often the forwarder looks for answered runs, and for a workflow's next wait.
const POLL: Duration = Duration::from_millis(250);

/// What the inbox keeps about a halt it parked for a workflow.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Link {
    /// The workflow the halt belongs to.
    pub(crate) workflow: String,
}
