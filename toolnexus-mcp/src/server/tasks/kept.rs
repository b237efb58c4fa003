//! Tasks kept by a toolnexus inbox (the `inbox` feature): a task that waits for a person
//! is parked there as a run of one tool call, so that it outlives the server, can be
//! answered on the inbox page, and is resumed exactly once by whichever server claims it.
//!
//! What the inbox holds for a task is its run (the call, the request it waits on, the
//! answer, the outcome) and the MCP door's record of the task naming that run. A server
//! that does not hold the task in memory (it restarted, or another server parked it)
//! reads the task back from those two alone. The inbox owns the wait: it follows the run to
//! the one it became, takes a batch of answers all or none, and resumes the run once,
//! here or wherever it is claimed.

use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::ErrorData;
use rmcp::model::{
    DetailedTask, ElicitRequest, InputRequest, InputRequests, InputResponses, TaskPayload,
    TaskStatus,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::task::AbortHandle;
use toolnexus::halted::HaltedTurn;
use toolnexus::{
    Answer, ClientError, Message, Request, RunResult, ToolCall, ToolCallRecord, ToolOutcome,
    ToolOutput, ToolResult,
};
use toolnexus_inbox::{
    Cancelled, Door, InFlight, Inbox, InboxError, Latest, ParkedState, Person, Sight, Starter,
};

use rmcp::service::{RequestContext, RoleServer};

use super::McpServer;
use super::store::{Call, to_object, unknown};
use crate::elicit::{response_to_answer, to_elicitation};
use crate::server::asked::Asked;
use crate::server::handler::tool_result;
use crate::server::run::{Step, after_answer};

/// The prefix of the door records that name calls rather than tasks: never a task's id.
pub(in crate::server) const CALL_RECORD: &str = "call:";

/// The model a parked task's run names: no model took part in it.
const MODEL: &str = "mcp";

/// The inbox a server keeps its waiting tasks in, and the re-runs it drives.
pub(in crate::server) struct Kept {
    inbox: Inbox,
    responder: Person,
    /// The re-runs this process drives or awaits, by task id, each with the handle that
    /// stops it, so `tasks/cancel` can stop one and a poll does not start a second.
    running: InFlight<AbortHandle>,
}

/// What the door's record says of a task: the call, when it was created, the run of its
/// first question, and whether it was cancelled. Its JSON is what notes of earlier
/// versions held, which the inbox moved into these records as they were.
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
    /// Who started the task: they see all of it; the people its waiting requests let
    /// answer see its question; anyone else is told it does not exist. A note of an
    /// earlier version names no one, and only those who may answer it see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    starter: Option<Starter>,
}

impl Kept {
    pub(in crate::server) fn new(inbox: Inbox, responder: Person) -> Self {
        Self {
            inbox,
            responder,
            running: InFlight::new(),
        }
    }

    /// Who answers for a caller no sign-in told apart.
    pub(in crate::server) fn responder(&self) -> &Person {
        &self.responder
    }

    /// The inbox the tasks are kept in.
    pub(in crate::server) fn inbox(&self) -> &Inbox {
        &self.inbox
    }

    async fn note(&self, id: &str) -> Result<Option<Note>, ErrorData> {
        let kept = self
            .inbox
            .record::<Note>(Door::MCP, id)
            .await
            .map_err(failed)?;
        Ok(kept.map(|record| record.data))
    }

    async fn keep(&self, id: &str, note: &Note) -> Result<(), ErrorData> {
        self.inbox
            .keep_record(Door::MCP, id, note)
            .await
            .map_err(failed)
    }

