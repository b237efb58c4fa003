//! Tasks kept by a toolnexus inbox (the `inbox` feature): a task that waits for a person
//! is parked there as a run of one tool call, so that it outlives the server, can be
//! answered on the inbox page, and is resumed exactly once by whichever server claims it.
//!
//! What the inbox holds for a task is its run (the call, the request it waits on, the
//! answer, the outcome) and a note under `mcp-task/<task id>` naming that run. A server
//! that does not hold the task in memory (it restarted, or another server parked it)
//! reads the task back from those two alone.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::ErrorData;
use rmcp::model::{
    DetailedTask, ElicitRequest, InputRequest, InputRequests, InputResponses, TaskPayload,
    TaskStatus,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::task::AbortHandle;
use toolnexus::{
    Answer, ClientError, Message, Refusal, Request, RunResult, RunStatus, ToolCall, ToolCallRecord,
    ToolOutput, ToolResult, Usage,
};
use toolnexus_inbox::{Inbox, InboxError, Parked, ParkedState};

use super::McpServer;
use super::store::{Call, to_object, unknown};
use crate::elicit::{response_to_answer, to_elicitation};
use crate::server::handler::tool_result;
use crate::server::run::{Step, after_answer};

/// Who the inbox's audit trail records as answering through `tasks/update`, by default.
pub(in crate::server) const DEFAULT_RESPONDER: &str = "mcp client";

/// The model a parked task's run names: no model took part in it.
const MODEL: &str = "mcp";

/// The inbox a server keeps its waiting tasks in, and the re-runs it drives.
pub(in crate::server) struct Kept {
    inbox: Inbox,
    responder: String,
    /// The re-runs this process drives, by task id, so `tasks/cancel` can stop one.
    running: Mutex<HashMap<String, AbortHandle>>,
}

/// What a note says of a task: the call, when it was created, the run of its first
/// question, and whether it was cancelled.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Note {
    tool: String,
    args: Value,
    created_at: String,
    /// Milliseconds since the epoch, for the task's time to live.
    created_ms: u64,
    run: String,
    #[serde(default)]
    cancelled: bool,
}

