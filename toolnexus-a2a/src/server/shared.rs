//! What every handler of the server shares: the agent, the inbox its tasks are kept in,
//! its card, and the tasks whose first run goes on in this process.

use std::sync::Arc;

use tokio::sync::Notify;
use toolnexus::{LlmClient, Toolkit};
use toolnexus_inbox::{InFlight, Inbox, Person};

use super::card::CardInfo;

/// What every handler shares.
pub(crate) struct Shared {
    pub(crate) client: LlmClient,
    pub(crate) tk: Toolkit,
    pub(crate) inbox: Inbox,
    pub(crate) card: Arc<CardInfo>,
    /// Who the inbox records as answering what A2A clients answer.
    pub(crate) responder: Person,
    /// The tasks whose first run goes on in this process, each held by its run. A task
    /// recorded as started, in none of these and not touched by its run's heartbeat lately
    /// (another server's), was cut short by a stop of its server.
    pub(crate) live: InFlight,
    /// Wakes the streams watching tasks when one changes in this process.
    pub(crate) changed: Notify,
}

impl Shared {
    /// Whether task `id`'s first run goes on in this process.
    pub(crate) fn is_live(&self, id: &str) -> bool {
        self.live.contains(id)
    }
}
