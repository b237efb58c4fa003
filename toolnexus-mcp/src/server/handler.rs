//! What the server does with each MCP request: list the toolkit's tools, run a call, and
//! carry a suspension across to the client by the best route it supports.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ContentBlock, CustomRequest, CustomResult, ElicitRequest, ElicitRequestParams, ErrorCode,
    GetTaskParams, GetTaskResult, Implementation, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceError};
use serde_json::Value;
use toolnexus::{Answer, Refusal, Request, ToolResult};

use super::McpServer;
use super::asked::Asked;
use super::run::{Step, after_answer, first_run};
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
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        #[cfg(feature = "inbox")]
        if self.kept_route(&request.task_id) {
            let caller = self.answering_as(&context);
            let task = self.get_kept(&request.task_id, &caller).await?;
            return Ok(GetTaskResult::new(task));
        }
        self.inner
            .tasks
            .visible_to(&request.task_id, |s| self.started(s, &context))?;
        self.answer_from_park(&request.task_id).await;
        Ok(GetTaskResult::new(self.inner.tasks.get(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let id = request.task_id;
        let responses = request.input_responses;
        #[cfg(feature = "inbox")]
        if self.kept_route(&id) {
            let who = self.answerer(&context)?;
            return self.update_kept(&id, responses, &who).await;
        }
        let tasks = &self.inner.tasks;
        tasks.visible_to(&id, |s| self.started(s, &context))?;
        // A request some rule limits waits where its people answer it (the park hook):
        // the client's word does not settle it.
        let open = tasks.waiting_on(&id);
        let ruled = open
            .iter()
            .filter(|asked| responses.contains_key(&asked.id))
            .find_map(|asked| self.ruled(asked).map(|who| (asked, who)));
        if let Some((asked, who)) = ruled {
            return Err(ErrorData::invalid_params(
                format!(
                    "`{}` may be answered only by {who}, not through this MCP client",
                    asked.id
                ),
                None,
            ));
        }
        if let Some(taken) = tasks.answer(&id, responses)? {
            self.resume_task(id, taken);
        }
        Ok(())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        #[cfg(feature = "inbox")]
        if self.kept_route(&request.task_id) {
            let who = self.answerer(&context)?;
            return self.cancel_kept(&request.task_id, &who, true).await;
        }
        self.inner
            .tasks
            .visible_to(&request.task_id, |s| self.started(s, &context))?;
        self.inner.tasks.cancel(&request.task_id)?;
        Ok(())
    }

    /// rmcp hands over as custom a request whose params do not fit its method. For the
    /// methods this server serves that is the client's mistake, said as invalid params
    /// with what does not fit; any other method is not found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let why = match request.method.as_str() {
            "tools/call" => misfit::<CallToolRequestParams>(&request),
            "tasks/get" => misfit::<GetTaskParams>(&request),
            "tasks/update" => misfit::<UpdateTaskParams>(&request),
            "tasks/cancel" => misfit::<CancelTaskParams>(&request),
            _ => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    request.method,
                    None,
                ));
            }
        };
        Err(ErrorData::invalid_params(
            format!("the params of `{}` do not fit it: {why}", request.method),
            None,
        ))
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
pub(super) struct Client {
    /// Protocol 2026-07-28 or later: no server-to-client requests, suspensions go back as
    /// `input_required` results.
    pub(super) multi_round_trip: bool,
    form: bool,
    url: bool,
    /// Declared the tasks extension, for the session or for this request.
    pub(super) tasks: bool,
}

