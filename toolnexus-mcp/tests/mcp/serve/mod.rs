//! Serving: an rmcp client drives `McpServer` on every route a suspension can take.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{CallToolResponse, ElicitRequestParams, ErrorCode, InputRequest};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use toolnexus::{
    Answer, Answered, BoxFuture, NativeTool, Request, ToolContext, ToolResult, Toolkit,
    auth_required, pending, pending_all, tool,
};
use toolnexus_mcp::{McpServer, McpTools, Park, ParkedCall};

use crate::shop;
use crate::support::{
    Human, Says, ask, call, client, form_and_url, legacy, modern, no_elicitation, paris, text,
};

mod elicitation;
mod listing;
mod parked;
mod rounds;

/// Signs the customer in to the shop
#[tool]
pub(crate) async fn sign_in(answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok("signed in"),
        Some(_) => ToolResult::error("not signed in"),
        None => auth_required!(url = "https://shop.example/login"),
    }
}

fn shop() -> McpServer {
    McpServer::builder(shop::toolkit())
        .name("shop")
        .build()
        .unwrap()
}

/// The message of a JSON-RPC invalid-params error, which the call must have been answered
/// with.
fn invalid_params(response: Result<CallToolResponse, ServiceError>) -> String {
    match response {
        Err(ServiceError::McpError(e)) if e.code == ErrorCode::INVALID_PARAMS => {
            e.message.into_owned()
        }
        other => panic!("expected an invalid-params error, got {other:?}"),
    }
}

/// A name.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// Asks a name under a fixed id, then the city, then greets
#[tool]
async fn greet(answer: Option<&Answer>) -> ToolResult {
    match answer {
        None => pending!(
            kind = "input",
            id = "name",
            prompt = "Your name?",
            answer = Name
        ),
        Some(a) if a.id == "name" => match a.data_as::<Name>() {
            Ok(n) => pending!(
                kind = "question",
                id = "city",
                prompt = format!("Where do you live, {}?", n.name)
            ),
            Err(e) => ToolResult::error(e.to_string()),
        },
        Some(a) => ToolResult::ok(format!("hello from {}", a.data.as_ref().unwrap()["answer"])),
    }
}

/// Asks the same question again whatever the answer, under a fresh id each time
#[tool]
async fn stubborn(name: Option<Answered<Name>>) -> ToolResult {
    let _ = name;
    pending!(kind = "input", prompt = "Your name?", answer = Name)
}

fn greeter() -> McpServer {
    let tk = Toolkit::builder()
        .tool(Greet)
        .tool(Stubborn)
        .build()
        .unwrap();
    McpServer::new(tk)
}

/// The input request of an `input_required` result: its key, and the sealed state.
fn round(response: Result<CallToolResponse, ServiceError>) -> (Vec<String>, String) {
    match response {
        Ok(CallToolResponse::InputRequired(input)) => (
            input.input_requests.unwrap().into_keys().collect(),
            input.request_state.expect("the request travels sealed"),
        ),
        other => panic!("expected an input_required round, got {other:?}"),
    }
}

/// Calls `name` again with `responses`, and the state of the round they answer if any.
async fn again(
    client: &RunningService<RoleClient, Human>,
    name: &str,
    state: Option<&str>,
    responses: Value,
) -> Result<CallToolResponse, ServiceError> {
    let mut params = call(name, json!({}));
    params.request_state = state.map(str::to_owned);
    params.input_responses = Some(serde_json::from_value(responses).unwrap());
    client.call_tool_once(params).await
}

pub(crate) fn complete(response: Result<CallToolResponse, ServiceError>) -> (bool, String) {
    match response {
        Ok(CallToolResponse::Complete(result)) => text(&result),
        other => panic!("expected a complete result, got {other:?}"),
    }
}

/// A 2026-07-28 client that called `greet` once, and the state of the round it got.
async fn greet_asked() -> (RunningService<RoleClient, Human>, String) {
    let client = client(greeter(), Human::new(form_and_url(), []), modern()).await;
    let (keys, state) = round(client.call_tool_once(call("greet", json!({}))).await);
    assert_eq!(keys, ["name"]);
    (client, state)
}

/// Parked calls in memory, answered by the test.
#[derive(Default, Clone)]
pub(crate) struct Shelf {
    pub(crate) parked: Arc<Mutex<Vec<ParkedCall>>>,
    pub(crate) answers: Arc<Mutex<Vec<(ParkedCall, Answer)>>>,
}

impl Park for Shelf {
    fn park(&self, call: ParkedCall) -> BoxFuture<'_, Result<(), String>> {
        self.parked.lock().unwrap().push(call);
        Box::pin(async { Ok(()) })
    }

    fn answer_for<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFuture<'a, Option<(Request, Answer)>> {
        let mut answers = self.answers.lock().unwrap();
        let found = answers
            .iter()
            .position(|(call, _)| call.tool == tool && &call.args == args);
        let taken = found.map(|i| answers.remove(i));
        Box::pin(async move { taken.map(|(call, answer)| (call.request, answer)) })
    }
}

/// `remove`, deleting nothing but counting its runs, gated by the toolkit.
pub(crate) fn gated_remover(runs: Arc<Mutex<Vec<Value>>>) -> Toolkit {
    gated_remover_by(runs, toolnexus::Approval::tools(["remove"]))
}

/// `remove`, recording each call it runs, behind `gate`.
pub(crate) fn gated_remover_by(runs: Arc<Mutex<Vec<Value>>>, gate: toolnexus::Approval) -> Toolkit {
    let remove = NativeTool::of(
        "remove",
        "Removes a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        move |args: Value, _| {
            runs.lock().unwrap().push(args.clone());
            async move { format!("removed {}", args["path"].as_str().unwrap_or_default()) }
        },
    );
    Toolkit::builder()
        .tool(remove)
        .approval(gate)
        .build()
        .unwrap()
}
