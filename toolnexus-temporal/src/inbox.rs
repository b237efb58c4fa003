//! A Temporal run's waits in a [`toolnexus_inbox::Inbox`], so a person answers them on the
//! inbox's page (and behind its webhooks and doors) as well as through the `answer` update.
//!
//! Two sides share the work, and the inbox's claims make each answer reach the workflow once:
//!
//! - **In the workflow**, a `park` activity parks each halt in the inbox, and a `settled`
//!   activity records in the inbox the answers the run took at its wait, so a request
//!   answered straight to Temporal does not stay on the page.
//! - **Beside every worker**, a forwarder claims the answered Temporal runs
//!   ([`Inbox::resume_next_with`]) and hands each answer to the workflow as its `answer`
//!   update, whose update id is the request's id. Its outcome is recorded in the inbox only
//!   once the workflow took the answers and reached its next wait (parked with it, as the
//!   run it halted again on) or its end, so a forwarder that dies before leaves the claim to
//!   lapse and another delivers the same updates: Temporal keeps one update per id, and the
//!   workflow refuses a request answered already, which counts as delivered.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use temporalio_client::errors::WorkflowUpdateError;
use temporalio_client::{
    Client, WorkflowExecuteUpdateOptions, WorkflowGetResultOptions, WorkflowQueryOptions,
};
use temporalio_common::RetryPolicy;
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use temporalio_sdk::{ActivityOptions, ApplicationFailure, WorkflowContext};
use toolnexus::{Answer, ClientError, ErrorDetail, RunResult};
use toolnexus_inbox::{Door, Inbox, InboxError, ParkedState};

use crate::wire::AnswerInput;
use crate::workflow::AgentRun;

/// The door the inbox keeps each parked halt's workflow under, by the halt's run id.
pub const DOOR: Door = Door::named("temporal");

/// How often the forwarder looks for answered runs, and for a workflow's next wait.
const POLL: Duration = Duration::from_millis(250);
/// How many answered runs one forwarder hands on at once.
const CONCURRENCY: usize = 4;

/// What the inbox keeps about a halt it parked for a workflow.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Link {
    /// The workflow the halt belongs to.
    pub workflow: String,
}

/// The `park` activity's input: a halt of workflow `workflow`, and the id of the run its
/// previous halt was parked as, if any.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ParkInput {
    /// The workflow id.
    pub workflow: String,
    /// The halt, as the run's result.
    pub halt: RunResult,
    /// The inbox run of the halt before it in this execution.
    #[serde(default)]
    pub previous: Option<String>,
}

/// The `settled` activity's input: the inbox run of a halt and the answers the workflow
/// took there.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SettledInput {
    /// The halt's inbox run (its first request's id).
    pub run: String,
    /// The answers the workflow took.
    pub answers: Vec<Answer>,
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
pub(crate) async fn park(
    ctx: &WorkflowContext<AgentRun>,
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
pub(crate) async fn settled(ctx: &WorkflowContext<AgentRun>, run: String, answers: Vec<Answer>) {
    let input = SettledInput { run, answers };
    let _ = ctx
        .execute_activity(Parking::settled, input, options())
        .await;
}

/// Hands answered Temporal runs of `inbox` on to their workflows until `stop` resolves:
/// [`CONCURRENCY`] loops, since each holds its run until the workflow's next wait.
pub(crate) async fn forward(inbox: Inbox, client: Client, stop: impl Future<Output = ()>) {
    let loops = (0..CONCURRENCY).map(|_| forward_one(inbox.clone(), client.clone()));
    tokio::select! {
        _ = futures::future::join_all(loops) => {}
        () = stop => {}
    }
}

async fn forward_one(inbox: Inbox, client: Client) {
    loop {
        let handed = inbox
            .resume_next_with(|_, answers| hand_on(inbox.clone(), client.clone(), answers))
            .await;
        match handed {
            Ok(Some(resumed)) => {
                tracing::info!(run = %resumed.id, next = ?resumed.next, "answers handed to the workflow");
            }
            Ok(None) => tokio::time::sleep(POLL).await,
            Err(e) => {
                tracing::warn!(error = %e, "could not hand an answered run to its workflow");
                tokio::time::sleep(POLL).await;
            }
        }
    }
}

/// Delivers a claimed run's answers to its workflow, then waits for the workflow's next
/// wait or its end and returns it: the run the inbox records as what the answers came to.
async fn hand_on(
    inbox: Inbox,
    client: Client,
    answers: Vec<Answer>,
) -> Result<RunResult, ClientError> {
    let Some(run) = answers.first().map(|a| a.id.clone()) else {
        return Err(failed("the run has no answers to hand on".to_owned()));
    };
    let workflow = match inbox.record::<Link>(DOOR, &run).await {
        Ok(Some(link)) => link.data.workflow,
        Ok(None) => return Err(failed(format!("no workflow is kept for `{run}`"))),
        Err(e) => return Err(ClientError::Store(ErrorDetail::new(e.to_string()))),
    };
    let handle = client.get_workflow_handle::<AgentRun>(&workflow);
    for answer in &answers {
        let value = serde_json::to_value(answer).map_err(|e| {
            failed(format!(
                "the answer to `{}` does not encode: {e}",
                answer.id
            ))
        })?;
        let options = WorkflowExecuteUpdateOptions::builder()
            .update_id(answer.id.clone())
            .build();
        match handle
            .execute_update(AgentRun::answer, AnswerInput::new(value), options)
            .await
        {
            Ok(_) => {}
            Err(WorkflowUpdateError::Failed(failure)) if delivered(&failure.message) => {}
            // Gone: the wait below reads how it ended.
            Err(WorkflowUpdateError::NotFound(_)) => break,
            Err(e) => {
                return Err(ClientError::Network(ErrorDetail::new(format!(
                    "run `{workflow}` did not take the answer to `{}`: {e}",
                    answer.id
                ))))
            }
        }
    }
    let answered: BTreeSet<&str> = answers.iter().map(|a| a.id.as_str()).collect();
    let ended = handle.get_result(WorkflowGetResultOptions::default());
    let next_wait = async {
        loop {
            let halt = handle
                .query(AgentRun::halt, (), WorkflowQueryOptions::default())
                .await;
            if let Ok(Some(halt)) = halt {
                if halt
                    .waiting
                    .iter()
                    .all(|r| !answered.contains(r.id.as_str()))
                {
                    return halt;
                }
            }
            tokio::time::sleep(POLL).await;
        }
    };
    let outcome = tokio::select! {
        ended = ended => ended.map_err(|e| failed(format!("run `{workflow}` did not end well: {e}"))),
        halt = next_wait => Ok(halt),
    }?;
    if let Some(next) = outcome.pending.as_ref() {
        let link = Link { workflow };
        inbox
            .keep_record(DOOR, &next.id, &link)
            .await
            .map_err(|e| ClientError::Store(ErrorDetail::new(e.to_string())))?;
    }
    Ok(outcome)
}

/// Whether the workflow's refusal of an answer means it has it, or no longer needs it.
fn delivered(refusal: &str) -> bool {
    refusal.contains("already answered") || refusal.contains("the run has ended")
}

fn failed(why: String) -> ClientError {
    ClientError::Journal(ErrorDetail::new(why))
}
