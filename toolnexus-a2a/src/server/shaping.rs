//! What the host makes of the wire's messages and of a run's end: the prompt a message
//! that starts a task becomes, the artifacts an ended run shows, and which runs are
//! answered with a message instead of a task. Each has a default the hooks of
//! [`A2aServerBuilder`](super::A2aServerBuilder) replace.

use std::sync::Arc;

use a2a::{A2AError, Artifact, Message, Part, PartContent};
use toolnexus::RunResult;

type PromptFn = dyn Fn(&Message) -> Result<String, String> + Send + Sync;
type ArtifactsFn = dyn Fn(&RunResult) -> Vec<Artifact> + Send + Sync;
type RepliesFn = dyn Fn(&RunResult) -> bool + Send + Sync;

/// The host's hooks; `None` keeps the default.
#[derive(Clone, Default)]
pub(crate) struct Shaping {
    pub(crate) prompt: Option<Arc<PromptFn>>,
    pub(crate) artifacts: Option<Arc<ArtifactsFn>>,
    pub(crate) replies: Option<Arc<RepliesFn>>,
}

impl std::fmt::Debug for Shaping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shaping")
            .field("prompt", &self.prompt.is_some())
            .field("artifacts", &self.artifacts.is_some())
            .field("replies", &self.replies.is_some())
            .finish()
    }
}

impl Shaping {
    /// The prompt of the run that `message` starts; a refusal is the caller's mistake.
    pub(crate) fn prompt(&self, message: &Message) -> Result<String, A2AError> {
        let prompt = match &self.prompt {
            Some(make) => make(message).map_err(A2AError::invalid_params)?,
            None => default_prompt(message),
        };
        if prompt.trim().is_empty() {
            return Err(A2AError::invalid_params(
                "the message carries no text or data to start a task with",
            ));
        }
        Ok(prompt)
    }

    /// What task `id`, whose run ended with `result`, shows as its artifacts. An artifact
    /// the hook gave no id gets one from the task and its place, so every read of the task
    /// names it the same.
    pub(crate) fn artifacts(&self, id: &str, result: &RunResult) -> Vec<Artifact> {
        let Some(make) = &self.artifacts else {
            return default_artifacts(id, result);
        };
        let mut artifacts = make(result);
        for (i, artifact) in artifacts.iter_mut().enumerate() {
            if artifact.artifact_id.is_empty() {
                artifact.artifact_id = format!("{id}-artifact-{i}");
            }
        }
        artifacts
    }

    /// Whether the run that ended with `result`, without waiting on anyone, is answered
    /// with a message rather than a task.
    pub(crate) fn replies_with_message(&self, result: &RunResult) -> bool {
        self.replies.as_ref().is_some_and(|when| when(result))
    }
}

/// A message's text parts, its data parts as JSON and its file URLs, one per line. Raw
/// file bytes say nothing a model reads.
fn default_prompt(message: &Message) -> String {
    let pieces: Vec<String> = message
        .parts
        .iter()
        .filter_map(|p| match &p.content {
            PartContent::Text(t) => Some(t.clone()),
            PartContent::Data(d) => Some(d.to_string()),
            PartContent::Url(u) => Some(u.clone()),
            PartContent::Raw(_) => None,
        })
        .collect();
    pieces.join("\n")
}

/// The final text, as one artifact.
fn default_artifacts(id: &str, result: &RunResult) -> Vec<Artifact> {
    if result.text.is_empty() {
        return Vec::new();
    }
    vec![Artifact {
        artifact_id: format!("{id}-result"),
        name: Some("result".to_owned()),
        description: None,
        parts: vec![Part::text(result.text.clone())],
        metadata: None,
        extensions: None,
    }]
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use a2a::{Artifact, Message, Part, Role};
    use toolnexus::RunResult;

    use super::Shaping;

    fn ended(text: &str) -> RunResult {
        let mut run: RunResult = serde_json::from_value(serde_json::json!({
            "status": "done", "text": "", "tool_calls": [], "pending": null, "limit": null,
            "turns": 1, "messages": [], "model": "m",
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }))
        .expect("a result");
        run.text = text.to_owned();
        run
    }

    #[test]
    fn a_hooks_artifacts_without_ids_get_the_tasks_own() {
        let shaping = Shaping {
            artifacts: Some(Arc::new(|run: &RunResult| {
                let named = Artifact {
                    artifact_id: "report".to_owned(),
                    name: None,
                    description: None,
                    parts: vec![Part::text(run.text.clone())],
                    metadata: None,
                    extensions: None,
                };
                let mut unnamed = named.clone();
                unnamed.artifact_id = String::new();
                vec![named, unnamed]
            })),
            ..Shaping::default()
        };
        let ids: Vec<String> = shaping
            .artifacts("t1", &ended("done"))
            .into_iter()
            .map(|a| a.artifact_id)
            .collect();
        assert_eq!(ids, ["report", "t1-artifact-1"]);
        let plain = Shaping::default().artifacts("t1", &ended("done"));
        assert_eq!(plain.len(), 1);
        assert!(matches!(&plain[0].parts[0].content, a2a::PartContent::Text(t) if t == "done"));
        assert!(Shaping::default().artifacts("t1", &ended("")).is_empty());
    }

    #[test]
    fn a_prompt_hook_refuses_as_the_callers_mistake() {
        let shaping = Shaping {
            prompt: Some(Arc::new(|m: &Message| {
                m.text()
                    .map(|t| format!("{}: {t}", m.message_id))
                    .ok_or_else(|| "send text".to_owned())
            })),
            ..Shaping::default()
        };
        let mut message = Message::new(Role::User, vec![Part::text("hi")]);
        message.message_id = "m1".to_owned();
        assert_eq!(shaping.prompt(&message).ok().as_deref(), Some("m1: hi"));
        let data = Message::new(Role::User, vec![Part::data(serde_json::json!({"a": 1}))]);
        let refused = shaping.prompt(&data).expect_err("no text");
        assert!(refused.to_string().contains("send text"), "{refused}");
        assert_eq!(
            Shaping::default().prompt(&data).ok().as_deref(),
            Some(r#"{"a":1}"#)
        );
    }
}