impl Kept {
    pub(in crate::server) fn new(inbox: Inbox, responder: String) -> Self {
        Self {
            inbox,
            responder,
            running: Mutex::new(HashMap::new()),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, AbortHandle>> {
        // Each change is one insert or remove: a panic elsewhere leaves the map sound.
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn key(id: &str) -> String {
        format!("mcp-task/{id}")
    }

    async fn note(&self, id: &str) -> Result<Option<Note>, ErrorData> {
        let Some(text) = self.inbox.note(&Self::key(id)).await.map_err(failed)? else {
            return Ok(None);
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| ErrorData::internal_error(format!("task `{id}` is unreadable: {e}"), None))
    }

    async fn keep(&self, id: &str, note: &Note) -> Result<(), ErrorData> {
        let text = serde_json::to_string(note)
            .map_err(|e| ErrorData::internal_error(format!("task `{id}`: {e}"), None))?;
        self.inbox
            .keep_note(&Self::key(id), &text)
            .await
            .map_err(failed)
    }

    /// Parks task `id`'s call, waiting on `request`, as a run of its own, and notes it.
    pub(in crate::server) async fn park(
        &self,
        id: &str,
        call: &Call,
        request: &Request,
        created_at: String,
    ) -> Result<(), String> {
        let halted = halted(id, call, request);
        let run = self.inbox.park(&halted).await.map_err(|e| e.to_string())?;
        let note = Note {
            tool: call.tool.clone(),
            args: call.args.clone(),
            created_at,
            created_ms: now_ms(),
            run,
            cancelled: false,
        };
        self.keep(id, &note)
            .await
            .map_err(|e| e.message.into_owned())
    }
}

impl McpServer {
    /// Whether a request about task `id` is the inbox's to answer: the inbox keeps tasks
    /// here, and this process does not hold the task itself (it handed it over, or never
    /// had it: another server parked it, or this one before it restarted).
    pub(in crate::server) fn kept_route(&self, id: &str) -> bool {
        self.inner.kept.is_some() && !self.inner.tasks.holds(id)
    }

    fn kept(&self) -> Result<&Kept, ErrorData> {
        self.inner
            .kept
            .as_ref()
            .ok_or_else(|| ErrorData::internal_error("no inbox keeps tasks here", None))
    }

    /// The task's note and the request of its run that is current now: its first run's,
    /// or the one it halted on again after an answer.
    async fn kept_task(&self, id: &str) -> Result<(Note, Parked), ErrorData> {
        let kept = self.kept()?;
        let note = kept.note(id).await?.ok_or_else(|| unknown(id))?;
        let ttl = u64::try_from(self.inner.tasks.ttl().as_millis()).unwrap_or(u64::MAX);
        if now_ms().saturating_sub(note.created_ms) >= ttl {
            return Err(unknown(id));
        }
        let mut current = note.run.clone();
        // A chain of questions is short; the bound keeps a corrupt chain from looping.
        for _ in 0..64 {
            let parked = kept
                .inbox
                .get(&current)
                .await
                .map_err(failed)?
                .ok_or_else(|| unknown(id))?;
            match &parked.next {
                Some(next) if parked.run_state == ParkedState::Done => current = next.clone(),
                _ => return Ok((note, parked)),
            }
        }
        Err(ErrorData::internal_error(
            format!("task `{id}` asks too many questions to follow"),
            None,
        ))
    }

    /// `tasks/get` of a task the inbox keeps. A request answered elsewhere (the inbox
    /// page, another server) is resumed here when no server holds it.
    pub(in crate::server) async fn get_kept(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        let (note, parked) = self.kept_task(id).await?;
        let (status, payload) = if note.cancelled {
            (TaskStatus::Cancelled, TaskPayload::Cancelled)
        } else {
            match parked.run_state {
                ParkedState::Waiting => match to_elicitation(&parked.request) {
                    Ok(params) => {
                        let mut input_requests = InputRequests::new();
                        input_requests.insert(
                            parked.request.id.clone(),
                            InputRequest::Elicitation(ElicitRequest::new(params)),
                        );
                        (
                            TaskStatus::InputRequired,
                            TaskPayload::InputRequired { input_requests },
                        )
                    }
                    Err(why) => broken(format!(
                        "`{}` needs {}, but {why}",
                        note.tool, parked.request.kind
                    )),
                },
                ParkedState::Answered => {
                    self.resume_kept(id, &parked.run);
                    (TaskStatus::Working, TaskPayload::Working)
                }
                ParkedState::Running => {
                    // A lease that lapsed is a server that died mid-run: take it over.
                    if parked
                        .lease_until
                        .is_some_and(|until| until < SystemTime::now())
                    {
                        self.resume_kept(id, &parked.run);
                    }
                    (TaskStatus::Working, TaskPayload::Working)
                }
                ParkedState::Done => {
                    let result = parked
                        .result
                        .as_ref()
                        .map_or_else(|| ToolResult::error("the call ended"), final_result);
                    (
                        TaskStatus::Completed,
                        TaskPayload::Completed {
                            result: to_object(&tool_result(result)),
                        },
                    )
                }
                ParkedState::Failed => broken(format!(
                    "the call to `{}` failed: {}",
                    note.tool,
                    parked.last_error.as_deref().unwrap_or("no reason recorded")
                )),
                // A state newer than this crate: the run is not waiting, nor over.
                _ => (TaskStatus::Working, TaskPayload::Working),
            }
        };
        let updated = rfc3339(parked.updated_at);
        let task = self
            .inner
            .tasks
            .describe(id, status, note.created_at, updated);
        Ok(DetailedTask::new(task, payload))
    }

    /// `tasks/update` of a task the inbox keeps: the response keyed by the waiting
    /// request's id is recorded as its answer — the first answer wins, in any process —
    /// and the call is resumed here. Responses under other keys answer nothing.
    pub(in crate::server) async fn update_kept(
        &self,
        id: &str,
        mut responses: InputResponses,
    ) -> Result<(), ErrorData> {
        let (note, parked) = self.kept_task(id).await?;
        if note.cancelled || parked.state != ParkedState::Waiting {
            return Ok(());
        }
        let request = &parked.request;
        let Some(response) = responses.remove(&request.id) else {
            return Ok(());
        };
        let answer = response_to_answer(&request.id, response)?;
        let kept = self.kept()?;
        match kept.inbox.answer_as(answer, kept.responder.as_str()).await {
            Ok(()) => {
                self.resume_kept(id, &parked.run);
                Ok(())
            }
            // Another answer came first: it is the one the call goes on with.
            Err(InboxError::NotWaiting { .. }) => Ok(()),
            Err(
                e @ (InboxError::InvalidAnswer { .. }
                | InboxError::NotAllowed { .. }
                | InboxError::Expired(_)),
            ) => Err(ErrorData::invalid_params(e.to_string(), None)),
            Err(e) => Err(failed(e)),
        }
    }

    /// `tasks/cancel` of a task the inbox keeps: a waiting request is answered
    /// `cancelled`, so nothing runs and the inbox page no longer offers it; a re-run this
    /// process drives is stopped. A task that already ended is left as it is.
    pub(in crate::server) async fn cancel_kept(&self, id: &str) -> Result<(), ErrorData> {
        let (mut note, parked) = self.kept_task(id).await?;
        let kept = self.kept()?;
        if note.cancelled || matches!(parked.run_state, ParkedState::Done | ParkedState::Failed) {
            return Ok(());
        }
        if parked.state == ParkedState::Waiting {
            let refusal = Answer::refuse(&parked.request.id, Refusal::Cancelled);
            match kept.inbox.answer_as(refusal, kept.responder.as_str()).await {
                Ok(()) => {
                    // The run is closed without running the call.
                    let closed = kept
                        .inbox
                        .resume_with(&parked.run, |messages, _| async move {
                            Ok(ended(messages, Step::Done(ToolResult::error("cancelled"))))
                        })
                        .await;
                    if let Err(e) = closed {
                        tracing::warn!(task = %id, error = %e, "closing a cancelled task's run failed");
                    }
                }
                // Answered meanwhile: the re-run, if it is this process's, is stopped below.
                Err(InboxError::NotWaiting { .. }) => {}
                Err(e) => return Err(failed(e)),
            }
        }
        if let Some(handle) = kept.running().remove(id) {
            handle.abort();
        }
        note.cancelled = true;
        kept.keep(id, &note).await
    }

    /// Claims the run of request `run` and re-runs task `id`'s call with its answer, in a
    /// task of its own; a run another server holds is left to it.
    fn resume_kept(&self, id: &str, run: &str) {
        let Some(kept) = &self.inner.kept else {
            return;
        };
        // A re-run this process already drives is the one: each poll need not try again.
        if kept.running().get(id).is_some_and(|h| !h.is_finished()) {
            return;
        }
        let (server, task, run) = (self.clone(), id.to_owned(), run.to_owned());
        let handle = tokio::spawn(async move {
            let Some(kept) = &server.inner.kept else {
                return;
            };
            let toolkit = server.inner.toolkit.clone();
            let resumed = kept
                .inbox
                .resume_with(&run, |messages, answers| settle(toolkit, messages, answers))
                .await;
            match resumed {
                Ok(_) | Err(InboxError::Claimed(_) | InboxError::Finished { .. }) => {}
                Err(e) => tracing::warn!(task = %task, error = %e, "resuming a kept task failed"),
            }
            kept.running().remove(&task);
        });
        kept.running().insert(id.to_owned(), handle.abort_handle());
    }
}

/// A task's run as the inbox parks it: the call, as if a model had asked for it, and the
/// placeholder of its suspension. The call's id is the task's.
fn halted(id: &str, call: &Call, request: &Request) -> RunResult {
    let asked = ToolCall {
        id: id.to_owned(),
        name: call.tool.clone(),
        args: call.args.clone(),
    };
    let messages = vec![
        Message::user(format!("MCP call of `{}`", call.tool)),
        Message::Assistant {
            content: String::new(),
            tool_calls: vec![asked.clone()],
            state: None,
        },
        Message::ToolResults {
            results: vec![output(&asked, Step::Ask(request.clone()))],
        },
    ];
    pending_run(messages, request.clone())
}

/// The re-run of a claimed task's call with its answer, by the agent loop's rule, and the
/// run it comes to.
async fn settle(
    toolkit: toolnexus::Toolkit,
    messages: Vec<Message>,
    answers: Vec<Answer>,
) -> Result<RunResult, ClientError> {
    let (call, request) = waiting_call(&messages).ok_or_else(|| {
        ClientError::InvalidTranscript("a kept task's run shows no waiting call".to_owned())
    })?;
    let answer = answers
        .into_iter()
        .find(|a| a.id == request.id)
        .ok_or_else(|| ClientError::InvalidTranscript(format!("no answer to `{}`", request.id)))?;
    let step = after_answer(toolkit, call.name, call.args, request, answer).await;
    Ok(ended(messages, step))
}

/// The call a task's run waits on and its request: the last turn's call whose placeholder
/// holds a request.
fn waiting_call(messages: &[Message]) -> Option<(ToolCall, Request)> {
    let Some(Message::ToolResults { results }) = messages.last() else {
        return None;
    };
    let waiting = results.iter().find(|r| r.pending.is_some())?;
    let request = waiting.pending.clone()?;
    let call = messages.iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } => {
            tool_calls.iter().find(|c| c.id == waiting.call_id).cloned()
        }
        _ => None,
    })?;
    Some((call, request))
}

