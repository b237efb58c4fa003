//! [`Runs`]: a client of `AgentRun` workflows — start one, see what it waits on, answer,
//! await its result.

use temporalio_client::errors::{
    WorkflowGetResultError, WorkflowQueryError, WorkflowStartError, WorkflowUpdateError,
};
use temporalio_client::{
    Client, WorkflowExecuteUpdateOptions, WorkflowGetResultOptions, WorkflowQueryOptions,
    WorkflowStartOptions,
};
use toolnexus::{Answer, Request, RunResult};

use crate::connect::Connection;
use crate::error::TemporalError;
use crate::refusal::AnswerRefusal;
use crate::wire::{AnswerInput, RunInput};
use crate::worker::TASK_QUEUE;
use crate::workflow::AgentRun;

/// A client of the runs on one task queue.
#[derive(Clone)]
pub struct Runs {
    client: Client,
    task_queue: String,
}

impl Runs {
    /// Connects to the server `connection` names, for runs on [`TASK_QUEUE`].
    pub async fn connect(connection: &Connection) -> Result<Self, TemporalError> {
        Ok(Runs {
            client: connection.client().await?,
            task_queue: TASK_QUEUE.to_owned(),
        })
    }

    /// Runs on `queue` instead.
    pub fn task_queue(mut self, queue: impl Into<String>) -> Self {
        self.task_queue = queue.into();
        self
    }

    /// Starts a run of `prompt` under the workflow id `id`.
    pub async fn start(&self, id: &str, prompt: &str) -> Result<(), TemporalError> {
        let options = WorkflowStartOptions::new(self.task_queue.clone(), id.to_owned()).build();
        self.client
            .start_workflow(AgentRun::run, RunInput::new(prompt), options)
            .await
            .map_err(|e| match e {
                WorkflowStartError::AlreadyStarted { .. } => {
                    TemporalError::AlreadyStarted { run: id.to_owned() }
                }
                e => TemporalError::Run(format!("could not start run `{id}`: {e}")),
            })?;
        Ok(())
    }

    /// The requests run `id` waits on now.
    pub async fn pending(&self, id: &str) -> Result<Vec<Request>, TemporalError> {
        self.client
            .get_workflow_handle::<AgentRun>(id)
            .query(AgentRun::pending, (), WorkflowQueryOptions::default())
            .await
            .map_err(|e| match e {
                WorkflowQueryError::NotFound(_) => not_found(id),
                e => TemporalError::Run(format!("could not ask run `{id}` what waits: {e}")),
            })
    }

    /// Answers a request of run `id`; returns the requests still waiting.
    pub async fn answer(&self, id: &str, answer: &Answer) -> Result<Vec<Request>, TemporalError> {
        let value = serde_json::to_value(answer)
            .map_err(|e| TemporalError::Run(format!("the answer does not encode: {e}")))?;
        self.client
            .get_workflow_handle::<AgentRun>(id)
            .execute_update(
                AgentRun::answer,
                AnswerInput::new(value),
                WorkflowExecuteUpdateOptions::default(),
            )
            .await
            .map_err(|e| match e {
                WorkflowUpdateError::NotFound(_) => not_found(id),
                WorkflowUpdateError::Failed(failure) => match AnswerRefusal::of_failure(&failure) {
                    Some(refusal) => TemporalError::Refused {
                        run: id.to_owned(),
                        refusal,
                        message: failure.message,
                    },
                    None => TemporalError::Run(format!(
                        "run `{id}` did not take the answer: {}",
                        failure.message
                    )),
                },
                e => TemporalError::Run(format!("run `{id}` did not take the answer: {e}")),
            })
    }

    /// Waits for run `id` to end; returns its result.
    pub async fn result(&self, id: &str) -> Result<RunResult, TemporalError> {
        self.client
            .get_workflow_handle::<AgentRun>(id)
            .get_result(WorkflowGetResultOptions::default())
            .await
            .map_err(|e| match e {
                WorkflowGetResultError::NotFound(_) => not_found(id),
                e => TemporalError::Run(format!("run `{id}` did not end well: {e}")),
            })
    }
}

fn not_found(id: &str) -> TemporalError {
    TemporalError::NotFound { run: id.to_owned() }
}

impl std::fmt::Debug for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runs")
            .field("task_queue", &self.task_queue)
            .finish_non_exhaustive()
    }
}
