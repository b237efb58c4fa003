//! One MCP server tool as a toolnexus [`Tool`]: a call goes out as `tools/call`, and what
//! comes back — a result, an `input_required` round, an error or nothing — becomes a
//! [`ToolResult`].

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    GetTaskParams, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ResourceContents, TaskPayload, Tool as Declared, UpdateTaskParams,
};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Map, Value, json};
use toolnexus::round::RoundId;
use toolnexus::{Answer, BoxFuture, Tool, ToolContext, ToolResult, ToolSource};

use super::ask::Asker;
use super::resume::Round;
use crate::elicit::{to_request, to_result};

/// How many `input_required` rounds carrying only `requestState` (a server shedding load)
/// are retried at once before the call gives up.
const STATE_ONLY_ROUNDS: usize = 10;

/// How often a task is polled when its server suggests nothing.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// How long a call given up on waits for its task's cancellation to be acknowledged.
const CANCEL_WAIT: Duration = Duration::from_secs(5);
/// The bounds put on a server's `pollIntervalMs`: no busy loop on a server that asks for
/// 0 ms, no call that sleeps past its own timeout on one that asks for an hour.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(5));

/// The connection the tools of one server share.
pub(super) struct Connection {
    service: RunningService<RoleClient, Asker>,
    server: String,
    timeout: Duration,
}

impl Connection {
    pub(super) fn new(
        service: RunningService<RoleClient, Asker>,
        server: String,
        timeout: Duration,
    ) -> Self {
        Self {
            service,
            server,
            timeout,
        }
    }

    async fn call(&self, tool: &str, args: Value, answer: Option<Answer>) -> ToolResult {
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return ToolResult::error(format!(
                    "arguments for `{tool}` must be a JSON object, not {other}"
                ));
            }
        };
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let mut task = None;
        if let Some(answer) = answer {
            let Some(round) = Round::from_id(&answer.id) else {
                return ToolResult::error(format!(
                    "the answer `{}` does not answer a request of MCP server `{}`",
                    answer.id, self.server
                ));
            };
            let mut responses = InputResponses::new();
            let response = serde_json::to_value(to_result(&answer)).unwrap_or(Value::Null);
            responses.insert(round.key, response);
            match round.task {
                Some(id) => task = Some((id, responses)),
                None => {
                    params.input_responses = Some(responses);
                    params.request_state = round.state;
                }
            }
        }
        if self.service.is_closed() {
            return ToolResult::error(format!(
                "MCP server `{}` is no longer running; reconnect to use `{tool}`",
                self.server
            ));
        }
        // The task being polled, if the call became one: given up on, it is cancelled, so
        // that nothing goes on running that no one will read.
        let polled = Mutex::new(None);
        let work = async {
            match task {
                Some((id, responses)) => self.answer_task(tool, id, responses, &polled).await,
                None => self.rounds(tool, params, &polled).await,
            }
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(result) => result,
            Err(_) => {
                let mut message = format!(
                    "MCP server `{}` did not answer `{tool}` within {:?}",
                    self.server, self.timeout
                );
                let task = polled.lock().unwrap_or_else(PoisonError::into_inner).take();
                if let Some(id) = task {
                    let cancel = self.service.cancel_task(CancelTaskParams::new(id.clone()));
                    match tokio::time::timeout(CANCEL_WAIT, cancel).await {
                        Ok(Ok(())) => message.push_str(&format!("; its task `{id}` is cancelled")),
                        _ => message.push_str(&format!("; cancelling its task `{id}` failed")),
                    }
                }
                ToolResult::error(message)
            }
        }
    }

    /// Sends the call, retrying state-only rounds, until it completes or needs a human.
    async fn rounds(
        &self,
        tool: &str,
        mut params: CallToolRequestParams,
        polled: &Polled,
    ) -> ToolResult {
        for round in 0..=STATE_ONLY_ROUNDS {
            let response = match self.service.call_tool_once(params.clone()).await {
                Ok(response) => response,
                Err(e) => {
                    return ToolResult::error(format!(
                        "MCP server `{}` failed on `{tool}`: {e}",
                        self.server
                    ));
                }
            };
            let input = match response {
                CallToolResponse::Complete(result) => return from_result(result),
                CallToolResponse::InputRequired(input) => input,
                CallToolResponse::Task(created) => {
                    let every = poll_interval(created.task.poll_interval_ms);
                    return self.poll(tool, created.task.task_id, every, polled).await;
                }
                _ => {
                    return ToolResult::error(format!(
                        "MCP server `{}` answered `{tool}` with a result toolnexus does not know",
                        self.server
                    ));
                }
            };
            match self.needs(tool, input) {
                Needs::Human(result) => return result,
                Needs::Retry(state) => {
                    params.input_responses = None;
                    params.request_state = state;
                    tokio::time::sleep(Duration::from_millis(50 << round.min(2))).await;
                }
            }
        }
        ToolResult::error(format!(
            "MCP server `{}` kept asking `{tool}` to retry ({STATE_ONLY_ROUNDS} times)",
            self.server
        ))
    }

    /// Sends the answer to the task that asked, and follows the task on.
    async fn answer_task(
        &self,
        tool: &str,
        id: String,
        responses: InputResponses,
        polled: &Polled,
    ) -> ToolResult {
        let update = UpdateTaskParams::new(id.clone(), responses);
        if let Err(e) = self.service.update_task(update).await {
            return ToolResult::error(format!(
                "MCP server `{}` refused the answer to its task `{id}` of `{tool}`: {e}",
                self.server
            ));
        }
        self.poll(tool, id, DEFAULT_POLL, polled).await
    }

    /// Polls a task of the server, every `every` or as the server says since, until it
    /// ends or waits for input, which becomes a suspension whose answer goes back to the
    /// task.
    async fn poll(
        &self,
        tool: &str,
        id: String,
        mut every: Duration,
        polled: &Polled,
    ) -> ToolResult {
        *polled.lock().unwrap_or_else(PoisonError::into_inner) = Some(id.clone());
        loop {
            let got = match self.service.get_task(GetTaskParams::new(id.clone())).await {
                Ok(got) => got.task,
                Err(e) => {
                    return ToolResult::error(format!(
                        "MCP server `{}` failed on its task `{id}` of `{tool}`: {e}",
                        self.server
                    ));
                }
            };
            if let Some(ms) = got.task.poll_interval_ms {
                every = poll_interval(Some(ms));
            }
            match got.payload {
                TaskPayload::Completed { result } => {
                    return match serde_json::from_value(Value::Object(result)) {
                        Ok(result) => from_result(result),
                        Err(e) => ToolResult::error(format!(
                            "MCP server `{}` ended its task `{id}` of `{tool}` with no tool result: {e}",
                            self.server
                        )),
                    };
                }
                TaskPayload::Failed { error } => {
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no reason given");
                    return ToolResult::error(format!(
                        "MCP server `{}` failed `{tool}`: {message}",
                        self.server
                    ));
                }
                TaskPayload::Cancelled => {
                    return ToolResult::error(format!(
                        "MCP server `{}` cancelled `{tool}`",
                        self.server
                    ));
                }
                TaskPayload::InputRequired { input_requests } => {
                    return self.task_asks(tool, id, input_requests);
                }
                // Working, and any status a later revision adds, is polled again.
                _ => tokio::time::sleep(every).await,
            }
        }
    }

    /// What a task waiting for input asks, as a suspension whose id names the task.
    fn task_asks(&self, tool: &str, id: String, mut requests: InputRequests) -> ToolResult {
        if requests.len() > 1 {
            return ToolResult::error(format!(
                "MCP server `{}` asks for {} inputs at once for `{tool}`; toolnexus answers one at a time",
                self.server,
                requests.len()
            ));
        }
        match requests.pop_first() {
            Some((key, InputRequest::Elicitation(elicit))) => {
                let round = Round::in_task(key, id).to_id();
                ToolResult::pending(to_request(round, &elicit.params))
            }
            Some(_) => ToolResult::error(format!(
                "MCP server `{}` asks for sampling or roots for `{tool}`, which toolnexus does not provide",
                self.server
            )),
            None => ToolResult::error(format!(
                "MCP server `{}` says its task `{id}` of `{tool}` waits for input, but asks for none",
                self.server
            )),
        }
    }

    /// What an `input_required` round asks for: one elicitation becomes a suspension;
    /// only state means try again.
    fn needs(&self, tool: &str, input: InputRequiredResult) -> Needs {
        let mut requests = input.input_requests.unwrap_or_default();
        if requests.is_empty() {
            return Needs::Retry(input.request_state);
        }
        if requests.len() > 1 {
            return Needs::Human(ToolResult::error(format!(
                "MCP server `{}` asks for {} inputs at once for `{tool}`; toolnexus answers one per round",
                self.server,
                requests.len()
            )));
        }
        let Some((key, request)) = requests.pop_first() else {
            return Needs::Retry(input.request_state);
        };
        match request {
            InputRequest::Elicitation(elicit) => {
                let id = Round::new(key, input.request_state).to_id();
                Needs::Human(ToolResult::pending(to_request(id, &elicit.params)))
            }
            _ => Needs::Human(ToolResult::error(format!(
                "MCP server `{}` asks for sampling or roots for `{tool}`, which toolnexus does not provide",
                self.server
            ))),
        }
    }
}