impl Client {
    pub(super) fn of(context: &RequestContext<RoleServer>) -> Self {
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

    pub(super) fn can(&self, mode: Mode) -> bool {
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
            let asked = self.reopen(&name, &args, sealed)?;
            return self.resume(name, args, asked, responses, context).await;
        }
        if self.inner.task_after.is_some()
            && Client::of(context).tasks
            && let Some(full) = self.inner.tasks.full()
        {
            return Ok(complete(ToolResult::error(full.to_string())));
        }
        // A call the inbox holds already (the same tool with the same arguments, asked
        // before and waiting for a person) goes on from where the inbox has it: neither
        // asked again nor run again.
        #[cfg(feature = "inbox")]
        let generation = match self.call_note(&name, &args).await? {
            Some(note) if !note.delivered => {
                return self
                    .judge_held(name, args, note.run, responses, context)
                    .await;
            }
            Some(note) => Some(note.generation + 1),
            None => None,
        };
        #[cfg(not(feature = "inbox"))]
        let generation: Option<u64> = None;
        if let Some(park) = &self.inner.park
            && let Some((request, answer)) = park.answer_for(&name, &args).await
        {
            // A parked request keeps no more than the request: what a tool asks through
            // the hook is answered by running it again.
            let asked = Asked {
                requests: vec![request],
                answers: vec![answer],
                kept: None,
            };
            return Ok(self.answered(name, args, asked, context).await);
        }
        // A gated tool asks before it runs, like any suspension. The id comes from the call
        // itself, so a client that calls again after a parked request was answered asks
        // with the same one.
        let call = match generation {
            // The approval of an earlier call with these arguments was used: this one is
            // asked anew, under an id of its own.
            Some(generation) => format!("mcp/{name}/{args}#{generation}"),
            None => format!("mcp/{name}/{args}"),
        };
        let asked = match self.inner.toolkit.approval_request(&name, &args, &call) {
            Some(gate) => Asked::new(vec![gate]),
            None => {
                let work = first_run(self.inner.toolkit.clone(), name.clone(), args.clone());
                match self.within(&name, &args, work, context).await {
                    Err(task) => return Ok(CallToolResponse::Task(task)),
                    Ok(Step::Done(result)) => return Ok(complete(result)),
                    Ok(Step::Ask(asked)) => asked,
                }
            }
        };
        // On 2026-07-28 a server may keep no state between rounds: a client that already
        // holds the answers to the requests this call asks sends them with the call, and
        // they are the answers, as they would be to the same requests sealed in
        // `requestState`.
        if Client::of(context).multi_round_trip && responses.is_some() {
            return self.resume(name, args, asked, responses, context).await;
        }
        Ok(self.suspend(name, args, asked, context).await)
    }

    /// Carries a call's open requests to the client by the best route it supports.
    async fn suspend(
        &self,
        name: String,
        args: Value,
        mut asked: Asked,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let client = Client::of(context);
        let open: Vec<Request> = asked.unanswered().cloned().collect();
        let Some(first) = open.first() else {
            // Every request has its answer: nothing is left to ask.
            return Box::pin(self.answered(name, args, asked, context)).await;
        };
        if self.first_ruled(&open).is_some() {
            let settled = self.settle_ruled(name, args, asked, None, context).await;
            return settled.unwrap_or_else(|e| complete(ToolResult::error(e.message.into_owned())));
        }
        let cannot = open.iter().map(Mode::of).find(|mode| !client.can(*mode));
        // A client that declared tasks waits in a task for what it cannot be asked in the
        // call, and for everything when every call is to be a task (a gate included).
        let always = self.inner.task_after.is_some_and(|after| after.is_zero());
        if client.tasks && (always || cannot.is_some()) {
            return self
                .waiting_task(name, args, asked, self.starter(context))
                .await;
        }
        if let Some(mode) = cannot {
            if let [request] = asked.requests.as_slice() {
                let cannot = format!(
                    "this MCP client does not accept {} elicitation",
                    mode.label()
                );
                return complete(self.park(name, args, request.clone(), &cannot).await);
            }
            return complete(ToolResult::error(format!(
                "{}, but this MCP client does not accept {} elicitation",
                needs(&name, first),
                mode.label()
            )));
        }
        let mut elicitations = Vec::with_capacity(open.len());
        for request in &open {
            match to_elicitation(request) {
                Ok(elicitation) => elicitations.push(elicitation),
                Err(why) => {
                    return complete(ToolResult::error(format!(
                        "{}, but {why}",
                        needs(&name, request)
                    )));
                }
            }
        }
        if client.multi_round_trip {
            return self.input_required(&name, args, &asked, &open, elicitations);
        }
        // `elicitation/create` asks one thing at a time: the requests go one after the
        // other, and a refusal of one settles the call without asking the rest.
        for (request, elicitation) in open.iter().zip(elicitations) {
            let answer = match self.elicit(context, request, elicitation).await {
                Ok(answer) => answer,
                Err(ServiceError::Timeout { .. }) => Answer::refuse(&request.id, Refusal::Expired),
                Err(e) => {
                    return complete(ToolResult::error(format!(
                        "{}, and asking the client failed: {e}",
                        needs(&name, request)
                    )));
                }
            };
            let refused = !answer.ok;
            asked.give(answer);
            if refused {
                break;
            }
        }
        Box::pin(self.answered(name, args, asked, context)).await
    }

