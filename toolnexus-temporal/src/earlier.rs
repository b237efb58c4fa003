//! The steps a stretch has made so far, read by a step activity from its run's history:
//! each is there already, as the result of the activity that made it, so a step's input
//! need not carry them again. Carried in every input, they made a stretch's history grow
//! with the square of its length.

use std::collections::HashMap;

use serde::Deserialize;
use temporalio_client::{WorkflowExecutionInfo, WorkflowFetchHistoryOptions};
use temporalio_common::data_converters::{
    DataConverter, PayloadConversionError, SerializationContextData, TemporalDeserializable,
    WorkflowSerializationContext,
};
use temporalio_common::protos::temporal::api::common::v1::Payloads;
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;
use temporalio_sdk::activities::ActivityContext;
use toolnexus::{Step, StepKey};

/// Why the steps could not be read.
pub(crate) type Unread = String;

/// Of a step activity's input, only the step it was to make.
#[derive(Deserialize)]
struct Targeted {
    target: StepKey,
}

/// Every step made by a step activity of the run `ctx` serves that was scheduled after
/// event `since` (the stretch's start) and has completed, by its key.
pub(crate) async fn steps_since(
    ctx: &ActivityContext,
    since: i64,
) -> Result<HashMap<StepKey, Step>, Unread> {
    let info = ctx.info();
    let workflow = info
        .workflow_id
        .clone()
        .ok_or("the step runs outside a workflow")?;
    let client = ctx.client();
    let converter = client.options().data_converter.clone();
    let events = WorkflowExecutionInfo::builder()
        .namespace(info.namespace.clone())
        .workflow_id(workflow)
        .maybe_run_id(info.workflow_run_id.clone())
        .build()
        .bind_untyped(client)
        .fetch_history(WorkflowFetchHistoryOptions::default())
        .into_events()
        .await
        .map_err(|e| format!("the run's history could not be read: {e}"))?;
    let mut scheduled: HashMap<i64, StepKey> = HashMap::new();
    let mut made = HashMap::new();
    for event in events.into_iter().filter(|e| e.event_id > since) {
        match event.attributes {
            Some(Attributes::ActivityTaskScheduledEventAttributes(step))
                if step
                    .activity_type
                    .as_ref()
                    .is_some_and(|t| t.name == info.activity_type) =>
            {
                let read: Result<Targeted, _> = decode(&converter, step.input).await;
                let Targeted { target } =
                    read.map_err(|e| format!("a step's input could not be read: {e}"))?;
                scheduled.insert(event.event_id, target);
            }
            Some(Attributes::ActivityTaskCompletedEventAttributes(done)) => {
                if let Some(key) = scheduled.remove(&done.scheduled_event_id) {
                    let read: Result<Step, _> = decode(&converter, done.result).await;
                    let step =
                        read.map_err(|e| format!("a step's result could not be read: {e}"))?;
                    made.insert(key, step);
                }
            }
            _ => {}
        }
    }
    Ok(made)
}

/// What `payloads` hold, decoded as the worker's own payloads are (its codec included).
async fn decode<T: TemporalDeserializable + 'static>(
    converter: &DataConverter,
    payloads: Option<Payloads>,
) -> Result<T, PayloadConversionError> {
    let payloads = payloads.map(|p| p.payloads).unwrap_or_default();
    let data = SerializationContextData::Workflow(WorkflowSerializationContext::new());
    converter.from_payloads(&data, payloads).await
}
