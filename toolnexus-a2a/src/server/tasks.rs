//! `GetTask` and `CancelTask`.

use std::sync::Arc;

use a2a::{A2AError, CancelTaskRequest, GetTaskRequest};
use serde_json::Value;
use toolnexus::{Answer, Refusal};
use toolnexus_inbox::{InboxError, Person};

use super::errors::to_protocol;
use super::record;
use super::send::current;
use super::shared::Shared;
use super::view::{self, Stage};

/// `GetTask`: the task as it stands, with its history (the last `historyLength`
/// messages when given).
pub(crate) async fn get(
    shared: &Arc<Shared>,
    request: GetTaskRequest,
    who: &Person,
) -> Result<Value, A2AError> {
    current(shared, &request.id, request.history_length, who).await
}

/// `CancelTask`: a task that is not over is canceled; what it waits on is refused in the
/// inbox (`cancelled`, as `who`'s refusal), so nobody answers it on the page and its tool
/// never runs.
pub(crate) async fn cancel(
    shared: &Arc<Shared>,
    request: CancelTaskRequest,
    who: &Person,
) -> Result<Value, A2AError> {
    let id = request.id;
    let kept = record::load(&shared.inbox, &id)
        .await
        .map_err(to_protocol)?
        .ok_or_else(|| A2AError::task_not_found(&id))?;
    let view = view::read(&shared.inbox, shared.is_live(&id), &kept)
        .await
        .map_err(to_protocol)?;
    if view.is_terminal() {
        return Err(A2AError::task_not_cancelable(&id));
    }
    let mut record = kept.data;
    if record.transcript.is_empty() {
        record.transcript = view.transcript.clone();
    }
    record.canceled = true;
    record::save(&shared.inbox, &id, &record)
        .await
        .map_err(to_protocol)?;
    if let Stage::Waiting { run, requests, .. } = &view.stage {
        // All or none, as any answer: a request answered meanwhile leaves its run to the
        // answer that came first.
        let refusals = requests
            .iter()
            .map(|r| {
                Answer::refuse(&r.id, Refusal::Cancelled).with_note("the A2A task was canceled")
            })
            .collect();
        if let Err(e) = shared.inbox.answer_all(run, refusals, who).await {
            if !matches!(e.cause(), InboxError::NotWaiting { .. }) {
                tracing::warn!(task = %id, error = %e, "could not refuse a canceled task's requests");
            }
        }
    }
    shared.changed.notify_waiters();
    current(shared, &id, None, who).await
}
