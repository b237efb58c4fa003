//! Typed answers end to end: `pending!(…, answer = T)` asks with `T`'s form (so does a
//! bare `pending!` in a tool taking `Option<Answered<T>>`), and an `Option<Answered<T>>`
//! parameter receives the human's data decoded into `T`, through `wait_for` or a durable
//! resume; data that does not fit never reaches the body and is reported naming the field,
//! a host can check it before resuming, and a type that is no form is refused when the
//! toolkit is built.

use crate::common;

use std::collections::HashMap;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{
    pending, tool, toolbox, Answer, Answered, Message, Request, RunResult, RunStatus, Style, Tool,
    ToolContext, ToolResult, Toolbox, Toolkit, ToolkitError,
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
    let client = common::on(&mock, Style::OpenAi)
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
    let client = common::on(&mock, Style::OpenAi)
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
    assert_eq!(call.output, "invalid answer for ship: `zip`: must be text");
    assert_eq!(runs(2), 1, "only the first call ran the body");
    assert_eq!(last_tool_output(&mock.requests()[1]), call.output);

    // An answer without any data is refused the same way.
    let bare = ToolContext::default().with_answer(Answer::ok("r"));
    let refused = Ship.execute(json!({"order": 2}), bare).await;
    assert_eq!(
        refused,
        ToolResult::error("invalid answer for ship: the form was not filled in")
    );
    assert_eq!(runs(2), 1);
}

/// Halts a run on `order` and hands back what a durable host would have saved, as JSON.
async fn halted_run(mock: &MockLlm, order: u64) -> (String, Request) {
    let client = common::on(mock, Style::OpenAi).build().unwrap();
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
    common::on(mock, Style::OpenAi)
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
    // Every missing field at once, so the next answer can be the right one.
    assert_eq!(
        output,
        "invalid answer for ship: `zip`: is required; `express`: is required"
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
async fn an_answer_type_that_is_not_a_form_is_refused_when_the_toolkit_is_built() {
    let refused = Toolkit::builder()
        .tool(Ship)
        .tool(Label)
        .build()
        .unwrap_err();
    let ToolkitError::AnswerForm { tool, reason } = &refused else {
        panic!("not an answer-form error: {refused:?}");
    };
    assert_eq!(tool, "label");
    assert!(
        reason.contains("Labels` cannot be asked for as an answer: field `tags` is an array"),
        "{reason}"
    );
    assert!(refused
        .to_string()
        .starts_with("the tool `label` cannot ask for its answers: "));

    // Called directly, outside any toolkit, it still never asks for the unusable form.
    let result = Label
        .execute(json!({"parcel": 9}), ToolContext::default())
        .await;
    assert!(result.is_error && !result.is_pending(), "{result:?}");
    assert!(
        result.output.contains("field `tags` is an array"),
        "{}",
        result.output
    );
}

/// Tags a parcel, asking for a list where a form is needed
#[tool]
async fn tag(parcel: u64, answer: Option<Answered<Vec<String>>>) -> ToolResult {
    match answer {
        None => pending!(kind = "input", prompt = "Tags?"),
        Some(a) => ToolResult::ok(format!("{parcel}: {}", a.join(","))),
    }
}

#[test]
fn a_refused_answer_type_is_named_as_it_is_written() {
    let refused = Toolkit::builder().tool(Tag).build().unwrap_err();
    let ToolkitError::AnswerForm { tool, reason } = &refused else {
        panic!("not an answer-form error: {refused:?}");
    };
    assert_eq!(tool, "tag");
    let written = format!("`{}`", stringify!(Vec<String>).replace(' ', ""));
    assert!(reason.starts_with(&written), "{reason}");
    assert!(!reason.contains("::"), "a module path in: {reason}");
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Size {
    /// S, M or L
    label: String,
    qty: u32,
}

struct Shop;

#[toolbox]
impl Shop {
    /// Orders a shirt, asking which size with a bare `pending!`
    #[tool]
    async fn order(&self, size: Option<Answered<Size>>) -> ToolResult {
        match size {
            None => pending!(kind = "input", prompt = "Which size?"),
            Some(s) => ToolResult::ok(format!("{} x {}", s.qty, s.label)),
        }
    }

    /// Same, with data of its own next to the form
    #[tool]
    async fn gift(&self, size: Option<Answered<Size>>) -> ToolResult {
        match size {
            None => pending!(
                kind = "input",
                prompt = "Which size?",
                data = json!({"for": "Ada"})
            ),
            Some(s) => ToolResult::ok(s.label.clone()),
        }
    }
}

/// Asks with a bare `pending!`: the form comes from the parameter
#[tool]
async fn size_up(size: Option<Answered<Size>>) -> ToolResult {
    match size {
        None => pending!(kind = "input", prompt = "Which size?"),
        Some(s) => ToolResult::ok(s.label.clone()),
    }
}

#[tokio::test]
async fn the_form_comes_from_the_signature_when_pending_does_not_name_it() {
    let tk = Toolkit::builder()
        .tool(SizeUp)
        .tools(std::sync::Arc::new(Shop).into_tools())
        .build()
        .unwrap();
    for name in ["size_up", "order"] {
        let parked = tk.execute(name, json!({}), ToolContext::default()).await;
        let request = ToolResult::pending_of(&parked).expect(name);
        let form = &request.data.as_ref().expect("data")["schema"];
        assert_eq!(form["required"], json!(["label", "qty"]), "{name}");
        assert_eq!(form["properties"]["qty"]["type"], "integer", "{name}");
        assert_eq!(form["properties"]["label"]["description"], "S, M or L");
        assert_eq!(tk.get(name).unwrap().answer_schema(), Some(Ok(form)));
    }
    let parked = tk.execute("gift", json!({}), ToolContext::default()).await;
    let data = ToolResult::pending_of(&parked).unwrap().data.unwrap();
    assert_eq!(data["for"], "Ada");
    assert_eq!(data["schema"]["required"], json!(["label", "qty"]));
    assert_eq!(Ship.answer_schema().map(|f| f.is_ok()), Some(true));
}

#[tokio::test]
async fn a_host_checks_an_answer_against_the_form_before_resuming() {
    let tk = Toolkit::builder().tool(SizeUp).build().unwrap();
    let parked = tk
        .execute("size_up", json!({}), ToolContext::default())
        .await;
    let request = ToolResult::pending_of(&parked).unwrap();

    // What the person typed, checked before any run sees it.
    let typo = Answer::ok(&request.id).with_data(json!({"label": "M", "qty": "two"}));
    let misfit = request.check_answer(&typo).unwrap_err();
    assert_eq!(misfit.field.as_deref(), Some("qty"));
    assert_eq!(misfit.to_string(), "`qty`: must be a whole number");
    let missing = Answer::ok(&request.id).with_data(json!({"qty": 2}));
    assert_eq!(
        request.check_answer(&missing).unwrap_err().field.as_deref(),
        Some("label")
    );

    // The tool itself holds an answer that slipped through to the same form.
    let ctx = ToolContext::default().with_answer(typo);
    let refused = tk.execute("size_up", json!({}), ctx).await;
    assert_eq!(
        refused,
        ToolResult::error("invalid answer for size_up: `qty`: must be a whole number")
    );

    let fixed = Answer::ok(&request.id).with_data(json!({"label": "M", "qty": 2}));
    assert_eq!(request.check_answer(&fixed), Ok(()));
    let done = tk
        .execute(
            "size_up",
            json!({}),
            ToolContext::default().with_answer(fixed),
        )
        .await;
    assert_eq!(done.output, "M");
}
