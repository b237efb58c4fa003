//! What every handler of the server shares: the agent, the inbox its tasks are kept in,
//! its card, and the tasks whose first run goes on in this process.

use std::sync::Arc;

use tokio::sync::Notify;
use toolnexus::{LlmClient, Toolkit};
use toolnexus_inbox::{Admission, InFlight, Inbox, Person};

use a2a::{A2AError, Task};
use toolnexus_inbox::{DoorRecord, Sight, Starter};

use super::card::CardInfo;
use super::errors::to_protocol;
use super::record::TaskRecord;
use super::streams::Streams;
use super::view::{Stage, View};
use super::{record, view};

/// What every handler shares.
pub(crate) struct Shared {
    pub(crate) client: LlmClient,
    pub(crate) tk: Toolkit,
    pub(crate) inbox: Inbox,
    pub(crate) card: Arc<CardInfo>,
    /// Who a request comes from: the host's sign-in, or the responder without one.
    pub(crate) admission: Admission,
    /// Whether histories show tool calls and results.
    pub(crate) show_tool_calls: bool,
    /// The tasks whose first run goes on in this process, each held by its run. A task
    /// recorded as started, in none of these and not touched by its run's heartbeat lately
    /// (another server's), was cut short by a stop of its server.
    pub(crate) live: InFlight,
    /// Wakes the streams watching tasks when one changes in this process.
    pub(crate) changed: Notify,
    /// The event streams open now, bounded per caller and in all.
    pub(crate) streams: Arc<Streams>,
    /// Whose a task kept before starters were is: on a server without an identify hook
    /// every caller is the responder, so theirs; behind a hook nobody can say.
    pub(crate) unowned: Option<Starter>,
    /// The tasks whose push configurations this server tells of.
    pub(crate) pusher: super::pushed::Pusher,
    /// Whether the pusher runs.
    pub(crate) push_started: std::sync::atomic::AtomicBool,
    /// The tasks streams follow, each read once for all of them.
    pub(crate) watches: super::followers::Watches,
    /// The host's prompts, artifacts and message replies.
    pub(crate) shaping: super::shaping::Shaping,
}

/// A task as a caller may see it: its record, where it stands, and how much of it is
/// theirs to see.
pub(crate) struct Seen {
    pub(crate) kept: DoorRecord<TaskRecord>,
    pub(crate) view: View,
    pub(crate) sight: Sight,
}

/// How often a reader looks at tasks anyway where every change is announced: only for
/// what no change announces (a first run elsewhere whose server stopped beating).
const ANNOUNCED_LOOK: std::time::Duration = std::time::Duration::from_secs(5);

impl Shared {
    /// How often a reader of tasks looks without being told of a change: `unannounced`
    /// where other processes' changes are not announced (SQLite), else seldom.
    pub(crate) fn look_every(&self, unannounced: std::time::Duration) -> std::time::Duration {
        if self.inbox.announces_changes() {
            ANNOUNCED_LOOK
        } else {
            unannounced
        }
    }

    /// Whether task `id`'s first run goes on in this process.
    pub(crate) fn is_live(&self, id: &str) -> bool {
        self.live.contains(id)
    }

    /// Task `id` as it stands, if `who` may see it: [`A2AError::task_not_found`] as for a
    /// task that does not exist when they may not, so its id tells them nothing.
    pub(crate) async fn seen(&self, id: &str, who: &Person) -> Result<Seen, A2AError> {
        let (kept, view) = self.read(id).await?;
        let sight = self
            .sight(&kept, &view, who)
            .ok_or_else(|| A2AError::task_not_found(id))?;
        Ok(Seen { kept, view, sight })
    }

    /// How much `who` may see of the task `kept` records, standing as `view` says: the
    /// one rule of every operation (`None`: it is none of their business).
    pub(crate) fn sight(
        &self,
        kept: &DoorRecord<TaskRecord>,
        view: &View,
        who: &Person,
    ) -> Option<Sight> {
        let waiting = match &view.stage {
            Stage::Waiting { parked, .. } => parked.as_slice(),
            _ => &[],
        };
        let starter = kept.data.starter.as_ref().or(self.unowned.as_ref());
        self.inbox.sight(starter, waiting, who)
    }

    /// Task `id` as it stands now, as `who` may see it, with the last `history_length`
    /// messages of its history (all when `None`).
    pub(crate) async fn task(
        &self,
        id: &str,
        history_length: Option<i32>,
        who: &Person,
    ) -> Result<Task, A2AError> {
        let seen = self.seen(id, who).await?;
        Ok(self.shown(id, &seen, history_length, who))
    }

    /// Task `id` as it stands now, shown to `who` with the `sight` they were granted when
    /// their request was taken: an approver who answered the task, or who watches it,
    /// still sees its state once it has left the wait that let them see it.
    pub(crate) async fn task_as(
        &self,
        id: &str,
        history_length: Option<i32>,
        who: &Person,
        sight: Sight,
    ) -> Result<Task, A2AError> {
        let (kept, view) = self.read(id).await?;
        let seen = Seen { kept, view, sight };
        Ok(self.shown(id, &seen, history_length, who))
    }

    /// Where task `id` stands, as its followers tell a change by: its state and how far
    /// its transcript came (which names its status message).
    pub(crate) async fn stands(&self, id: &str) -> Result<(a2a::TaskState, usize), A2AError> {
        let (_, view) = self.read(id).await?;
        Ok((view.state(), view.transcript.len()))
    }

    /// Task `id`'s record and where it stands, whoever asks.
    async fn read(&self, id: &str) -> Result<(DoorRecord<TaskRecord>, View), A2AError> {
        let kept = record::load(&self.inbox, id)
            .await
            .map_err(to_protocol)?
            .ok_or_else(|| A2AError::task_not_found(id))?;
        let view = view::read(&self.inbox, self.is_live(id), &kept)
            .await
            .map_err(to_protocol)?;
        Ok((kept, view))
    }

    /// `seen` as the wire shows it to `who`.
    pub(crate) fn shown(
        &self,
        id: &str,
        seen: &Seen,
        history_length: Option<i32>,
        who: &Person,
    ) -> Task {
        let shown = view::Shown {
            who,
            inbox: &self.inbox,
            tool_calls: self.show_tool_calls,
            sight: seen.sight,
            shaping: &self.shaping,
        };
        view::task(id, &seen.kept.data, &seen.view, history_length, &shown)
    }
}
