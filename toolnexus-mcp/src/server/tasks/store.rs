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

use crate::elicit::to_elicitation;
use crate::server::asked::Asked;

/// How long a task stays readable by default.
pub(in crate::server) const DEFAULT_TTL: Duration = Duration::from_secs(3600);
/// How often a client is asked to poll by default.
pub(in crate::server) const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How many tasks a server holds in memory at once by default.
pub(in crate::server) const DEFAULT_MAX_TASKS: usize = 1_000;

/// The call a task runs: what a re-run after an answer needs.
#[derive(Debug, Clone)]
pub(in crate::server) struct Call {
    pub(in crate::server) tool: String,
    pub(in crate::server) args: Value,
    /// Who started it: only they (and, for a task the inbox keeps, the people its waiting
    /// requests let answer) may read, answer or cancel it.
    pub(in crate::server) starter: Starter,
}

/// Who started a task, as the server identified them (the `inbox` feature: a server without
/// it identifies no one).
#[cfg(feature = "inbox")]
pub(in crate::server) type Starter = Option<toolnexus_inbox::Starter>;
/// Who started a task: without the `inbox` feature the server identifies no one, so no
/// task names anyone.
#[cfg(not(feature = "inbox"))]
pub(in crate::server) type Starter = Option<std::convert::Infallible>;

/// Where a task's call stands.
enum Phase {
    /// Running; the handle stops it when the task is cancelled.
    Working(Option<AbortHandle>),
    /// Suspended on the requests of `asked` (the answers a `tasks/update` gave some of them
    /// kept there), each asked of the client as the elicitation at its place in `elicits`.
    InputRequired {
        asked: Box<Asked>,
        elicits: Vec<ElicitRequest>,
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

/// What a task's call came to once it stopped running: a result, or requests to ask.
pub(in crate::server) enum Settled {
    Done(CallToolResult),
    Ask(Asked),
    /// The task could not go on for a reason of the server's, not the tool's: a request
    /// MCP cannot carry, a run that died. The task fails with this JSON-RPC error.
    Broken(ErrorData),
}

/// Answers taken off a waiting task: the call to re-run, its requests and their answers.
pub(in crate::server) struct Taken {
    pub(in crate::server) call: Call,
    pub(in crate::server) asked: Asked,
}

pub(in crate::server) struct TaskStore {
    tasks: Mutex<HashMap<String, Entry>>,
    ttl: Duration,
    poll_interval: Duration,
    /// The most tasks held at once: memory a flood of calls cannot grow past.
    max: usize,
}

/// A task refused because the store holds as many as it may.
#[derive(Debug)]
pub(in crate::server) struct Full(pub(in crate::server) usize);

impl std::fmt::Display for Full {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server already holds its limit of {} tasks; call again once some have ended",
            self.0
        )
    }
}

impl TaskStore {
    pub(in crate::server) fn new(ttl: Duration, poll_interval: Duration, max: usize) -> Self {
        Self {
            tasks: Mutex::new(HashMap::new()),
            ttl,
            poll_interval,
            max,
        }
    }

    /// Whether the store holds as many tasks as it may: a call that would become a task
    /// is refused before anything runs.
    pub(in crate::server) fn full(&self) -> Option<Full> {
        (self.lock().len() >= self.max).then_some(Full(self.max))
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
    /// `CreateTaskResult` finds it. Refused when the store holds its limit.
    pub(in crate::server) fn create(&self, call: Call) -> Result<Task, Full> {
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
        let mut tasks = self.lock();
        if tasks.len() >= self.max {
            return Err(Full(self.max));
        }
        tasks.insert(id, entry);
        Ok(task)
    }

    /// Whether the caller may see task `id`: `started` says whether they started it.
    /// Anyone else is told the task does not exist, as is a caller asking for a task that
    /// does not.
    pub(in crate::server) fn visible_to(
        &self,
        id: &str,
        started: impl FnOnce(&Starter) -> bool,
    ) -> Result<(), ErrorData> {
        let tasks = self.lock();
        let entry = tasks.get(id).ok_or_else(|| unknown(id))?;
        match started(&entry.call.starter) {
            true => Ok(()),
            false => Err(unknown(id)),
        }
    }

    /// The requests task `id` waits on, while it waits.
    pub(in crate::server) fn waiting_on(&self, id: &str) -> Vec<Request> {
        match self.lock().get(id).map(|e| &e.phase) {
            Some(Phase::InputRequired { asked, .. }) => asked.unanswered().cloned().collect(),
            _ => Vec::new(),
        }
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
            Settled::Ask(asked) => {
                let elicits = asked
                    .requests
                    .iter()
                    .map(|request| {
                        to_elicitation(request)
                            .map(ElicitRequest::new)
                            .map_err(|why| {
                                format!("`{}` needs {}, but {why}", entry.call.tool, request.kind)
                            })
                    })
                    .collect::<Result<Vec<_>, _>>();
                match elicits {
                    Ok(elicits) => Phase::InputRequired {
                        asked: Box::new(asked),
                        elicits,
                    },
                    Err(why) => Phase::Failed(to_object(&ErrorData::internal_error(why, None))),
                }
            }
        };
        entry.touch(phase);
    }

