//! The forwarder beside every worker: it claims the answered Temporal runs of the inbox and
//! hands each answer to its workflow as the `answer` update, then records what the answers
//! came to. A client of the workflow, as any other.

use std::collections::BTreeSet;
use std::future::Future;

use temporalio_client::errors::WorkflowUpdateError;
use temporalio_client::{
    Client, WorkflowExecuteUpdateOptions, WorkflowGetResultOptions, WorkflowQueryOptions,
};
use temporalio_common::protos::temporal::api::failure::v1::Failure;
use toolnexus::{Answer, ClientError, ErrorDetail, RunResult};
use toolnexus_inbox::Inbox;

use super::{Link, DOOR, POLL};
use crate::refusal::AnswerRefusal;
use crate::wire::AnswerInput;
use crate::workflow::AgentRun;

/// How many answered runs one forwarder hands on at once.
const CONCURRENCY: usize = 4;

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
            Err(WorkflowUpdateError::Failed(failure)) if delivered(&failure) => {}
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
fn delivered(failure: &Failure) -> bool {
    matches!(
        AnswerRefusal::of_failure(failure),
        Some(AnswerRefusal::AlreadyAnswered | AnswerRefusal::Ended)
    )
}

fn failed(why: String) -> ClientError {
    ClientError::Journal(ErrorDetail::new(why))
}
