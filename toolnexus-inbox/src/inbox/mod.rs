//! [`Inbox`]: the handle on one inbox database, and what it reads of it — the parked
//! requests, listed and looked up, and who may answer each. Parking, answering, resuming
//! and the housekeeping are the operations of their own modules.

mod builder;
mod changes;
mod ruled;
pub(crate) mod wakers;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use toolnexus::RequestKind;

pub use builder::InboxBuilder;

use crate::clock::{from_ms, ms, Clock};
use crate::error::InboxError;
use crate::notify::posting::PostRules;
use crate::notify::webhook::Targets;
use crate::policy::deadline::{Escalation, ExpiryRule};
use crate::policy::people::{Person, Responder, Rules};
use crate::receipt::{PublicKey, ReceiptKey};
use crate::records::audit::{AuditEntry, AuditKind};

use crate::records::parked::{readable, Parked, WaitingPage};
use crate::records::state::ParkedState;
use crate::store::{audit, requests, Store};

/// Parked runs in a database: people answer them, and any worker resumes each exactly once.
///
/// A cheap, cloneable handle on a connection pool (`Send + Sync`). It parks under its
/// agent (default `"default"`) and resumes only that agent's runs; listing and answering
/// cover every agent in the database.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use toolnexus_inbox::Inbox;
///
/// let inbox = Inbox::open("sqlite::memory:").await?;
/// assert!(inbox.waiting().await?.is_empty());
/// # Ok::<(), toolnexus_inbox::InboxError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Inbox {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) store: Store,
    pub(crate) agent: String,
    pub(crate) lease: Duration,
    pub(crate) max_attempts: u32,
    pub(crate) poll_interval: Duration,
    pub(crate) rules: Rules,
    /// Who the audit trail names for this handle's claims and resumes.
    pub(crate) worker: String,
    pub(crate) clock: Clock,
    /// The webhooks told of what happens, and the client that tells them.
    pub(crate) targets: Targets,
    /// Where the page is served, for the links in notifications.
    pub(crate) page_url: Option<reqwest::Url>,
    pub(crate) escalations: Vec<Escalation>,
    pub(crate) expiry: HashMap<RequestKind, ExpiryRule>,
    /// The key every answer's receipt is signed with, when the host gave one.
    pub(crate) receipts: Option<Arc<ReceiptKey>>,
    /// The longest a delegation may last.
    pub(crate) max_delegation: Duration,
    /// Whether every request refuses the person who asked for its run.
    pub(crate) not_requester: bool,
    /// Who people are now, for a delegation's giver, when the host said.
    pub(crate) directory: Option<Arc<dyn crate::policy::identify::Directory>>,
    /// Wakes a deliverer when this process wrote to the outbox.
    pub(crate) outbox: Notify,
    /// Signals runs changing where they stand ([`Inbox::changes`]).
    pub(crate) changes: changes::Changes,
    /// How posts to URLs given at run time are delivered, and the client that sends them.
    pub(crate) posts: PostRules,
    /// Wakes a deliverer of posts when this process wrote one.
    pub(crate) posted: Notify,
    /// Wakes one idle worker slot per answer (this process's answers, and other processes'
    /// relayed from NOTIFY): one answer is one run to resume, so waking every idle slot
    /// would only send the others to claim nothing. A slot that gets a run goes on claiming
    /// until none is left, so runs answered in a burst are all taken.
    /// Shared with every handle of this process on the same database and agent
    /// ([`wakers`]), so an answer given through any of them wakes these workers.
    pub(crate) answered: Arc<Notify>,
    /// Wakes every [`Inbox::outcome`] of this process when a resume here records how it
    /// ended; outcomes other processes record are found by polling.
    pub(crate) finished: Notify,
}

impl fmt::Debug for Inbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbox")
            .field("engine", &self.inner.store.engine())
            .field("agent", &self.inner.agent)
            .field("lease", &self.inner.lease)
            .field("max_attempts", &self.inner.max_attempts)
            .finish_non_exhaustive()
    }
}

impl Inbox {
    /// Opens the inbox at `url` with the default options: `sqlite://PATH` (created if
    /// missing), `sqlite::memory:`, or `postgres://USER@HOST/DB`.
    pub async fn open(url: &str) -> Result<Inbox, InboxError> {
        Inbox::builder(url).open().await
    }

    /// Options before opening.
    pub fn builder(url: impl Into<String>) -> InboxBuilder {
        InboxBuilder::new(url.into())
    }

