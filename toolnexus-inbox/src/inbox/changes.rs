//! A signal of runs changing where they stand — parked, answered, resumed, ended,
//! cancelled, escalated — for whoever shows runs as they go (a door's event streams, its
//! webhooks' pusher), so they look again when something changed instead of on a timer.
//! Changes made in this process are signalled as they commit. On PostgreSQL every change
//! is also announced to every process sharing the database: the audit entry each change
//! appends notifies a channel in the same statement, so the announcement costs no round
//! trip and is sent exactly when the change commits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::watch;

use super::{Inbox, Inner};

/// How long a lost connection to PostgreSQL waits before it listens again.
const RECONNECT: Duration = Duration::from_secs(1);

/// How often a listener checks that its inbox still exists while nothing is announced.
const ALIVE: Duration = Duration::from_secs(30);

/// The signal, and whether this process listens for other processes' changes yet.
pub(crate) struct Changes {
    sender: watch::Sender<u64>,
    listening: AtomicBool,
}

impl Changes {
    pub(crate) fn new() -> Changes {
        Changes {
            sender: watch::Sender::new(0),
            listening: AtomicBool::new(false),
        }
    }

    fn bump(&self) {
        self.sender.send_modify(|n| *n = n.wrapping_add(1));
    }
}

impl Inbox {
    /// A receiver whose value changes whenever a run of this database changes where it
    /// stands: parked, answered (in part or in full), resumed to its end or to another
    /// wait, failed, cancelled, escalated. Changes made through any handle of this
    /// process are seen as they commit; on PostgreSQL, so are those of every other
    /// process sharing the database ([`announces_changes`](Self::announces_changes)),
    /// heard on a connection of its own opened by the first call. A change is a reason to
    /// look, never a description: read what you show again when it fires. Several changes
    /// may fire once.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus::{Request, RunResult};
    /// use toolnexus_inbox::Inbox;
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// let mut changes = inbox.changes();
    /// let run: RunResult = serde_json::from_value(serde_json::json!({
    ///     "status": "pending", "text": "Buy a gpu?", "tool_calls": [], "limit": null,
    ///     "pending": Request::new("approval", "Buy a gpu?").with_id("r1"),
    ///     "turns": 1, "messages": [], "model": "m",
    ///     "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    /// }))?;
    /// inbox.park(&run).await?;
    /// assert!(changes.has_changed()?, "the park was signalled");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn changes(&self) -> watch::Receiver<u64> {
        let changes = &self.inner.changes;
        let receiver = changes.sender.subscribe();
        // Outside a runtime there is nowhere to listen from: the next call inside one does.
        if let Some(url) = self.inner.store.listen_url()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
            && !changes.listening.swap(true, Ordering::SeqCst)
        {
            runtime.spawn(listen(url.to_owned(), Arc::downgrade(&self.inner)));
        }
        receiver
    }

    /// Whether [`changes`](Self::changes) hears other processes' changes too
    /// (PostgreSQL); where it does not (SQLite), a reader of runs another process
    /// changes must also look on a timer.
    pub fn announces_changes(&self) -> bool {
        self.inner.store.announces()
    }

    /// Signals a change this handle committed to this process's receivers.
    pub(crate) fn note_change(&self) {
        self.inner.changes.bump();
    }
}

/// Bumps the signal of `inner` at every change another process announces, until the
/// inbox is gone; a lost connection is opened again.
async fn listen(url: String, inner: Weak<Inner>) {
    loop {
        match crate::store::listen_changes(&url).await {
            Ok(mut heard) => loop {
                let next = tokio::time::timeout(ALIVE, heard.next()).await;
                let Some(inner) = inner.upgrade() else {
                    return;
                };
                match next {
                    Ok(Ok(())) => inner.changes.bump(),
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, "lost the connection announcing the inbox's changes");
                        // What changed while it was lost is looked at once.
                        inner.changes.bump();
                        break;
                    }
                    Err(_quiet) => {}
                }
            },
            Err(e) => {
                if inner.upgrade().is_none() {
                    return;
                }
                tracing::warn!(error = %e, "could not listen for the inbox's changes");
            }
        }
        tokio::time::sleep(RECONNECT).await;
    }
}