/// The run once the call went on: its placeholder replaced by the result, or by the next
/// question's placeholder.
fn ended(mut messages: Vec<Message>, step: Step) -> RunResult {
    let call = waiting_call(&messages).map(|(call, _)| call);
    let Some(call) = call else {
        return done_run(messages, None, ToolResult::error("the call is gone"));
    };
    messages.pop();
    match step {
        Step::Done(result) => {
            messages.push(Message::ToolResults {
                results: vec![output(&call, Step::Done(result.clone()))],
            });
            done_run(messages, Some(&call), result)
        }
        Step::Ask(next) => {
            messages.push(Message::ToolResults {
                results: vec![output(&call, Step::Ask(next.clone()))],
            });
            pending_run(messages, next)
        }
    }
}

fn output(call: &ToolCall, step: Step) -> ToolOutput {
    let (text, is_error, pending) = match step {
        Step::Done(result) => (result.output, result.is_error, None),
        Step::Ask(request) => (request.prompt.clone(), true, Some(request)),
    };
    ToolOutput {
        call_id: call.id.clone(),
        name: call.name.clone(),
        output: text,
        is_error,
        pending,
        approval: None,
        trace: None,
        call_digest: Some(toolnexus::call_digest(&call.name, &call.args)),
    }
}

fn pending_run(messages: Vec<Message>, request: Request) -> RunResult {
    RunResult {
        status: RunStatus::Pending,
        text: request.prompt.clone(),
        tool_calls: Vec::new(),
        pending: Some(request.clone()),
        waiting: vec![request],
        limit: None,
        turns: 0,
        usage: Usage::default(),
        messages,
        model: MODEL.to_owned(),
    }
}

