//! [`Worker`]: a ready loop that resumes a agent's answered runs with N concurrent
//! resumes until told to stop, waking on new answers (PostgreSQL `LISTEN`, this process's
//! own answers) or, failing that, polling; it also expires and escalates requests and
//! delivers the webhooks' notifications and the posts to URLs given at run time.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use toolnexus::{LlmClient, Toolkit};

use crate::error::InboxError;
use crate::inbox::Inbox;

/// Resumes answered runs until a shutdown future completes.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use toolnexus::{LlmClient, Toolkit};
/// use toolnexus_inbox::Inbox;
///
/// let inbox = Inbox::open("sqlite::memory:").await?;
/// let client = LlmClient::builder().model("m").api_key("k").build().unwrap();
/// let tk = Toolkit::builder().build().unwrap();
/// let stop = tokio::time::sleep(std::time::Duration::from_millis(50));
/// let report = inbox.worker(client, tk).concurrency(4).run(stop).await;
/// assert_eq!(report.resumed, 0);
/// # Ok::<(), toolnexus_inbox::InboxError>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct Worker {
    inbox: Inbox,
    client: LlmClient,
    tk: Toolkit,
    concurrency: usize,
    housekeeping: Duration,
}

/// What a worker did before it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerReport {
    /// Runs resumed and recorded.
    pub resumed: usize,
    /// Resumes that failed (recorded on their rows, retried or failed there).
    pub failed: usize,
    /// Requests that expired (their kind's expiry action applied).
    pub expired: usize,
    /// Requests escalated for waiting too long.
    pub escalated: usize,
    /// Notifications webhooks took.
    pub notified: usize,
    /// Posts ([`Inbox::post`]) their receivers took.
    pub posted: usize,
}

impl Inbox {
    /// A worker resuming this handle's agent's runs with `client` and `tk`.
    pub fn worker(&self, client: LlmClient, tk: Toolkit) -> Worker {
        Worker {
            inbox: self.clone(),
            client,
            tk,
            concurrency: 1,
            housekeeping: Duration::from_secs(1),
        }
    }
}

fn pool_size(inbox: &Inbox) -> usize {
    usize::try_from(inbox.inner.store.max_connections()).unwrap_or(usize::MAX)
}

/// Adds what a housekeeping pass did to its count, or logs why it could not.
fn tally(count: &AtomicUsize, done: Result<usize, InboxError>, failed: &str) {
    match done {
        Ok(n) => {
            count.fetch_add(n, Ordering::Relaxed);
        }
        Err(e) => tracing::warn!(error = %e, "{failed}"),
    }
}

#[derive(Default)]
struct Counts {
    resumed: AtomicUsize,
    failed: AtomicUsize,
    expired: AtomicUsize,
    escalated: AtomicUsize,
    notified: AtomicUsize,
    posted: AtomicUsize,
}

impl Worker {
    /// How many runs it resumes at once (default 1). Each resume holds a connection only
    /// while it claims and records, but give the inbox's pool at least this many
    /// ([`InboxBuilder::pool_size`](crate::InboxBuilder::pool_size)) so resumes never queue
    /// for one.
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// How often it expires and escalates due requests, fails runs whose last attempt
    /// died, and looks for notifications and posts other processes wrote or whose retry is
    /// due (default every second). This process's own notifications and posts go out at
    /// once.
    pub fn housekeeping_every(mut self, every: Duration) -> Self {
        self.housekeeping = every.max(Duration::from_millis(10));
        self
    }

