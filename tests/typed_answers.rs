//! Typed answers end to end: `pending!(…, answer = T)` asks with `T`'s form, and an
//! `Option<Answered<T>>` parameter receives the human's data decoded into `T`, through
//! `wait_for` or a durable resume; data that does not decode never reaches the body.

use std::collections::HashMap;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{
    pending, tool, Answer, Answered, LlmClient, LlmClientBuilder, Message, Request, RunResult,
    RunStatus, Style, Tool, ToolContext, ToolResult, Toolkit,
};

#[derive(Debug, Deserialize, JsonSchema)]
struct Shipping {
    city: String,
    zip: String,
    express: bool,
}

/// How many times the body of `ship` ran, per order (tests run in parallel, each on its own
/// order number).
static RUNS: Mutex<Option<HashMap<u64, usize>>> = Mutex::new(None);

fn runs(order: u64) -> usize {
    RUNS.lock()
        .unwrap()
        .as_ref()
        .and_then(|m| m.get(&order).copied())
        .unwrap_or(0)
}

/// Ships the order once the human has entered an address
#[tool]
async fn ship(order: u64, answer: Option<Answered<Shipping>>) -> ToolResult {
    *RUNS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .entry(order)
        .or_default() += 1;
    match answer {
        None => pending!(
            kind = "input",
            prompt = "Where should it go?",
            answer = Shipping
        ),
        Some(a) => ToolResult::ok(format!(
            "order {order} to {} {}{}",
            a.value.zip,
            a.city,
            if a.express { " (express)" } else { "" }
        )),
    }
}

fn toolkit() -> Toolkit {
    Toolkit::builder().tool(Ship).build().unwrap()
}

fn client(mock: &MockLlm) -> LlmClientBuilder {
    LlmClient::builder()
        .base_url(mock.base_url())
        .style(Style::OpenAi)
        .model("scripted")
        .api_key("test-key")
}

/// A model that asks to ship `order`, then says `then`.
async fn model_ships(order: u64, then: &str) -> MockLlm {
    MockLlm::start([
        Reply::tool_call("c1", "ship", json!({"order": order})),
        Reply::text(then),
    ])
    .await
    .unwrap()
}

/// The text of the newest tool result the model was sent.
fn last_tool_output(req: &RecordedRequest) -> String {
    let last = req.messages().last().expect("messages");
    assert_eq!(last["role"], "tool", "{last}");
    last["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_form_lists_every_field_with_its_type() {
    let parked = Ship
        .execute(json!({"order": 100}), ToolContext::default())
        .await;
    let request = ToolResult::pending_of(&parked).expect("suspended");
    assert_eq!(request.kind, "input");
    assert_eq!(
        request.data.unwrap()["schema"],
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "zip": {"type": "string"},
                "express": {"type": "boolean"}
            },
            "required": ["city", "zip", "express"]
        })
    );
    assert_eq!(
        Ship.input_schema()["required"],
        json!(["order"]),
        "the answer is not an argument"
    );
}

#[tokio::test]
async fn a_typed_answer_resumes_through_wait_for() {
    let mock = model_ships(1, "shipped").await;
    let asked = std::sync::Arc::new(Mutex::new(None::<Request>));
    let seen = asked.clone();
    let client = client(&mock)
        .wait_for(move |req: Request| {
            *seen.lock().unwrap() = Some(req.clone());
            async move {
                Answer::ok(req.id)
                    .with_data(json!({"city": "Paris", "zip": "75001", "express": true}))
            }
        })
        .build()
        .unwrap();

    let result = client.run("ship order 1", &toolkit()).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(
        result.tool_calls[0].output,
        "order 1 to 75001 Paris (express)"
    );
    assert!(!result.tool_calls[0].is_error);
    assert_eq!(runs(1), 2, "asked once, then ran with the answer");
    let asked = asked.lock().unwrap().clone().expect("wait_for was called");
    assert_eq!(asked.prompt, "Where should it go?");
    assert_eq!(
        asked.data.unwrap()["schema"]["properties"]["express"]["type"],
        "boolean"
    );
    assert_eq!(
        last_tool_output(&mock.requests()[1]),
        "order 1 to 75001 Paris (express)"
    );
}

