//! One look at a task for everyone who follows it: the streams open on a task share a
//! single reader of where it stands, which wakes them when its state or what it waits on
//! changes, instead of each reading it on its own every few hundred milliseconds.
//! Changes the inbox signals wake the reader at once: those made in this process, and on
//! PostgreSQL those of every process sharing the database; elsewhere (SQLite shared by
//! several processes) the reader also looks every 200 ms.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::watch;

use super::shared::Shared;

/// How often a task that changes elsewhere is looked at where such changes are not
/// announced.
const POLL: Duration = Duration::from_millis(200);

/// A receiver that changes whenever task `id` does (or can no longer be read, so its
/// follower reads the error), starting the task's reader when nobody followed it yet.
pub(crate) fn follow(shared: &Arc<Shared>, id: &str) -> watch::Receiver<u64> {
    let mut tasks = shared
        .watches
        .tasks
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(tx) = tasks.get(id) {
        return tx.subscribe();
    }
    let (tx, rx) = watch::channel(0);
    tasks.insert(id.to_owned(), tx.clone());
    tokio::spawn(look(Arc::downgrade(shared), id.to_owned(), tx));
    rx
}

/// Reads task `id` until nobody follows it, bumping `tx` at each change.
async fn look(shared: Weak<Shared>, id: String, tx: watch::Sender<u64>) {
    let mut last = None;
    let Some(mut changes) = shared.upgrade().map(|s| s.inbox.changes()) else {
        return;
    };
    loop {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let every = shared.look_every(POLL);
        {
            // Checked under the lock a follower subscribes under: a reader never ends
            // while someone is joining it.
            let mut tasks = shared
                .watches
                .tasks
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if tx.receiver_count() == 0 {
                if tasks.get(&id).is_some_and(|t| t.same_channel(&tx)) {
                    tasks.remove(&id);
                }
                return;
            }
        }
        let woken = shared.changed.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let now = shared.stands(&id).await.ok();
        if now.is_none() || now != last {
            last = now;
            tx.send_modify(|n| *n = n.wrapping_add(1));
        }
        tokio::select! {
            _ = woken => {}
            // The server held here holds the inbox, whose signal so cannot close.
            _ = changes.changed() => {}
            _ = tokio::time::sleep(every) => {}
            _ = tx.closed() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use toolnexus::{LlmClient, Toolkit};
    use toolnexus_inbox::Inbox;

    use super::follow;
    use crate::A2aServer;

    #[tokio::test]
    async fn the_followers_of_a_task_share_one_reader_which_ends_with_the_last() {
        let client = LlmClient::builder().model("m").api_key("k").build();
        let inbox = Inbox::open("sqlite::memory:").await;
        let (Ok(client), Ok(inbox)) = (client, inbox) else {
            panic!("a client and an inbox");
        };
        let server = A2aServer::builder(client, Toolkit::empty(), inbox).build();
        let Ok(server) = server else {
            panic!("the server builds");
        };
        let shared = &server.shared;
        let one = follow(shared, "t1");
        let two = follow(shared, "t1");
        let other = follow(shared, "t2");
        assert_eq!(shared.watches.followed(), 2);
        drop((one, two, other));
        // The readers see they are alone at their next look; the clock is patience only.
        let ended = until(Duration::from_secs(5), || shared.watches.followed() == 0);
        assert!(ended.await, "every reader ended");
    }

    async fn until(limit: Duration, done: impl Fn() -> bool) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while !done() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        true
    }
}
