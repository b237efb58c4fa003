//! One MCP server tool as a toolnexus [`Tool`]: a call goes out as `tools/call`, and what
//! comes back — a result, an `input_required` round, an error or nothing — becomes a
//! [`ToolResult`].

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InputRequest,
    InputRequiredResult, InputResponses, ResourceContents, Tool as Declared,
};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Map, Value, json};
use toolnexus::{Answer, BoxFuture, Tool, ToolContext, ToolResult, ToolSource};

use super::ask::Asker;
use super::resume::Round;
use crate::elicit::{to_request, to_result};

/// How many `input_required` rounds carrying only `requestState` (a server shedding load)
/// are retried at once before the call gives up.
const STATE_ONLY_ROUNDS: usize = 10;

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
            params.input_responses = Some(responses);
            params.request_state = round.state;
        }
        if self.service.is_closed() {
            return ToolResult::error(format!(
                "MCP server `{}` is no longer running; reconnect to use `{tool}`",
                self.server
            ));
        }
        match tokio::time::timeout(self.timeout, self.rounds(tool, params)).await {
            Ok(result) => result,
            Err(_) => ToolResult::error(format!(
                "MCP server `{}` did not answer `{tool}` within {:?}",
                self.server, self.timeout
            )),
        }
    }

    /// Sends the call, retrying state-only rounds, until it completes or needs a human.
    async fn rounds(&self, tool: &str, mut params: CallToolRequestParams) -> ToolResult {
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
                _ => {
                    return ToolResult::error(format!(
                        "MCP server `{}` answered `{tool}` with a task, which toolnexus does not poll",
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
