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

#[tokio::test]
async fn lists_the_toolkits_declarations() {
    let human = Human::new(form_and_url(), []);
    let client = client(shop(), human, legacy()).await;
    let tools = client.list_all_tools().await.unwrap();
    let tk = shop::toolkit();
    assert_eq!(tools.len(), tk.len());
    for (listed, ours) in tools.iter().zip(tk.declarations()) {
        assert_eq!(listed.name, ours.name);
        assert_eq!(listed.description.as_deref(), Some(ours.description));
        assert_eq!(
            &Value::Object((*listed.input_schema).clone()),
            ours.input_schema
        );
    }
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "shop");
}

/// Tools named as no provider accepts, with a raw schema: what a model would see of them
/// is what an MCP client sees and calls.
fn spaced_names() -> Toolkit {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args",
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"]
    });
    let weather = NativeTool::of(
        "get weather",
        "Current weather",
        schema.clone(),
        |args, _| async move { format!("sunny in {}", args["city"].as_str().unwrap_or("?")) },
    );
    let book = NativeTool::of(
        "book trip!",
        "Books a trip",
        schema,
        |args, ctx| async move {
            let city = args["city"].as_str().unwrap_or("?").to_owned();
            match ctx.answer {
                Some(a) if a.ok => ToolResult::ok(format!("booked {city}")),
                Some(_) => ToolResult::error("not booked"),
                None => ToolResult::pending(Request::new("approval", format!("Book {city}?"))),
            }
        },
    );
    Toolkit::builder().tool(weather).tool(book).build().unwrap()
}

#[tokio::test]
async fn tools_are_listed_and_called_by_their_declared_names() {
    let tk = spaced_names();
    let human = Human::new(form_and_url(), [Says::Accept(json!({}))]);
    let client = client(McpServer::new(tk.clone()), human, modern()).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| &*t.name).collect();
    assert_eq!(names, ["get_weather", "book_trip_"]);
    for (listed, ours) in tools.iter().zip(tk.declarations()) {
        assert_eq!(listed.name, ours.name);
        let schema = Value::Object((*listed.input_schema).clone());
        assert_eq!(&schema, ours.input_schema);
        assert_eq!(schema.get("$schema"), None, "{schema}");
    }

    let weather = ask(&client, "get_weather", json!({"city": "Paris"})).await;
    assert_eq!(weather, (false, "sunny in Paris".to_owned()));
    // A suspension's round trip is sealed for, and retried under, the declared name.
    let booked = ask(&client, "book_trip_", json!({"city": "Rome"})).await;
    assert_eq!(booked, (false, "booked Rome".to_owned()));
}

