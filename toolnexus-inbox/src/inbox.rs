//! [`Inbox`]: the handle on one inbox database, how it is opened, and the people's side of
//! it — parking a halted run, listing, answering, expiring.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use sqlx::{AnyConnection, AnyPool, Connection};
use tokio::sync::Notify;
use toolnexus::{Answer, Message, Refusal, Request, RunResult, RunStatus, ToolCallRecord};
use tracing::Instrument;

use crate::audit::{AuditKind, Record};
use crate::clock::{ms, parse_rfc3339, rfc3339, Clock};
use crate::deadline::{Escalation, Expiry, ExpiryRule};
use crate::notify::{Targets, Webhook};
use crate::parked::{parked_columns, parked_from};
use crate::people::{Person, Rules};
use crate::spans;
use crate::store::{self, Engine, PoolSettings, SqliteSync};
use crate::{InboxError, Parked, ParkedState, WaitingPage};

/// The PostgreSQL channel answers are announced on, so idle workers wake at once (spelled
/// out again in the answer statement, `and_announce!`).
pub(crate) const CHANNEL: &str = "toolnexus_inbox";

/// The condition of a request still waiting for its answer (its run waits too, then).
macro_rules! open {
    () => {
        " WHERE q.answered_at IS NULL AND r.state = 'waiting'"
    };
}
/// The run request $1 belongs to, and its state.
macro_rules! lock_run {
    ($lock:literal) => {
        concat!(
            "SELECT q.run_id, r.state, r.agent",
            parked_from!(),
            " WHERE q.id = $1",
            $lock
        )
    };
}

const LOCK_RUN: &str = lock_run!("");
// Later answers to the same run wait here until this one commits.
const LOCK_RUN_FOR_UPDATE: &str = lock_run!(" FOR UPDATE OF r");

/// Marks run $2 answered at $1 once none of its requests is open; a row comes back when it
/// did.
macro_rules! complete {
    () => {
        "UPDATE toolnexus_inbox_runs SET state = 'answered', answered_at = $1, updated_at = $1 \
         WHERE id = $2 AND state = 'waiting' AND NOT EXISTS (SELECT 1 FROM \
         toolnexus_inbox_requests WHERE run_id = $2 AND answered_at IS NULL) RETURNING agent"
    };
}

/// In the same statement, the NOTIFY that wakes idle workers of the run's agent in every
/// process (sent when the answer commits). `pg_notify` returns `void`, which no row may
/// carry, so it runs in a lateral subquery of its own.
macro_rules! and_announce {
    ($update:expr) => {
        concat!(
            "WITH answered AS (",
            $update,
            ") SELECT answered.agent FROM answered, \
             LATERAL (SELECT pg_notify('toolnexus_inbox', answered.agent)) AS announced"
        )
    };
}

const COMPLETE: &str = complete!();
const COMPLETE_AND_ANNOUNCE: &str = and_announce!(complete!());

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
    pub(crate) pool: AnyPool,
    pub(crate) engine: Engine,
    /// Kept for the LISTEN connection; never shown (it may hold a password).
    pub(crate) url: String,
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
    pub(crate) expiry: HashMap<String, ExpiryRule>,
    /// Wakes a deliverer when this process wrote to the outbox.
    pub(crate) outbox: Notify,
    /// Wakes one idle worker slot per answer (this process's answers, and other processes'
    /// relayed from NOTIFY): one answer is one run to resume, so waking every idle slot
    /// would only send the others to claim nothing. A slot that gets a run goes on claiming
    /// until none is left, so runs answered in a burst are all taken.
    pub(crate) answered: Notify,
}

impl fmt::Debug for Inbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbox")
            .field("engine", &self.inner.engine)
            .field("agent", &self.inner.agent)
            .field("lease", &self.inner.lease)
            .field("max_attempts", &self.inner.max_attempts)
            .finish_non_exhaustive()
    }
}

/// Options for [`Inbox::builder`].
#[derive(Clone)]
pub struct InboxBuilder {
    url: String,
    agent: String,
    lease: Duration,
    max_attempts: u32,
    poll_interval: Duration,
    pool: PoolSettings,
    rules: Rules,
    worker: String,
    clock: Clock,
    webhooks: Vec<Webhook>,
    page_url: Option<String>,
    escalations: Vec<Escalation>,
    expiry: HashMap<String, ExpiryRule>,
}

