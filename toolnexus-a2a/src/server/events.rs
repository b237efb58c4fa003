//! What a stream or a webhook is told of a task that changed, as `StreamResponse`s.

use a2a::{Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use serde_json::{json, Value};

/// The `StreamResponse`s that tell of `task` as it now stands: what an ended task produced
/// as artifact updates (each whole, as it is final), then its status.
pub(crate) fn change_events(task: &Task) -> Vec<Value> {
    let mut events = Vec::new();
    if task.status.state.is_terminal() {
        for artifact in task.artifacts.iter().flatten() {
            let update = TaskArtifactUpdateEvent {
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                artifact: artifact.clone(),
                append: Some(false),
                last_chunk: Some(true),
                metadata: None,
            };
            events.push(json!({ "artifactUpdate": update }));
        }
    }
    let update = TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: task.status.clone(),
        metadata: None,
    };
    events.push(json!({ "statusUpdate": update }));
    events
}
