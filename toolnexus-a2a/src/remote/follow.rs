//! A task as its event stream tells it: the snapshot a stream starts with, the status
//! updates after it, and artifacts assembled from their chunks as the agent's own store
//! assembles them, so a task that ends the same reads the same as a polled one.

use a2a::{Artifact, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus};

use super::reply::{self, Reply};

/// One task followed across the streams that tell it (the first, and any resubscription).
#[derive(Debug, Default)]
pub(super) struct Follow {
    // Known before any event when continuing a task, else from the stream's first event.
    id: Option<String>,
    task: Option<Task>,
}

impl Follow {
    /// Follows the task `id`, or, when `None`, the task the stream's first event names.
    pub(super) fn new(id: Option<String>) -> Self {
        Self { id, task: None }
    }

    /// The task's id, once known.
    pub(super) fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The task as far as it was told.
    pub(super) fn into_task(self) -> Option<Task> {
        self.task
    }

    /// Takes in `event`: the reply once the task settles (or the agent answered with a
    /// message and no task), `None` while it goes on, or why the event cannot be believed.
    pub(super) fn apply(&mut self, event: StreamResponse) -> Result<Option<Reply>, String> {
        match event {
            // A message is the whole reply only before a task exists; after, the status
            // updates carry the agent's words.
            StreamResponse::Message(message) if self.task.is_none() => {
                return Ok(Some(Reply::Message(message)));
            }
            StreamResponse::Message(_) => {}
            StreamResponse::Task(task) => {
                self.check(&task.id)?;
                self.task = Some(task);
            }
            StreamResponse::StatusUpdate(update) => {
                self.check(&update.task_id)?;
                let task = self.task_or(&update.task_id, &update.context_id, update.status.clone());
                task.status = update.status;
            }
            StreamResponse::ArtifactUpdate(update) => {
                self.check(&update.task_id)?;
                let waiting = TaskStatus {
                    state: TaskState::Submitted,
                    message: None,
                    timestamp: None,
                };
                let task = self.task_or(&update.task_id, &update.context_id, waiting);
                assemble(task.artifacts.get_or_insert_with(Vec::new), update);
            }
        }
        let settled = self
            .task
            .as_ref()
            .is_some_and(|t| reply::settled(&t.status.state));
        Ok(settled.then(|| self.task.take().map(Reply::Task)).flatten())
    }

    /// Refuses an event of another task than the one followed.
    fn check(&mut self, id: &str) -> Result<(), String> {
        match &self.id {
            Some(known) if known != id => Err(format!(
                "an event of the task `{id}` came on the stream of `{known}`"
            )),
            Some(_) => Ok(()),
            None => {
                self.id = Some(id.to_owned());
                Ok(())
            }
        }
    }

    fn task_or(&mut self, id: &str, context_id: &str, status: TaskStatus) -> &mut Task {
        self.task.get_or_insert_with(|| Task {
            id: id.to_owned(),
            context_id: context_id.to_owned(),
            status,
            artifacts: None,
            history: None,
            metadata: None,
        })
    }
}

/// An artifact chunk into `artifacts`: appended to the parts of the artifact of its id, or
/// replacing it, or a new artifact after the others. A chunk appended to an artifact not
/// seen (its start was on a stream that broke) is kept as a new one rather than lost.
fn assemble(artifacts: &mut Vec<Artifact>, update: TaskArtifactUpdateEvent) {
    let chunk = update.artifact;
    let seen = artifacts
        .iter_mut()
        .find(|a| a.artifact_id == chunk.artifact_id);
    match (seen, update.append == Some(true)) {
        (Some(seen), true) => {
            seen.parts.extend(chunk.parts);
            if let Some(more) = chunk.metadata {
                seen.metadata
                    .get_or_insert_with(Default::default)
                    .extend(more);
            }
        }
        (Some(seen), false) => *seen = chunk,
        (None, _) => artifacts.push(chunk),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(value: serde_json::Value) -> StreamResponse {
        serde_json::from_value(value).unwrap()
    }

    fn chunk(id: &str, text: &str, append: bool) -> StreamResponse {
        event(
            json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "append": append,
            "artifact": {"artifactId": id, "parts": [{"text": text}]}}}),
        )
    }

    fn status(state: &str) -> StreamResponse {
        event(json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": state}}}))
    }

    #[test]
    fn chunks_assemble_as_the_agents_store_does_and_the_task_ends_settled() {
        let mut follow = Follow::new(None);
        let first = event(json!({"task": {"id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_SUBMITTED"}}}));
        assert!(follow.apply(first).unwrap().is_none());
        assert!(follow
            .apply(status("TASK_STATE_WORKING"))
            .unwrap()
            .is_none());
        for (id, text, append) in [
            ("a", "one", false),
            ("b", "other", false),
            ("a", "two", true),
            ("b", "replaced", false),
        ] {
            assert!(follow.apply(chunk(id, text, append)).unwrap().is_none());
        }
        let Some(Reply::Task(task)) = follow.apply(status("TASK_STATE_COMPLETED")).unwrap() else {
            panic!("a completed task ends the stream");
        };
        let texts: Vec<Vec<&str>> = task
            .artifacts
            .iter()
            .flatten()
            .map(|a| a.parts.iter().filter_map(|p| p.as_text()).collect())
            .collect();
        assert_eq!(texts, [vec!["one", "two"], vec!["replaced"]]);
    }

    #[test]
    fn an_event_of_another_task_is_refused_and_a_first_message_is_the_reply() {
        let mut follow = Follow::new(Some("mine".into()));
        let err = follow.apply(status("TASK_STATE_WORKING")).unwrap_err();
        assert!(err.contains("`t`") && err.contains("`mine`"), "{err}");
        let mut follow = Follow::new(None);
        let said = event(json!({"message": {"messageId": "m", "role": "ROLE_AGENT",
            "parts": [{"text": "hi"}]}}));
        assert!(matches!(follow.apply(said), Ok(Some(Reply::Message(_)))));
    }
}
