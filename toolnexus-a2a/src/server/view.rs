//! Where a task stands, read from its record and the inbox's runs, and the A2A `Task` it
//! is on the wire.

use std::time::Duration;

use a2a::{Artifact, Message as A2aMessage, Part, PartContent, Role, Task, TaskState, TaskStatus};
use chrono::{DateTime, Utc};
use toolnexus::{Message, Request, RunResult, RunStatus};
use toolnexus_inbox::{DoorRecord, Inbox, InboxError, Parked, ParkedState, Person, Sight};

use super::record::{Said, TaskRecord, HEARTBEAT};
use crate::error::A2aError;
use crate::mapping;

/// How long after its last heartbeat a first run not in this process is taken as cut
/// short by a stop of its server: six beats missed.
const STALE: Duration = HEARTBEAT.saturating_mul(6);

/// Where a task stands.
#[derive(Debug, Clone)]
pub(crate) enum Stage {
    /// A run goes on (the first, or a resume).
    Working,
    /// Its run waits on these requests (in call order) of the inbox run `run`; `parked`
    /// are the inbox's rows of the run's requests, which say who may answer.
    Waiting {
        run: String,
        requests: Vec<Request>,
        parked: Vec<Parked>,
    },
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

/// A task as it stands, read from its record `kept` and the runs the inbox keeps for it;
/// `live` when its first run goes on in this process.
pub(crate) async fn read(
    inbox: &Inbox,
    live: bool,
    kept: &DoorRecord<TaskRecord>,
) -> Result<View, A2aError> {
    let record = &kept.data;
    let first_words = || vec![Message::user(record.prompt.clone())];
    let at = DateTime::<Utc>::from(kept.updated_at);
    let canceled = || {
        let transcript = if record.transcript.is_empty() {
            first_words()
        } else {
            record.transcript.clone()
        };
        View {
            stage: Stage::Canceled,
            transcript,
            at,
        }
    };
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
        if record.canceled {
            return Ok(canceled());
        }
        // Another server sharing the database may be running it: it touches the record
        // every heartbeat while it does. A record touched "after now" (clocks apart) is
        // fresh.
        let stale = kept.age > STALE;
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
    let latest = match inbox.follow(first).await {
        Ok(latest) => latest,
        Err(InboxError::UnknownRequest(run)) => {
            return Ok(View {
                stage: Stage::Failed(format!("the inbox has no run `{run}`")),
                transcript: record.transcript.clone(),
                at,
            })
        }
        Err(e) => return Err(e.into()),
    };
    // A task is canceled once the inbox cancelled its run. A record that says so while
    // its run still waits was cancelled by a server that did not tell the inbox: it is
    // shown waiting, as it is, so nobody takes it for over while it can be approved.
    if record.canceled && latest.run_state() != ParkedState::Waiting {
        return Ok(canceled());
    }
    let head = latest.head();
    let mut transcript = latest
        .halted
        .clone()
        .unwrap_or_else(|| record.transcript.clone());
    let stage = match latest.run_state() {
        ParkedState::Waiting => Stage::Waiting {
            run: latest.run.clone(),
            requests: latest.open(),
            parked: latest.requests.clone(),
        },
        // Done with a next run is followed past; here the run ended.
        ParkedState::Done => match &head.result {
            Some(result) => {
                transcript = result.messages.clone();
                Stage::Ended(Box::new(result.clone()))
            }
            None => Stage::Failed("the resumed run kept no result".to_owned()),
        },
        ParkedState::Failed => Stage::Failed(
            head.last_error
                .clone()
                .unwrap_or_else(|| "the run could not be resumed".to_owned()),
        ),
        _ => Stage::Working,
    };
    // The later of the run's change and the record's: what this door did to the task last
    // (a continuation kept, a resume it drove) is a change of its status too, and the
    // record's time is what listings order tasks by.
    Ok(View {
        stage,
        transcript,
        at: DateTime::<Utc>::from(head.updated_at.max(kept.updated_at)),
    })
}

/// Whom a task is shown to, and how much of it.
pub(crate) struct Shown<'a> {
    /// The caller.
    pub(crate) who: &'a Person,
    /// The inbox that says who may answer what.
    pub(crate) inbox: &'a Inbox,
    /// Whether the history shows tool calls and results.
    pub(crate) tool_calls: bool,
    /// How much of the task they may see.
    pub(crate) sight: Sight,
    /// What an ended run shows as artifacts.
    pub(crate) shaping: &'a super::shaping::Shaping,
}

