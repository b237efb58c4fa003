//! The three programs of the suspension document, against the runtime API. Programs 2 and 3
//! build their tools with `NativeTool::of` where the reference uses `#[tool]`/`pending!`.

#[path = "common/stub.rs"]
mod stub;

use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use stub::*;
use toolnexus::{
    Answer, LlmClient, NativeTool, Request, RunStatus, Style, Tool, ToolContext, ToolResult,
    Toolkit,
};

// 1. The smallest useful call: build and read a suspension.
#[test]
fn build_and_read_a_suspension() {
    let res = ToolResult::pending(Request::new("approval", "Approve refund of $40?"));
    assert!(res.is_error, "a parked call is not a success");
    assert!(res.is_pending());
    let req = ToolResult::pending_of(&res).expect("a suspension carries its request");
    assert_eq!(req.kind, "approval");
    assert_eq!(req.prompt, "Approve refund of $40?");
    assert!(
        !req.id.is_empty(),
        "an id is generated when none is supplied"
    );
    assert!(ToolResult::pending_of(&ToolResult::error("boom")).is_none());
}

static EXECUTIONS: AtomicUsize = AtomicUsize::new(0);

fn item_schema() -> Value {
    json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]})
}

/// Requests spend approval before proceeding
fn approve_purchase() -> impl Tool {
    NativeTool::of(
        "approve_purchase",
        "Requests spend approval before proceeding",
        item_schema(),
        |args: Value, ctx: ToolContext| async move {
            EXECUTIONS.fetch_add(1, Ordering::SeqCst);
            let item = args["item"].as_str().unwrap_or_default().to_owned();
            match ctx.answer {
                // On the resumed retry the answer is present: that is how the tool tells the calls apart.
                Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
                Some(_) => ToolResult::error("declined"),
                None => ToolResult::pending(Request::new(
                    "approval",
                    format!("Approve purchase of {item}?"),
                )),
            }
        },
    )
}

// 2. The realistic case: a full suspend/resolve loop against a stub LLM.
#[tokio::test]
async fn suspend_and_resolve_loop() {
    let stub = Stub::json(vec![
        oa_calls(&[("call_1", "approve_purchase", json!({"item": "gpu"}))]),
        oa_text("Purchase approved."),
    ])
    .await;
    let asked = Arc::new(std::sync::Mutex::new(Vec::<Request>::new()));
    let asked2 = asked.clone();
    let client = LlmClient::builder()
        .base_url(stub.openai_base())
        .style(Style::OpenAi)
        .model("gpt-4o-mini")
        .api_key("test-key")
        .wait_for(move |request: Request| {
            let asked = asked2.clone();
            async move {
                // Stand in for a human clicking "approve".
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                asked.lock().unwrap().push(request.clone());
                Answer::ok(request.id)
            }
        })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(approve_purchase()).build().unwrap();
    let before = EXECUTIONS.load(Ordering::SeqCst);
    let result = client.run("buy a gpu", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "Purchase approved.");
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(result.tool_calls[0].output, "approved: gpu");
    assert!(!result.tool_calls[0].is_error);
    assert_eq!(result.tool_calls[0].args, json!({"item": "gpu"}));
    assert!(result.pending.is_none());
    assert_eq!(stub.calls(), 2, "resolved via 2 LLM calls");
    assert_eq!(
        EXECUTIONS.load(Ordering::SeqCst) - before,
        2,
        "tool retried once"
    );
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].kind, "approval");
    assert_eq!(asked[0].prompt, "Approve purchase of gpu?");

    let second = &stub.seen()[1];
    let tools = tool_messages(second);
    assert_eq!(tools.len(), 1, "one result for the one call: {tools:?}");
    assert_eq!(tools[0]["tool_call_id"], "call_1");
    assert_eq!(tools[0]["content"], "approved: gpu");
    assert_eq!(second.header("authorization"), Some("Bearer test-key"));
}

/// Requests spend approval before proceeding
fn approve_purchase_strict() -> impl Tool {
    NativeTool::of(
        "approve_purchase",
        "Requests spend approval before proceeding",
        item_schema(),
        |args: Value, ctx: ToolContext| async move {
            let item = args["item"].as_str().unwrap_or_default().to_owned();
            match ctx.answer {
                Some(_) => ToolResult::error("declined"),
                None => ToolResult::pending(Request::new(
                    "approval",
                    format!("Approve purchase of {item}?"),
                )),
            }
        },
    )
}

// 3. Full surface: a declined answer feeds back an error and the loop keeps going.
#[tokio::test]
async fn declined_answer_feeds_back_an_error() {
    let stub = Stub::json(vec![
        oa_calls(&[("call_1", "approve_purchase", json!({"item": "gpu"}))]),
        oa_text("The purchase was declined."),
    ])
    .await;
    let client = LlmClient::builder()
        .base_url(stub.openai_base())
        .style(Style::OpenAi)
        .model("gpt-4o-mini")
        .api_key("test-key")
        .wait_for(|request: Request| async move { Answer::decline(request.id, "declined") })
        .build()
        .unwrap();
    let tk = Toolkit::builder()
        .tool(approve_purchase_strict())
        .build()
        .unwrap();
    let result = client.run("buy a gpu", &tk).await.unwrap();

    assert_eq!(
        result.status,
        RunStatus::Done,
        "not pending: wait_for resolved it"
    );
    assert_eq!(result.text, "The purchase was declined.");
    assert!(
        result.tool_calls[0].is_error,
        "the fed-back tool result must carry the decline"
    );
    assert!(
        result.tool_calls[0].output.contains("declined/expired"),
        "{}",
        result.tool_calls[0].output
    );
    let tools = tool_messages(&stub.seen()[1]);
    assert_eq!(tools.len(), 1);
    assert!(tools[0]["content"]
        .as_str()
        .unwrap()
        .contains("declined/expired"));
}