    /// Asks the client `request` by `elicitation/create`, within the elicitation timeout;
    /// its reply as the request's answer.
    pub(super) async fn elicit(
        &self,
        context: &RequestContext<RoleServer>,
        request: &Request,
        elicitation: ElicitRequestParams,
    ) -> Result<Answer, ServiceError> {
        let timeout = Some(self.inner.elicitation_timeout);
        let reply = context
            .peer
            .create_elicitation_with_timeout(elicitation, timeout)
            .await?;
        Ok(to_answer(&request.id, reply))
    }

    /// An `input_required` result asking `open` (of `asked`, a call of `name` with `args`)
    /// as `elicitations`, keyed by the requests' ids, with the round sealed as the state
    /// the retry must carry.
    pub(super) fn input_required(
        &self,
        name: &str,
        args: Value,
        asked: &Asked,
        open: &[Request],
        elicitations: Vec<ElicitRequestParams>,
    ) -> CallToolResponse {
        let sealed = match self.inner.sealer.seal(name, asked, args) {
            Ok(sealed) => sealed,
            Err(e) => {
                return complete(ToolResult::error(format!(
                    "could not seal the state of `{name}`: {e}"
                )));
            }
        };
        let mut requests = InputRequests::new();
        for (request, elicitation) in open.iter().zip(elicitations) {
            requests.insert(
                request.id.clone(),
                InputRequest::Elicitation(ElicitRequest::new(elicitation)),
            );
        }
        InputRequiredResult::new(Some(requests), Some(sealed)).into()
    }

