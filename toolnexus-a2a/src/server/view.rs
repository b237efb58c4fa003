//! Where a task stands, read from its record and the inbox's runs, and the A2A `Task` it
//! is on the wire.

use a2a::{Artifact, Message as A2aMessage, Part, Role, Task, TaskState, TaskStatus};
use chrono::{DateTime, Utc};
use toolnexus::{Message, Request, RunResult, RunStatus};
use toolnexus_inbox::{Inbox, ParkedState};

use super::record::TaskRecord;
use crate::mapping;
use crate::A2aError;

/// How many runs one task may chain (each resumed run that halts again parks a new one)
/// before its record is taken as corrupt rather than followed for ever.
const MAX_CHAIN: usize = 10_000;

/// How long after its last heartbeat a first run not in this process is taken as cut
/// short by a stop of its server: six beats missed.
const STALE_MS: i64 = 6 * super::send::HEARTBEAT.as_millis() as i64;

/// Where a task stands.
#[derive(Debug, Clone)]
pub(crate) enum Stage {
    /// A run goes on (the first, or a resume).
    Working,
    /// Its run waits on these requests (in call order) of the inbox run `run`.
    Waiting { run: String, requests: Vec<Request> },
    /// Its run ended.
    Ended(Box<RunResult>),
    /// Its run failed, or the server stopped while it ran.
    Failed(String),
    /// A client cancelled it.
    Canceled,
}

/// A task as it stands, with the transcript its history shows.
#[derive(Debug, Clone)]
pub(crate) struct View {
    pub(crate) stage: Stage,
    pub(crate) transcript: Vec<Message>,
    /// When it last changed.
    pub(crate) at: DateTime<Utc>,
}

impl View {
    pub(crate) fn state(&self) -> TaskState {
        match &self.stage {
            Stage::Working => TaskState::Working,
            Stage::Waiting { requests, .. } => mapping::task_state(requests),
            Stage::Ended(result) if result.status == RunStatus::Done => TaskState::Completed,
            Stage::Ended(_) | Stage::Failed(_) => TaskState::Failed,
            Stage::Canceled => TaskState::Canceled,
        }
    }

    /// Whether the task is over: completed, failed or canceled.
    pub(crate) fn is_terminal(&self) -> bool {
        self.state().is_terminal()
    }
}

/// Task `id` as it stands, read from `record` and the runs the inbox keeps for it.
pub(crate) async fn read(inbox: &Inbox, live: bool, record: &TaskRecord) -> Result<View, A2aError> {
    let first_words = || vec![Message::user(record.prompt.clone())];
    let at = DateTime::from_timestamp_millis(record.updated).unwrap_or_default();
    if record.canceled {
        let transcript = if record.transcript.is_empty() {
            first_words()
        } else {
            record.transcript.clone()
        };
        return Ok(View {
            stage: Stage::Canceled,
            transcript,
            at,
        });
    }
    if let Some(error) = &record.error {
        return Ok(View {
            stage: Stage::Failed(error.clone()),
            transcript: first_words(),
            at,
        });
    }
    if let Some(result) = &record.result {
        return Ok(View {
            transcript: result.messages.clone(),
            stage: Stage::Ended(Box::new(result.clone())),
            at,
        });
    }
    let Some(first) = &record.run else {
        // Another server sharing the database may be running it: it touches the record
        // every heartbeat while it does.
        let stale = chrono::Utc::now().timestamp_millis() - record.updated > STALE_MS;
        let stage = if live || !stale {
            Stage::Working
        } else {
            Stage::Failed("the server stopped while the task's run went on".to_owned())
        };
        return Ok(View {
            stage,
            transcript: first_words(),
            at,
        });
    };
    let mut run = first.clone();
    let mut transcript = record.transcript.clone();
    for _ in 0..MAX_CHAIN {
        let requests = inbox.run_requests(&run).await?;
        let Some(head) = requests.first() else {
            return Ok(View {
                stage: Stage::Failed(format!("the inbox has no run `{run}`")),
                transcript,
                at,
            });
        };
        let at = DateTime::<Utc>::from(head.updated_at);
        let stage = match head.run_state {
            ParkedState::Waiting => Stage::Waiting {
                run: run.clone(),
                requests: requests
                    .iter()
                    .filter(|p| p.state == ParkedState::Waiting)
                    .map(|p| p.request.clone())
                    .collect(),
            },
            ParkedState::Done => match (&head.result, &head.next) {
                (Some(result), Some(next)) => {
                    transcript = result.messages.clone();
                    run = next.clone();
                    continue;
                }
                (Some(result), None) => {
                    transcript = result.messages.clone();
                    Stage::Ended(Box::new(result.clone()))
                }
                (None, _) => Stage::Failed("the resumed run kept no result".to_owned()),
            },
            ParkedState::Failed => Stage::Failed(
                head.last_error
                    .clone()
                    .unwrap_or_else(|| "the run could not be resumed".to_owned()),
            ),
            _ => Stage::Working,
        };
        return Ok(View {
            stage,
            transcript,
            at,
        });
    }
    Err(A2aError::Corrupt {
        id: first.clone(),
        reason: format!("more than {MAX_CHAIN} runs chained"),
    })
}