impl fmt::Debug for InboxBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InboxBuilder")
            .field("agent", &self.agent)
            .field("lease", &self.lease)
            .field("max_attempts", &self.max_attempts)
            .field("webhooks", &self.webhooks)
            .field("escalations", &self.escalations)
            .finish_non_exhaustive()
    }
}

impl InboxBuilder {
    /// The agent this handle parks under and resumes for (default `"default"`): one
    /// database serves several agents, and a worker never resumes another agent's run with
    /// its own toolkit.
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = agent.into();
        self
    }

    /// How long a worker's claim on a run lasts (default 5 minutes). A worker renews it
    /// while the resume runs; when a worker dies, another takes the run over once it lapses.
    /// A failed attempt also waits this long before the run is resumed again.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(10));
        self
    }

    /// How many claims a run gets before it is `Failed` (default 5).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The most connections the pool opens (default 4 for SQLite, 10 for PostgreSQL).
    pub fn pool_size(mut self, connections: u32) -> Self {
        self.pool.max_connections = Some(connections.max(1));
        self
    }

    /// How often an idle worker looks for answered runs when nothing wakes it (default
    /// 100 ms on SQLite; on PostgreSQL answers wake workers at once and this is a fallback).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How long to wait for a connection before failing with
    /// [`InboxError::Database`] (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.pool.connect_timeout = timeout;
        self
    }

    /// SQLite's `synchronous` setting (default [`SqliteSync::Normal`]).
    pub fn sqlite_sync(mut self, sync: SqliteSync) -> Self {
        self.pool.sqlite_sync = sync;
        self
    }

    /// Who may answer requests of `kind` that name no responders themselves: people by
    /// id (`"ada@example.com"`) or groups (`"group:finance"`). A request's own
    /// `data.responders` comes first, then the rule for its kind, then the rule for its
    /// agent ([`agent_responders`](Self::agent_responders)); a request none of them covers
    /// may be answered by anyone who may open the inbox.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let inbox = toolnexus_inbox::Inbox::builder("sqlite::memory:")
    ///     .responders("approval", ["group:finance"])
    ///     .agent_responders("purchasing", ["ada@example.com"])
    ///     .open()
    ///     .await?;
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub fn responders<I, S>(mut self, kind: impl Into<String>, responders: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rules.by_kind.insert(kind.into(), strings(responders));
        self
    }

    /// Who may answer the requests of runs parked under `agent` that neither name
    /// responders nor fall under a rule for their kind ([`responders`](Self::responders)).
    pub fn agent_responders<I, S>(mut self, agent: impl Into<String>, responders: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rules
            .by_agent
            .insert(agent.into(), strings(responders));
        self
    }

    /// The name the audit trail gives this handle's claims and resumes (default
    /// `worker <process id>`), so a takeover shows which worker took over.
    pub fn worker_name(mut self, name: impl Into<String>) -> Self {
        self.worker = name.into();
        self
    }

    /// Tells `webhook` of what happens to parked runs (see [`Webhook`]); call it again for
    /// more webhooks. Each notification is written with the change it tells of and
    /// delivered by the workers ([`Worker`](crate::Worker), [`Inbox::deliver_due`]).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus_inbox::{Inbox, Webhook};
    ///
    /// let inbox = Inbox::builder("sqlite::memory:")
    ///     .webhook(Webhook::new("https://hooks.slack.com/services/T0/B0/XXXX"))
    ///     .page_url("https://inbox.example.com/")
    ///     .open()
    ///     .await?;
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub fn webhook(mut self, webhook: Webhook) -> Self {
        self.webhooks.push(webhook);
        self
    }

    /// Where the inbox page is served (`https://inbox.example.com/`), so notifications
    /// link to each request's page (`…/r/{id}`); without it they carry no link.
    pub fn page_url(mut self, url: impl Into<String>) -> Self {
        self.page_url = Some(url.into());
        self
    }

    /// Escalates requests nobody answered in time (see [`Escalation`]); call it again for
    /// more rules. A request gets the first rule that covers its kind, once.
    pub fn escalate(mut self, escalation: Escalation) -> Self {
        self.escalations.push(escalation);
        self
    }

    /// What expiry does to requests of `kind` (default [`Expiry::Decline`], for every
    /// kind: see [`Expiry`] for why).
    pub fn on_expiry(mut self, kind: impl Into<String>, action: Expiry) -> Self {
        self.expiry.entry(kind.into()).or_default().action = action;
        self
    }

    /// A deadline for requests of `kind` that set no `expiresAt` themselves: they expire
    /// `after` they are parked.
    pub fn expire_after(mut self, kind: impl Into<String>, after: Duration) -> Self {
        self.expiry.entry(kind.into()).or_default().after = Some(after);
        self
    }

    /// The clock every deadline and recorded time is read from (default the system's):
    /// for tests and simulations that move time on. Signatures of webhook deliveries
    /// keep the system's time, which receivers check against their own.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::time::{Duration, SystemTime};
    ///
    /// let inbox = toolnexus_inbox::Inbox::builder("sqlite::memory:")
    ///     .clock(|| SystemTime::now() + Duration::from_secs(3600))
    ///     .open()
    ///     .await?;
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub fn clock(mut self, now: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Clock::custom(now);
        self
    }

    /// Connects, creating the database (SQLite) and its tables when missing.
    pub async fn open(self) -> Result<Inbox, InboxError> {
        let targets = Targets::of(&self.webhooks)?;
        let page_url = self
            .page_url
            .as_deref()
            .map(|url| {
                reqwest::Url::parse(url)
                    .ok()
                    .filter(|u| !u.cannot_be_a_base())
                    .ok_or_else(|| InboxError::InvalidPageUrl(url.to_owned()))
            })
            .transpose()?;
        let (engine, pool) = store::open(&self.url, &self.pool).await?;
        Ok(Inbox {
            inner: Arc::new(Inner {
                pool,
                engine,
                url: self.url,
                agent: self.agent,
                lease: self.lease,
                max_attempts: self.max_attempts,
                poll_interval: self.poll_interval,
                rules: self.rules,
                worker: self.worker,
                answered: Notify::new(),
                clock: self.clock,
                targets,
                page_url,
                escalations: self.escalations,
                expiry: self.expiry,
                outbox: Notify::new(),
            }),
        })
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
        InboxBuilder {
            url: url.into(),
            agent: "default".to_owned(),
            lease: Duration::from_secs(300),
            max_attempts: 5,
            poll_interval: Duration::from_millis(100),
            pool: PoolSettings {
                max_connections: None,
                sqlite_sync: SqliteSync::default(),
                connect_timeout: Duration::from_secs(10),
            },
            rules: Rules::default(),
            worker: format!("worker {}", std::process::id()),
            clock: Clock::system(),
            webhooks: Vec::new(),
            page_url: None,
            escalations: Vec::new(),
            expiry: HashMap::new(),
        }
    }

    /// Now, by this inbox's clock, in milliseconds since the epoch.
    pub(crate) fn now(&self) -> i64 {
        self.inner.clock.now_ms()
    }

    /// The agent this handle parks under and resumes for.
    pub fn agent(&self) -> &str {
        &self.inner.agent
    }

    /// Parks a halted run: its transcript, every request it waits on
    /// ([`RunResult::waiting`], in call order), its model and turn count, under this
    /// handle's agent. Returns the id of its first request, which is also the run's id.
    ///
    /// Each request is answered on its own, by its own id; the run is resumed once every
    /// one of them is answered, with all their answers.
    ///
    /// A run that did not halt is [`InboxError::NotPending`]; a request id already parked is
    /// [`InboxError::AlreadyParked`]. One transaction: nothing is ever half-written.
    pub async fn park(&self, run: &RunResult) -> Result<String, InboxError> {
        let first = run.pending.as_ref().map_or("", |r| r.id.as_str());
        let span = spans::park(&self.inner.agent, first, run.waiting.len());
        let parked = self.park_in_span(run).instrument(span.clone()).await;
        if let Err(e) = &parked {
            spans::failed(&span, e);
        }
        parked
    }

    async fn park_in_span(&self, run: &RunResult) -> Result<String, InboxError> {
        let parked = ToPark::of(self, run, 0)?;
        let mut conn = self.inner.pool.acquire().await?;
        let mut tx = conn.begin_with(self.inner.engine.begin_write()).await?;
        if let Some(taken) = insert(&mut tx, self, &parked).await? {
            tx.rollback().await?;
            return Err(InboxError::AlreadyParked(taken));
        }
        tx.commit().await?;
        self.wake_deliverers();
        Ok(parked.run_id.to_owned())
    }

    /// The request `id` (any request of a parked run), whatever its state.
    pub async fn get(&self, id: &str) -> Result<Option<Parked>, InboxError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            parked_columns!(),
            parked_from!(),
            " WHERE q.id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.inner.pool)
        .await?;
        row.as_ref().map(Parked::from_row).transpose()
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
        let rows = sqlx::query(concat!(
            "SELECT ",
            parked_columns!(),
            parked_from!(),
            " WHERE q.run_id = (SELECT run_id FROM toolnexus_inbox_requests WHERE id = $1) \
             ORDER BY q.position"
        ))
        .bind(id)
        .fetch_all(&self.inner.pool)
        .await?;
        rows.iter().map(Parked::from_row).collect()
    }

    /// The requests waiting for an answer, oldest first, of every agent: one per request,
    /// so a run waiting on three calls is listed three times, until each is answered.
    ///
    /// A row that cannot be read back is left out (and logged); [`get`](Self::get) on its
    /// id reports why.
    pub async fn waiting(&self) -> Result<Vec<Parked>, InboxError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            parked_columns!(),
            parked_from!(),
            open!(),
            " ORDER BY q.parked_at, q.id"
        ))
        .fetch_all(&self.inner.pool)
        .await?;
        Ok(readable(&rows))
    }

    /// One page of [`waiting`](Self::waiting): at most `limit` requests from the
    /// `offset`-th (0-based), oldest first, with how many are waiting in all — what a list
    /// shows without reading every waiting request.
    pub async fn waiting_page(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<WaitingPage, InboxError> {
        let pool = &self.inner.pool;
        let count =
            sqlx::query_scalar::<_, i64>(concat!("SELECT COUNT(*)", parked_from!(), open!()))
                .fetch_one(pool);
        let page = sqlx::query(concat!(
            "SELECT ",
            parked_columns!(),
            parked_from!(),
            open!(),
            " ORDER BY q.parked_at, q.id LIMIT $1 OFFSET $2"
        ))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .bind(i64::try_from(offset).unwrap_or(i64::MAX))
        .fetch_all(pool);
        let (total, rows) = tokio::try_join!(count, page)?;
        Ok(WaitingPage {
            runs: readable(&rows),
            offset,
            total: usize::try_from(total).unwrap_or(0),
        })
    }

    /// The `limit` requests whose runs changed last among those answered (their runs
    /// waiting for their other requests, or answered, running, done, failed), newest
    /// first, of every agent: what was decided lately and what came of it.
    pub async fn recent(&self, limit: usize) -> Result<Vec<Parked>, InboxError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            parked_columns!(),
            parked_from!(),
            " WHERE q.answered_at IS NOT NULL \
             ORDER BY r.updated_at DESC, q.run_id, q.position LIMIT $1"
        ))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.inner.pool)
        .await?;
        Ok(readable(&rows))
    }

    /// Answers a waiting request. The first answer wins: a second one, an answer to an
    /// unknown id, to a run no longer waiting or after the request's `expiresAt` is an
    /// error and changes nothing. When the request carries a form (`data.schema`), an `ok`
    /// answer's data must fit it, and edited arguments
    /// ([`Answer::with_args`](toolnexus::Answer::with_args)) must fit a gate's `argsSchema`
    /// ([`InboxError::InvalidAnswer`] names the field).
    ///
    /// When the request is one of several its run waits on, the run is ready to resume
    /// once the last of them is answered, whatever the order and however the answers race.
    ///
    /// A request that names who may answer it ([`responders`](Self::responders)) is
    /// refused here with [`InboxError::NotAllowed`]: an answer from nobody in particular
    /// is not known to come from one of them. Use [`answer_as`](Self::answer_as).
    pub async fn answer(&self, answer: Answer) -> Result<(), InboxError> {
        self.record_answer(answer, None, false).await
    }

    /// [`answer`](Self::answer), as `who` (a [`Person`], or a plain id such as
    /// `"ada@example.com"`): recorded on the row and in the audit trail, with the time.
    /// When the request names its responders, `who` must be one of them, else
    /// [`InboxError::NotAllowed`] and nothing changes.
    pub async fn answer_as(
        &self,
        answer: Answer,
        who: impl Into<Person>,
    ) -> Result<(), InboxError> {
        self.record_answer(answer, Some(who.into()), false).await
    }

    /// Who may answer `parked`: its own `data.responders`, else this handle's rule for its
    /// kind or agent; `None` when nothing limits it.
    /// Once the request is escalated, the escalation's responders are among them too.
    pub fn responders(&self, parked: &Parked) -> Option<Vec<String>> {
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

    /// Settles every waiting request whose `expiresAt` has passed with its kind's expiry
    /// action ([`InboxBuilder::on_expiry`]): by default declined as expired
    /// (`Answer::refuse(id, Refusal::Expired)`), so the resumed run tells the model.
    /// Returns how many expired. A run whose requests are then all answered resumes as
    /// usual.
    pub async fn expire_due(&self) -> Result<usize, InboxError> {
        let span = spans::expire(&self.inner.agent);
        let expired = self.expire_in_span().instrument(span.clone()).await;
        if let Ok(n) = &expired {
            span.record(
                "toolnexus.inbox.expired",
                i64::try_from(*n).unwrap_or(i64::MAX),
            );
        }
        expired
    }

    async fn expire_in_span(&self) -> Result<usize, InboxError> {
        let due: Vec<(String, String)> = sqlx::query_as(concat!(
            "SELECT q.id, q.request",
            parked_from!(),
            open!(),
            " AND q.expires_at IS NOT NULL AND q.expires_at <= $1"
        ))
        .bind(self.now())
        .fetch_all(&self.inner.pool)
        .await?;
        let mut expired = 0;
        for (id, request) in due {
            let kind = serde_json::from_str::<Request>(&request)
                .map(|r| r.kind.as_str().to_owned())
                .unwrap_or_default();
            let action = self
                .expiry_rule(&kind)
                .map_or(&Expiry::Decline, |rule| &rule.action);
            let mut outcome = self.record_answer(action.answer(&id), None, true).await;
            if let Err(InboxError::InvalidAnswer { .. }) = &outcome {
                tracing::warn!(id = %id, kind = %kind, "the expiry answer does not fit the request's form; declining");
                outcome = self
                    .record_answer(Answer::refuse(&id, Refusal::Expired), None, true)
                    .await;
            }
            match outcome {
                Ok(()) => expired += 1,
                // Answered in the meantime: the person was first.
                Err(InboxError::NotWaiting { .. } | InboxError::UnknownRequest(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(expired)
    }

    /// Records an answer in one transaction, in its span; a refusal rolls it back,
    /// changing nothing.
    async fn record_answer(
        &self,
        answer: Answer,
        answered_by: Option<Person>,
        expiring: bool,
    ) -> Result<(), InboxError> {
        let span = spans::answer(
            &answer,
            answered_by.as_ref().map(|p| p.id.as_str()),
            expiring,
        );
        let recorded = self
            .record_answer_in_span(answer, answered_by, expiring)
            .instrument(span.clone())
            .await;
        if let Err(e) = &recorded {
            spans::failed(&span, e);
        }
        recorded
    }

    async fn record_answer_in_span(
        &self,
        answer: Answer,
        answered_by: Option<Person>,
        expiring: bool,
    ) -> Result<(), InboxError> {
        let mut conn = self.inner.pool.acquire().await?;
        let mut tx = conn.begin_with(self.inner.engine.begin_write()).await?;
        match self
            .answer_in(&mut tx, &answer, answered_by.as_ref(), expiring)
            .await
        {
            Ok(run_answered) => {
                tx.commit().await?;
                self.wake_deliverers();
                if run_answered {
                    // This process's idle workers at once; other processes' heard the NOTIFY.
                    self.inner.answered.notify_one();
                }
                Ok(())
            }
            Err(refused) => {
                // The refusal is what the caller needs to hear; a rollback that fails
                // leaves nothing behind either, as the transaction never commits.
                if let Err(e) = tx.rollback().await {
                    tracing::warn!(error = %e, "could not roll back a refused answer");
                }
                Err(refused)
            }
        }
    }

    /// The answer's statements, inside its transaction: `true` when it was the run's last
    /// open request, so the run is now ready to resume.
    ///
    /// The run's row is locked first (SQLite's write transaction locks everything), so
    /// answers to one run's requests take turns: whichever comes last sees every other
    /// answer and marks the run answered, and no answer is lost to a race.
    async fn answer_in(
        &self,
        conn: &mut AnyConnection,
        answer: &Answer,
        answered_by: Option<&Person>,
        expiring: bool,
    ) -> Result<bool, InboxError> {
        let now = self.now();
        let id = || answer.id.clone();
        let lock = match self.inner.engine {
            Engine::Sqlite => LOCK_RUN,
            Engine::Postgres => LOCK_RUN_FOR_UPDATE,
        };
        let Some((run_id, state, agent)) = sqlx::query_as::<_, (String, String, String)>(lock)
            .bind(&answer.id)
            .fetch_optional(&mut *conn)
            .await?
        else {
            return Err(InboxError::UnknownRequest(id()));
        };
        let state = ParkedState::parse(&state).ok_or_else(|| InboxError::Corrupt {
            id: run_id.clone(),
            reason: format!("unknown state {state:?}"),
        })?;
        if state != ParkedState::Waiting {
            return Err(InboxError::NotWaiting { id: id(), state });
        }
        // Read under the lock: an answer committed before it was taken is seen here.
        let (request, expires_at, answered_at, escalated_to): Open = sqlx::query_as(
            "SELECT request, expires_at, answered_at, escalated_to \
                 FROM toolnexus_inbox_requests WHERE id = $1",
        )
        .bind(&answer.id)
        .fetch_one(&mut *conn)
        .await?;
        if answered_at.is_some() {
            return Err(InboxError::NotWaiting {
                id: id(),
                state: ParkedState::Answered,
            });
        }
        if !expiring && expires_at.is_some_and(|at| at <= now) {
            return Err(InboxError::Expired(id()));
        }
        let request: Request = serde_json::from_str(&request).map_err(|e| InboxError::Corrupt {
            id: id(),
            reason: format!("request: {e}"),
        })?;
        // Expiry is the inbox's own decision, not a person's.
        if !expiring {
            let escalated_to = escalated_to.as_deref().map(strings_of).unwrap_or_default();
            if let Some(list) = self.inner.rules.responders(&request, &agent, &escalated_to) {
                if !answered_by.is_some_and(|who| who.is_one_of(&list)) {
                    return Err(InboxError::NotAllowed {
                        request: id(),
                        who: answered_by.map(|p| p.id.clone()),
                    });
                }
            }
        }
        request.check_answer(answer)?;
        let stored = to_json(&answer.id, answer)?;
        sqlx::query(
            "UPDATE toolnexus_inbox_requests SET answer = $1, answered_by = $2, \
             answered_at = $3 WHERE id = $4 AND answered_at IS NULL",
        )
        .bind(&stored)
        .bind(answered_by.map(|p| p.id.as_str()))
        .bind(now)
        .bind(&answer.id)
        .execute(&mut *conn)
        .await?;
        let complete = match self.inner.engine {
            Engine::Sqlite => COMPLETE,
            Engine::Postgres => COMPLETE_AND_ANNOUNCE,
        };
        let run_answered = sqlx::query(complete)
            .bind(now)
            .bind(&run_id)
            .fetch_optional(&mut *conn)
            .await?
            .is_some();
        if !run_answered {
            sqlx::query("UPDATE toolnexus_inbox_runs SET updated_at = $1 WHERE id = $2")
                .bind(now)
                .bind(&run_id)
                .execute(&mut *conn)
                .await?;
        }
        let kind = if expiring {
            AuditKind::Expired
        } else {
            AuditKind::Answered
        };
        Record {
            request: Some(&answer.id),
            actor: answered_by.map(|p| p.id.as_str()),
            detail: Some(&stored),
            ..Record::new(&run_id, kind)
        }
        .append(conn, now)
        .await?;
        let by = answered_by.map(|p| p.id.as_str());
        let notice = || self.notice_answered(&run_id, &agent, &request, answer, by, expiring);
        self.enqueue(conn, notice, None).await?;
        Ok(run_answered)
    }
}

fn strings<I: IntoIterator<Item = S>, S: Into<String>>(items: I) -> Vec<String> {
    items.into_iter().map(Into::into).collect()
}

/// A request's row as an answer reads it: the request, its deadline, its answer's time and
/// who an escalation added to its responders (a JSON list).
type Open = (String, Option<i64>, Option<i64>, Option<String>);

/// A stored JSON list of strings; anything else is no one.
pub(crate) fn strings_of(json: &str) -> Vec<String> {
    serde_json::from_str(json).unwrap_or_default()
}

fn readable(rows: &[sqlx::any::AnyRow]) -> Vec<Parked> {
    rows.iter()
        .filter_map(|row| match Parked::from_row(row) {
            Ok(p) => Some(p),
            Err(e) => {
                tracing::warn!(error = %e, "skipping an unreadable inbox row");
                None
            }
        })
        .collect()
}

pub(crate) fn to_json<T: serde::Serialize>(id: &str, value: &T) -> Result<String, InboxError> {
    serde_json::to_string(value).map_err(|e| InboxError::Corrupt {
        id: id.to_owned(),
        reason: format!("cannot be stored as JSON: {e}"),
    })
}

/// A halted run, ready to be inserted: its run row and a row per request it waits on.
pub(crate) struct ToPark<'a> {
    /// The run's id: its first request's.
    pub(crate) run_id: &'a str,
    messages: String,
    model: &'a str,
    turns: i64,
    request_ids: String,
    requests: Vec<RequestRow<'a>>,
    /// When it is parked: the time its deadlines count from.
    at: i64,
}

/// One request of a halted run, ready to be inserted.
struct RequestRow<'a> {
    /// The request as kept: as asked, or with its kind's deadline when it set none.
    request: Cow<'a, Request>,
    json: String,
    /// The call that asked it, and that call's arguments as stored.
    call: Option<(&'a str, &'a Value)>,
    args_json: Option<String>,
    expires_at: Option<i64>,
}

impl<'a> ToPark<'a> {
    /// `earlier_turns`: turns taken before this invocation, when a resumed run halts again.
    pub(crate) fn of(
        inbox: &Inbox,
        run: &'a RunResult,
        earlier_turns: i64,
    ) -> Result<Self, InboxError> {
        let (RunStatus::Pending, Some(pending)) = (run.status, run.pending.as_ref()) else {
            return Err(InboxError::NotPending);
        };
        // A result from before runs listed every waiting call names only the first.
        let waiting = if run.waiting.is_empty() {
            std::slice::from_ref(pending)
        } else {
            run.waiting.as_slice()
        };
        let Some(first) = waiting.first() else {
            return Err(InboxError::NotPending);
        };
        let at = inbox.now();
        let requests = waiting
            .iter()
            .map(|request| RequestRow::of(inbox, at, run, request))
            .collect::<Result<Vec<_>, _>>()?;
        let ids: Vec<&str> = waiting.iter().map(|r| r.id.as_str()).collect();
        Ok(ToPark {
            run_id: &first.id,
            messages: to_json(&first.id, &run.messages)?,
            model: &run.model,
            turns: earlier_turns.saturating_add(i64::try_from(run.turns).unwrap_or(i64::MAX)),
            request_ids: to_json(&first.id, &ids)?,
            requests,
            at,
        })
    }
}

impl<'a> RequestRow<'a> {
    fn of(
        inbox: &Inbox,
        now: i64,
        run: &'a RunResult,
        asked: &'a Request,
    ) -> Result<Self, InboxError> {
        let mut request = Cow::Borrowed(asked);
        let expires_at = match &asked.expires_at {
            Some(text) => Some(
                parse_rfc3339(text).ok_or_else(|| InboxError::InvalidExpiry {
                    id: request.id.clone(),
                    value: text.clone(),
                })?,
            ),
            // The kind's deadline, written on the request too, so whoever reads it sees
            // when it expires.
            None => match inbox
                .expiry_rule(request.kind.as_str())
                .and_then(|rule| rule.after)
            {
                Some(after) => {
                    let at = now.saturating_add(ms(after));
                    request.to_mut().expires_at = Some(rfc3339(at));
                    Some(at)
                }
                None => None,
            },
        };
        let call = halted_call(run, &asked.id);
        let args_json = call.map(|(_, args)| to_json(&asked.id, args)).transpose()?;
        Ok(RequestRow {
            json: to_json(&asked.id, &request)?,
            request,
            call,
            args_json,
            expires_at,
        })
    }
}

/// The tool call that asked request `id`: its name and arguments, from the call records or, failing
/// that, from the transcript's placeholder and the assistant turn that asked for it.
fn halted_call<'r>(run: &'r RunResult, id: &str) -> Option<(&'r str, &'r Value)> {
    let parks_here = |call: &ToolCallRecord| call.pending().is_some_and(|p| p.id == id);
    if let Some(call) = run.tool_calls.iter().find(|c| parks_here(c)) {
        return Some((&call.name, &call.args));
    }
    let call_id = run.messages.iter().rev().find_map(|m| match m {
        Message::ToolResults { results } => results
            .iter()
            .find(|r| r.pending.as_ref().is_some_and(|p| p.id == id))
            .map(|r| r.call_id.as_str()),
        _ => None,
    })?;
    run.messages.iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .find(|c| c.id == call_id)
            .map(|c| (c.name.as_str(), &c.args)),
        _ => None,
    })
}

