//! The tasks a server keeps for calls answered with a task (SEP-2663, the
//! `io.modelcontextprotocol/tasks` extension): each task's call, its status, and what it
//! waits for or ended with, held in memory and shared by every session of the server.
//!
//! The store decides every transition under one lock, so that a task is answered, run
//! and cancelled at most once however many requests race for it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, DetailedTask, ElicitRequest, InputRequest, InputRequests, InputResponses,
    JsonObject, Task, TaskPayload, TaskStatus,
};
use rmcp::task_manager::current_timestamp;
use serde_json::Value;
use tokio::task::AbortHandle;
use toolnexus::{Answer, Request};

use crate::elicit::{response_to_answer, to_elicitation};

/// How long a task stays readable by default.
pub(in crate::server) const DEFAULT_TTL: Duration = Duration::from_secs(3600);
/// How often a client is asked to poll by default.
pub(in crate::server) const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The call a task runs: what a re-run after an answer needs.
#[derive(Debug, Clone)]
pub(in crate::server) struct Call {
    pub(in crate::server) tool: String,
    pub(in crate::server) args: Value,
}

/// Where a task's call stands.
enum Phase {
    /// Running; the handle stops it when the task is cancelled.
    Working(Option<AbortHandle>),
    /// Suspended on `request`, asked of the client as the elicitation `asked`.
    InputRequired {
        request: Request,
        asked: Box<ElicitRequest>,
    },
    Completed(JsonObject),
    Failed(JsonObject),
    Cancelled,
    /// Parked in the inbox, which says from then on where it stands.
    #[cfg(feature = "inbox")]
    Kept,
}

struct Entry {
    call: Call,
    phase: Phase,
    created: Instant,
    created_at: String,
    updated_at: String,
}

impl Entry {
    fn status(&self) -> TaskStatus {
        match self.phase {
            Phase::Working(_) => TaskStatus::Working,
            Phase::InputRequired { .. } => TaskStatus::InputRequired,
            Phase::Completed(_) => TaskStatus::Completed,
            Phase::Failed(_) => TaskStatus::Failed,
            Phase::Cancelled => TaskStatus::Cancelled,
            #[cfg(feature = "inbox")]
            Phase::Kept => TaskStatus::Working,
        }
    }

    fn touch(&mut self, phase: Phase) {
        self.phase = phase;
        self.updated_at = current_timestamp();
    }
}

/// What a task's call came to once it stopped running: a result, or a request to ask.
pub(in crate::server) enum Settled {
    Done(CallToolResult),
    Ask(Request),
    /// The task could not go on for a reason of the server's, not the tool's: a request
    /// MCP cannot carry, a run that died. The task fails with this JSON-RPC error.
    Broken(ErrorData),
}

/// An answer taken off a waiting task: the call to re-run and the request it answers.
pub(in crate::server) struct Taken {
    pub(in crate::server) call: Call,
    pub(in crate::server) request: Request,
    pub(in crate::server) answer: Answer,
}

pub(in crate::server) struct TaskStore {
    tasks: Mutex<HashMap<String, Entry>>,
    ttl: Duration,
    poll_interval: Duration,
}

