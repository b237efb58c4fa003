//! Calls answered with a task (SEP-2663): when a call becomes one, how its run goes on
//! and is recorded, and answers a person gives at the park hook. The tasks themselves are
//! kept by `store`.

#[cfg(feature = "inbox")]
mod kept;
mod store;

use std::future::Future;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CreateTaskResult};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use toolnexus::{Request, ToolResult};

#[cfg(feature = "inbox")]
pub(super) use kept::{CALL_RECORD, Kept, failed, final_result, halted, settle};
pub(super) use store::{
    Call, DEFAULT_MAX_TASKS, DEFAULT_POLL_INTERVAL, DEFAULT_TTL, Starter, Taken, TaskStore,
};

use super::McpServer;
use super::asked::Asked;
use super::handler::{Client, complete, needs, tool_result};
use super::run::{Step, after_answer, died};
use crate::ParkedCall;
use store::Settled;

impl McpServer {
    /// Runs a call's work. For a client that declared tasks, work still running after
    /// [`task_after`](super::McpServerBuilder::task_after) becomes a task, which goes on
    /// running and keeps what it ends with for `tasks/get`; the client is handed the task.
    pub(super) async fn within(
        &self,
        name: &str,
        args: &Value,
        work: impl Future<Output = Step> + Send + 'static,
        context: &RequestContext<RoleServer>,
    ) -> Result<Step, CreateTaskResult> {
        let after = match self.inner.task_after {
            Some(after) if Client::of(context).tasks => after,
            _ => return Ok(work.await),
        };
        let mut handle = tokio::spawn(work);
        // Until the call is a task, it is the request's: a client that goes away stops it,
        // as it stops a call run in place.
        let mut guard = StopOnDrop(Some(handle.abort_handle()));
        // Zero: every call is a task, however soon it would end.
        let ended = if after.is_zero() {
            Err(())
        } else {
            tokio::time::timeout(after, &mut handle)
                .await
                .map_err(|_| ())
        };
        match ended {
            Ok(joined) => Ok(joined.unwrap_or_else(|e| Step::Done(died(name, &e)))),
            Err(_) => {
                let call = Call {
                    tool: name.to_owned(),
                    args: args.clone(),
                    starter: self.starter(context),
                };
                match self.inner.tasks.create(call) {
                    Ok(task) => {
                        guard.0 = None;
                        self.run_task(task.task_id.clone(), handle);
                        Err(CreateTaskResult::new(task))
                    }
                    // The server holds as many tasks as it may: the call goes on in the
                    // call, as for a client without tasks.
                    Err(_) => Ok(handle.await.unwrap_or_else(|e| Step::Done(died(name, &e)))),
                }
            }
        }
    }

    /// Runs an answered task's call on, by the agent loop's rule.
    pub(super) fn resume_task(&self, id: String, taken: Taken) {
        let work = after_answer(
            self.inner.toolkit.clone(),
            taken.call.tool,
            taken.call.args,
            taken.asked,
        );
        self.run_task(id, tokio::spawn(work));
    }

    /// With an inbox, a task that asks `asked`'s requests (none answered yet) is parked
    /// there and handed over to it: `true` once it is. Without one, or when a request
    /// cannot be asked over MCP or parking fails, the task waits in memory (`false`).
    async fn keep(&self, id: &str, asked: &Asked) -> bool {
        #[cfg(feature = "inbox")]
        if let Some(kept) = &self.inner.kept
            && asked.answers.is_empty()
            && asked
                .requests
                .iter()
                .all(|r| crate::elicit::to_elicitation(r).is_ok())
            && let Some((call, created_at)) = self.inner.tasks.working(id)
        {
            match kept.park(id, &call, asked, created_at).await {
                Ok(()) => {
                    if !self.inner.tasks.hand_over(id) {
                        // Cancelled while it was being parked: nothing may run.
                        if let Err(e) = self.cancel_kept(id, kept.responder(), false).await {
                            tracing::warn!(task = %id, error = %e.message, "cancelling a parked task failed");
                        }
                    }
                    return true;
                }
                Err(e) => {
                    tracing::warn!(task = %id, error = %e, "parking a task in the inbox failed")
                }
            }
        }
        #[cfg(not(feature = "inbox"))]
        let _ = (id, asked);
        false
    }

    /// With a [`Park`](crate::Park) hook, a waiting task's request is parked there too, so
    /// a person may answer it there (an inbox page) instead of the client.
    async fn park_task(&self, call: &Call, request: &Request) {
        let Some(park) = &self.inner.park else {
            return;
        };
        let parked = ParkedCall {
            tool: call.tool.clone(),
            args: call.args.clone(),
            request: request.clone(),
        };
        if let Err(e) = park.park(parked).await {
            // The task still waits for the client's answer.
            tracing::warn!(tool = %call.tool, error = %e, "parking a task's request failed");
        }
    }