    /// The public key of the receipts this inbox signs, to publish to whoever checks them
    /// ([`receipt::verify`](crate::receipt::verify)); `None` when it signs none.
    pub fn receipt_public_key(&self) -> Option<PublicKey> {
        self.inner.receipts.as_ref().map(|key| key.public_key())
    }

    /// Now, by this inbox's clock, in milliseconds since the epoch.
    pub(crate) fn now(&self) -> i64 {
        self.inner.clock.now_ms()
    }

    /// Now, by this inbox's clock: what the page shows deadlines against, so a test that
    /// moves the clock on sees the page move with it.
    #[cfg(feature = "web")]
    pub(crate) fn now_time(&self) -> std::time::SystemTime {
        crate::clock::from_ms(self.now())
    }

    /// How long a claim lasts, in milliseconds.
    pub(crate) fn lease_ms(&self) -> i64 {
        ms(self.inner.lease)
    }

    /// The expiry rule for requests of `kind`.
    pub(crate) fn expiry_rule(&self, kind: &RequestKind) -> Option<&ExpiryRule> {
        self.inner.expiry.get(kind)
    }

    /// The agent this handle parks under and resumes for.
    pub fn agent(&self) -> &str {
        &self.inner.agent
    }

    /// The request `id` (any request of a parked run), whatever its state.
    pub async fn get(&self, id: &str) -> Result<Option<Parked>, InboxError> {
        let row = requests::get(&self.inner.store.pool, id).await?;
        row.map(Parked::try_from).transpose()
    }

    /// Every request of the run that request `id` belongs to (any of them will do), in
    /// call order; empty when no run has that request.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:").await?;
    /// assert!(inbox.run_requests("no-such-request").await?.is_empty());
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn run_requests(&self, id: &str) -> Result<Vec<Parked>, InboxError> {
        let rows = requests::of_run(&self.inner.store.pool, id).await?;
        rows.into_iter().map(Parked::try_from).collect()
    }

    /// The requests waiting for an answer, oldest first, of every agent: one per request,
    /// so a run waiting on three calls is listed three times, until each is answered.
    ///
    /// A row that cannot be read back is left out (and logged); [`get`](Self::get) on its
    /// id reports why.
    pub async fn waiting(&self) -> Result<Vec<Parked>, InboxError> {
        Ok(readable(
            requests::waiting_all(&self.inner.store.pool).await?,
        ))
    }

    /// One page of [`waiting`](Self::waiting): at most `limit` requests from the
    /// `offset`-th (0-based), oldest first, with how many are waiting in all — what a list
    /// shows without reading every waiting request.
    pub async fn waiting_page(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<WaitingPage, InboxError> {
        let (total, rows) = requests::waiting_page(&self.inner.store.pool, offset, limit).await?;
        Ok(WaitingPage::of(
            readable(rows),
            offset,
            usize::try_from(total).unwrap_or(0),
        ))
    }

    /// The `limit` requests whose runs changed last among those answered (their runs
    /// waiting for their other requests, or answered, running, done, failed), newest
    /// first, of every agent: what was decided lately and what came of it.
    pub async fn recent(&self, limit: usize) -> Result<Vec<Parked>, InboxError> {
        Ok(readable(
            requests::recent(&self.inner.store.pool, limit).await?,
        ))
    }

    /// Waits until the run that request `id` belongs to (any of its requests) has been
    /// resumed to its end, and returns that request as it then stands: `Done`, with the
    /// resumed run's [`result`](Parked::result) (and, when it halted again,
    /// [`next`](Parked::next), the request it is now parked on), or `Failed`, with
    /// [`last_error`](Parked::last_error). A run already finished returns at once;
    /// [`InboxError::UnknownRequest`] when no run has that request.
    ///
    /// A resume in this process wakes it at once; one in another process is seen within the
    /// [`poll_interval`](InboxBuilder::poll_interval). It waits as long as the run does:
    /// wrap it in a timeout to bound the wait.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus::testing::{MockLlm, Reply};
    /// use toolnexus::{pending, tool, Answer, LlmClient, ToolResult, Toolkit};
    /// use toolnexus_inbox::{Inbox, ParkedState};
    ///
    /// /// Buys an item once a person approves
    /// #[tool]
    /// async fn buy(item: String, answer: Option<&Answer>) -> ToolResult {
    ///     match answer {
    ///         Some(_) => ToolResult::ok(format!("bought {item}")),
    ///         None => pending!(kind = "approval", prompt = format!("Buy {item}?")),
    ///     }
    /// }
    ///
    /// let llm = MockLlm::start([
    ///     Reply::tool_call("c1", "buy", serde_json::json!({"item": "gpu"})),
    ///     Reply::text("Bought."),
    /// ]).await?;
    /// let client = LlmClient::builder().base_url(llm.base_url()).model("m").api_key("k").build()?;
    /// let tk = Toolkit::builder().tool(Buy).build()?;
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// let id = inbox.park(&client.run("buy a gpu", &tk).await?).await?;
    ///
    /// // The app waits for the outcome while a worker resumes the run once it is answered.
    /// let waiting = tokio::spawn({
    ///     let (inbox, id) = (inbox.clone(), id.clone());
    ///     async move { inbox.outcome(&id).await }
    /// });
    /// inbox.answer_as(Answer::ok(&id), "ada@example.com").await?;
    /// inbox.resume_next(&client, &tk).await?;
    /// let done = waiting.await.expect("the waiting task")?;
    /// assert_eq!(done.run_state, ParkedState::Done);
    /// assert_eq!(done.result.expect("a result").text, "Bought.");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn outcome(&self, id: &str) -> Result<Parked, InboxError> {
        loop {
            // Registered before the read, so an outcome recorded meanwhile still wakes it.
            let finished = self.inner.finished.notified();
            tokio::pin!(finished);
            finished.as_mut().enable();
            match self.get(id).await? {
                None => return Err(InboxError::UnknownRequest(id.to_owned())),
                Some(parked)
                    if matches!(parked.run_state, ParkedState::Done | ParkedState::Failed) =>
                {
                    return Ok(parked)
                }
                Some(_) => {}
            }
            tokio::select! {
                _ = finished => {}
                _ = tokio::time::sleep(self.inner.poll_interval) => {}
            }
        }
    }

