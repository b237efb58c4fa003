//! A task as the inbox keeps it: A2A's door record beside the runs, naming its context and
//! the first run it parked, or how it ended when it never waited. Everything after the
//! first park (answers, resumes, the runs it halts on again) is read from the inbox itself.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolnexus::{Message, RunResult};
use toolnexus_inbox::{Door, DoorRecord, Inbox, Starter};

use crate::error::A2aError;

/// How often a task's first run touches its record while it goes on, so that servers
/// sharing the database tell a run that goes on elsewhere from one whose server stopped.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(10);

/// The record of one task. Records kept before the inbox kept door records carry an
/// `updated` field of their own; it is ignored, the inbox's time of the record says when
/// it last changed.
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
    /// The caller's messages as they came: the first one and every continuation taken.
    /// Records kept before it have none; their histories show the transcript's prompt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) said: Vec<Said>,
    /// Who started it: the task is theirs to read and cancel. Records kept before it have
    /// none: on a server without an identify hook they are the responder's, as every
    /// caller is; behind a hook only the people who may answer them see them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) starter: Option<Starter>,
}

/// One message of the caller's, kept as it came.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Said {
    /// The client's own id of the message.
    pub(crate) message_id: String,
    /// Its parts as sent.
    pub(crate) parts: Vec<a2a::Part>,
    /// How many transcript entries came before it: where it stands in the history.
    #[serde(default)]
    pub(crate) at: usize,
}

impl Said {
    /// `message` as the caller sent it, `at` transcript entries into the task.
    pub(crate) fn of(message: &a2a::Message, at: usize) -> Said {
        Said {
            message_id: message.message_id.clone(),
            parts: message.parts.clone(),
            at,
        }
    }
}

impl TaskRecord {
    pub(crate) fn started(context_id: String, prompt: String, starter: Starter) -> TaskRecord {
        TaskRecord {
            context_id,
            prompt,
            run: None,
            transcript: Vec::new(),
            result: None,
            error: None,
            canceled: false,
            said: Vec::new(),
            starter: Some(starter),
        }
    }
}

/// The record of task `id`, if there is one, with when it last changed.
pub(crate) async fn load(
    inbox: &Inbox,
    id: &str,
) -> Result<Option<DoorRecord<TaskRecord>>, A2aError> {
    Ok(inbox.record(Door::A2A, id).await?)
}

/// Keeps `record` as task `id`'s.
pub(crate) async fn save(inbox: &Inbox, id: &str, record: &TaskRecord) -> Result<(), A2aError> {
    Ok(inbox.keep_record(Door::A2A, id, record).await?)
}

/// Marks task `id`'s record as changed now: its run's heartbeat.
pub(crate) async fn touch(inbox: &Inbox, id: &str) -> Result<(), A2aError> {
    inbox.touch_record(Door::A2A, id).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use toolnexus_inbox::{Door, Inbox, Person, Starter};

    use super::{load, save, TaskRecord};

    #[tokio::test]
    async fn a_record_kept_with_its_own_update_time_reads_back() {
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let old = serde_json::json!({
            "contextId": "c1",
            "prompt": "buy a gpu",
            "run": "r1",
            "canceled": true,
            "updated": 1_700_000_000_000_i64,
        });
        inbox.keep_record(Door::A2A, "t1", &old).await.unwrap();
        let kept = load(&inbox, "t1").await.unwrap().expect("kept");
        assert_eq!(kept.data.context_id, "c1");
        assert_eq!(kept.data.run.as_deref(), Some("r1"));
        assert!(kept.data.canceled);
        assert_eq!(kept.data.starter, None, "kept before starters were");

        save(&inbox, "t1", &kept.data).await.unwrap();
        let again: serde_json::Value = inbox
            .record(Door::A2A, "t1")
            .await
            .unwrap()
            .expect("kept")
            .data;
        assert_eq!(again.get("updated"), None, "the inbox keeps the time");
        assert_eq!(again["prompt"], "buy a gpu");
    }

    #[tokio::test]
    async fn a_new_record_has_only_what_it_says() {
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let ada = Starter::of(&Person::new("ada@example.com"));
        let record = TaskRecord::started("c1".into(), "hi".into(), ada);
        save(&inbox, "t2", &record).await.unwrap();
        let kept: serde_json::Value = inbox.record(Door::A2A, "t2").await.unwrap().unwrap().data;
        let starter = serde_json::json!({"id": "ada@example.com"});
        let expected = serde_json::json!({"contextId": "c1", "prompt": "hi", "starter": starter});
        assert_eq!(kept, expected);
    }
}
