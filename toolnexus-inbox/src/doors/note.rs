//! Notes: a small text a host keeps in the inbox's database under a key of its choosing,
//! so what it knows of a run beyond the run itself (the protocol task a run serves, the
//! conversation it belongs to) lives as long as the run does, on the same engine.

use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::store::notes;

impl Inbox {
    /// Keeps `value` under `key`, replacing any earlier note of that key. Notes are the
    /// host's: the inbox never reads them, and they are shared by every agent of the
    /// database, so prefix the keys with what they belong to.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let inbox = toolnexus_inbox::Inbox::open("sqlite::memory:").await?;
    /// inbox.keep_note("task:1", r#"{"context":"c1"}"#).await?;
    /// assert_eq!(inbox.note("task:1").await?.as_deref(), Some(r#"{"context":"c1"}"#));
    /// assert_eq!(inbox.note("task:2").await?, None);
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn keep_note(&self, key: &str, value: &str) -> Result<(), InboxError> {
        notes::put(&self.inner.store.pool, key, value, self.now()).await
    }

    /// The note kept under `key` ([`keep_note`](Self::keep_note)), if any.
    pub async fn note(&self, key: &str) -> Result<Option<String>, InboxError> {
        notes::get(&self.inner.store.pool, key).await
    }
}
