//! What every handler of the server shares: the agent, the inbox its tasks are kept in,
//! its card, and the tasks whose first run goes on in this process.

use std::sync::Arc;

use tokio::sync::Notify;
use toolnexus::{LlmClient, Toolkit};
use toolnexus_inbox::{Identify, InFlight, Inbox, Person};

use a2a::{A2AError, Task};

use super::card::CardInfo;
use super::errors::to_protocol;
use super::{record, view};

/// What every handler shares.
pub(crate) struct Shared {
    pub(crate) client: LlmClient,
    pub(crate) tk: Toolkit,
    pub(crate) inbox: Inbox,
    pub(crate) card: Arc<CardInfo>,
    /// Who the inbox records as answering what A2A clients answer when there is no
    /// identify hook.
    pub(crate) responder: Person,
    /// The host's sign-in: with it, every caller must be identified.
    pub(crate) identify: Option<Arc<dyn Identify>>,
    /// Whether histories show tool calls and results.
    pub(crate) show_tool_calls: bool,
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

    /// Task `id` as it stands now, as `who` may see it, with the last `history_length`
    /// messages of its history (all when `None`).
    pub(crate) async fn task(
        &self,
        id: &str,
        history_length: Option<i32>,
        who: &Person,
    ) -> Result<Task, A2AError> {
        let kept = record::load(&self.inbox, id)
            .await
            .map_err(to_protocol)?
            .ok_or_else(|| A2AError::task_not_found(id))?;
        let view = view::read(&self.inbox, self.is_live(id), &kept)
            .await
            .map_err(to_protocol)?;
        let shown = view::Shown {
            who,
            inbox: &self.inbox,
            tool_calls: self.show_tool_calls,
        };
        Ok(view::task(id, &kept.data, &view, history_length, &shown))
    }
}