    /// A request the client cannot answer (`cannot` says why): parked when a hook is set,
    /// else the call ends saying what the tool needs.
    async fn park(&self, name: String, args: Value, request: Request, cannot: &str) -> ToolResult {
        let needs = needs(&name, &request);
        let Some(park) = &self.inner.park else {
            return ToolResult::error(format!("{needs}, but {cannot}"));
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

    /// The round a retried call's `requestState` carries. State this server did not seal
    /// for this tool, or a retry with other arguments than the call that asked, is refused
    /// as invalid params: the client altered what it must echo unchanged.
    fn reopen(&self, name: &str, args: &Value, sealed: &str) -> Result<Asked, ErrorData> {
        let (asked, sealed_args) = self.inner.sealer.open(name, sealed).map_err(|e| {
            ErrorData::invalid_params(
                format!("the retried call to `{name}` carries a requestState this server did not issue ({e})"),
                None,
            )
        })?;
        if sealed_args != *args {
            return Err(ErrorData::invalid_params(
                format!(
                    "the retried call to `{name}` has other arguments than the call that asked"
                ),
                None,
            ));
        }
        Ok(asked)
    }

    /// A call that asked `asked` and came back with `responses`: the response keyed by
    /// each open request's id is its answer. Once every request is answered (or one is
    /// refused) the call goes on; otherwise the requests still open are asked again, with
    /// the answers so far kept, so the client can still answer them. A response that is
    /// not an elicitation result is invalid params, never taken for an answer.
    async fn resume(
        &self,
        name: String,
        args: Value,
        mut asked: Asked,
        responses: Option<InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.first_ruled(&asked.requests).is_some() || self.held_by_inbox(&asked).await {
            return self
                .settle_ruled(name, args, asked, responses, context)
                .await;
        }
        if let Some(mut responses) = responses {
            asked.take(&mut responses)?;
        }
        if asked.answers.is_empty() || !asked.ready() {
            return Ok(self.suspend(name, args, asked, context).await);
        }
        Ok(self.answered(name, args, asked, context).await)
    }

    /// A call whose requests are answered: the tool goes on by the agent loop's rule
    /// ([`after_answer`]), and what it asks next is the call's next round.
    async fn answered(
        &self,
        name: String,
        args: Value,
        asked: Asked,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let work = after_answer(
            self.inner.toolkit.clone(),
            name.clone(),
            args.clone(),
            asked,
        );
        match self.within(&name, &args, work, context).await {
            Err(task) => CallToolResponse::Task(task),
            Ok(Step::Done(result)) => complete(result),
            Ok(Step::Ask(next)) => self.suspend(name, args, next, context).await,
        }
    }
}

impl McpServer {
    /// A call whose requests some rule limits (or the inbox holds already): never settled
    /// by the caller's own word. With an inbox, it waits there — a kept task for a client
    /// that declared tasks, else a call the inbox judges every answer of (the caller's
    /// `responses` and elicited answers included, as the identified person). Without one,
    /// it is parked at the [`Park`](crate::Park) hook when one is set, else the call ends
    /// with an error result naming who must answer; the tool does not run.
    async fn settle_ruled(
        &self,
        name: String,
        args: Value,
        asked: Asked,
        responses: Option<InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        #[cfg(feature = "inbox")]
        if self.keeps_tasks() {
            if Client::of(context).tasks && asked.answers.is_empty() && responses.is_none() {
                let started = self.waiting_task(name, args, asked, self.starter(context));
                return Ok(started.await);
            }
            return self.judge_new(name, args, asked, responses, context).await;
        }
        let _ = (responses, context);
        let open: Vec<Request> = asked.unanswered().cloned().collect();
        let Some((request, who)) = self.first_ruled(&open) else {
            return Ok(complete(ToolResult::error(format!(
                "`{name}` waits for a person, and this server keeps no inbox to wait in"
            ))));
        };
        let cannot = format!("only {who} may answer it, not this MCP client");
        let request = match open.as_slice() {
            [_] => request.clone(),
            _ => {
                return Ok(complete(ToolResult::error(format!(
                    "{}, but {cannot}",
                    needs(&name, request)
                ))));
            }
        };
        Ok(complete(self.park(name, args, request, &cannot).await))
    }

    /// Whether the inbox holds `asked`'s requests already: a round it asked, whose answers
    /// it judges.
    async fn held_by_inbox(&self, asked: &Asked) -> bool {
        #[cfg(feature = "inbox")]
        if let Some(kept) = &self.inner.kept
            && let Some(first) = asked.requests.first()
        {
            // Unreadable is held: the inbox then answers the call, or fails it.
            return !matches!(kept.inbox().get(&first.id).await, Ok(None));
        }
        let _ = asked;
        false
    }
}

/// What is wrong with a request's params for the method it names.
fn misfit<T: serde::de::DeserializeOwned>(request: &CustomRequest) -> String {
    match request.params_as::<T>() {
        Err(e) => e.to_string(),
        Ok(None) => "they are missing".to_owned(),
        // They fit on their own; what rmcp refused is elsewhere in the request.
        Ok(Some(_)) => "the request around them is malformed".to_owned(),
    }
}

/// "`tool` needs approval: Approve purchase of gpu?" — the start of every message about a
/// suspension the client could not take.
pub(super) fn needs(name: &str, request: &Request) -> String {
    let mut text = format!("`{name}` needs {}: {}", request.kind, request.prompt);
    if let Some(url) = &request.url {
        text.push_str(" (");
        text.push_str(url);
        text.push(')');
    }
    text
}

/// A finished call as MCP sees it: a tool error is an error result, never a protocol error.
pub(super) fn complete(result: ToolResult) -> CallToolResponse {
    tool_result(result).into()
}

pub(super) fn tool_result(result: ToolResult) -> CallToolResult {
    let content = vec![ContentBlock::text(result.output)];
    if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}
