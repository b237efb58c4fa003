//! Telling webhooks of what happens to parked runs.
//!
//! A notification is written to the outbox in the same transaction as the change it tells
//! of, so a committed park always has its notification and a rolled-back one never does.
//! Workers then deliver the outbox ([`deliver`]): signed as Standard Webhooks sign, retried
//! with backoff, at least once, under an id the receiver deduplicates by.
//!
//! Posts to URLs a caller gives at run time ([`post`]) have a table of their own: written
//! on their own rather than with a change, delivered in order within a series, and sent
//! only to public addresses unless the host allows others ([`posting`]).

mod body;
pub(crate) mod deliver;
pub(crate) mod post;
pub(crate) mod posting;
mod sign;
pub(crate) mod webhook;

use crate::store::Conn;
use sha2::{Digest, Sha256};

pub(crate) use body::{Notice, Outcome};
pub use deliver::Delivery;
pub use post::{Post, PostDelivery};

use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::store::outbox::{self, NewNotification};
use webhook::Event;

/// The id a notification is delivered under: the same for the same event of the same
/// request to the same webhook, so writing it twice (a retried transaction) keeps one.
fn message_id(event: Event, run: &str, request: Option<&str>, target: &str) -> String {
    let mut hash = Sha256::new();
    for part in [event.as_str(), run, request.unwrap_or(""), target] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    let digest = hash.finalize();
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("msg_{hex}")
}

impl Inbox {
    /// Writes the notice `tell` makes to the outbox for every webhook told of its event (or
    /// for the ones `only` names), inside the caller's transaction; the caller wakes the
    /// deliverers after commit. Without webhooks nothing is made.
    pub(crate) async fn enqueue(
        &self,
        conn: &mut Conn,
        tell: impl FnOnce() -> Notice,
        only: Option<&[String]>,
    ) -> Result<(), InboxError> {
        let targets = &self.inner.targets.all;
        if targets.is_empty() {
            return Ok(());
        }
        let notice = &tell();
        let now = self.now();
        let body = notice.body(now)?;
        for target in targets {
            let wanted = match only {
                Some(names) if !names.is_empty() => names.contains(&target.name),
                _ => target.events.contains(&notice.event),
            };
            if !wanted {
                continue;
            }
            let id = message_id(
                notice.event,
                &notice.run,
                notice.request.as_deref(),
                &target.name,
            );
            let notification = NewNotification {
                id: &id,
                run: &notice.run,
                request: notice.request.as_deref(),
                event: notice.event.as_str(),
                webhook: &target.name,
                body: &body,
                at: now,
            };
            outbox::insert(conn, &notification).await?;
        }
        Ok(())
    }

    /// Wakes this process's deliverers after a commit that may have written to the outbox;
    /// a wake for nothing costs one query that finds nothing.
    pub(crate) fn wake_deliverers(&self) {
        if !self.inner.targets.all.is_empty() {
            self.inner.outbox.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_are_stable_and_distinct() {
        let a = message_id(Event::Parked, "r", None, "ops");
        assert_eq!(a, message_id(Event::Parked, "r", None, "ops"));
        assert_ne!(a, message_id(Event::Parked, "r", None, "team"));
        assert_ne!(a, message_id(Event::Answered, "r", Some("r"), "ops"));
        assert!(a.starts_with("msg_") && a.len() == 36);
    }
}
