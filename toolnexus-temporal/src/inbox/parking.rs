//! The workflow's side of the inbox: the `park` and `settled` activities a worker given an
//! inbox registers, and the calls the workflow makes to them. It names no workflow type, so
//! the workflow can use it without the inbox using the workflow back.
//!
//! Its types are `pub` only because the `#[activities]` macro puts them in a public
//! signature; the crate does not export them.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use temporalio_common::RetryPolicy;
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use temporalio_sdk::{ActivityOptions, ApplicationFailure, WorkflowContext};
use toolnexus::{Answer, RunResult};
use toolnexus_inbox::{Inbox, InboxError, ParkedState};

use super::{Link, DOOR};

/// The `park` activity's input: a halt of workflow `workflow`, and the id of the run its
/// previous halt was parked as, if any.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ParkInput {
    /// The workflow id.
    pub(crate) workflow: String,
    /// The halt, as the run's result.
    pub(crate) halt: RunResult,
    /// The inbox run of the halt before it in this execution.
    #[serde(default)]
    pub(crate) previous: Option<String>,
}

/// The `settled` activity's input: the inbox run of a halt and the answers the workflow
/// took there.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SettledInput {
    /// The halt's inbox run (its first request's id).
    pub(crate) run: String,
    /// The answers the workflow took.
    pub(crate) answers: Vec<Answer>,
}

/// The activities that keep the inbox in step with the `AgentRun` workflow, registered on
/// a worker given an inbox ([`AgentWorker::inbox`](crate::AgentWorker::inbox)).
pub struct Parking {
    pub(crate) inbox: Inbox,
}

#[activities]
impl Parking {
    /// Parks a halt in the inbox; `true` when this call parked it. The halt after one
    /// answered in the inbox is parked by the forwarder that delivered those answers, as the
    /// run they halted again on: this waits (failing, to be retried) until that forwarder's
    /// outcome is recorded, and parks the halt only if it did not.
    #[activity]
    pub async fn park(
        self: Arc<Self>,
        _ctx: ActivityContext,
        input: ParkInput,
    ) -> Result<bool, ActivityError> {
        let Some(first) = input.halt.waiting.first().or(input.halt.pending.as_ref()) else {
            return Ok(false);
        };
        let inbox = &self.inbox;
        // A run resumed with some of its answers halts again on the calls still waiting:
        // requests the inbox holds already, whose answers a forwarder may be handing on
        // right now (and would wait for this halt to pass).
        let mut known = true;
        for request in &input.halt.waiting {
            if inbox.get(&request.id).await.map_err(retry)?.is_none() {
                known = false;
                break;
            }
        }
        if known {
            return Ok(false);
        }
        if let Some(previous) = &input.previous {
            if let Some(before) = inbox.get(previous).await.map_err(retry)? {
                match before.run_state {
                    ParkedState::Answered | ParkedState::Running => {
                        return Err(ActivityError::application(ApplicationFailure::new(
                            format!(
                                "the answers to `{previous}` are still being handed to the run"
                            ),
                        )))
                    }
                    ParkedState::Done if before.next.as_deref() == Some(first.id.as_str()) => {
                        return Ok(false)
                    }
                    _ => {}
                }
            }
        }
        let link = Link {
            workflow: input.workflow.clone(),
        };
        // Kept first: a forwarder that finds the run answered always finds its workflow.
        inbox
            .keep_record(DOOR, &first.id, &link)
            .await
            .map_err(retry)?;
        match inbox.park(&input.halt).await {
            Ok(_) => Ok(true),
            // The same halt parked by an earlier attempt, or by the execution this one
            // continued: request ids are recorded in the history, so they are the same.
            Err(InboxError::AlreadyParked(_)) => Ok(false),
            Err(e @ (InboxError::Database(_) | InboxError::Batch { .. })) => Err(retry(e)),
            Err(e) => Err(ActivityError::application(
                ApplicationFailure::non_retryable(format!("the inbox refused the halt: {e}")),
            )),
        }
    }

    /// Records in the inbox the answers the workflow took at a halt. Those given in the
    /// inbox are there already; one given straight to Temporal (or a request the workflow
    /// declined as expired) is recorded now, so the page stops showing it and the run is
    /// handed on, and settled, like any answered one.
    #[activity]
    pub async fn settled(
        self: Arc<Self>,
        _ctx: ActivityContext,
        input: SettledInput,
    ) -> Result<(), ActivityError> {
        let requests = self.inbox.run_requests(&input.run).await.map_err(retry)?;
        for answer in input.answers {
            let waits = requests
                .iter()
                .any(|p| p.id() == answer.id && p.state == ParkedState::Waiting);
            if !waits {
                continue;
            }
            let id = answer.id.clone();
            match self.inbox.answer(answer).await {
                Ok(()) => {}
                Err(e @ InboxError::Database(_)) => return Err(retry(e)),
                // Answered meanwhile in the inbox, or refused there (a rule on who may
                // answer): the run has its answer either way.
                Err(e) => {
                    tracing::warn!(request = %id, error = %e, "the inbox kept its own answer")
                }
            }
        }
        Ok(())
    }
}

fn retry(error: InboxError) -> ActivityError {
    ActivityError::application(ApplicationFailure::new(format!("the inbox: {error}")))
}

/// The options of the inbox's activities: tried until the inbox answers, at most a few
/// seconds apart, since a `park` waiting on a forwarder wants to see it finish soon.
fn options() -> ActivityOptions {
    let mut options = ActivityOptions::start_to_close_timeout(Duration::from_secs(60));
    options.retry_policy = Some(
        RetryPolicy::builder()
            .maximum_attempts(0)
            .maximum_interval(Duration::from_secs(5))
            .build(),
    );
    options
}

/// Parks `halt` from the workflow (the `park` activity). A halt the inbox cannot keep
/// leaves the run answerable through Temporal: its failure stays in the history.
pub(crate) async fn park<W>(
    ctx: &WorkflowContext<W>,
    workflow: String,
    halt: RunResult,
    previous: Option<String>,
) {
    let input = ParkInput {
        workflow,
        halt,
        previous,
    };
    let _ = ctx.execute_activity(Parking::park, input, options()).await;
}

/// Records the answers taken at the halt parked as `run` (the `settled` activity).
pub(crate) async fn settled<W>(ctx: &WorkflowContext<W>, run: String, answers: Vec<Answer>) {
    let input = SettledInput { run, answers };
    let _ = ctx
        .execute_activity(Parking::settled, input, options())
        .await;
}