#[tokio::test]
async fn on_2026_07_28_a_suspension_is_an_input_required_round() {
    let human = Human::new(form_and_url(), []);
    let client = client(shop(), human, modern()).await;
    let args = json!({"item": "gpu"});
    let CallToolResponse::InputRequired(input) = client
        .call_tool_once(call("approve_purchase", args.clone()))
        .await
        .unwrap()
    else {
        panic!("a suspension is an input_required result")
    };
    let requests = input.input_requests.unwrap();
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.into_iter().next().unwrap();
    // Keyed by the request id, a v4 uuid.
    assert_eq!(key.len(), 36, "{key}");
    let InputRequest::Elicitation(elicit) = request else {
        panic!("an elicitation")
    };
    let ElicitRequestParams::FormElicitationParams { message, .. } = &elicit.params else {
        panic!("an approval is a form")
    };
    assert_eq!(message, "Approve purchase of gpu?");
    let state = input.request_state.expect("the request travels sealed");

    let retry = |state: String, action: &str| {
        let mut params = call("approve_purchase", args.clone());
        params.request_state = Some(state);
        params.input_responses =
            Some([(key.clone(), json!({"action": action, "content": {}}))].into());
        params
    };
    let finish = |response| match response {
        CallToolResponse::Complete(result) => text(&result),
        _ => panic!("the retry completes"),
    };

    // A state this server did not seal, or a retry with other arguments than the call
    // that asked, is a protocol error: the client altered what it must echo unchanged.
    let mut forged = state.clone();
    forged.pop();
    let refused = invalid_params(client.call_tool_once(retry(forged, "accept")).await);
    assert!(refused.contains("did not issue"), "{refused}");
    let mut other = retry(state.clone(), "accept");
    other.arguments = Some(json!({"item": "yacht"}).as_object().unwrap().clone());
    let refused = invalid_params(client.call_tool_once(other).await);
    assert!(refused.contains("other arguments"), "{refused}");

    let declined = finish(
        client
            .call_tool_once(retry(state.clone(), "decline"))
            .await
            .unwrap(),
    );
    assert_eq!(
        declined,
        (
            true,
            "declined/expired: Approve purchase of gpu? (reason: declined)".to_owned()
        )
    );
    let approved = finish(client.call_tool_once(retry(state, "accept")).await.unwrap());
    assert_eq!(approved, (false, "approved: gpu".to_owned()));
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

#[tokio::test]
async fn on_2026_07_28_a_tool_asks_its_next_question_as_the_next_round() {
    let (client, first) = greet_asked().await;
    let name = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let (keys, second) = round(again(&client, "greet", Some(&first), name).await);
    assert_eq!(keys, ["city"], "the answered tool's own next question");
    assert_ne!(second, first, "each round seals its own request");
    let city = json!({"city": {"action": "accept", "content": {"answer": "Paris"}}});
    let done = complete(again(&client, "greet", Some(&second), city).await);
    assert_eq!(done, (false, r#"hello from "Paris""#.to_owned()));

    // rmcp's own loop takes every round to the person.
    let human = Human::new(
        form_and_url(),
        [
            Says::Accept(json!({"name": "Bo"})),
            Says::Accept(json!({"answer": "Oslo"})),
        ],
    );
    let client = crate::support::client(greeter(), human.clone(), modern()).await;
    let done = ask(&client, "greet", json!({})).await;
    assert_eq!(done, (false, r#"hello from "Oslo""#.to_owned()));
    let ElicitRequestParams::FormElicitationParams { message, .. } = &human.asked()[1] else {
        panic!("a form")
    };
    assert_eq!(message, "Where do you live, Bo?");
}

#[tokio::test]
async fn before_2026_a_tool_asks_its_next_question_while_the_call_is_held_open() {
    let human = Human::new(
        form_and_url(),
        [
            Says::Accept(json!({"name": "Bo"})),
            Says::Accept(json!({"answer": "Oslo"})),
        ],
    );
    let client = client(greeter(), human.clone(), legacy()).await;
    let done = ask(&client, "greet", json!({})).await;
    assert_eq!(done, (false, r#"hello from "Oslo""#.to_owned()));
    assert_eq!(human.asked().len(), 2);
}

#[tokio::test]
async fn a_re_run_that_asks_again_ends_the_call_as_the_core_settles_it() {
    // What the core's settlement for a host that carries rounds makes of it.
    let tk = Toolkit::builder().tool(Stubborn).build().unwrap();
    let asked = tk
        .execute("stubborn", json!({}), ToolContext::default())
        .await;
    let request = ToolResult::pending_of(&asked).unwrap();
    let ada = Answer::ok(&request.id).with_data(json!({"name": "Ada"}));
    let settled = tk
        .settle_round("stubborn", json!({}), &request, ada, ToolContext::default())
        .await;
    let ended = (true, settled.output);

    let client = client(greeter(), Human::new(form_and_url(), []), modern()).await;
    let (keys, state) = round(client.call_tool_once(call("stubborn", json!({}))).await);
    let answer = json!({&keys[0]: {"action": "accept", "content": {"name": "Ada"}}});
    let done = complete(again(&client, "stubborn", Some(&state), answer).await);
    assert_eq!(done, ended, "no further round");

    // Held open, the person is asked once.
    let human = Human::new(form_and_url(), [Says::Accept(json!({"name": "Ada"}))]);
    let client = crate::support::client(greeter(), human.clone(), legacy()).await;
    let done = ask(&client, "stubborn", json!({})).await;
    assert_eq!(done, ended);
    assert_eq!(human.asked().len(), 1);
}

/// Asks for a name and a city at once, then greets with both
#[tool]
async fn introduce(ctx: &ToolContext) -> ToolResult {
    match ctx.answers.as_slice() {
        [] => pending_all![
            (
                kind = "input",
                id = "name",
                prompt = "Your name?",
                answer = Name
            ),
            (kind = "question", id = "city", prompt = "Your city?"),
        ],
        [name, city] => ToolResult::ok(format!(
            "{} from {}",
            name.data.as_ref().unwrap()["name"],
            city.data.as_ref().unwrap()["answer"]
        )),
        other => ToolResult::error(format!("{} answers", other.len())),
    }
}

fn introducer() -> McpServer {
    McpServer::new(Toolkit::builder().tool(Introduce).build().unwrap())
}

#[tokio::test]
async fn on_2026_07_28_several_questions_are_one_round_answered_in_parts() {
    let client = client(introducer(), Human::new(form_and_url(), []), modern()).await;
    let (mut keys, first) = round(client.call_tool_once(call("introduce", json!({}))).await);
    keys.sort();
    assert_eq!(keys, ["city", "name"], "both questions in one round");

    // The name alone: only the city is asked again, the name sealed with the state.
    let name = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let (keys, second) = round(again(&client, "introduce", Some(&first), name).await);
    assert_eq!(keys, ["city"]);
    let city = json!({"city": {"action": "accept", "content": {"answer": "Paris"}}});
    let done = complete(again(&client, "introduce", Some(&second), city.clone()).await);
    assert_eq!(done, (false, r#""Ada" from "Paris""#.to_owned()));

    // The city again against the first state: the name was never given there.
    let (keys, _) = round(again(&client, "introduce", Some(&first), city).await);
    assert_eq!(keys, ["name"]);

    // A refusal of either ends the call without the other answer.
    let no = json!({"city": {"action": "decline"}});
    let (refused, text) = complete(again(&client, "introduce", Some(&first), no).await);
    assert!(refused, "{text}");
    assert!(text.starts_with("declined/expired: Your city?"), "{text}");
}

#[tokio::test]
async fn before_2026_several_questions_are_elicited_one_after_the_other() {
    let human = Human::new(
        form_and_url(),
        [
            Says::Accept(json!({"name": "Bo"})),
            Says::Accept(json!({"answer": "Oslo"})),
        ],
    );
    let client = client(introducer(), human.clone(), legacy()).await;
    let done = ask(&client, "introduce", json!({})).await;
    assert_eq!(done, (false, r#""Bo" from "Oslo""#.to_owned()));
    let asked: Vec<String> = human
        .asked()
        .iter()
        .map(|p| match p {
            ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
            other => panic!("a form, not {other:?}"),
        })
        .collect();
    assert_eq!(asked, ["Your name?", "Your city?"]);
}

#[tokio::test]
async fn on_2026_07_28_a_retry_without_the_answer_is_asked_again() {
    let (client, state) = greet_asked().await;
    let wrong = json!({"nickname": {"action": "accept", "content": {"name": "Ada"}}});
    let (keys, _) = round(again(&client, "greet", Some(&state), wrong).await);
    assert_eq!(keys, ["name"], "the same request, still to answer");

    // A response that is no elicitation result is refused, not taken for an answer.
    let garbage = json!({"name": 12345});
    let refused = invalid_params(again(&client, "greet", Some(&state), garbage).await);
    assert!(refused.contains("not an elicitation result"), "{refused}");
}

#[tokio::test]
async fn on_2026_07_28_a_call_that_brings_the_answer_to_what_it_asks_is_answered() {
    let client = client(greeter(), Human::new(form_and_url(), []), modern()).await;
    // No requestState: the server asks `name` anew, and the response keyed by it (beside
    // ones it never asked) answers it.
    let responses = json!({
        "name": {"action": "accept", "content": {"name": "Ada"}},
        "unasked": {"action": "accept", "content": {"x": 1}},
    });
    let (keys, _) = round(again(&client, "greet", None, responses).await);
    assert_eq!(keys, ["city"], "past the first question");
    let unrelated = json!({"unasked": {"action": "accept", "content": {}}});
    let (keys, _) = round(again(&client, "greet", None, unrelated).await);
    assert_eq!(keys, ["name"]);
    let garbage = json!({"name": 12345});
    let refused = invalid_params(again(&client, "greet", None, garbage).await);
    assert!(refused.contains("not an elicitation result"), "{refused}");
}

#[tokio::test]
async fn on_2026_07_28_rmcps_own_loop_fills_the_typed_form() {
    let human = Human::new(form_and_url(), [Says::Accept(paris())]);
    let client = client(shop(), human.clone(), modern()).await;
    let result = ask(&client, "ship_order", json!({"order": 7})).await;
    assert_eq!(
        result,
        (false, "order 7 ships to 75001 Paris, express".to_owned())
    );
    let asked = human.asked();
    let ElicitRequestParams::FormElicitationParams {
        requested_schema, ..
    } = &asked[0]
    else {
        panic!("a form")
    };
    let schema = serde_json::to_value(requested_schema).unwrap();
    assert_eq!(schema["properties"]["express"]["type"], "boolean");
    assert_eq!(schema["required"], json!(["city", "zip", "express"]));
}

#[tokio::test]
async fn before_2026_the_call_is_held_open_for_a_form_elicitation() {
    let human = Human::new(
        form_and_url(),
        [
            Says::Accept(json!({})),
            Says::Decline,
            Says::Accept(paris()),
        ],
    );
    let client = client(shop(), human.clone(), legacy()).await;
    let approved = ask(&client, "approve_purchase", json!({"item": "gpu"})).await;
    assert_eq!(approved, (false, "approved: gpu".to_owned()));
    let declined = ask(&client, "approve_purchase", json!({"item": "yacht"})).await;
    assert_eq!(
        declined,
        (
            true,
            "declined/expired: Approve purchase of yacht? (reason: declined)".to_owned()
        )
    );
    let shipped = ask(&client, "ship_order", json!({"order": 7})).await;
    assert_eq!(
        shipped,
        (false, "order 7 ships to 75001 Paris, express".to_owned())
    );
    assert_eq!(human.asked().len(), 3);
}

#[tokio::test]
async fn a_login_with_a_url_is_a_url_elicitation() {
    let tk = Toolkit::builder().tool(SignIn).build().unwrap();
    let human = Human::new(form_and_url(), [Says::Accept(json!({}))]);
    let client = client(McpServer::new(tk), human.clone(), legacy()).await;
    let result = ask(&client, "sign_in", json!({})).await;
    assert_eq!(result, (false, "signed in".to_owned()));
    let ElicitRequestParams::UrlElicitationParams {
        url,
        elicitation_id,
        ..
    } = &human.asked()[0]
    else {
        panic!("a URL elicitation")
    };
    assert_eq!(url, "https://shop.example/login");
    assert_eq!(elicitation_id.len(), 36, "the request id: {elicitation_id}");
}

#[tokio::test]
async fn an_unanswered_elicitation_expires() {
    let server = McpServer::builder(shop::toolkit())
        .elicitation_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let human = Human::new(form_and_url(), [Says::Stall]);
    let client = client(server, human, legacy()).await;
    let result = ask(&client, "approve_purchase", json!({"item": "gpu"})).await;
    assert_eq!(
        result,
        (
            true,
            "declined/expired: Approve purchase of gpu? (reason: expired)".to_owned()
        )
    );
}

#[tokio::test]
async fn a_client_without_elicitation_is_told_what_the_tool_needs() {
    for lifecycle in [legacy(), modern()] {
        let human = Human::new(no_elicitation(), []);
        let client = client(shop(), human, lifecycle).await;
        let result = ask(&client, "approve_purchase", json!({"item": "gpu"})).await;
        assert_eq!(
            result,
            (
                true,
                "`approve_purchase` needs approval: Approve purchase of gpu?, but this MCP \
                 client does not accept form elicitation"
                    .to_owned()
            )
        );
    }
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

#[tokio::test]
async fn with_a_park_hook_the_request_waits_for_a_person() {
    let shelf = Shelf::default();
    let server = McpServer::builder(shop::toolkit())
        .park(shelf.clone())
        .build()
        .unwrap();
    let client = client(server, Human::new(no_elicitation(), []), legacy()).await;
    let args = json!({"item": "gpu"});
    let first = ask(&client, "approve_purchase", args.clone()).await;
    let parked = shelf
        .parked
        .lock()
        .unwrap()
        .pop()
        .expect("the call is parked");
    assert_eq!(parked.tool, "approve_purchase");
    assert_eq!(parked.args, args);
    let (is_error, message) = first;
    assert!(is_error);
    assert!(message.contains(&parked.request.id), "{message}");
    assert!(
        message.contains("Call `approve_purchase` again"),
        "{message}"
    );

    let answer = Answer::ok(&parked.request.id);
    shelf.answers.lock().unwrap().push((parked, answer));
    let again = ask(&client, "approve_purchase", args).await;
    assert_eq!(again, (false, "approved: gpu".to_owned()));
}

#[tokio::test]
async fn tool_failures_are_error_results_not_protocol_errors() {
    let client = client(shop(), Human::new(form_and_url(), []), legacy()).await;
    let bad = ask(&client, "ship_order", json!({"order": "seven"})).await;
    let (is_error, message) = bad;
    assert!(is_error && message.contains("ship_order"), "{message}");
    let unknown = ask(&client, "teleport", json!({})).await;
    assert!(unknown.0);
}

#[tokio::test]
async fn streamable_http_serves_and_consumes_with_suspensions() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().nest_service("/mcp", shop().http_service());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let tools = McpTools::connect(format!("http://{addr}/mcp"))
        .await
        .unwrap();
    assert_eq!(tools.server(), "shop");
    let tk = Toolkit::builder().tools(tools).build().unwrap();
    let args = json!({"order": 7});
    let parked = tk
        .execute("shop__ship_order", args.clone(), Default::default())
        .await;
    let request = ToolResult::pending_of(&parked).expect("the form question suspends");
    assert_eq!(request.kind, "input");
    assert_eq!(request.prompt, "Where should order 7 go?");
    let schema = &request.data.as_ref().unwrap()["schema"];
    assert_eq!(schema["required"], json!(["city", "zip", "express"]));
    let answer = Answer::ok(&request.id).with_data(paris());
    let done = tk
        .execute(
            "shop__ship_order",
            args,
            toolnexus::ToolContext::default().with_answer(answer),
        )
        .await;
    assert_eq!(done.output, "order 7 ships to 75001 Paris, express");
    assert!(!done.is_error);
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

#[tokio::test]
async fn a_gated_tool_asks_through_elicitation_before_it_runs() {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let server = McpServer::builder(gated_remover(runs.clone()))
        .build()
        .unwrap();
    let human = Human::new(form_and_url(), [Says::Decline, Says::Accept(json!({}))]);
    let client = client(server, human.clone(), legacy()).await;

    let refused = ask(&client, "remove", json!({"path": "/a"})).await;
    assert_eq!(
        refused,
        (
            true,
            r#"declined/expired: Allow remove with {"path":"/a"}? (reason: declined)"#.to_owned()
        )
    );
    assert!(
        runs.lock().unwrap().is_empty(),
        "a declined gate runs nothing"
    );
    let approved = ask(&client, "remove", json!({"path": "/b"})).await;
    assert_eq!(approved, (false, "removed /b".to_owned()));
    assert_eq!(*runs.lock().unwrap(), [json!({"path": "/b"})]);
    let asked = human.asked();
    assert_eq!(asked.len(), 2, "each call asked once, before it ran");
    let ElicitRequestParams::FormElicitationParams { message, .. } = &asked[1] else {
        panic!("a form");
    };
    assert_eq!(message, r#"Allow remove with {"path":"/b"}?"#);
}

#[tokio::test]
async fn a_gated_call_parked_for_a_person_asks_again_with_the_same_id() {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let shelf = Shelf::default();
    let server = McpServer::builder(gated_remover(runs.clone()))
        .park(shelf.clone())
        .build()
        .unwrap();
    let client = client(server, Human::new(no_elicitation(), []), legacy()).await;
    let args = json!({"path": "/a"});
    let (is_error, _) = ask(&client, "remove", args.clone()).await;
    assert!(is_error);
    let parked = shelf
        .parked
        .lock()
        .unwrap()
        .pop()
        .expect("the gate is parked");
    assert_eq!(parked.request.gated_tool(), Some("remove"));
    assert!(runs.lock().unwrap().is_empty());

    // Asked again before anyone answered: the same call parks the same request.
    let _ = ask(&client, "remove", args.clone()).await;
    let again = shelf.parked.lock().unwrap().pop().expect("parked again");
    assert_eq!(again.request.id, parked.request.id);

    let answer = Answer::ok(&parked.request.id).with_args(json!({"path": "/tmp/a"}));
    shelf.answers.lock().unwrap().push((parked, answer));
    let (is_error, text) = ask(&client, "remove", args).await;
    assert!(!is_error, "{text}");
    assert!(text.starts_with("removed /tmp/a"), "{text}");
    assert_eq!(*runs.lock().unwrap(), [json!({"path": "/tmp/a"})]);
}