/// Inserts a waiting run and its requests. `Some(id)`: request `id` is already parked, and
/// the caller rolls the transaction back so nothing of the run stays.
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    inbox: &Inbox,
    run: &ToPark<'_>,
) -> Result<Option<String>, InboxError> {
    let agent = inbox.inner.agent.as_str();
    let now = run.at;
    let inserted = sqlx::query(
        "INSERT INTO toolnexus_inbox_runs (id, agent, state, messages, model, turns, \
         parked_at, attempts, updated_at, request_ids) \
         VALUES ($1, $2, 'waiting', $3, $4, $5, $6, 0, $6, $7) ON CONFLICT (id) DO NOTHING",
    )
    .bind(run.run_id)
    .bind(agent)
    .bind(&run.messages)
    .bind(run.model)
    .bind(run.turns)
    .bind(now)
    .bind(&run.request_ids)
    .execute(&mut *conn)
    .await?;
    if inserted.rows_affected() == 0 {
        return Ok(Some(run.run_id.to_owned()));
    }
    for (position, row) in run.requests.iter().enumerate() {
        let request = &row.request;
        let inserted = sqlx::query(
            "INSERT INTO toolnexus_inbox_requests (id, run_id, position, request, tool_name, \
             tool_args, parked_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(&request.id)
        .bind(run.run_id)
        .bind(i64::try_from(position).unwrap_or(i64::MAX))
        .bind(&row.json)
        .bind(row.call.map(|(name, _)| name))
        .bind(row.args_json.as_deref())
        .bind(now)
        .bind(row.expires_at)
        .execute(&mut *conn)
        .await?;
        if inserted.rows_affected() == 0 {
            return Ok(Some(request.id.clone()));
        }
        Record {
            request: Some(&request.id),
            actor: Some(agent),
            detail: Some(request.kind.as_str()),
            ..Record::new(run.run_id, AuditKind::Parked)
        }
        .append(conn, now)
        .await?;
    }
    let notice = || {
        let requests: Vec<_> = run.requests.iter().map(|r| (&*r.request, r.call)).collect();
        inbox.notice_parked(run.run_id, agent, &requests)
    };
    inbox.enqueue(conn, notice, None).await?;
    Ok(None)
}

pub(crate) fn lease_ms(inbox: &Inbox) -> i64 {
    ms(inbox.inner.lease)
}
