//! The workflow's side of a stretch: the core's loop runs in the workflow with a journal
//! that holds every step the stretch has made (from its activities' results, replayed by
//! Temporal) and asks for each step it lacks. Each ask becomes a step activity, scheduled in
//! the order the loop asks, so a replay schedules the same activities in the same order.

use std::collections::HashMap;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::Poll;

use temporalio_sdk::{ActivityOptions, WorkflowContext};
use toolnexus::{
    BoxFuture, ClientError, Journal, JournalError, RunOptions, RunResult, Step, StepKey,
};

use crate::activity::Steps;
use crate::agent::Inner;
use crate::stretch::drive;
use crate::wire::{Start, StepInput};

/// The workflow's journal for one stretch. Nothing in it wakes a task: Temporal's workflow
/// executor fails a task woken by anything but itself, so a step the loop waits on is
/// polled again by [`stretch`] each time an activity it drives resolves.
#[derive(Default)]
struct Bridge {
    steps: Mutex<Ledger>,
}

#[derive(Default)]
struct Ledger {
    /// The steps made so far, in the order they were made.
    made: Vec<(StepKey, Step)>,
    /// Steps the loop asked for that no activity makes yet, in the order it asked.
    asked: Vec<StepKey>,
    /// Steps whose activity failed for good, and why.
    failed: HashMap<StepKey, String>,
}

impl Bridge {
    fn lock(&self) -> MutexGuard<'_, Ledger> {
        self.steps.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The loop's wait for one step.
enum Lookup {
    Made(Box<Step>),
    Failed(String),
    Waiting,
}

impl Ledger {
    fn lookup(&mut self, key: &StepKey, ask: bool) -> Lookup {
        if let Some((_, step)) = self.made.iter().find(|(k, _)| k == key) {
            return Lookup::Made(Box::new(step.clone()));
        }
        if let Some(why) = self.failed.get(key) {
            return Lookup::Failed(why.clone());
        }
        if ask {
            self.asked.push(key.clone());
        }
        Lookup::Waiting
    }
}

impl Journal for Bridge {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        let mut asked = false;
        Box::pin(std::future::poll_fn(move |_| {
            let lookup = self.lock().lookup(key, !asked);
            asked = true;
            match lookup {
                Lookup::Made(step) => Poll::Ready(Ok(Some(*step))),
                Lookup::Failed(why) => Poll::Ready(Err(why.into())),
                // No waker kept: `stretch` polls the loop again when an activity resolves.
                Lookup::Waiting => Poll::Pending,
            }
        }))
    }

    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        // Only reached for a step the journal did not hold, which never happens here: every
        // step is made by an activity. Kept so the journal stays a journal.
        let mut steps = self.lock();
        if !steps.made.iter().any(|(k, _)| k == key) {
            steps.made.push((key.clone(), step.clone()));
        }
        Box::pin(async { Ok(()) })
    }
}

type Running<'a> = Pin<Box<dyn Future<Output = Result<Step, String>> + 'a>>;

/// Runs one stretch in the workflow: the loop decides, each step it lacks is made by a
/// step activity. Returns the loop's result (an error when a step failed for good).
pub(crate) async fn stretch<W>(
    ctx: &WorkflowContext<W>,
    agent: &Inner,
    run: &str,
    start: Start,
    options: &ActivityOptions,
) -> Result<RunResult, ClientError> {
    let bridge = Bridge::default();
    // Every step of this stretch is an activity scheduled after this event: the activity
    // reads the steps made before it from the history, after it.
    let since = i64::from(ctx.history_length());
    // The workflow's loop sends nothing and does not race a clock: no time limit.
    let no_limit = RunOptions::new().timeout(None);
    let mut looped = pin!(drive(agent, run, start.clone(), &bridge, no_limit));
    let mut running: Vec<(StepKey, Running<'_>)> = Vec::new();
    std::future::poll_fn(|cx| loop {
        if let Poll::Ready(result) = looped.as_mut().poll(cx) {
            return Poll::Ready(result);
        }
        let (asked, first) = {
            let mut steps = bridge.lock();
            (std::mem::take(&mut steps.asked), steps.made.is_empty())
        };
        let mut moved = false;
        for key in asked {
            // A step asked for before any step of the stretch is made needs none of them:
            // it carries the empty list and spares its activity a read of the history.
            let input = StepInput {
                run: run.to_owned(),
                start: start.clone(),
                since: (!first).then_some(since),
                made: Vec::new(),
                target: key.clone(),
            };
            let activity = ctx.execute_activity(Steps::step, input, options.clone());
            running.push((
                key,
                Box::pin(async move { activity.await.map_err(|e| e.to_string()) }),
            ));
        }
        let mut i = 0;
        while i < running.len() {
            match running[i].1.as_mut().poll(cx) {
                Poll::Ready(outcome) => {
                    let (key, _) = running.remove(i);
                    let mut steps = bridge.lock();
                    match outcome {
                        Ok(step) => steps.made.push((key, step)),
                        Err(why) => {
                            steps.failed.insert(key, why);
                        }
                    }
                    moved = true;
                }
                Poll::Pending => i += 1,
            }
        }
        if !moved {
            return Poll::Pending;
        }
    })
    .await
}
