//! The idle workers of each agent in this process, by database: an answer given through any
//! handle on the database wakes them, not only the workers of the handle it went through.
//! PostgreSQL tells every process of an answer with `NOTIFY`; SQLite tells no one, so
//! without this a worker whose answers come through another handle (a page's, a door's)
//! would find them only when it next polls.

use std::sync::Arc;

use tokio::sync::Notify;

use crate::store::shared::PerDatabase;

static WAKERS: PerDatabase<Notify> = PerDatabase::new();

/// The `Notify` the workers of `agent` on database `db` wait on, shared by every handle of
/// this process that opened it.
pub(crate) fn waker(db: &str, agent: &str) -> Arc<Notify> {
    WAKERS.get(db, agent)
}

/// Wakes one idle worker of `agent` on database `db` in this process, if it has any.
pub(crate) fn wake(db: &str, agent: &str) {
    if let Some(notify) = WAKERS.find(db, agent) {
        notify.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_through_another_handle_wakes_its_agents_worker_only() {
        use futures::FutureExt;
        let db = format!("sqlite:file:wakers-{}?mode=memory", std::process::id());
        let worker = waker(&db, "shop");
        let woken = worker.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        wake(&db, "billing");
        wake("sqlite://elsewhere.db", "shop");
        assert!(
            (&mut woken).now_or_never().is_none(),
            "another agent's answer"
        );
        wake(&db, "shop");
        assert!(woken.now_or_never().is_some(), "its own agent's answer");
    }
}