#[tokio::test]
async fn a_mistyped_answer_is_an_error_result_and_never_reaches_the_body() {
    let mock = model_ships(2, "the address was wrong").await;
    let client = client(&mock)
        .wait_for(|req: Request| async move {
            Answer::ok(req.id).with_data(json!({"city": "Paris", "zip": 75001, "express": false}))
        })
        .build()
        .unwrap();

    let result = client.run("ship order 2", &toolkit()).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "the address was wrong");
    let call = &result.tool_calls[0];
    assert!(call.is_error);
    assert!(
        call.output.starts_with("invalid answer for ship: ") && call.output.contains("string"),
        "{}",
        call.output
    );
    assert_eq!(runs(2), 1, "only the first call ran the body");
    assert_eq!(last_tool_output(&mock.requests()[1]), call.output);

    // An answer without any data is refused the same way.
    let bare = ToolContext::default().with_answer(Answer::ok("r"));
    let refused = Ship.execute(json!({"order": 2}), bare).await;
    assert_eq!(
        refused,
        ToolResult::error("invalid answer for ship: the answer carries no data")
    );
    assert_eq!(runs(2), 1);
}

/// Halts a run on `order` and hands back what a durable host would have saved, as JSON.
async fn halted_run(mock: &MockLlm, order: u64) -> (String, Request) {
    let client = client(mock).build().unwrap();
    let halted = client
        .run(format!("ship order {order}"), &toolkit())
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let request = halted.pending.clone().expect("the request it halted on");
    assert_eq!(
        request.data.as_ref().unwrap()["schema"]["required"],
        json!(["city", "zip", "express"])
    );
    (serde_json::to_string(&halted.messages).unwrap(), request)
}

/// Resumes a saved run with `data` as the answer, as a later process would: a new client,
/// the transcript read back from JSON.
async fn resume(mock: &MockLlm, saved: &str, request: &Request, data: Value) -> RunResult {
    let messages: Vec<Message> = serde_json::from_str(saved).unwrap();
    let answer = Answer::ok(&request.id).with_data(data);
    client(mock)
        .build()
        .unwrap()
        .run_with_answer(messages, request, answer, &toolkit())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_durable_resume_carries_a_typed_answer() {
    let mock = model_ships(3, "shipped to Lyon").await;
    let (saved, request) = halted_run(&mock, 3).await;

    let data = json!({"city": "Lyon", "zip": "69001", "express": false});
    let result = resume(&mock, &saved, &request, data).await;

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "shipped to Lyon");
    assert_eq!(result.tool_calls[0].output, "order 3 to 69001 Lyon");
    assert_eq!(runs(3), 2);
    assert_eq!(
        last_tool_output(&mock.requests()[1]),
        "order 3 to 69001 Lyon"
    );
}

#[tokio::test]
async fn a_durable_resume_with_a_mistyped_answer_feeds_the_error_back() {
    let mock = model_ships(4, "please check the address").await;
    let (saved, request) = halted_run(&mock, 4).await;

    let result = resume(&mock, &saved, &request, json!({"city": "Lyon"})).await;

    assert_eq!(result.status, RunStatus::Done);
    let output = &result.tool_calls[0].output;
    assert_eq!(
        output, "invalid answer for ship: missing field `zip`",
        "{output}"
    );
    assert_eq!(runs(4), 1, "the body never saw the bad answer");
    assert_eq!(&last_tool_output(&mock.requests()[1]), output);
}

#[derive(Deserialize, JsonSchema)]
struct Labels {
    tags: Vec<String>,
}

/// Labels a parcel, asking for the labels with a type no form can show
#[tool]
async fn label(parcel: u64, answer: Option<Answered<Labels>>) -> ToolResult {
    match answer {
        None => pending!(kind = "input", prompt = "Labels?", answer = Labels),
        Some(a) => ToolResult::ok(format!("{parcel}: {}", a.tags.join(","))),
    }
}

#[tokio::test]
async fn an_answer_type_that_is_not_a_form_fails_the_call_without_asking() {
    let mock = MockLlm::start([
        Reply::tool_call("c1", "label", json!({"parcel": 9})),
        Reply::text("could not label it"),
    ])
    .await
    .unwrap();
    let client = client(&mock)
        .wait_for(|req: Request| async move {
            panic!("nobody is asked for an unusable form: {}", req.prompt)
        })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(Label).build().unwrap();

    let result = client.run("label parcel 9", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    let call = &result.tool_calls[0];
    assert!(call.is_error);
    assert!(
        call.output.starts_with("pending!(answer = ..): `")
            && call
                .output
                .contains("Labels` cannot be asked for as an answer: field `tags` is an array"),
        "{}",
        call.output
    );
}
