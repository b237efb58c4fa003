//! The step activity: makes one step of a stretch, the one the workflow asks for. It
//! replays the stretch's earlier steps, carried in its input or read from the run's history
//! (no other I/O), makes the target step for real (a model call, or a tool call with its
//! gate), and returns it for the workflow to record. Any other step it meets is left
//! unmade: a turn's calls run concurrently, and each has its own activity.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::channel::oneshot;
use futures::future::{self, Either};
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use temporalio_sdk::ApplicationFailure;
use toolnexus::{BoxFuture, ClientError, Journal, JournalError, RunOptions, Step, StepKey};

use crate::agent::Agent;
use crate::earlier::steps_since;
use crate::heartbeat::Heartbeat;
use crate::stretch::drive;
use crate::wire::StepInput;

/// The activities of the `AgentRun` workflow, registered on a worker with its agent.
/// `pub` only because the `#[activities]` macro puts it in a public signature; the crate
/// does not export it.
pub struct Steps {
    pub(crate) agent: Agent,
}

#[activities]
impl Steps {
    /// Makes the step `input.target` of the stretch `input` describes.
    #[activity]
    pub async fn step(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: StepInput,
    ) -> Result<Step, ActivityError> {
        // Until the step returns: a worker that dies mid-step is noticed within the
        // heartbeat timeout, and the step given to another worker.
        let _alive = Heartbeat::start(&ctx);
        let agent = &self.agent.inner;
        let (made, done) = oneshot::channel();
        let known = match input.since {
            Some(since) => steps_since(&ctx, since)
                .await
                .map_err(|why| ActivityError::application(ApplicationFailure::new(why)))?,
            None => input.made.into_iter().collect(),
        };
        let journal = OneStep {
            known,
            target: input.target.clone(),
            made: Mutex::new(Some(made)),
        };
        // Temporal retries this step on the client's own rule (`ClientError::is_transient`):
        // the client retrying the request too would multiply the attempts and hold the step
        // past its timeout.
        let once = RunOptions::new().retries(0);
        let run = drive(agent, &input.run, input.start, &journal, once);
        let outcome = future::select(Box::pin(run), done).await;
        let made = match outcome {
            Either::Right((made, _)) => made.ok(),
            // A step that halts the run (a call that waits on a person) is recorded in the
            // same poll that ends the loop: it is there to take.
            Either::Left((ended, mut done)) => match done.try_recv() {
                Ok(Some(step)) => Some(step),
                _ => match ended {
                    Err(error) => return Err(failure(&error)),
                    Ok(_) => None,
                },
            },
        };
        made.ok_or_else(|| {
            // The loop ended, or dropped the step, before making it: this worker's agent
            // decides otherwise than the one that asked for the step.
            ActivityError::application(ApplicationFailure::non_retryable(format!(
                "the run never reaches step {:?} here: every worker on the task queue must run \
                 the same agent",
                input.target
            )))
        })
    }
}

/// A journal that replays `known`, lets the loop make `target` and hands it over, and
/// holds back every other step.
struct OneStep {
    known: HashMap<StepKey, Step>,
    target: StepKey,
    made: Mutex<Option<oneshot::Sender<Step>>>,
}

impl Journal for OneStep {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        if let Some(step) = self.known.get(key) {
            let step = step.clone();
            return Box::pin(async move { Ok(Some(step)) });
        }
        if *key == self.target {
            return Box::pin(async { Ok(None) });
        }
        // Another activity makes it.
        Box::pin(future::pending())
    }

    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        if *key == self.target {
            let sender = self
                .made
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(sender) = sender {
                // The receiver lives as long as the activity; a send can only fail once it
                // has returned, and then nobody needs the step.
                let _ = sender.send(step.clone());
            }
        }
        Box::pin(async { Ok(()) })
    }
}

/// The activity failure a stretch's error becomes: retried by Temporal when another
/// attempt could succeed, failing the run at once when it could not.
fn failure(error: &ClientError) -> ActivityError {
    let message = error.to_string();
    let failure = if error.is_transient() {
        ApplicationFailure::new(message)
    } else {
        ApplicationFailure::non_retryable(message)
    };
    ActivityError::application(failure)
}