/// The A2A task `id` of `record` as `view` shows it to `shown.who`, with the last
/// `history_length` messages of its history (all when `None`; none when 0). Someone who
/// sees only its question gets its state and what it waits on: no history, no artifacts,
/// no final text.
pub(crate) fn task(
    id: &str,
    record: &TaskRecord,
    view: &View,
    history_length: Option<i32>,
    shown: &Shown<'_>,
) -> Task {
    let context = record.context_id.as_str();
    let mut message = status_message(id, context, view, shown);
    let (mut history, artifacts) = match shown.sight {
        Sight::Whole => (
            conversation(id, record, view, shown.tool_calls),
            artifacts(id, view, shown.shaping),
        ),
        Sight::Question => {
            if !matches!(view.stage, Stage::Waiting { .. }) {
                message = None;
            }
            (Vec::new(), None)
        }
    };
    if let Some(n) = history_length {
        let keep = usize::try_from(n.max(0)).unwrap_or(0);
        let skip = history.len().saturating_sub(keep);
        history.drain(..skip);
    }
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

/// What an ended task produced, as the host shapes it.
fn artifacts(id: &str, view: &View, shaping: &super::shaping::Shaping) -> Option<Vec<Artifact>> {
    match &view.stage {
        Stage::Ended(result) => Some(shaping.artifacts(id, result)).filter(|a| !a.is_empty()),
        _ => None,
    }
}

/// The history: the caller's messages as they came, with their own ids, between the
/// transcript's entries they followed, and the agent's replies; tool calls and results
/// only with `tool_calls`. A record kept before the caller's messages were shows the
/// transcript's prompt instead.
fn conversation(id: &str, record: &TaskRecord, view: &View, tool_calls: bool) -> Vec<A2aMessage> {
    let context = record.context_id.as_str();
    let said = &record.said;
    let caller = |s: &Said| {
        let mut message = A2aMessage::new(Role::User, s.parts.clone());
        message.message_id = s.message_id.clone();
        message.task_id = Some(id.to_owned());
        message.context_id = Some(context.to_owned());
        message
    };
    let mut out = Vec::new();
    let mut next = said.iter().peekable();
    for (i, mut message) in mapping::rendered(&view.transcript, id, context) {
        while let Some(s) = next.next_if(|s| s.at <= i) {
            out.push(caller(s));
        }
        if message.role == Role::User && !said.is_empty() {
            // The caller's own copy of it is shown.
            continue;
        }
        if !tool_calls {
            message
                .parts
                .retain(|p| matches!(p.content, PartContent::Text(_)));
            if message.parts.is_empty() {
                continue;
            }
        }
        out.push(message);
    }
    out.extend(next.map(caller));
    out
}

/// What `shown.who` may see of `waiting`: a request they may not answer shows its prompt
/// only, not a gate's tool and arguments.
fn visible(waiting: &[Request], parked: &[Parked], shown: &Shown<'_>) -> Vec<Request> {
    waiting
        .iter()
        .map(|request| {
            let parked = parked.iter().find(|p| p.request.id == request.id);
            let may = parked.is_some_and(|p| shown.inbox.may_answer(p, Some(shown.who)));
            let mut request = parked.map_or_else(|| request.clone(), Parked::shown);
            if !may {
                request.data = None;
            }
            request
        })
        .collect()
}

/// The status message: what the task waits on (as `shown.who` may see it), its final
/// text, or why it failed.
pub(crate) fn status_message(
    id: &str,
    context: &str,
    view: &View,
    shown: &Shown<'_>,
) -> Option<A2aMessage> {
    let text = match &view.stage {
        Stage::Waiting {
            requests, parked, ..
        } => {
            let requests = visible(requests, parked, shown);
            return Some(mapping::status_message(&requests, id, context));
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
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use toolnexus_inbox::Inbox;

    use super::{conversation, read, Stage, View, STALE};
    use crate::server::record::{self, Said, TaskRecord};
    use toolnexus_inbox::Starter;

    fn ada() -> Starter {
        Starter::of(&toolnexus_inbox::Person::new("ada@example.com"))
    }

    /// A started task's view `later` after its record was last touched, by the inbox's clock.
    async fn started(later: std::time::Duration, live: bool) -> Stage {
        let start = SystemTime::now();
        let moved = Arc::new(AtomicU64::new(0));
        let clock = moved.clone();
        let inbox = Inbox::builder("sqlite::memory:")
            .clock(move || start + Duration::from_millis(clock.load(Ordering::SeqCst)))
            .open()
            .await
            .unwrap();
        let record = TaskRecord::started("c1".into(), "buy a gpu".into(), ada());
        record::save(&inbox, "t1", &record).await.unwrap();
        let later = u64::try_from(later.as_millis()).unwrap();
        moved.store(later, Ordering::SeqCst);
        let kept = record::load(&inbox, "t1").await.unwrap().unwrap();
        read(&inbox, live, &kept).await.unwrap().stage
    }

    #[tokio::test]
    async fn a_first_run_elsewhere_works_while_its_heartbeat_is_fresh() {
        let fresh = started(std::time::Duration::ZERO, false).await;
        assert!(matches!(fresh, Stage::Working), "{fresh:?}");

        let stale = started(2 * STALE, false).await;
        assert!(
            matches!(&stale, Stage::Failed(why) if why.contains("stopped")),
            "{stale:?}"
        );
        let here = started(2 * STALE, true).await;
        assert!(
            matches!(here, Stage::Working),
            "a run of this process works"
        );
    }

    #[tokio::test]
    async fn a_task_whose_run_the_inbox_lacks_has_failed() {
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let mut record = TaskRecord::started("c1".into(), "buy a gpu".into(), ada());
        record.run = Some("gone".into());
        record::save(&inbox, "t1", &record).await.unwrap();
        let kept = record::load(&inbox, "t1").await.unwrap().unwrap();
        let view = read(&inbox, false, &kept).await.unwrap();
        assert!(
            matches!(&view.stage, Stage::Failed(why) if why == "the inbox has no run `gone`"),
            "{view:?}"
        );
    }

    #[test]
    fn a_history_shows_the_callers_own_messages_where_they_came() {
        let said = |id: &str, text: &str, at: usize| {
            let mut message = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text(text)]);
            message.message_id = id.to_owned();
            Said::of(&message, at)
        };
        let mut record = TaskRecord::started("c1".into(), "buy a gpu".into(), ada());
        record.said = vec![said("m1", "buy a gpu", 0), said("m2", "approve", 3)];
        let view = View {
            stage: Stage::Working,
            transcript: vec![
                toolnexus::Message::system("Be brief."),
                toolnexus::Message::user("buy a gpu"),
                toolnexus::Message::assistant("Asking."),
                toolnexus::Message::assistant("Bought."),
            ],
            at: chrono::Utc::now(),
        };
        let history = conversation("t1", &record, &view, false);
        let shown: Vec<(&str, Option<&str>)> = history
            .iter()
            .map(|m| (m.message_id.as_str(), m.text()))
            .collect();
        assert_eq!(
            shown,
            [
                ("m1", Some("buy a gpu")),
                ("t1-2", Some("Asking.")),
                ("m2", Some("approve")),
                ("t1-3", Some("Bought.")),
            ]
        );
    }
}
