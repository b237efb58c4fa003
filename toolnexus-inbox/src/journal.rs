//! The journal a worker's resume keeps ([`toolnexus::Journal`]): each step the run completes
//! is written, fenced by the worker's claim, before the next step starts, so a worker that
//! takes a crashed one's run over replays what it did instead of doing it again.

use toolnexus::{BoxFuture, Journal, JournalError, Step, StepKey};

use crate::store::journal::{self, NewStep};
use crate::Inbox;

/// The journal of run `run` under the claim whose attempt number is `fence`.
pub(crate) struct ClaimJournal<'a> {
    pub(crate) inbox: &'a Inbox,
    pub(crate) run: &'a str,
    pub(crate) fence: i64,
}

/// The key a step is stored under: its JSON, stable for a given run's step.
fn stored_key(key: &StepKey) -> Result<String, JournalError> {
    Ok(serde_json::to_string(key)?)
}

impl Journal for ClaimJournal<'_> {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        Box::pin(async move {
            let key = stored_key(key)?;
            let pool = &self.inbox.inner.store.pool;
            match journal::get(pool, self.run, &key).await? {
                Some(text) => Ok(Some(serde_json::from_str(&text)?)),
                None => Ok(None),
            }
        })
    }

    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            let key = stored_key(key)?;
            let step = serde_json::to_string(step)?;
            let new = NewStep {
                run: self.run,
                fence: self.fence,
                key: &key,
                step: &step,
                at: self.inbox.now(),
            };
            if !journal::record(&self.inbox.inner.store.pool, &new).await? {
                return Err(format!(
                    "the claim on run `{}` was lost: another worker holds it now",
                    self.run
                )
                .into());
            }
            Ok(())
        })
    }
}
