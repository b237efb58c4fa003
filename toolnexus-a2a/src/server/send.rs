//! `SendMessage`: a message without a `taskId` starts a task (its run goes until it ends
//! or waits for a person); one with a `taskId` answers what that task waits on and resumes
//! its run, exactly once however many answers race. It returns the task as it then stands,
//! unless the client asked for `returnImmediately`.

use std::sync::Arc;

use a2a::{A2AError, Message, Part, Role, SendMessageRequest, Task};
use serde_json::{json, Value};
use toolnexus::RunStatus;
use toolnexus_inbox::{Door, InFlightGuard, InboxError, Person, Sight, Starter};

use super::errors::{busy, terminal, to_protocol};
use super::push;
use super::record::{self, Said, TaskRecord, HEARTBEAT};
use super::shared::{Seen, Shared};
use super::view::Stage;
use crate::mapping;

/// What a `SendMessage` was asked to do, once its message is taken.
pub(crate) enum Accepted {
    /// A new task, recorded, whose first run is to go; `live` holds it in flight in this
    /// process until that run ends (or panics, or is aborted).
    Started {
        id: String,
        record: Box<TaskRecord>,
        live: InFlightGuard,
    },
    /// A continuation, recorded in the inbox, whose run `run` is to resume; its sender
    /// sees the task with `sight`.
    Answered {
        id: String,
        run: String,
        sight: Sight,
    },
}

impl Accepted {
    pub(crate) fn id(&self) -> &str {
        match self {
            Accepted::Started { id, .. } | Accepted::Answered { id, .. } => id,
        }
    }

    /// How much of the task its sender sees from now on: all of a task they started,
    /// what they could see of one they answered.
    pub(crate) fn sight(&self) -> Sight {
        match self {
            Accepted::Started { .. } => Sight::Whole,
            Accepted::Answered { sight, .. } => *sight,
        }
    }
}

/// `SendMessage`.
pub(crate) async fn send(
    shared: &Arc<Shared>,
    request: SendMessageRequest,
    who: &Person,
) -> Result<Value, A2AError> {
    let config = request.configuration.as_ref();
    let history_length = config.and_then(|c| c.history_length);
    let immediately = config.and_then(|c| c.return_immediately).unwrap_or(false);
    let push = config.and_then(|c| c.task_push_notification_config.clone());
    push::check_inline(shared, push.as_ref())?;
    let accepted = accept(shared, &request.message, who).await?;
    let id = accepted.id().to_owned();
    let sight = accepted.sight();
    // A caller who was told a task id, or who will be told of the task, gets a task.
    let may_reply = matches!(accepted, Accepted::Started { .. })
        && !immediately
        && push.is_none()
        && shared.shaping.replies.is_some();
    kept_push(shared, &id, push, who).await;
    // Spawned, so a client that hangs up does not cut the run short: what it asked for is
    // carried out and kept either way.
    let work = tokio::spawn(carry_out(shared.clone(), accepted));
    if !immediately {
        let _ = work.await;
    }
    if may_reply && let Some(reply) = replied(shared, &id).await? {
        let reply = serde_json::to_value(&reply).map_err(|e| A2AError::internal(e.to_string()))?;
        return Ok(json!({ "message": reply }));
    }
    let task = shared.task_as(&id, history_length, who, sight).await?;
    Ok(json!({ "task": to_json(&task)? }))
}

/// The message that answers the new task `id` instead of it, when its run ended without
/// waiting on anyone and the host answers such a run with a message; the task is then
/// forgotten, as its caller never learns of it.
async fn replied(shared: &Shared, id: &str) -> Result<Option<Message>, A2AError> {
    let Some(kept) = record::load(&shared.inbox, id).await.map_err(to_protocol)? else {
        return Ok(None);
    };
    let record = kept.data;
    let Some(result) = record
        .result
        .as_ref()
        .filter(|r| r.status == RunStatus::Done)
    else {
        return Ok(None);
    };
    if record.canceled || record.run.is_some() || !shared.shaping.replies_with_message(result) {
        return Ok(None);
    }
    let mut reply = Message::new(Role::Agent, vec![Part::text(result.text.clone())]);
    reply.message_id = format!("{id}-reply");
    reply.context_id = Some(record.context_id.clone());
    if let Err(e) = shared.inbox.drop_record(Door::A2A, id).await {
        // The caller gets their answer either way; the task is left listed.
        tracing::warn!(task = id, error = %e, "could not forget a task answered with a message");
    }
    Ok(Some(reply))
}

/// Keeps the push configuration a message carried for the task it started or continued.
/// The message is taken by then and its run goes on; a configuration the inbox could not
/// keep is logged, as the task's caller can set it again.
pub(crate) async fn kept_push(
    shared: &Arc<Shared>,
    id: &str,
    push: Option<a2a::TaskPushNotificationConfig>,
    who: &Person,
) {
    if let Err(e) = push::keep_inline(shared, id, push, who).await {
        tracing::warn!(task = %id, error = %e.message, "a message's push configuration was not kept");
    }
}

/// Takes `message` from `who`: records a new task as theirs, or answers the task it
/// continues as `who` (a task they may not see is not found). Every refusal comes before
/// anything runs, and leaves the task as it was; the first is a part of a media type the
/// card does not take.
pub(crate) async fn accept(
    shared: &Arc<Shared>,
    message: &Message,
    who: &Person,
) -> Result<Accepted, A2AError> {
    shared.card.takes(message)?;
    match &message.task_id {
        Some(id) => answer(shared, id, message, who).await,
        None => start(shared, message, who).await,
    }
}