    /// `tasks/get`: the task with what it waits for or ended with.
    pub(in crate::server) fn get(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        let tasks = self.lock();
        let entry = tasks.get(id).ok_or_else(|| unknown(id))?;
        let payload = match &entry.phase {
            Phase::Working(_) => TaskPayload::Working,
            Phase::InputRequired { asked, elicits } => {
                // Only what is still open: an answered request leaves the map.
                let mut input_requests = InputRequests::new();
                for (request, elicit) in asked.requests.iter().zip(elicits) {
                    if asked.unanswered().any(|r| r.id == request.id) {
                        input_requests.insert(
                            request.id.clone(),
                            InputRequest::Elicitation(elicit.clone()),
                        );
                    }
                }
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

    /// `tasks/update`: the response keyed by each open request's id answers it, once.
    /// Responses under other keys answer nothing and are ignored, as the extension says;
    /// a response for an open request that is not an elicitation result is invalid params,
    /// and the task keeps waiting as it was. The task stays `input_required` with the
    /// requests still open until every one is answered (or one is refused). `Ok(None)`
    /// when nothing is to run.
    pub(in crate::server) fn answer(
        &self,
        id: &str,
        mut responses: InputResponses,
    ) -> Result<Option<Taken>, ErrorData> {
        let mut tasks = self.lock();
        let entry = tasks.get_mut(id).ok_or_else(|| unknown(id))?;
        let Phase::InputRequired { asked, .. } = &mut entry.phase else {
            return Ok(None);
        };
        // Taken on a copy: an invalid response leaves the task as it was.
        let mut round = (**asked).clone();
        if round.take(&mut responses)? == 0 {
            return Ok(None);
        }
        let ready = round.ready();
        **asked = round;
        entry.updated_at = current_timestamp();
        Ok(if ready { take(entry) } else { None })
    }

    /// The call and the one request id of task `id` while it waits on a single request,
    /// to look for an answer given elsewhere (the park hook holds one request per call).
    pub(in crate::server) fn waiting(&self, id: &str) -> Option<(Call, String)> {
        let tasks = self.lock();
        let entry = tasks.get(id)?;
        match &entry.phase {
            Phase::InputRequired { asked, .. } => match asked.requests.as_slice() {
                [request] => Some((entry.call.clone(), request.id.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    /// An answer given elsewhere (a person at the inbox page), taken if the task still
    /// waits for the request it answers.
    pub(in crate::server) fn answered_elsewhere(&self, id: &str, answer: Answer) -> Option<Taken> {
        let mut tasks = self.lock();
        let entry = tasks.get_mut(id)?;
        let Phase::InputRequired { asked, .. } = &mut entry.phase else {
            return None;
        };
        if !asked.give(answer) {
            return None;
        }
        entry.updated_at = current_timestamp();
        if asked.ready() { take(entry) } else { None }
    }

    /// `tasks/cancel`: a running call is stopped, a waiting one never runs again; a task
    /// that already ended is left as it is. Returns the requests the task waited for, if
    /// it waited.
    pub(in crate::server) fn cancel(&self, id: &str) -> Result<Option<Vec<Request>>, ErrorData> {
        let mut tasks = self.lock();
        let entry = tasks.get_mut(id).ok_or_else(|| unknown(id))?;
        match std::mem::replace(&mut entry.phase, Phase::Cancelled) {
            Phase::Working(handle) => {
                if let Some(handle) = handle {
                    handle.abort();
                }
            }
            Phase::InputRequired { asked, .. } => {
                entry.updated_at = current_timestamp();
                return Ok(Some(asked.requests));
            }
            ended => {
                entry.phase = ended;
                return Ok(None);
            }
        }
        entry.updated_at = current_timestamp();
        Ok(None)
    }

    /// The call task `id` runs.
    pub(in crate::server) fn call_of(&self, id: &str) -> Option<Call> {
        self.lock().get(id).map(|e| e.call.clone())
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

/// Moves a waiting task whose requests are answered back to working: the one transition
/// that resumes a call, made under the store's lock so that it happens once.
fn take(entry: &mut Entry) -> Option<Taken> {
    let asked = match std::mem::replace(&mut entry.phase, Phase::Working(None)) {
        Phase::InputRequired { asked, .. } => asked,
        other => {
            entry.phase = other;
            return None;
        }
    };
    entry.updated_at = current_timestamp();
    Some(Taken {
        call: entry.call.clone(),
        asked: *asked,
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