    /// Runs until `shutdown` completes, then stops claiming and waits for the resumes in
    /// flight to be recorded. Errors (the database unreachable, a failed resume, an
    /// unreadable row) are logged and counted; the worker goes on with the other runs.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> WorkerReport {
        let (stop_tx, stop) = watch::channel(false);
        let counts = Arc::new(Counts::default());
        let pool = pool_size(&self.inbox);
        if pool < self.concurrency {
            tracing::warn!(
                pool,
                concurrency = self.concurrency,
                "the inbox's pool has fewer connections than the worker has resumes at once"
            );
        }
        let me = Arc::new(self);
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..me.concurrency {
            tasks.spawn(me.clone().slot(stop.clone(), counts.clone()));
        }
        tasks.spawn(me.clone().housekeep(stop.clone(), counts.clone()));
        if !me.inbox.inner.targets.all.is_empty() {
            tasks.spawn(me.clone().deliver(stop.clone(), counts.clone()));
        }
        tasks.spawn(me.clone().post(stop.clone(), counts.clone()));
        if me.inbox.inner.store.announces() {
            tasks.spawn(me.clone().listen(stop.clone()));
        }
        shutdown.await;
        let _ = stop_tx.send(true);
        while tasks.join_next().await.is_some() {}
        WorkerReport {
            resumed: counts.resumed.load(Ordering::Relaxed),
            failed: counts.failed.load(Ordering::Relaxed),
            expired: counts.expired.load(Ordering::Relaxed),
            escalated: counts.escalated.load(Ordering::Relaxed),
            notified: counts.notified.load(Ordering::Relaxed),
            posted: counts.posted.load(Ordering::Relaxed),
        }
    }

    /// One resume at a time, until stopped.
    async fn slot(self: Arc<Self>, mut stop: watch::Receiver<bool>, counts: Arc<Counts>) {
        let inner = &self.inbox.inner;
        while !*stop.borrow() {
            // Registered before the claim, so an answer arriving meanwhile is not missed.
            let woken = inner.answered.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let idle = match self.inbox.resume_next(&self.client, &self.tk).await {
                Ok(Some(_)) => {
                    counts.resumed.fetch_add(1, Ordering::Relaxed);
                    false
                }
                Ok(None) => true,
                Err(InboxError::Database(e)) => {
                    tracing::warn!(error = %e, "the inbox database failed; retrying");
                    true
                }
                Err(e) => {
                    counts.failed.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, "a resume failed");
                    false
                }
            };
            if idle {
                tokio::select! {
                    _ = woken => {}
                    _ = tokio::time::sleep(inner.poll_interval) => {}
                    _ = stop.changed() => {}
                }
            }
        }
    }

    async fn housekeep(self: Arc<Self>, mut stop: watch::Receiver<bool>, counts: Arc<Counts>) {
        while !*stop.borrow() {
            let expired = self.inbox.expire_due().await;
            tally(&counts.expired, expired, "could not expire due requests");
            let escalated = self.inbox.escalate_due().await;
            tally(
                &counts.escalated,
                escalated,
                "could not escalate due requests",
            );
            if let Err(e) = self.inbox.fail_exhausted().await {
                tracing::warn!(error = %e, "could not fail exhausted runs");
            }
            tokio::select! {
                _ = tokio::time::sleep(self.housekeeping) => {}
                _ = stop.changed() => {}
            }
        }
    }

    /// Delivers the outbox: at once when this process wrote to it, else every
    /// housekeeping interval.
    async fn deliver(self: Arc<Self>, mut stop: watch::Receiver<bool>, counts: Arc<Counts>) {
        let inner = &self.inbox.inner;
        while !*stop.borrow() {
            let woken = inner.outbox.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            // Stopping waits for the attempt under way (its webhook's timeout at most) and
            // records it, so nothing is sent twice for want of a record.
            let stopping = || *stop.borrow();
            let delivered = self.inbox.deliver_due_until(&stopping).await;
            tally(
                &counts.notified,
                delivered,
                "could not deliver notifications",
            );
            tokio::select! {
                _ = woken => {}
                _ = tokio::time::sleep(self.housekeeping) => {}
                _ = stop.changed() => {}
            }
        }
    }

    /// Delivers the posts: at once when this process wrote one, else every housekeeping
    /// interval. Each post's attempt is recorded as it ends, so stopping sends nothing
    /// twice for want of a record.
    async fn post(self: Arc<Self>, mut stop: watch::Receiver<bool>, counts: Arc<Counts>) {
        let inner = &self.inbox.inner;
        while !*stop.borrow() {
            let woken = inner.posted.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let stopping = || *stop.borrow();
            let delivered = self.inbox.deliver_posts_until(&stopping).await;
            tally(&counts.posted, delivered, "could not deliver posts");
            tokio::select! {
                _ = woken => {}
                _ = tokio::time::sleep(self.housekeeping) => {}
                _ = stop.changed() => {}
            }
        }
    }

    /// Relays PostgreSQL notifications of answers to the idle slots; reconnects after a
    /// failure (meanwhile the slots poll).
    async fn listen(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let inner = &self.inbox.inner;
        while !*stop.borrow() {
            let listener = inner.store.listen(&inner.agent, &inner.answered);
            let failed: Result<(), InboxError> = tokio::select! {
                r = listener => r,
                _ = stop.changed() => return,
            };
            if let Err(e) = failed {
                tracing::warn!(error = %e, "lost the answer notifications; polling meanwhile");
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = stop.changed() => {}
            }
        }
    }
}