/// Does what was accepted: runs a new task's first run, or resumes an answered one.
pub(crate) async fn carry_out(shared: Arc<Shared>, accepted: Accepted) {
    match accepted {
        Accepted::Started { id, record, live } => {
            first_run(&shared, &id, *record).await;
            drop(live);
        }
        Accepted::Answered { id, run, .. } => {
            resume(&shared, &run).await;
            // The record changes with the task, so listings order it by its last change.
            if let Err(e) = record::touch(&shared.inbox, &id).await {
                tracing::warn!(task = id, error = %e, "could not mark a resumed task changed");
            }
        }
    }
    shared.changed.notify_waiters();
}

/// A task as the wire has it.
pub(crate) fn to_json(task: &Task) -> Result<Value, A2AError> {
    serde_json::to_value(task).map_err(|e| A2AError::internal(e.to_string()))
}

async fn start(
    shared: &Arc<Shared>,
    message: &Message,
    who: &Person,
) -> Result<Accepted, A2AError> {
    let prompt = shared.shaping.prompt(message)?;
    let id = a2a::new_task_id();
    let context = message
        .context_id
        .clone()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(a2a::new_context_id);
    let mut record = TaskRecord::started(context, prompt, Starter::of(who));
    record.said.push(Said::of(message, 0));
    // Held before the record is kept, so no reader sees the task started and not live.
    let live = shared
        .live
        .enter(&id)
        .ok_or_else(|| A2AError::internal("a new task's id is already in use"))?;
    record::save(&shared.inbox, &id, &record)
        .await
        .map_err(to_protocol)?;
    Ok(Accepted::Started {
        id,
        record: Box::new(record),
        live,
    })
}

/// Parks a halted run of the task `record` keeps, as asked for by its starter: a rule that
/// keeps duties apart refuses them as its approver.
async fn park(
    shared: &Shared,
    run: &toolnexus::RunResult,
    record: &TaskRecord,
) -> Result<String, toolnexus_inbox::InboxError> {
    match &record.starter {
        Some(starter) => shared.inbox.park_as(run, starter.id.as_str()).await,
        None => shared.inbox.park(run).await,
    }
}

/// Runs a new task's first run and records how it ended: parked in the inbox when it
/// waits for a person, or its result.
async fn first_run(shared: &Shared, id: &str, mut record: TaskRecord) {
    let run = shared.client.run(record.prompt.clone(), &shared.tk);
    let outcome = beating(shared, id, std::future::IntoFuture::into_future(run)).await;
    match outcome {
        Ok(run) if run.status == RunStatus::Pending => match park(shared, &run, &record).await {
            Ok(parked) => {
                record.run = Some(parked);
                record.transcript = run.messages;
            }
            Err(e) => record.error = Some(format!("the run could not be kept: {e}")),
        },
        Ok(run) => record.result = Some(run),
        Err(e) => record.error = Some(e.to_string()),
    }
    // A cancel while it ran is kept.
    if let Ok(Some(now)) = record::load(&shared.inbox, id).await {
        record.canceled |= now.data.canceled;
    }
    if let Err(e) = record::save(&shared.inbox, id, &record).await {
        tracing::error!(task = id, error = %e, "could not record how a task's run ended");
    }
}

/// Drives `run` while touching task `id`'s record every [`HEARTBEAT`], so servers sharing
/// the database tell a run that goes on elsewhere from one whose server stopped.
async fn beating<T>(shared: &Shared, id: &str, run: impl std::future::Future<Output = T>) -> T {
    let mut beats = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
    tokio::pin!(run);
    loop {
        tokio::select! {
            done = &mut run => return done,
            _ = beats.tick() => {
                if let Err(e) = record::touch(&shared.inbox, id).await {
                    tracing::warn!(task = id, error = %e, "could not touch a running task");
                }
            }
        }
    }
}

/// Answers what task `id` waits on with `message`: every answer it gives, all or none.
/// The answers are recorded as `who`'s, and refused when the inbox does not let them
/// answer; a continuation taken joins the caller's messages of the task's record.
async fn answer(
    shared: &Arc<Shared>,
    id: &str,
    message: &Message,
    who: &Person,
) -> Result<Accepted, A2AError> {
    let Seen { kept, view, sight } = shared.seen(id, who).await?;
    if let Some(context) = message.context_id.as_deref().filter(|c| !c.is_empty())
        && context != kept.data.context_id
    {
        return Err(A2AError::invalid_params(format!(
            "contextId `{context}` is not the context of task `{id}`"
        )));
    }
    if view.is_terminal() {
        return Err(terminal(id));
    }
    let Stage::Waiting { run, requests, .. } = view.stage else {
        return Err(busy(id));
    };
    let answers = mapping::answers_of(message, &requests).map_err(to_protocol)?;
    match shared.inbox.answer_all(&run, answers, who).await {
        Ok(()) => {}
        Err(e) if matches!(e.cause(), InboxError::NotWaiting { .. }) => return Err(busy(id)),
        Err(e) => return Err(to_protocol(e.into())),
    }
    let mut record = kept.data;
    record.said.push(Said::of(message, view.transcript.len()));
    if let Err(e) = record::save(&shared.inbox, id, &record).await {
        // The answer is taken either way; only the history lacks the message.
        tracing::warn!(task = id, error = %e, "could not keep a continuation in the task's history");
    }
    Ok(Accepted::Answered {
        id: id.to_owned(),
        run,
        sight,
    })
}

/// Resumes the answered run `run`, or waits for whoever resumes it (another request's
/// answer, a worker) to finish.
async fn resume(shared: &Shared, run: &str) {
    match shared
        .inbox
        .resume_or_await(run, &shared.client, &shared.tk)
        .await
    {
        // Not answered yet: another answer is still to come, and its request resumes it.
        Ok(_) | Err(InboxError::NotAnswered(_)) => {}
        Err(e) => tracing::warn!(run, error = %e, "a task's resume failed"),
    }
}