impl TaskStore {
    pub(in crate::server) fn new(ttl: Duration, poll_interval: Duration) -> Self {
        Self {
            tasks: Mutex::new(HashMap::new()),
            ttl,
            poll_interval,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while the lock was held leaves no entry half-written (each transition
        // is one assignment), so the map is still sound.
        let mut tasks = self
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let ttl = self.ttl;
        tasks.retain(|_, entry| {
            let keep = entry.created.elapsed() < ttl;
            if !keep && let Phase::Working(Some(handle)) = &entry.phase {
                handle.abort();
            }
            keep
        });
        tasks
    }

    /// A new task for `call`, running until [`settle`](Self::settle) says how it ended.
    /// It is readable before this returns, so a `tasks/get` right after the
    /// `CreateTaskResult` finds it.
    pub(in crate::server) fn create(&self, call: Call) -> Task {
        let id = uuid::Uuid::new_v4().to_string();
        let now = current_timestamp();
        let entry = Entry {
            call,
            phase: Phase::Working(None),
            created: Instant::now(),
            created_at: now.clone(),
            updated_at: now,
        };
        let task = self.task(&id, &entry);
        self.lock().insert(id, entry);
        task
    }

    /// Hands the running task the handle that stops it.
    pub(in crate::server) fn running(&self, id: &str, handle: AbortHandle) {
        let mut tasks = self.lock();
        match tasks.get_mut(id).map(|e| &mut e.phase) {
            Some(Phase::Working(slot)) => *slot = Some(handle),
            // Cancelled (or expired) before its run started: it must not run.
            _ => handle.abort(),
        }
    }

    /// Records how a running task's call ended. A task cancelled meanwhile stays
    /// cancelled: its result is dropped.
    pub(in crate::server) fn settle(&self, id: &str, settled: Settled) {
        let mut tasks = self.lock();
        let Some(entry) = tasks.get_mut(id) else {
            return;
        };
        if !matches!(entry.phase, Phase::Working(_)) {
            return;
        }
        let phase = match settled {
            Settled::Done(result) => Phase::Completed(to_object(&result)),
            Settled::Broken(error) => Phase::Failed(to_object(&error)),
            Settled::Ask(request) => match to_elicitation(&request) {
                Ok(params) => Phase::InputRequired {
                    request,
                    asked: Box::new(ElicitRequest::new(params)),
                },
                Err(why) => Phase::Failed(to_object(&ErrorData::internal_error(
                    format!("`{}` needs {}, but {why}", entry.call.tool, request.kind),
                    None,
                ))),
            },
        };
        entry.touch(phase);
    }

    /// `tasks/get`: the task with what it waits for or ended with.
    pub(in crate::server) fn get(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        let tasks = self.lock();
        let entry = tasks.get(id).ok_or_else(|| unknown(id))?;
        let payload = match &entry.phase {
            Phase::Working(_) => TaskPayload::Working,
            Phase::InputRequired { request, asked } => {
                let mut input_requests = InputRequests::new();
                input_requests.insert(
                    request.id.clone(),
                    InputRequest::Elicitation((**asked).clone()),
                );
                TaskPayload::InputRequired { input_requests }
            }
            Phase::Completed(result) => TaskPayload::Completed {
                result: result.clone(),
            },
            Phase::Failed(error) => TaskPayload::Failed {
                error: error.clone(),
            },
            Phase::Cancelled => TaskPayload::Cancelled,
            #[cfg(feature = "inbox")]
            Phase::Kept => TaskPayload::Working,
        };
        Ok(DetailedTask::new(self.task(id, entry), payload))
    }

    /// `tasks/update`: the response keyed by the waiting request's id answers it, once.
    /// Responses under other keys answer nothing and are ignored, as the extension says;
    /// a response for the waiting request that is not an elicitation result is invalid
    /// params, and the task keeps waiting. `Ok(None)` when nothing is to run.
    pub(in crate::server) fn answer(
        &self,
        id: &str,
        mut responses: InputResponses,
    ) -> Result<Option<Taken>, ErrorData> {
        let mut tasks = self.lock();
        let entry = tasks.get_mut(id).ok_or_else(|| unknown(id))?;
        let Phase::InputRequired { request, .. } = &entry.phase else {
            return Ok(None);
        };
        let Some(response) = responses.remove(&request.id) else {
            return Ok(None);
        };
        let answer = response_to_answer(&request.id, response)?;
        Ok(take(entry, answer))
    }

    /// The call and request id of task `id` while it waits, to look for an answer given
    /// elsewhere.
    pub(in crate::server) fn waiting(&self, id: &str) -> Option<(Call, String)> {
        let tasks = self.lock();
        let entry = tasks.get(id)?;
        match &entry.phase {
            Phase::InputRequired { request, .. } => Some((entry.call.clone(), request.id.clone())),
            _ => None,
        }
    }

    /// An answer given elsewhere (a person at the inbox page), taken if the task still
    /// waits for the request it answers.
    pub(in crate::server) fn answered_elsewhere(&self, id: &str, answer: Answer) -> Option<Taken> {
        let mut tasks = self.lock();
        let entry = tasks.get_mut(id)?;
        match &entry.phase {
            Phase::InputRequired { request, .. } if request.id == answer.id => take(entry, answer),
            _ => None,
        }
    }

    /// `tasks/cancel`: a running call is stopped, a waiting one never runs again; a task
    /// that already ended is left as it is. Returns the request the task waited for, if
    /// it waited.
    pub(in crate::server) fn cancel(&self, id: &str) -> Result<Option<Request>, ErrorData> {
        let mut tasks = self.lock();
        let entry = tasks.get_mut(id).ok_or_else(|| unknown(id))?;
        match std::mem::replace(&mut entry.phase, Phase::Cancelled) {
            Phase::Working(handle) => {
                if let Some(handle) = handle {
                    handle.abort();
                }
            }
            Phase::InputRequired { request, .. } => {
                entry.updated_at = current_timestamp();
                return Ok(Some(request));
            }
            ended => {
                entry.phase = ended;
                return Ok(None);
            }
        }
        entry.updated_at = current_timestamp();
        Ok(None)
    }

    /// The tool task `id` calls.
    pub(in crate::server) fn tool_of(&self, id: &str) -> Option<String> {
        self.lock().get(id).map(|e| e.call.tool.clone())
    }

    fn task(&self, id: &str, entry: &Entry) -> Task {
        self.describe(
            id,
            entry.status(),
            entry.created_at.clone(),
            entry.updated_at.clone(),
        )
    }

    /// A task as the client reads it, with this store's time to live and poll interval.
    pub(in crate::server) fn describe(
        &self,
        id: &str,
        status: TaskStatus,
        created_at: String,
        updated_at: String,
    ) -> Task {
        Task::new(id, status, created_at, updated_at)
            .with_ttl_ms(millis(self.ttl))
            .with_poll_interval_ms(millis(self.poll_interval))
    }

    /// How long a task stays readable.
    #[cfg(feature = "inbox")]
    pub(in crate::server) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The call of task `id` and when it was created, while it runs: what parking it
    /// needs.
    #[cfg(feature = "inbox")]
    pub(in crate::server) fn working(&self, id: &str) -> Option<(Call, String)> {
        let tasks = self.lock();
        let entry = tasks.get(id)?;
        matches!(entry.phase, Phase::Working(_))
            .then(|| (entry.call.clone(), entry.created_at.clone()))
    }

    /// Hands running task `id` over to the inbox that parked it: `false` when it no longer
    /// runs (cancelled meanwhile), and it stays as it is.
    #[cfg(feature = "inbox")]
    pub(in crate::server) fn hand_over(&self, id: &str) -> bool {
        let mut tasks = self.lock();
        match tasks.get_mut(id) {
            Some(entry) if matches!(entry.phase, Phase::Working(_)) => {
                entry.touch(Phase::Kept);
                true
            }
            _ => false,
        }
    }

    /// Whether this process holds task `id` itself (not handed over to the inbox).
    #[cfg(feature = "inbox")]
    pub(in crate::server) fn holds(&self, id: &str) -> bool {
        self.lock()
            .get(id)
            .is_some_and(|e| !matches!(e.phase, Phase::Kept))
    }
}

/// Moves a waiting task back to working with `answer`: the one transition that resumes a
/// call, made under the store's lock so that it happens once.
fn take(entry: &mut Entry, answer: Answer) -> Option<Taken> {
    let request = match std::mem::replace(&mut entry.phase, Phase::Working(None)) {
        Phase::InputRequired { request, .. } => request,
        other => {
            entry.phase = other;
            return None;
        }
    };
    entry.updated_at = current_timestamp();
    Some(Taken {
        call: entry.call.clone(),
        request,
        answer,
    })
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// The JSON object a result or error is on the wire; both always serialize to one.
pub(in crate::server) fn to_object(value: &impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

pub(in crate::server) fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no task `{id}` on this server"), None)
}