/// The A2A task `id` of `record` as `view` shows it, with the last `history_length`
/// messages of its history (all when `None`; none when 0).
pub(crate) fn task(
    id: &str,
    record: &TaskRecord,
    view: &View,
    history_length: Option<i32>,
) -> Task {
    let context = record.context_id.as_str();
    let message = status_message(id, context, view);
    let mut history = mapping::history(&view.transcript, id, context);
    if let Some(n) = history_length {
        let keep = usize::try_from(n.max(0)).unwrap_or(0);
        let skip = history.len().saturating_sub(keep);
        history.drain(..skip);
    }
    let artifacts = match &view.stage {
        Stage::Ended(result) if !result.text.is_empty() => Some(vec![Artifact {
            artifact_id: format!("{id}-result"),
            name: Some("result".to_owned()),
            description: None,
            parts: vec![Part::text(result.text.clone())],
            metadata: None,
            extensions: None,
        }]),
        _ => None,
    };
    Task {
        id: id.to_owned(),
        context_id: context.to_owned(),
        status: TaskStatus {
            state: view.state(),
            message,
            timestamp: Some(view.at),
        },
        artifacts,
        history: Some(history),
        metadata: None,
    }
}

/// The status message: what the task waits on, its final text, or why it failed.
pub(crate) fn status_message(id: &str, context: &str, view: &View) -> Option<A2aMessage> {
    let text = match &view.stage {
        Stage::Waiting { requests, .. } => {
            return Some(mapping::status_message(requests, id, context))
        }
        Stage::Ended(result) if result.status == RunStatus::Done => result.text.clone(),
        Stage::Ended(result) => format!(
            "the run stopped before it finished ({}): {}",
            result.status.as_str(),
            result.text
        ),
        Stage::Failed(why) => format!("the task failed: {why}"),
        Stage::Canceled => "the task was canceled".to_owned(),
        Stage::Working => return None,
    };
    let mut message = A2aMessage::new(Role::Agent, vec![Part::text(text)]);
    message.message_id = format!("{id}-status-{}", view.transcript.len());
    message.task_id = Some(id.to_owned());
    message.context_id = Some(context.to_owned());
    Some(message)
}

#[cfg(test)]
mod tests {
    use toolnexus_inbox::Inbox;

    use super::{read, Stage, STALE_MS};
    use crate::server::record::TaskRecord;

    #[tokio::test]
    async fn a_first_run_elsewhere_works_while_its_heartbeat_is_fresh() {
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let mut record = TaskRecord::started("c1".into(), "buy a gpu".into());
        record.updated = chrono::Utc::now().timestamp_millis();
        let fresh = read(&inbox, false, &record).await.unwrap();
        assert!(matches!(fresh.stage, Stage::Working), "{fresh:?}");

        record.updated -= 2 * STALE_MS;
        let stale = read(&inbox, false, &record).await.unwrap();
        assert!(
            matches!(&stale.stage, Stage::Failed(why) if why.contains("stopped")),
            "{stale:?}"
        );
        let here = read(&inbox, true, &record).await.unwrap();
        assert!(
            matches!(here.stage, Stage::Working),
            "a run of this process works"
        );
    }
}
