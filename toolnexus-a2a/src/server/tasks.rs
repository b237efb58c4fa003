//! `GetTask` and `CancelTask`.

use std::sync::Arc;

use a2a::{error_code, A2AError, CancelTaskRequest, GetTaskRequest};
use serde_json::Value;
use toolnexus_inbox::{Cancelled, InboxError, Person};

use super::errors::to_protocol;
use super::record;
use super::send::to_json;
use super::shared::{Seen, Shared};
use super::view::Stage;

/// `GetTask`: the task as it stands, as `who` may see it, with its history (the last
/// `historyLength` messages when given).
pub(crate) async fn get(
    shared: &Arc<Shared>,
    request: GetTaskRequest,
    who: &Person,
) -> Result<Value, A2AError> {
    to_json(
        &shared
            .task(&request.id, request.history_length, who)
            .await?,
    )
}

/// `CancelTask`, by the task's starter or someone who may answer what it waits on. The
/// inbox cancels the run first — every open request refused as `cancelled`, as `who`'s
/// refusal, in its audit trail — and only then does the task say canceled, so it never
/// says so while its run can still be approved. A task that does not wait (its run goes
/// on, an answer reached it first, or it is over) is not cancelable.
pub(crate) async fn cancel(
    shared: &Arc<Shared>,
    request: CancelTaskRequest,
    who: &Person,
) -> Result<Value, A2AError> {
    let id = request.id;
    let Seen { kept, view, sight } = shared.seen(&id, who).await?;
    if view.is_terminal() {
        return Err(A2AError::task_not_cancelable(&id));
    }
    let Stage::Waiting { run, .. } = &view.stage else {
        return Err(not_cancelable(&id, "its run goes on"));
    };
    match shared.inbox.cancel(run, who.clone()).await {
        Ok(Cancelled::Now { .. }) => {}
        Ok(_) => {
            return Err(not_cancelable(
                &id,
                "an answer reached it first and its run goes on",
            ))
        }
        // A run the inbox no longer has waits for nobody either.
        Err(InboxError::UnknownRequest(_)) => {
            return Err(not_cancelable(&id, "its run is no longer kept"))
        }
        Err(e) => return Err(to_protocol(e.into())),
    }
    let mut record = kept.data;
    if record.transcript.is_empty() {
        record.transcript = view.transcript.clone();
    }
    record.canceled = true;
    // Should this fail, the task reads as failed ("cancelled by …"), which it is: its run
    // waits for nobody.
    record::save(&shared.inbox, &id, &record)
        .await
        .map_err(to_protocol)?;
    shared.changed.notify_waiters();
    to_json(&shared.task_as(&id, None, who, sight).await?)
}

/// A task that cannot be canceled now, and why.
fn not_cancelable(id: &str, why: &str) -> A2AError {
    A2AError::new(
        error_code::TASK_NOT_CANCELABLE,
        format!("task `{id}` cannot be canceled: {why}"),
    )
}