    /// Parks task `id`'s call, waiting on `asked`, as a run of its own, and notes it.
    pub(in crate::server) async fn park(
        &self,
        id: &str,
        call: &Call,
        asked: &Asked,
        created_at: String,
    ) -> Result<(), String> {
        let halted = halted(id, call, asked);
        let run = self.inbox.park(&halted).await.map_err(|e| e.to_string())?;
        let note = Note {
            tool: call.tool.clone(),
            args: call.args.clone(),
            created_at,
            created_ms: now_ms(),
            run,
            cancelled: false,
            starter: call.starter.clone(),
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

    /// Who answers a kept task through this request: the person the identify hook found
    /// for the HTTP request; over stdio, or with no hook, the configured responder. An HTTP
    /// request the hook knows no one for answers nothing (invalid params), since the
    /// responder stands only for a client no sign-in could tell apart.
    pub(in crate::server) fn answerer(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Person, ErrorData> {
        let http = context.extensions.get::<http::request::Parts>().is_some();
        match self.identified(context) {
            Some(who) => Ok(who),
            None if self.inner.admission.identifies() && http => Err(ErrorData::invalid_params(
                "answering a task needs a signed-in person: the request identifies no one",
                None,
            )),
            None => Ok(self.kept()?.responder.clone()),
        }
    }

    /// How much of task `id` `caller` may see ([`Inbox::sight`], the one rule of every
    /// door); anyone who may see none of it is told it does not exist, as for a task that
    /// does not.
    fn sight(
        &self,
        id: &str,
        note: &Note,
        latest: &Latest,
        caller: &Person,
    ) -> Result<Sight, ErrorData> {
        let inbox = &self.kept()?.inbox;
        inbox
            .sight(note.starter.as_ref(), &latest.requests, caller)
            .ok_or_else(|| unknown(id))
    }

    fn kept(&self) -> Result<&Kept, ErrorData> {
        self.inner
            .kept
            .as_ref()
            .ok_or_else(|| ErrorData::internal_error("no inbox keeps tasks here", None))
    }

    /// The task's note and the run it stands at now: its first run, or the one it halted
    /// on again after an answer.
    async fn kept_task(&self, id: &str) -> Result<(Note, Latest), ErrorData> {
        if id.starts_with(CALL_RECORD) {
            return Err(unknown(id));
        }
        let kept = self.kept()?;
        let note = kept.note(id).await?.ok_or_else(|| unknown(id))?;
        let ttl = u64::try_from(self.inner.tasks.ttl().as_millis()).unwrap_or(u64::MAX);
        if now_ms().saturating_sub(note.created_ms) >= ttl {
            return Err(unknown(id));
        }
        match kept.inbox.follow(&note.run).await {
            Ok(latest) => Ok((note, latest)),
            Err(InboxError::UnknownRequest(_)) => Err(unknown(id)),
            Err(e) => Err(failed(e)),
        }
    }

    /// `tasks/get` of a task the inbox keeps. A request answered elsewhere (the inbox
    /// page, another server) is resumed here when no server holds it.
    pub(in crate::server) async fn get_kept(
        &self,
        id: &str,
        caller: &Person,
    ) -> Result<DetailedTask, ErrorData> {
        let (note, latest) = self.kept_task(id).await?;
        if self.sight(id, &note, &latest, caller)? == Sight::Question {
            // The question, and nothing of the call's result.
            let (status, payload) = asking(&note, &latest);
            let task = self.inner.tasks.describe(
                id,
                status,
                note.created_at,
                rfc3339(latest.head().updated_at),
            );
            return Ok(DetailedTask::new(task, payload));
        }
        let parked = latest.head();
        let (status, payload) = if note.cancelled {
            (TaskStatus::Cancelled, TaskPayload::Cancelled)
        } else {
            match latest.run_state() {
                ParkedState::Waiting => asking(&note, &latest),
                // Answered, or being resumed: resumed here unless this process already
                // drives it; the inbox waits for whoever holds it, and takes it over when
                // their lease lapses (a server that died mid-run).
                ParkedState::Answered | ParkedState::Running => {
                    self.resume_kept(id, &latest.run);
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

    /// `tasks/update` of a task the inbox keeps: the responses keyed by the ids of the
    /// requests the run waits on are recorded as their answers, all or none — the first
    /// answer wins, in any process — and the call is resumed here. Responses under other
    /// keys answer nothing. An answer the inbox refuses (a form it does not fit, a
    /// responder it does not allow, a request past its deadline) is invalid params naming
    /// it, and nothing is recorded. `who` is the person the inbox records as answering.
    pub(in crate::server) async fn update_kept(
        &self,
        id: &str,
        mut responses: InputResponses,
        who: &Person,
    ) -> Result<(), ErrorData> {
        let (note, latest) = self.kept_task(id).await?;
        self.sight(id, &note, &latest, who)?;
        if note.cancelled || latest.run_state() != ParkedState::Waiting {
            return Ok(());
        }
        let mut answers = Vec::new();
        for request in latest.open() {
            if let Some(response) = responses.remove(&request.id) {
                answers.push(response_to_answer(&request.id, response)?);
            }
        }
        if answers.is_empty() {
            return Ok(());
        }
        let kept = self.kept()?;
        let Err(e) = kept.inbox.answer_all(&latest.run, answers, who).await else {
            self.resume_kept(id, &latest.run);
            return Ok(());
        };
        match e.cause() {
            // Another answer came first: it is the one the call goes on with.
            InboxError::NotWaiting { .. } => Ok(()),
            InboxError::InvalidAnswer { .. }
            | InboxError::NotAllowed { .. }
            | InboxError::AlreadyCounted { .. }
            | InboxError::Expired(_) => Err(ErrorData::invalid_params(e.to_string(), None)),
            _ => Err(failed(e)),
        }
    }

    /// `tasks/cancel` of a task the inbox keeps, by its starter or someone its waiting
    /// request names (anyone else is told it does not exist; `checked` is false only for
    /// the server's own cancel). The inbox records the cancel first ([`Inbox::cancel`]:
    /// every waiting request refused as cancelled, as `who`, in its audit trail), and only
    /// then does the task say `cancelled`; a task whose call is no longer waiting —
    /// answered, running, ended — is not cancelled, and the error says so. Cancelling a
    /// cancelled task changes nothing.
    pub(in crate::server) async fn cancel_kept(
        &self,
        id: &str,
        who: &Person,
        checked: bool,
    ) -> Result<(), ErrorData> {
        let (note, latest) = self.kept_task(id).await?;
        if checked {
            self.sight(id, &note, &latest, who)?;
        }
        self.cancel_run(id, note, &latest, who).await
    }

    async fn cancel_run(
        &self,
        id: &str,
        mut note: Note,
        latest: &Latest,
        who: &Person,
    ) -> Result<(), ErrorData> {
        if note.cancelled {
            return Ok(());
        }
        let kept = self.kept()?;
        match kept.inbox.cancel(&latest.run, who.clone()).await {
            Ok(Cancelled::Now { .. }) => {}
            Ok(Cancelled::TooLate(state)) => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "task `{id}` cannot be cancelled: its call of `{}` is {} already",
                        note.tool,
                        state.as_str()
                    ),
                    None,
                ));
            }
            Ok(_) => {
                return Err(ErrorData::internal_error(
                    format!("the inbox did not say whether task `{id}` is cancelled"),
                    None,
                ));
            }
            Err(InboxError::UnknownRequest(_)) => return Err(unknown(id)),
            Err(e) => return Err(failed(e)),
        }
        if let Some(handle) = kept.running.detach(id) {
            handle.abort();
        }
        note.cancelled = true;
        kept.keep(id, &note).await
    }

    /// Resumes run `run` of task `id` in a task of its own: claimed here, its call re-run
    /// with its answer, or awaited while another server holds it (and taken over if that
    /// server's lease lapses). Nothing starts when this process already drives it.
    fn resume_kept(&self, id: &str, run: &str) {
        let Some(kept) = &self.inner.kept else {
            return;
        };
        let Some(in_flight) = kept.running.enter(id) else {
            return;
        };
        let (server, task, run) = (self.clone(), id.to_owned(), run.to_owned());
        let handle = tokio::spawn(async move {
            // Held until the re-run ends, or is aborted by `tasks/cancel`.
            let _in_flight = in_flight;
            let Some(kept) = &server.inner.kept else {
                return;
            };
            let toolkit = server.inner.toolkit.clone();
            let resumed = kept
                .inbox
                .resume_with_or_await(&run, |messages, answers| settle(toolkit, messages, answers))
                .await;
            match resumed {
                // Not every request of the run is answered yet: the last answer resumes it.
                Ok(_) | Err(InboxError::NotAnswered(_)) => {}
                Err(e) => tracing::warn!(task = %task, error = %e, "resuming a kept task failed"),
            }
        });
        kept.running.attach(id, handle.abort_handle());
    }
}

/// What a waiting task asks: an elicitation for each request its run waits on, keyed by the
/// request's id; a task that asks what MCP cannot carry fails saying so.
fn asking(note: &Note, latest: &Latest) -> (TaskStatus, TaskPayload) {
    let mut input_requests = InputRequests::new();
    for request in latest.open() {
        match to_elicitation(&request) {
            Ok(params) => {
                input_requests.insert(
                    request.id.clone(),
                    InputRequest::Elicitation(ElicitRequest::new(params)),
                );
            }
            Err(why) => {
                return broken(format!("`{}` needs {}, but {why}", note.tool, request.kind));
            }
        }
    }
    (
        TaskStatus::InputRequired,
        TaskPayload::InputRequired { input_requests },
    )
}

/// A task's run as the inbox parks it: the call, as if a model had asked for it, and the
/// placeholder of its suspension on `asked`'s requests, keeping what the suspension kept
/// (a sub-agent's halted run) where a claimed task's re-run finds it, in the inbox's
/// store and never in what a task shows. The call's id is the task's.
pub(in crate::server) fn halted(id: &str, call: &Call, asked: &Asked) -> RunResult {
    let requests = &asked.requests;
    let call_of = ToolCall {
        id: id.to_owned(),
        name: call.tool.clone(),
        args: call.args.clone(),
    };
    let mut messages = vec![
        Message::user(format!("MCP call of `{}`", call.tool)),
        Message::Assistant {
            content: String::new(),
            tool_calls: vec![call_of.clone()],
            state: None,
        },
    ];
    // A call that asks nothing does not wait: without a placeholder, the inbox refuses to
    // park it.
    if let Some(mut placeholder) = ToolOutput::suspended(&call_of, requests.to_vec()) {
        placeholder.resume = asked.kept.clone().map(Box::new);
        messages.push(Message::ToolResults {
            results: vec![placeholder],
        });
    }
    RunResult::halted(messages, requests.to_vec(), MODEL)
}

/// The re-run of a claimed task's call with its answer, by the agent loop's rule, and the
/// run it comes to.
pub(in crate::server) async fn settle(
    toolkit: toolnexus::Toolkit,
    messages: Vec<Message>,
    answers: Vec<Answer>,
) -> Result<RunResult, ClientError> {
    // A task's run has one call: the one its halted turn waits on.
    let (call, requests, kept) = {
        let turn = HaltedTurn::of(&messages)?;
        let asked = turn.waiting_calls().next().ok_or_else(|| {
            ClientError::InvalidTranscript("a kept task's run shows no waiting call".to_owned())
        })?;
        let requests: Vec<Request> = asked.placeholder.requests().cloned().collect();
        let kept = asked.placeholder.resume.as_deref().cloned();
        (asked.call.clone(), requests, kept)
    };
    let answers: Vec<Answer> = answers
        .into_iter()
        .filter(|a| requests.iter().any(|r| r.id == a.id))
        .collect();
    if answers.is_empty() {
        let first = requests.first().map_or("", |r| r.id.as_str());
        return Err(ClientError::InvalidTranscript(format!(
            "no answer to `{first}`"
        )));
    }
    let (name, args) = (call.name.clone(), call.args.clone());
    let asked = Asked {
        requests,
        answers,
        kept,
    };
    let step = after_answer(toolkit, name, args, asked).await;
    Ok(ended(messages, &call, step))
}

/// The run once `call` went on: its placeholder replaced by the result, or by the next
/// question's placeholder.
fn ended(mut messages: Vec<Message>, call: &ToolCall, step: Step) -> RunResult {
    messages.pop();
    match step {
        Step::Done(result) => {
            let outcome = ToolOutcome::classify(result);
            messages.push(Message::ToolResults {
                results: vec![ToolOutput::settled(call, &outcome)],
            });
            done_run(messages, call, outcome.into_result())
        }
        Step::Ask(next) => {
            // The next round keeps what its suspension kept, as the first round did.
            if let Some(mut placeholder) = ToolOutput::suspended(call, next.requests.clone()) {
                placeholder.resume = next.kept.map(Box::new);
                messages.push(Message::ToolResults {
                    results: vec![placeholder],
                });
            }
            RunResult::halted(messages, next.requests, MODEL)
        }
    }
}

/// The run once its call ended with `result`: a run of no model, whose answer is the
/// call's result.
fn done_run(messages: Vec<Message>, call: &ToolCall, result: ToolResult) -> RunResult {
    let record = ToolCallRecord {
        id: call.id.clone(),
        name: call.name.clone(),
        args: call.args.clone(),
        proposed_args: None,
        output: result.output.clone(),
        is_error: result.is_error,
        metadata: None,
    };
    RunResult {
        text: result.output,
        tool_calls: vec![record],
        ..RunResult::finished(messages, MODEL)
    }
}

/// The call's result, as the resumed run recorded it.
pub(in crate::server) fn final_result(run: &RunResult) -> ToolResult {
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

pub(in crate::server) fn failed(e: InboxError) -> ErrorData {
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
