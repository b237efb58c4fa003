//! What the server does with each MCP request: list the toolkit's tools, run a call, and
//! carry a suspension across to the client by the best route it supports.

use std::future::Future;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ContentBlock, CreateTaskResult, ElicitRequest, ElicitResult, GetTaskParams, GetTaskResult,
    Implementation, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceError};
use serde_json::Value;
use tokio::task::JoinError;
use toolnexus::{Answer, Asks, Refusal, Request, ToolContext, ToolOutcome, ToolResult, Toolkit};

use super::McpServer;
use super::state::Continuation;
use super::tasks::{Call, Settled, Taken};
use crate::ParkedCall;
use crate::elicit::{Mode, to_answer, to_elicitation};

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .build();
        let mut info = ServerConfig::new(capabilities);
        info.server_info = Implementation::new(&self.inner.name, &self.inner.version);
        info
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.answer_from_park(&request.task_id).await;
        Ok(GetTaskResult::new(self.inner.tasks.get(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let id = request.task_id;
        if let Some(taken) = self.inner.tasks.answer(&id, request.input_responses)? {
            self.resume_task(id, taken);
        }
        Ok(())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.tasks.cancel(&request.task_id)?;
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, &context).await
    }
}

/// What the client can answer, read from the current request's negotiated state.
struct Client {
    /// Protocol 2026-07-28 or later: no server-to-client requests, suspensions go back as
    /// `input_required` results.
    multi_round_trip: bool,
    form: bool,
    url: bool,
    /// Declared the tasks extension, for the session or for this request.
    tasks: bool,
}

impl Client {
    fn of(context: &RequestContext<RoleServer>) -> Self {
        let multi_round_trip = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let capabilities = context.client_capabilities();
        let tasks = capabilities
            .as_ref()
            .is_some_and(ClientCapabilities::supports_tasks);
        let (form, url) = match capabilities.and_then(|c| c.elicitation) {
            None => (false, false),
            // A client that declared elicitation without naming a mode predates URL mode.
            Some(e) if e.form.is_none() && e.url.is_none() => (true, false),
            Some(e) => (e.form.is_some(), e.url.is_some()),
        };
        Self {
            multi_round_trip,
            form,
            url,
            tasks,
        }
    }

    fn can(&self, mode: Mode) -> bool {
        match mode {
            Mode::Form => self.form,
            Mode::Url => self.url,
        }
    }
}