    /// An answer a person gave at the park hook to a waiting task's request resumes the
    /// task, found when the client next reads it.
    pub(super) async fn answer_from_park(&self, id: &str) {
        let Some(park) = &self.inner.park else {
            return;
        };
        let Some((call, request_id)) = self.inner.tasks.waiting(id) else {
            return;
        };
        let Some((request, answer)) = park.answer_for(&call.tool, &call.args).await else {
            return;
        };
        if request.id != request_id || answer.id != request_id {
            tracing::warn!(tool = %call.tool, "the parked answer is for another request; ignored");
            return;
        }
        if let Some(taken) = self.inner.tasks.answered_elsewhere(id, answer) {
            self.resume_task(id.to_owned(), taken);
        }
    }

    /// Keeps the running `handle` of task `id`, and records how it ends.
    fn run_task(&self, id: String, handle: tokio::task::JoinHandle<Step>) {
        self.inner.tasks.running(&id, handle.abort_handle());
        let server = self.clone();
        tokio::spawn(async move {
            let settled = match handle.await {
                Ok(Step::Done(result)) => Settled::Done(tool_result(result)),
                Ok(Step::Ask(asked)) => Settled::Ask(asked),
                // Stopped by `tasks/cancel`: the task already says so.
                Err(e) if e.is_cancelled() => return,
                Err(e) => Settled::Broken(ErrorData::internal_error(
                    format!("the call to `{}` died: {e}", server.tool_of(&id)),
                    None,
                )),
            };
            match settled {
                Settled::Ask(asked) => server.wait_on(&id, asked).await,
                settled => server.inner.tasks.settle(&id, settled),
            }
        });
    }

    /// Task `id` waits on `asked`: kept by the inbox when one is set, else in memory (and
    /// at the park hook). A request some rule limits is never left for the client to
    /// answer: it waits where the people allowed answer it — the inbox, or the park hook —
    /// and when it cannot, the task ends with an error result naming who must answer, the
    /// tool not run.
    async fn wait_on(&self, id: &str, asked: Asked) {
        if self.keep(id, &asked).await {
            return;
        }
        let tasks = &self.inner.tasks;
        let Some(call) = tasks.call_of(id) else {
            return;
        };
        let single = match asked.requests.as_slice() {
            [request] => Some(request.clone()),
            _ => None,
        };
        let Some((request, who)) = self.first_ruled(&asked.requests) else {
            tasks.settle(id, Settled::Ask(asked));
            if let Some(request) = single
                && let Some((call, waiting)) = tasks.waiting(id)
                && waiting == request.id
            {
                self.park_task(&call, &request).await;
            }
            return;
        };
        let needs = needs(&call.tool, request);
        let why = match (self.keeps_tasks(), &self.inner.park, single) {
            (true, _, _) => format!(
                "{needs}; only {who} may answer it, and keeping it in the inbox for them failed"
            ),
            (false, Some(park), Some(request)) => {
                let parked = ParkedCall {
                    tool: call.tool.clone(),
                    args: call.args.clone(),
                    request,
                };
                match park.park(parked).await {
                    Ok(()) => {
                        tasks.settle(id, Settled::Ask(asked));
                        return;
                    }
                    Err(e) => {
                        format!("{needs}; only {who} may answer it, and parking it failed: {e}")
                    }
                }
            }
            _ => format!(
                "{needs}; only {who} may answer it, and this server has nowhere to keep it for them"
            ),
        };
        tasks.settle(id, Settled::Done(tool_result(ToolResult::error(why))));
    }

    /// Whether an inbox keeps this server's waiting tasks.
    pub(super) fn keeps_tasks(&self) -> bool {
        #[cfg(feature = "inbox")]
        return self.inner.kept.is_some();
        #[cfg(not(feature = "inbox"))]
        false
    }

    fn tool_of(&self, id: &str) -> String {
        self.inner
            .tasks
            .tool_of(id)
            .unwrap_or_else(|| "a tool".to_owned())
    }

    /// A task that waits on `asked`'s open requests from its start: for a client that can
    /// answer them only through a task, or one whose every call is a task.
    pub(super) async fn waiting_task(
        &self,
        name: String,
        args: Value,
        asked: Asked,
        starter: store::Starter,
    ) -> CallToolResponse {
        let tasks = &self.inner.tasks;
        let call = Call {
            tool: name,
            args,
            starter,
        };
        let task = match tasks.create(call) {
            Ok(task) => task,
            Err(full) => return complete(ToolResult::error(full.to_string())),
        };
        self.wait_on(&task.task_id, asked).await;
        match tasks.get(&task.task_id) {
            Ok(detailed) => CallToolResponse::Task(CreateTaskResult::new(detailed.task)),
            Err(e) => complete(ToolResult::error(e.message.into_owned())),
        }
    }
}

/// Stops a spawned run when the request that waits for it is dropped.
struct StopOnDrop(Option<tokio::task::AbortHandle>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.abort();
        }
    }
}
