//! [`InboxBuilder`]: the options an inbox is opened with.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::Notify;
use toolnexus::RequestKind;

use super::{Inbox, Inner};
use crate::clock::Clock;
use crate::error::InboxError;
use crate::notify::posting::PostSettings;
use crate::notify::webhook::{Targets, Webhook};
use crate::policy::deadline::{Escalation, Expiry, ExpiryRule};
use crate::policy::people::{Responder, Rules};
use crate::receipt::ReceiptKey;
use crate::store::{PoolSettings, SqliteSync, Store};

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
    expiry: HashMap<RequestKind, ExpiryRule>,
    receipts: Option<Arc<ReceiptKey>>,
    max_delegation: Duration,
    not_requester: bool,
    directory: Option<Arc<dyn crate::policy::identify::Directory>>,
    posts: PostSettings,
}

impl fmt::Debug for InboxBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InboxBuilder")
            .field("agent", &self.agent)
            .field("lease", &self.lease)
            .field("max_attempts", &self.max_attempts)
            .field("webhooks", &self.webhooks)
            .field("escalations", &self.escalations)
            .field("receipt_key", &self.receipts)
            .field("posts", &self.posts)
            .finish_non_exhaustive()
    }
}

impl InboxBuilder {
    pub(super) fn new(url: String) -> InboxBuilder {
        InboxBuilder {
            url,
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
            receipts: None,
            max_delegation: Duration::from_secs(30 * 86_400),
            not_requester: false,
            directory: None,
            posts: PostSettings::default(),
        }
    }

    /// How many attempts a post ([`Inbox::post`](crate::Inbox::post)) gets before it is
    /// `Failed` (default 8), and the wait after its first failure (default 1 s), doubled
    /// after each further one up to ten minutes. Any status but 2xx, and any error, is a
    /// failed attempt.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::time::Duration;
    ///
    /// let inbox = toolnexus_inbox::Inbox::builder("sqlite::memory:")
    ///     .post_retries(5, Duration::from_secs(2))
    ///     .post_timeout(Duration::from_secs(5))
    ///     .post_expiry(Duration::from_secs(3600))
    ///     .open()
    ///     .await?;
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub fn post_retries(mut self, attempts: u32, first_backoff: Duration) -> Self {
        self.posts.max_attempts = attempts.max(1);
        self.posts.backoff = first_backoff;
        self
    }

    /// How long one attempt of a post may take (default 10 s); longer is a failed attempt.
    pub fn post_timeout(mut self, timeout: Duration) -> Self {
        self.posts.timeout = timeout.max(Duration::from_millis(10));
        self
    }

    /// How long after it is written a post may still be delivered (default 24 hours): a
    /// post not delivered by then is `Failed`, whatever attempts it has left, and so is
    /// one whose next attempt would come later. The next post of its series goes then.
    pub fn post_expiry(mut self, expiry: Duration) -> Self {
        self.posts.expiry = expiry;
        self
    }

    /// Lets posts go to loopback, private (RFC 1918, fc00::/7), link-local, shared
    /// (100.64/10) and other addresses that are not public. By default an attempt to a
    /// host that is one, or that resolves to any, fails saying why, so a caller giving the
    /// URL cannot make the server post into its own network; the connection then goes to
    /// an address the check saw, so the name cannot be switched to another between the
    /// two. Set it for tests on loopback, or where every caller is trusted.
    pub fn allow_private_posts(mut self) -> Self {
        self.posts.allow_private = true;
        self
    }

    /// Who people are now, by id ([`Directory`](crate::Directory): the host's identity
    /// provider, its staff list, or its [`BearerTokens`](crate::BearerTokens)). An answer
    /// given under a delegation is judged by the giver's rights as the directory says
    /// they are at that moment, not as they were when they delegated; a giver it no longer
    /// knows lends nothing. Without one, a delegation lends the giver's rights as given.
    pub fn directory(mut self, directory: impl crate::policy::identify::Directory) -> Self {
        self.directory = Some(Arc::new(directory));
        self
    }