impl McpServer {
    async fn call(
        &self,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = params.name.to_string();
        if self.inner.task_only.contains(&name) && !Client::of(context).tasks {
            return Err(ErrorData::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            ));
        }
        let args = Value::Object(params.arguments.unwrap_or_default());
        let responses = params.input_responses;
        if let Some(sealed) = params.request_state.as_deref() {
            let request = self.reopen(&name, &args, sealed)?;
            return self.resume(name, args, request, responses, context).await;
        }
        if let Some(park) = &self.inner.park
            && let Some((request, answer)) = park.answer_for(&name, &args).await
        {
            return Ok(self.answered(name, args, &request, answer, context).await);
        }
        // A gated tool asks before it runs, like any suspension. The id comes from the call
        // itself, so a client that calls again after a parked request was answered asks
        // with the same one.
        let call = format!("mcp/{name}/{args}");
        let request = match self.inner.toolkit.approval_request(&name, &args, &call) {
            Some(gate) => gate,
            None => {
                let work = first_run(self.inner.toolkit.clone(), name.clone(), args.clone());
                match self.within(&name, &args, work, context).await {
                    Err(task) => return Ok(CallToolResponse::Task(task)),
                    Ok(Step::Done(result)) => return Ok(complete(result)),
                    Ok(Step::Ask(request)) => request,
                }
            }
        };
        // On 2026-07-28 a server may keep no state between rounds: a client that already
        // holds the answer to the request this call asks sends it with the call, and it is
        // the answer, as it would be to the same request sealed in `requestState`.
        if Client::of(context).multi_round_trip && responses.is_some() {
            return self.resume(name, args, request, responses, context).await;
        }
        Ok(self.suspend(name, args, request, context).await)
    }

    /// Carries a suspension to the client by the best route it supports.
    async fn suspend(
        &self,
        name: String,
        args: Value,
        request: Request,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let client = Client::of(context);
        let mode = Mode::of(&request);
        // A client that declared tasks waits in a task for what it cannot be asked in the
        // call, and for everything when every call is to be a task (a gate included).
        let always = self.inner.task_after.is_some_and(|after| after.is_zero());
        if client.tasks && (always || !client.can(mode)) {
            return self.waiting_task(name, args, request).await;
        }
        if !client.can(mode) {
            return complete(self.park(name, args, request, mode).await);
        }
        let elicitation = match to_elicitation(&request) {
            Ok(elicitation) => elicitation,
            Err(why) => {
                return complete(ToolResult::error(format!(
                    "{}, but {why}",
                    needs(&name, &request)
                )));
            }
        };
        if client.multi_round_trip {
            let continuation = Continuation { request, args };
            let sealed = match self.inner.sealer.seal(&name, &continuation) {
                Ok(sealed) => sealed,
                Err(e) => {
                    return complete(ToolResult::error(format!(
                        "could not seal the state of `{name}`: {e}"
                    )));
                }
            };
            let mut requests = InputRequests::new();
            requests.insert(
                continuation.request.id.clone(),
                InputRequest::Elicitation(ElicitRequest::new(elicitation)),
            );
            return InputRequiredResult::new(Some(requests), Some(sealed)).into();
        }
        let reply = context
            .peer
            .create_elicitation_with_timeout(elicitation, Some(self.inner.elicitation_timeout))
            .await;
        let answer = match reply {
            Ok(result) => to_answer(&request.id, result),
            Err(ServiceError::Timeout { .. }) => Answer::refuse(&request.id, Refusal::Expired),
            Err(e) => {
                return complete(ToolResult::error(format!(
                    "{}, and asking the client failed: {e}",
                    needs(&name, &request)
                )));
            }
        };
        Box::pin(self.answered(name, args, &request, answer, context)).await
    }

    /// A client that cannot be asked: park the request when a hook is set, else say what
    /// the tool needs.
    async fn park(&self, name: String, args: Value, request: Request, mode: Mode) -> ToolResult {
        let needs = needs(&name, &request);
        let Some(park) = &self.inner.park else {
            return ToolResult::error(format!(
                "{needs}, but this MCP client does not accept {} elicitation",
                mode.label()
            ));
        };
        let id = request.id.clone();
        let call = ParkedCall {
            tool: name.clone(),
            args,
            request,
        };
        match park.park(call).await {
            Ok(()) => ToolResult::error(format!(
                "{needs}; the request is waiting for a person as `{id}`. \
                 Call `{name}` again with the same arguments once it is answered."
            )),
            Err(e) => ToolResult::error(format!("{needs}, and parking the request failed: {e}")),
        }
    }

    /// The request a retried call's `requestState` carries. State this server did not
    /// seal for this tool, or a retry with other arguments than the call that asked, is
    /// refused as invalid params: the client altered what it must echo unchanged.
    fn reopen(&self, name: &str, args: &Value, sealed: &str) -> Result<Request, ErrorData> {
        let continuation = self.inner.sealer.open(name, sealed).map_err(|e| {
            ErrorData::invalid_params(
                format!("the retried call to `{name}` carries a requestState this server did not issue ({e})"),
                None,
            )
        })?;
        if continuation.args != *args {
            return Err(ErrorData::invalid_params(
                format!(
                    "the retried call to `{name}` has other arguments than the call that asked"
                ),
                None,
            ));
        }
        Ok(continuation.request)
    }

    /// A call that asked `request` and came back with `responses`: the response keyed by
    /// the request's id is the answer; without one the same request is asked again, so the
    /// client can still answer it. A response that is not an elicitation result is invalid
    /// params, never taken for an answer.
    async fn resume(
        &self,
        name: String,
        args: Value,
        request: Request,
        responses: Option<InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(response) = responses.and_then(|mut r| r.remove(&request.id)) else {
            return Ok(self.suspend(name, args, request, context).await);
        };
        let result = serde_json::from_value::<ElicitResult>(response).map_err(|e| {
            ErrorData::invalid_params(
                format!(
                    "the response for `{}` is not an elicitation result: {e}",
                    request.id
                ),
                None,
            )
        })?;
        let answer = to_answer(&request.id, result);
        Ok(self.answered(name, args, &request, answer, context).await)
    }

    /// A call whose `request` got `answer`: the tool goes on by the agent loop's rule
    /// ([`after_answer`]), and what it asks next is the call's next round.
    async fn answered(
        &self,
        name: String,
        args: Value,
        request: &Request,
        answer: Answer,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let work = after_answer(
            self.inner.toolkit.clone(),
            name.clone(),
            args.clone(),
            request.clone(),
            answer,
        );
        match self.within(&name, &args, work, context).await {
            Err(task) => CallToolResponse::Task(task),
            Ok(Step::Done(result)) => complete(result),
            Ok(Step::Ask(next)) => self.suspend(name, args, next, context).await,
        }
    }

    /// Runs a call's work. For a client that declared tasks, work still running after
    /// [`task_after`](super::McpServerBuilder::task_after) becomes a task, which goes on
    /// running and keeps what it ends with for `tasks/get`; the client is handed the task.
    async fn within(
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
                };
                guard.0 = None;
                let task = self.inner.tasks.create(call);
                self.run_task(task.task_id.clone(), handle);
                Err(CreateTaskResult::new(task))
            }
        }
    }

    /// Runs an answered task's call on, by the agent loop's rule.
    fn resume_task(&self, id: String, taken: Taken) {
        let work = after_answer(
            self.inner.toolkit.clone(),
            taken.call.tool,
            taken.call.args,
            taken.request,
            taken.answer,
        );
        self.run_task(id, tokio::spawn(work));
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
    async fn answer_from_park(&self, id: &str) {
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
                Ok(Step::Ask(request)) => Settled::Ask(request),
                // Stopped by `tasks/cancel`: the task already says so.
                Err(e) if e.is_cancelled() => return,
                Err(e) => Settled::Broken(ErrorData::internal_error(
                    format!("the call to `{}` died: {e}", server.tool_of(&id)),
                    None,
                )),
            };
            let asked = match &settled {
                Settled::Ask(request) => Some(request.clone()),
                _ => None,
            };
            server.inner.tasks.settle(&id, settled);
            if let Some(request) = asked
                && let Some((call, waiting)) = server.inner.tasks.waiting(&id)
                && waiting == request.id
            {
                server.park_task(&call, &request).await;
            }
        });
    }

    fn tool_of(&self, id: &str) -> String {
        self.inner
            .tasks
            .tool_of(id)
            .unwrap_or_else(|| "a tool".to_owned())
    }

    /// A task for a call that asks what this client can only answer through a task.
    async fn waiting_task(&self, name: String, args: Value, request: Request) -> CallToolResponse {
        let tasks = &self.inner.tasks;
        let call = Call { tool: name, args };
        let task = tasks.create(call.clone());
        tasks.settle(&task.task_id, Settled::Ask(request.clone()));
        if tasks.waiting(&task.task_id).is_some() {
            self.park_task(&call, &request).await;
        }
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

/// What a call's run came to: a result, or a request it waits on.
pub(super) enum Step {
    Done(ToolResult),
    Ask(Request),
}

/// A call's first run, owned so it can go on as a task.
async fn first_run(toolkit: Toolkit, name: String, args: Value) -> Step {
    let result = toolkit.execute(&name, args, ToolContext::default()).await;
    match ToolOutcome::classify(result) {
        ToolOutcome::Pending { request, .. } => Step::Ask(request),
        settled => Step::Done(settled.into_result()),
    }
}

/// The agent loop's rule for an answered suspension ([`toolnexus::Toolkit::settle`]):
/// `ok` re-runs the tool once with the answer; a refusal ends the call. An approved gate
/// runs the tool for the first time, so the tool may then ask for itself. A tool may also
/// ask its next question once answered: MCP carries it as the call's next round, as it
/// does a gated tool's own request. A re-run that asks the same question again
/// ([`same_question`]) ends the call `unresolved`, never looping.
async fn after_answer(
    toolkit: Toolkit,
    name: String,
    args: Value,
    request: Request,
    answer: Answer,
) -> Step {
    // What `settle` would do, but keeping the re-run's own request rather than ending the
    // call on it.
    let rerun =
        answer.ok && answer.id == request.id && !matches!(request.asks(), Asks::Gate { .. });
    let result = if rerun {
        let ctx = ToolContext::default().with_answer(answer);
        toolkit.execute(&name, args, ctx).await
    } else {
        toolkit
            .settle(&name, args, &request, answer, ToolContext::default())
            .await
    };
    match ToolResult::pending_of(&result) {
        Some(again) if same_question(&again, &request) => {
            Step::Done(ToolResult::error(format!("unresolved: {}", request.prompt)))
        }
        Some(next) => Step::Ask(next),
        None => Step::Done(result),
    }
}

/// The error result of a run that panicked outside the tool's own guard.
fn died(name: &str, error: &JoinError) -> ToolResult {
    ToolResult::error(format!("the call to `{name}` died: {error}"))
}

/// Whether `again` asks what `asked` did: the same request, or the same question under a
/// fresh id (a tool that leaves `id` out draws a new one on every run, so an id alone would
/// let a tool that ignores its answer ask forever).
fn same_question(again: &Request, asked: &Request) -> bool {
    again.id == asked.id
        || (again.kind == asked.kind
            && again.prompt == asked.prompt
            && again.url == asked.url
            && again.data == asked.data)
}

/// "`tool` needs approval: Approve purchase of gpu?" — the start of every message about a
/// suspension the client could not take.
fn needs(name: &str, request: &Request) -> String {
    let mut text = format!("`{name}` needs {}: {}", request.kind, request.prompt);
    if let Some(url) = &request.url {
        text.push_str(" (");
        text.push_str(url);
        text.push(')');
    }
    text
}

/// A finished call as MCP sees it: a tool error is an error result, never a protocol error.
fn complete(result: ToolResult) -> CallToolResponse {
    tool_result(result).into()
}

fn tool_result(result: ToolResult) -> CallToolResult {
    let content = vec![ContentBlock::text(result.output)];
    if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}
