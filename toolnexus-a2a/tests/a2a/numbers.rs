//! Numbers as the official SDK sends them: a data part travels as protobuf's `Struct`, so
//! every number in an answer arrives as a double. A whole one is the integer the person
//! gave, for a form's integer field, for an edit of a tool's integer argument, and for an
//! approval that repeats the proposed arguments of a gate that takes no edits.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{pending, tool, Answered, Approval, ToolResult, Toolkit};

use crate::support::{drive, state, status_data, status_text, task_of, Agent, Options, TestDb};

/// How many units to order.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Units {
    /// Units to order
    pub quantity: u32,
}

/// Pays an invoice, once approved
#[tool]
async fn pay(#[arg(description = "The amount in cents")] amount_cents: u64) -> ToolResult {
    ToolResult::ok(format!("paid {amount_cents} cents"))
}

/// Refunds an order, once approved
#[tool]
async fn refund(#[arg(description = "The amount in cents")] amount_cents: u64) -> ToolResult {
    ToolResult::ok(format!("refunded {amount_cents} cents"))
}

/// Restocks an item; asks how many
#[tool]
async fn restock(
    #[arg(description = "What to restock")] item: String,
    count: Option<Answered<Units>>,
) -> ToolResult {
    match count {
        None => pending!(
            kind = "input",
            prompt = format!("How many {item}?"),
            answer = Units
        ),
        Some(count) => ToolResult::ok(format!("restocked {} {item}", count.quantity)),
    }
}

fn toolkit() -> Toolkit {
    Toolkit::builder()
        .tool(Pay)
        .tool(Refund)
        .tool(Restock)
        .approval(Approval::tools(["pay"]))
        .approval(Approval::tools(["refund"]).no_edits())
        .build()
        .expect("distinct tools")
}

/// "pay N", "refund N" and "restock X" call their tools; once a tool answered, the model
/// repeats what it said.
fn script(req: &RecordedRequest) -> Reply {
    if let Some((_, out)) = req.tool_results().pop() {
        return Reply::text(format!("Done: {out}."));
    }
    let said = req.prompts().last().cloned().unwrap_or_default();
    let mut words = said.split_whitespace();
    match (words.next(), words.next()) {
        (Some(tool @ ("pay" | "refund")), Some(n)) => {
            let cents: u64 = n.parse().unwrap_or_default();
            Reply::tool_call("call_0", tool, json!({"amount_cents": cents}))
        }
        (Some("restock"), Some(item)) => {
            Reply::tool_call("call_0", "restock", json!({"item": item}))
        }
        _ => Reply::text("Say pay, refund or restock."),
    }
}

async fn agent() -> (Agent, TestDb, MockLlm) {
    let db = TestDb::sqlite();
    let model = MockLlm::with_fn(script)
        .await
        .expect("the scripted model starts");
    let options = Options {
        toolkit: Some(toolkit()),
        ..Options::default()
    };
    let agent = Agent::serve_with(&db, &model, Arc::new(AtomicUsize::new(0)), options).await;
    (agent, db, model)
}

/// Asks with `prompt`, then answers the one request it waits on with `answer` (its id
/// filled in): the waiting task and the steps' results after it.
async fn ask_then_answer(agent: &Agent, prompt: &str, answer: Value) -> (Value, Vec<Value>) {
    let out = drive(&agent.url, json!([{"send": {"text": prompt}}])).await;
    let waiting = task_of(&out[0]).clone();
    assert_eq!(state(&waiting), "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    let request = status_data(&waiting)[0]["id"]
        .as_str()
        .expect("the request's id")
        .to_owned();
    let mut answer = answer;
    answer["id"] = json!(request);
    let task = waiting["id"].clone();
    let out = drive(
        &agent.url,
        json!([{"send": {"task": task, "answers": [answer]}}, {"get": {"task": task}}]),
    )
    .await;
    (waiting, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_edited_integer_argument_is_the_integer_the_person_gave() {
    let (agent, _db, _model) = agent().await;
    let (waiting, out) = ask_then_answer(
        &agent,
        "pay 1200",
        json!({"ok": true, "args": {"amount_cents": 5000000}}),
    )
    .await;
    let done = task_of(&out[0]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    let said = status_text(done);
    assert!(said.starts_with("Done: paid 5000000 cents"), "{said}");
    // What the inbox keeps (and signs) is the integer.
    let request = status_data(&waiting)[0]["id"].as_str().map(str::to_owned);
    let kept = agent
        .inbox
        .get(&request.expect("an id"))
        .await
        .expect("the inbox reads")
        .expect("the request is kept");
    let args = kept.answer.and_then(|a| a.args).expect("the edit is kept");
    assert!(args["amount_cents"].is_u64(), "{args}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn repeating_the_proposed_arguments_is_no_edit() {
    let (agent, _db, _model) = agent().await;
    let (_, out) = ask_then_answer(
        &agent,
        "refund 300",
        json!({"ok": true, "args": {"amount_cents": 300}}),
    )
    .await;
    let done = task_of(&out[0]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(status_text(done), "Done: refunded 300 cents.");

    // A real change is still refused by the gate that takes no edits.
    let (waiting, out) = ask_then_answer(
        &agent,
        "refund 300",
        json!({"ok": true, "args": {"amount_cents": 301}}),
    )
    .await;
    assert_eq!(out[0]["error"], "InvalidParamsError", "{}", out[0]);
    assert_eq!(
        task_of(&out[1])["status"],
        waiting["status"],
        "still waiting"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_forms_integer_field_takes_a_whole_number_and_refuses_a_fraction() {
    let (agent, _db, _model) = agent().await;
    let (waiting, out) = ask_then_answer(
        &agent,
        "restock gpu",
        json!({"ok": true, "data": {"quantity": 2.5}}),
    )
    .await;
    assert_eq!(out[0]["error"], "InvalidParamsError", "{}", out[0]);
    let refusal = out[0]["message"].as_str().unwrap_or_default();
    assert!(refusal.contains("whole number"), "{refusal}");
    assert_eq!(
        task_of(&out[1])["status"],
        waiting["status"],
        "still waiting"
    );

    let task = waiting["id"].clone();
    let request = status_data(&waiting)[0]["id"].clone();
    let out = drive(
        &agent.url,
        json!([{"send": {"task": task, "answers": [
            {"id": request, "ok": true, "data": {"quantity": 3}}
        ]}}]),
    )
    .await;
    let done = task_of(&out[0]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(status_text(done), "Done: restocked 3 gpu.");
}
