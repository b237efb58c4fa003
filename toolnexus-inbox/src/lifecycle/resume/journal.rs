//! The journal a worker's resume keeps ([`toolnexus::Journal`]): each step the run completes
//! is written, fenced by the worker's claim, before the next step starts, so a worker that
//! takes a crashed one's run over replays what it did instead of doing it again.
//!
//! A tool call's result is written as it is recorded: the call's effect has happened. A
//! model reply has no effect, so it is written when the next step asks for its own record,
//! still before that step starts; the run's last reply is never written, since the
//! transaction recording the outcome clears the run's journal anyway. A worker that dies
//! between a reply and the next step asks the model again, as it would had it died during
//! the model call.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use toolnexus::{BoxFuture, Journal, JournalError, Step, StepKey};

use crate::error::InboxError;
use crate::inbox::Inbox;
use crate::store::journal::{self, NewStep};

/// The journal of run `run` under the claim whose attempt number is `fence`.
pub(crate) struct ClaimJournal<'a> {
    inbox: &'a Inbox,
    run: &'a str,
    fence: i64,
    /// The run's steps by stored key: those earlier attempts recorded, read once as the
    /// claim begins, and this claim's own. While the claim holds no one else can write
    /// the run's journal (every record is fenced by the attempt), so this is all of it.
    steps: Mutex<HashMap<String, String>>,
    /// The last model reply, by stored key, until the next step writes it.
    reply: tokio::sync::Mutex<Option<(String, String)>>,
}

impl<'a> ClaimJournal<'a> {
    /// The journal of `run` for the claim of attempt `fence`.
    pub(crate) async fn open(
        inbox: &'a Inbox,
        run: &'a str,
        fence: i64,
    ) -> Result<ClaimJournal<'a>, InboxError> {
        // Steps are written only under a claim of the run: its first claim finds none, and
        // asks nothing of the database.
        let steps = match fence > 1 {
            true => journal::all(&inbox.inner.store.pool, run).await?,
            false => HashMap::new(),
        };
        Ok(ClaimJournal {
            inbox,
            run,
            fence,
            steps: Mutex::new(steps),
            reply: tokio::sync::Mutex::new(None),
        })
    }

    fn steps(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        // The map is only read and added to whole; a panic elsewhere leaves it consistent.
        self.steps.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The key a step is stored under: its JSON, stable for a given run's step.
fn stored_key(key: &StepKey) -> Result<String, JournalError> {
    Ok(serde_json::to_string(key)?)
}

impl ClaimJournal<'_> {
    /// Writes the step, fenced by the claim; an error when the claim was lost.
    async fn write(&self, key: &str, step: &str) -> Result<(), JournalError> {
        let new = NewStep {
            run: self.run,
            fence: self.fence,
            key,
            step,
            at: self.inbox.now(),
        };
        let mut conn = self.inbox.inner.store.single().await?;
        let written = journal::record(&mut conn, &new).await?;
        drop(conn);
        if !written {
            return Err(format!(
                "the claim on run `{}` was lost: another worker holds it now",
                self.run
            )
            .into());
        }
        Ok(())
    }

    /// Writes the reply held back in `held`, if any. Steps asked for at once (a turn's
    /// calls) wait on its lock until it is written, so none starts before it is.
    async fn write_reply(&self, held: &mut Option<(String, String)>) -> Result<(), JournalError> {
        if let Some((key, step)) = held.as_ref() {
            self.write(key, step).await?;
            *held = None;
        }
        Ok(())
    }
}

impl Journal for ClaimJournal<'_> {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        Box::pin(async move {
            // The step asked for is about to start unless it is recorded: the reply before
            // it is written first.
            self.write_reply(&mut *self.reply.lock().await).await?;
            let key = stored_key(key)?;
            let stored = self.steps().get(&key).cloned();
            match stored {
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
            let text = serde_json::to_string(step)?;
            match step {
                Step::Reply(_) => {
                    // A reply recorded before the last one was written (no step was asked
                    // for between them) is written now, in order.
                    let mut held = self.reply.lock().await;
                    self.write_reply(&mut held).await?;
                    *held = Some((key.clone(), text.clone()));
                }
                Step::Call(_) => self.write(&key, &text).await?,
            }
            // The first record of a step is the one kept, here as in the table.
            self.steps().entry(key).or_insert(text);
            Ok(())
        })
    }
}