fn done_run(messages: Vec<Message>, call: Option<&ToolCall>, result: ToolResult) -> RunResult {
    let tool_calls = call
        .map(|call| ToolCallRecord {
            id: call.id.clone(),
            name: call.name.clone(),
            args: call.args.clone(),
            proposed_args: None,
            output: result.output.clone(),
            is_error: result.is_error,
            metadata: None,
        })
        .into_iter()
        .collect();
    RunResult {
        status: RunStatus::Done,
        text: result.output,
        tool_calls,
        pending: None,
        waiting: Vec::new(),
        limit: None,
        turns: 0,
        usage: Usage::default(),
        messages,
        model: MODEL.to_owned(),
    }
}

/// The call's result, as the resumed run recorded it.
fn final_result(run: &RunResult) -> ToolResult {
    match run.tool_calls.last() {
        Some(call) if call.is_error => ToolResult::error(call.output.clone()),
        Some(call) => ToolResult::ok(call.output.clone()),
        None => ToolResult::error(run.text.clone()),
    }
}

fn broken(message: String) -> (TaskStatus, TaskPayload) {
    (
        TaskStatus::Failed,
        TaskPayload::Failed {
            error: to_object(&ErrorData::internal_error(message, None)),
        },
    )
}

fn failed(e: InboxError) -> ErrorData {
    ErrorData::internal_error(format!("the task inbox failed: {e}"), None)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A time as the tasks' timestamps are written (`current_timestamp`'s RFC 3339).
fn rfc3339(at: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(at).to_rfc3339()
}
