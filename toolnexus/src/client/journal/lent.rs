//! [`LentJournal`]: a run's journal lent to a run nested in one of its tool calls (a
//! sub-agent's), so the nested run's steps are kept with the run's own and a resume of the
//! run replays them too.
//!
//! A run holds its journal only by reference, for as long as the run lasts, while a tool's
//! context is owned and may outlive the call. So the call gets a handle that asks, and the
//! run answers the handle's questions from its journal while the call runs, on the call's
//! own task ([`lend`]). A handle used after its call ended gets an error, never a journal
//! that is gone. A failure of the journal while lent stops the run that lent it
//! ([`Watched`]), as a failure of its own step would.

use std::fmt;
use std::future::Future;
use std::sync::{Mutex, PoisonError};

use futures::future::{select, Either};
use tokio::sync::{mpsc, oneshot};

use super::{Journal, JournalError, Step, StepKey};
use crate::BoxFuture;

/// A question a lent journal's holder asks the run that lent it.
enum Ask {
    Step(StepKey, oneshot::Sender<Result<Option<Step>, JournalError>>),
    // Boxed: a step is large, and every question in the channel would be its size.
    Record(
        StepKey,
        Box<Step>,
        oneshot::Sender<Result<(), JournalError>>,
    ),
}

/// A handle on the journal of the run that made a tool call, valid while the call runs.
#[derive(Clone)]
pub(crate) struct LentJournal {
    asks: mpsc::UnboundedSender<Ask>,
}

impl fmt::Debug for LentJournal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LentJournal")
            .field("open", &!self.asks.is_closed())
            .finish()
    }
}

/// Two handles are equal when they reach the same lent journal.
impl PartialEq for LentJournal {
    fn eq(&self, other: &Self) -> bool {
        self.asks.same_channel(&other.asks)
    }
}

/// What a handle used after its call ended gets.
fn returned() -> JournalError {
    "the journal was lent to a tool call that has ended".into()
}

impl LentJournal {
    async fn ask<T>(
        &self,
        ask: impl FnOnce(oneshot::Sender<Result<T, JournalError>>) -> Ask,
    ) -> Result<T, JournalError> {
        let (reply, answer) = oneshot::channel();
        self.asks.send(ask(reply)).map_err(|_| returned())?;
        answer.await.map_err(|_| returned())?
    }
}

impl Journal for LentJournal {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        Box::pin(self.ask(|reply| Ask::Step(key.clone(), reply)))
    }

    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(self.ask(|reply| Ask::Record(key.clone(), Box::new(step.clone()), reply)))
    }
}

/// A call's view of its run's journal that remembers whether the journal failed while
/// lent to the call: the run that lent it must stop as though its own step had failed,
/// not record the call's result, which the failure made (a nested run ended by it).
pub(crate) struct Watched<'a> {
    journal: &'a dyn Journal,
    failed: Mutex<Option<JournalError>>,
}

impl<'a> Watched<'a> {
    pub(crate) fn new(journal: &'a dyn Journal) -> Self {
        Watched {
            journal,
            failed: Mutex::new(None),
        }
    }

    /// The first failure of the journal while it was lent, if any.
    pub(crate) fn failure(&self) -> Option<JournalError> {
        self.failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn note<T>(&self, done: Result<T, JournalError>) -> Result<T, JournalError> {
        done.map_err(|e| {
            let told = e.to_string();
            let mut failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
            failed.get_or_insert(e);
            told.into()
        })
    }
}

impl Journal for Watched<'_> {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        Box::pin(async move { self.note(self.journal.step(key).await) })
    }

    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.note(self.journal.record(key, step).await) })
    }
}

/// Runs `work`, made with a handle on `journal`, answering the handle's questions from
/// `journal` until `work` ends.
pub(crate) async fn lend<F: Future>(
    journal: &dyn Journal,
    work: impl FnOnce(LentJournal) -> F,
) -> F::Output {
    let (asks, mut questions) = mpsc::unbounded_channel();
    let work = std::pin::pin!(work(LentJournal { asks }));
    let serve = std::pin::pin!(async move {
        while let Some(ask) = questions.recv().await {
            // A holder that stopped waiting for its answer has nothing to be told.
            match ask {
                Ask::Step(key, reply) => {
                    let _ = reply.send(journal.step(&key).await);
                }
                Ask::Record(key, step, reply) => {
                    let _ = reply.send(journal.record(&key, &step).await);
                }
            }
        }
    });
    match select(work, serve).await {
        Either::Left((out, _)) => out,
        // Every handle is gone: nothing more to answer, only the work to finish.
        Either::Right(((), work)) => work.await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InMemoryJournal, RecordedReply, Usage};

    fn key() -> StepKey {
        StepKey {
            turn: "t".to_owned(),
            call: None,
            answered: None,
        }
    }

    fn reply() -> Step {
        Step::Reply(RecordedReply {
            text: "Done.".to_owned(),
            calls: Vec::new(),
            arg_errors: Vec::new(),
            usage: Usage::default(),
            state: None,
        })
    }

    #[tokio::test]
    async fn a_lent_journal_reads_and_records_through_the_lender_until_the_work_ends() {
        let journal = InMemoryJournal::new();
        let kept = lend(&journal, |lent| async move {
            lent.record(&key(), &reply()).await.expect("recorded");
            assert_eq!(lent.step(&key()).await.expect("read"), Some(reply()));
            lent
        })
        .await;
        assert_eq!(journal.len(), 1);
        let late = kept.step(&key()).await.unwrap_err();
        assert_eq!(
            late.to_string(),
            "the journal was lent to a tool call that has ended"
        );
    }
}