    /// Wakes this process's [`outcome`](Self::outcome)s after a resume recorded how it
    /// ended (or that it will be tried again: they look and wait on).
    pub(crate) fn wake_outcome_waiters(&self) {
        self.note_change();
        self.inner.finished.notify_waiters();
    }

    /// Who may answer `parked`: its own `data.responders`, else this handle's rule for its
    /// kind or agent; `None` when nothing limits it.
    /// Once the request is escalated, the escalation's responders are among them too.
    pub fn responders(&self, parked: &Parked) -> Option<Vec<Responder>> {
        self.inner
            .rules
            .responders(&parked.request, &parked.agent, &parked.escalated_to)
    }

    /// Whether `who` may answer `parked` ([`responders`](Self::responders)); `None` is an
    /// answer from nobody in particular, allowed only where nothing limits who answers.
    /// It does not look at whether the request still waits.
    pub fn may_answer(&self, parked: &Parked, who: Option<&Person>) -> bool {
        match (self.responders(parked), who) {
            (None, _) => true,
            (Some(list), Some(who)) => who.is_one_of(&list),
            (Some(_), None) => false,
        }
    }

    /// The waiting requests `who` may answer, oldest first ([`waiting`](Self::waiting)
    /// filtered by [`may_answer`](Self::may_answer)).
    pub async fn waiting_for(&self, who: &Person) -> Result<Vec<Parked>, InboxError> {
        let mut waiting = self.waiting().await?;
        waiting.retain(|p| self.may_answer(p, Some(who)));
        Ok(waiting)
    }

    /// The audit trail of the run that request `id` belongs to (any of its requests),
    /// oldest first; empty when no run has that request. A delegation's trail is read by
    /// `delegation:ID` ([`Inbox::delegate`]). A run resumed into a new
    /// parking continues under the new request's id ([`Parked::next`](crate::Parked::next)).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:").await?;
    /// assert!(inbox.audit("no-such-request").await?.is_empty());
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn audit(&self, id: &str) -> Result<Vec<AuditEntry>, InboxError> {
        let rows = audit::of_run(&self.inner.store.pool, id).await?;
        rows.into_iter()
            .map(|row| {
                let kind = AuditKind::parse(&row.kind).ok_or_else(|| InboxError::Corrupt {
                    id: id.to_owned(),
                    reason: format!("audit entry of unknown kind {:?}", row.kind),
                })?;
                Ok(AuditEntry {
                    at: from_ms(row.at),
                    kind,
                    request: row.request_id,
                    actor: row.actor,
                    attempt: row.attempt.map(|a| u32::try_from(a).unwrap_or(u32::MAX)),
                    detail: row.detail,
                })
            })
            .collect()
    }
}