/// The interval a server suggests, kept within [`POLL_BOUNDS`].
fn poll_interval(ms: Option<u64>) -> Duration {
    ms.map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1)
}

/// The id of the task a call polls, once it is one.
type Polled = Mutex<Option<String>>;

enum Needs {
    Human(ToolResult),
    Retry(Option<String>),
}

/// The text of a finished call: text blocks as they are, other blocks named, structured
/// content as JSON when there is no text.
fn from_result(result: CallToolResult) -> ToolResult {
    let mut parts: Vec<String> = result.content.iter().map(describe).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let output = parts.join("\n");
    if result.is_error.unwrap_or(false) {
        ToolResult::error(output)
    } else {
        ToolResult::ok(output)
    }
}

fn describe(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("[image: {}]", image.mime_type),
        ContentBlock::Audio(audio) => format!("[audio: {}]", audio.mime_type),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents { uri, .. } => format!("[resource: {uri}]"),
            #[allow(unreachable_patterns)]
            _ => "[resource]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource: {}]", link.uri),
        #[allow(unreachable_patterns)]
        other => json!(other).to_string(),
    }
}

/// One tool of an MCP server.
pub(super) struct McpTool {
    name: String,
    remote: String,
    description: String,
    schema: Value,
    connection: std::sync::Arc<Connection>,
}

impl McpTool {
    pub(super) fn new(
        name: String,
        declared: &Declared,
        connection: std::sync::Arc<Connection>,
    ) -> Self {
        Self {
            name,
            remote: declared.name.to_string(),
            description: declared
                .description
                .as_deref()
                .unwrap_or_default()
                .to_owned(),
            schema: Value::Object((*declared.input_schema).clone()),
            connection,
        }
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn source(&self) -> ToolSource<'_> {
        ToolSource::Mcp {
            server: &self.connection.server,
        }
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        Box::pin(self.connection.call(&self.remote, args, ctx.answer))
    }
}
