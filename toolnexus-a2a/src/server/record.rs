//! A task as the inbox keeps it: a note beside the runs naming its context and the first
//! run it parked, or how it ended when it never waited. Everything after the first park
//! (answers, resumes, the runs it halts on again) is read from the inbox itself.

use serde::{Deserialize, Serialize};
use toolnexus::{Message, RunResult};
use toolnexus_inbox::Inbox;

use crate::A2aError;

/// The note of one task.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskRecord {
    pub(crate) context_id: String,
    /// The message that started the task.
    pub(crate) prompt: String,
    /// The id of the first run it parked (the inbox's run id); `None` until it halts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) run: Option<String>,
    /// The transcript when it first halted (later ones are in the inbox's results).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) transcript: Vec<Message>,
    /// How it ended when it ended without waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<RunResult>,
    /// Why its first run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// Whether a client cancelled it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) canceled: bool,
    /// When the record last changed, in milliseconds since the epoch.
    #[serde(default)]
    pub(crate) updated: i64,
}

impl TaskRecord {
    pub(crate) fn started(context_id: String, prompt: String) -> TaskRecord {
        TaskRecord {
            context_id,
            prompt,
            run: None,
            transcript: Vec::new(),
            result: None,
            error: None,
            canceled: false,
            updated: 0,
        }
    }
}

fn key(task: &str) -> String {
    format!("a2a-task:{task}")
}

/// The record of task `id`, if there is one.
pub(crate) async fn load(inbox: &Inbox, id: &str) -> Result<Option<TaskRecord>, A2aError> {
    let Some(text) = inbox.note(&key(id)).await? else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| A2aError::Corrupt {
            id: id.to_owned(),
            reason: e.to_string(),
        })
}

/// Writes the record of task `id`.
pub(crate) async fn save(inbox: &Inbox, id: &str, record: &mut TaskRecord) -> Result<(), A2aError> {
    record.updated = chrono::Utc::now().timestamp_millis();
    let text = serde_json::to_string(record).map_err(|e| A2aError::Corrupt {
        id: id.to_owned(),
        reason: e.to_string(),
    })?;
    inbox.keep_note(&key(id), &text).await?;
    Ok(())
}
