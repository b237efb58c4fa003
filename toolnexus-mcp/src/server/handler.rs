//! What the server does with each MCP request: list the toolkit's tools, run a call, and
//! carry a suspension across to the client by the best route it supports.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    ElicitResult, Implementation, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceError};
use serde_json::Value;
use toolnexus::{Answer, Asks, Refusal, Request, ToolContext, ToolOutcome, ToolResult};

use super::McpServer;
use super::state::Continuation;
use crate::ParkedCall;
use crate::elicit::{Mode, to_answer, to_elicitation};

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new(&self.inner.name, &self.inner.version);
        info
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
}

impl Client {
    fn of(context: &RequestContext<RoleServer>) -> Self {
        let multi_round_trip = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let (form, url) = match context.client_capabilities().and_then(|c| c.elicitation) {
            None => (false, false),
            // A client that declared elicitation without naming a mode predates URL mode.
            Some(e) if e.form.is_none() && e.url.is_none() => (true, false),
            Some(e) => (e.form.is_some(), e.url.is_some()),
        };
        Self {
            multi_round_trip,
            form,
            url,
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
                let result = self
                    .inner
                    .toolkit
                    .execute(&name, args.clone(), ToolContext::default())
                    .await;
                match ToolOutcome::classify(result) {
                    ToolOutcome::Pending { request, .. } => request,
                    settled => return Ok(complete(settled.into_result())),
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

    /// The agent loop's rule for an answered suspension ([`toolnexus::Toolkit::settle`]):
    /// `ok` re-runs the tool once with the answer; a refusal ends the call. An approved
    /// gate runs the tool for the first time, so the tool may then ask for itself. A tool
    /// may also ask its next question once answered: MCP carries it as the call's next
    /// round, as it does a gated tool's own request. A re-run that asks the same question
    /// again ([`same_question`]) ends the call `unresolved`, never looping.
    async fn answered(
        &self,
        name: String,
        args: Value,
        request: &Request,
        answer: Answer,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let toolkit = &self.inner.toolkit;
        // What `settle` would do, but keeping the re-run's own request rather than ending
        // the call on it.
        let rerun =
            answer.ok && answer.id == request.id && !matches!(request.asks(), Asks::Gate { .. });
        let result = if rerun {
            let ctx = ToolContext::default().with_answer(answer);
            toolkit.execute(&name, args.clone(), ctx).await
        } else {
            toolkit
                .settle(&name, args.clone(), request, answer, ToolContext::default())
                .await
        };
        match ToolResult::pending_of(&result) {
            Some(again) if same_question(&again, request) => {
                complete(ToolResult::error(format!("unresolved: {}", request.prompt)))
            }
            Some(next) => self.suspend(name, args, next, context).await,
            None => complete(result),
        }
    }
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
    let content = vec![ContentBlock::text(result.output)];
    if result.is_error {
        CallToolResult::error(content).into()
    } else {
        CallToolResult::success(content).into()
    }
}
