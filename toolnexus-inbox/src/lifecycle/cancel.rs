//! Cancelling a waiting run: the inbox records it before any door says so, so a task never
//! reads "cancelled" while a person can still approve its call.

use toolnexus::{Answer, Refusal};

use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::policy::people::Person;
use crate::records::audit::{AuditKind, Record};
use crate::records::state::ParkedState;
use crate::store::json;
use crate::store::requests;
use crate::store::runs;

/// What [`Inbox::cancel`] came to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cancelled {
    /// The run was waiting and is now cancelled: its open requests are refused as
    /// `cancelled`, and it will never resume.
    Now {
        /// The run cancelled (the one the chain had reached).
        run: String,
    },
    /// The run had left its wait before the cancel came (an answer was taken, it is
    /// running or it ended): nothing changed, and the state says where it stands.
    TooLate(ParkedState),
}

impl Inbox {
    /// Cancels the run `id` names (a run's id or any of its requests'; a run that halted
    /// again is followed to the one now waiting), as `who`. While it waits, every open
    /// request is refused as `cancelled` and the run ends failed ("cancelled by …")
    /// without resuming, with a `cancelled` audit entry naming `who`, in one transaction;
    /// a person answering at the same time either comes first (and the cancel is
    /// [`Cancelled::TooLate`]) or is refused.
    ///
    /// Who may cancel is the door's to judge (the task's starter, or someone who may
    /// answer it); the inbox records who did.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use toolnexus_inbox::Inbox;
    ///
    /// let inbox = Inbox::open("sqlite::memory:").await?;
    /// assert!(matches!(
    ///     inbox.cancel("no-such-run", "ada@example.com").await,
    ///     Err(toolnexus_inbox::InboxError::UnknownRequest(_))
    /// ));
    /// # Ok::<(), toolnexus_inbox::InboxError>(())
    /// # }).unwrap();
    /// ```
    pub async fn cancel(&self, id: &str, who: impl Into<Person>) -> Result<Cancelled, InboxError> {
        let who = who.into();
        let latest = self.follow(id).await?;
        let now = self.now();
        let mut tx = self.inner.store.write().await?;
        let Some(run) = runs::lock(&mut tx, &latest.run).await? else {
            return Err(InboxError::UnknownRequest(id.to_owned()));
        };
        if run.state != ParkedState::Waiting {
            tx.rollback().await?;
            return Ok(Cancelled::TooLate(run.state));
        }
        for request in requests::open_of_run(&mut tx, &run.id).await? {
            let refusal = Answer::refuse(&request, Refusal::Cancelled);
            let stored = json(&request, &refusal)?;
            requests::record_answer(&mut tx, &request, &stored, Some(&who.id), None, now).await?;
        }
        let why = format!("cancelled by {}", who.id);
        if !runs::cancel(&mut tx, &run.id, &why, now).await? {
            tx.rollback().await?;
            return Ok(Cancelled::TooLate(run.state));
        }
        Record {
            actor: Some(&who.id),
            detail: Some(&why),
            ..Record::new(&run.id, AuditKind::Cancelled)
        }
        .append(&mut tx, now)
        .await?;
        tx.commit().await?;
        self.note_change();
        Ok(Cancelled::Now { run: run.id })
    }
}
