//! What a door keeps about a run it serves. A door — A2A, AG-UI, MCP, or a host's own — is a
//! protocol people answer runs through; it has its own id for what it serves (a task id, a
//! thread id) and a little state of its own beside the inbox's runs (the context a task
//! belongs to, the conversation a thread continues). The inbox keeps that state as one typed
//! record per door and id, on the same engine as the runs, so it lives as long as they do
//! and any server sharing the database reads it back.

use std::fmt;
use std::time::{Duration, SystemTime};

use serde::de::DeserializeOwned;
use serde::Serialize;
use toolnexus::{RequestKind, Toolkit};

use crate::clock::from_ms;
use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::store::doors;

/// A protocol through which people answer runs: the name its records are kept under.
///
/// ```
/// use toolnexus_inbox::Door;
///
/// assert_eq!(Door::A2A.name(), "a2a");
/// assert_eq!(Door::named("slack").to_string(), "slack");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Door(&'static str);

impl Door {
    /// A2A tasks (`toolnexus-a2a`).
    pub const A2A: Door = Door("a2a");
    /// AG-UI threads (`toolnexus-agui`).
    pub const AGUI: Door = Door("agui");
    /// MCP tasks (`toolnexus-mcp`).
    pub const MCP: Door = Door("mcp");

    /// A door of the host's own, under `name` (which the built-in doors' names must not be).
    pub const fn named(name: &'static str) -> Door {
        Door(name)
    }

    /// The name its records are kept under.
    pub fn name(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for Door {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// What a door keeps about one thing it serves, read back ([`Inbox::record`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DoorRecord<T> {
    /// The door's own state.
    pub data: T,
    /// When it was last kept or touched, by the inbox's clock.
    pub updated_at: SystemTime,
    /// How long ago that was when it was read, by the inbox's clock (a test's clock
    /// included): what tells a record whose server stopped touching it.
    pub age: Duration,
}

impl Inbox {
    /// Keeps `data` as `door`'s record of `id`, replacing any earlier one.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus_inbox::{Door, Inbox};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    /// struct Task { context: String }
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// inbox.keep_record(Door::A2A, "t1", &Task { context: "c1".into() }).await?;
    /// let kept = inbox.record::<Task>(Door::A2A, "t1").await?.expect("kept");
    /// assert_eq!(kept.data, Task { context: "c1".into() });
    /// assert!(inbox.record::<Task>(Door::AGUI, "t1").await?.is_none());
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn keep_record<T: Serialize>(
        &self,
        door: Door,
        id: &str,
        data: &T,
    ) -> Result<(), InboxError> {
        let text = serde_json::to_string(data).map_err(|e| InboxError::CorruptRecord {
            door: door.name(),
            id: id.to_owned(),
            reason: format!("cannot be stored as JSON: {e}"),
        })?;
        let store = &self.inner.store;
        doors::put(
            &store.pool,
            store.announces(),
            door.name(),
            id,
            &text,
            self.now(),
        )
        .await?;
        self.note_change();
        Ok(())
    }

    /// `door`'s record of `id`, if it keeps one; [`InboxError::CorruptRecord`] when it does
    /// not read back as a `T`.
    pub async fn record<T: DeserializeOwned>(
        &self,
        door: Door,
        id: &str,
    ) -> Result<Option<DoorRecord<T>>, InboxError> {
        let Some((text, at)) = doors::get(&self.inner.store.pool, door.name(), id).await? else {
            return Ok(None);
        };
        let data = serde_json::from_str(&text).map_err(|e| InboxError::CorruptRecord {
            door: door.name(),
            id: id.to_owned(),
            reason: e.to_string(),
        })?;
        let age = u64::try_from(self.now().saturating_sub(at)).unwrap_or(0);
        Ok(Some(DoorRecord {
            data,
            updated_at: from_ms(at),
            age: Duration::from_millis(age),
        }))
    }

    /// The tools of `tk` whose approvals anyone who reaches `door` may answer: gates that
    /// name no responders ([`Toolkit::unrestricted_gates`]) where this inbox has no rule
    /// for approvals or for its agent either ([`InboxBuilder::responders`]). A door calls it
    /// once when it is built, and it logs a warning naming them, so a server that lets a
    /// partner approve its own payment says so before the first payment.
    ///
    /// [`InboxBuilder::responders`]: crate::InboxBuilder::responders
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus::{Approval, Toolkit};
    /// use toolnexus_inbox::{Door, Inbox};
    ///
    /// # let refund = toolnexus::NativeTool::of("refund", "Refunds", serde_json::json!({"type": "object"}),
    /// #     |_args, _ctx| async { toolnexus::ToolResult::ok("refunded") });
    /// let tk = Toolkit::builder().tool(refund).approval(Approval::tools(["refund"])).build()?;
    /// let open = Inbox::open("sqlite::memory:").await?;
    /// assert_eq!(open.unrestricted_gates(Door::A2A, &tk), ["refund"]);
    /// let finance = Inbox::builder("sqlite::memory:").responders("approval", ["group:finance"]).open().await?;
    /// assert!(finance.unrestricted_gates(Door::A2A, &tk).is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn unrestricted_gates<'t>(&self, door: Door, tk: &'t Toolkit) -> Vec<&'t str> {
        let rules = &self.inner.rules;
        if rules.by_kind.contains_key(&RequestKind::Approval)
            || rules.by_agent.contains_key(&self.inner.agent)
        {
            return Vec::new();
        }
        let open = tk.unrestricted_gates();
        if !open.is_empty() {
            tracing::warn!(
                door = door.name(),
                tools = ?open,
                "anyone who reaches this door may answer these tools' approvals: name who may \
                 with approval(responders = [...]) or InboxBuilder::responders"
            );
        }
        open
    }

    /// Marks `door`'s record of `id` as changed now, leaving its data as it is: a heartbeat
    /// that tells other servers a run of it goes on. `false` when there is no such record.
    pub async fn touch_record(&self, door: Door, id: &str) -> Result<bool, InboxError> {
        doors::touch(&self.inner.store.pool, door.name(), id, self.now()).await
    }

    /// Forgets `door`'s record of `id`: for what a door served and keeps nothing of (an
    /// exchange that ended as it began). `false` when there was no such record. The runs
    /// and answers the inbox keeps are not touched.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus_inbox::{Door, Inbox};
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// inbox.keep_record(Door::A2A, "t1", &"hello").await?;
    /// assert!(inbox.drop_record(Door::A2A, "t1").await?);
    /// assert!(inbox.record::<String>(Door::A2A, "t1").await?.is_none());
    /// assert!(!inbox.drop_record(Door::A2A, "t1").await?, "already gone");
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn drop_record(&self, door: Door, id: &str) -> Result<bool, InboxError> {
        doors::delete(&self.inner.store.pool, door.name(), id).await
    }
}