    /// Keeps duties apart for every request: the person who asked for a run
    /// ([`Inbox::park_as`](crate::Inbox::park_as)) may never answer it, themselves or
    /// through someone holding their rights ([`InboxError::Requester`]). A request's own
    /// rule can ask the same (`Approval::not_requester`).
    pub fn not_requester(mut self) -> Self {
        self.not_requester = true;
        self
    }

    /// How long a delegation may last at most ([`Inbox::delegate`](crate::Inbox::delegate));
    /// default 30 days. Rights handed over for longer would outlive what the giver can be
    /// expected to remember they gave.
    pub fn max_delegation(mut self, longest: Duration) -> Self {
        self.max_delegation = longest;
        self
    }

    /// Signs a receipt for every answer recorded, with `key` (see
    /// [`receipt`](crate::receipt)): the host's Ed25519 key, from a file
    /// ([`ReceiptKey::from_file`]) or an environment variable ([`ReceiptKey::from_env`]).
    /// Each vote keeps its receipt ([`Vote::receipt`](crate::Vote::receipt)), and a resumed
    /// call's answer carries those of its request, which the tool reads from its
    /// [`ToolContext::receipts`](toolnexus::ToolContext::receipts). Without a key no
    /// receipt is signed.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus_inbox::{receipt::ReceiptKey, Inbox};
    ///
    /// // The host's own key (`ReceiptKey::from_env`, `from_file`); a throwaway here.
    /// # let key = ReceiptKey::ephemeral_for_tests()?;
    /// let public = key.public_key();
    /// let inbox = Inbox::builder("sqlite::memory:").receipt_key(key).open().await?;
    /// assert_eq!(inbox.receipt_public_key(), Some(public));
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub fn receipt_key(mut self, key: ReceiptKey) -> Self {
        self.receipts = Some(Arc::new(key));
        self
    }

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
    /// id (`"ada@example.com"`) or groups (`"group:finance"`, or [`Responder::group`]). A request's own
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
    pub fn responders<I, S>(mut self, kind: impl Into<RequestKind>, responders: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Responder>,
    {
        self.rules.by_kind.insert(kind.into(), collect(responders));
        self
    }

    /// Who may answer the requests of runs parked under `agent` that neither name
    /// responders nor fall under a rule for their kind ([`responders`](Self::responders)).
    pub fn agent_responders<I, S>(mut self, agent: impl Into<String>, responders: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Responder>,
    {
        self.rules
            .by_agent
            .insert(agent.into(), collect(responders));
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
    pub fn on_expiry(mut self, kind: impl Into<RequestKind>, action: Expiry) -> Self {
        self.expiry.entry(kind.into()).or_default().action = action;
        self
    }

    /// A deadline for requests of `kind` that set no `expiresAt` themselves: they expire
    /// `after` they are parked.
    pub fn expire_after(mut self, kind: impl Into<RequestKind>, after: Duration) -> Self {
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
        let posts = self.posts.rules()?;
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
        let store = Store::open(&self.url, &self.pool).await?;
        let answered = super::wakers::waker(store.key(), &self.agent);
        Ok(Inbox {
            inner: Arc::new(Inner {
                store,
                agent: self.agent,
                lease: self.lease,
                max_attempts: self.max_attempts,
                poll_interval: self.poll_interval,
                rules: self.rules,
                worker: self.worker,
                answered,
                finished: Notify::new(),
                clock: self.clock,
                targets,
                page_url,
                escalations: self.escalations,
                expiry: self.expiry,
                receipts: self.receipts,
                max_delegation: self.max_delegation,
                not_requester: self.not_requester,
                directory: self.directory,
                outbox: Notify::new(),
                changes: super::changes::Changes::new(),
                posts,
                posted: Notify::new(),
            }),
        })
    }
}

fn collect<I: IntoIterator<Item = S>, S: Into<Responder>>(items: I) -> Vec<Responder> {
    items.into_iter().map(Into::into).collect()
}
