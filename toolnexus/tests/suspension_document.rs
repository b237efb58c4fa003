//! The three programs of the suspension document, written against the pinned Rust API and
//! run against the project's own scripted endpoint (`toolnexus::testing`).

use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{pending, tool, Answer, LlmClient, Request, RunStatus, Style, ToolResult, Toolkit};

/// OpenAI tool-role messages of a recorded request.
fn tool_messages(seen: &RecordedRequest) -> Vec<Value> {
    seen.messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect()
}

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

/// Requests spend approval before proceeding
#[tool]
async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
    EXECUTIONS.fetch_add(1, Ordering::SeqCst);
    match answer {
        // On the resumed retry the answer is present: that is how the tool tells the calls apart.
        Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
        Some(_) => ToolResult::error("declined"),
        None => pending!(
            kind = "approval",
            prompt = format!("Approve purchase of {item}?")
        ),
    }
}

// 2. The realistic case: a full suspend/resolve loop against a stub LLM.
#[tokio::test]
async fn suspend_and_resolve_loop() {
    let stub = MockLlm::start([
        Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"})),
        Reply::text("Purchase approved."),
    ])
    .await
    .unwrap();
    let asked = Arc::new(std::sync::Mutex::new(Vec::<Request>::new()));
    let asked2 = asked.clone();
    let client = LlmClient::builder()
        .base_url(stub.base_url())
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
    let tk = Toolkit::builder().tool(ApprovePurchase).build().unwrap();
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

    let second = &stub.requests()[1];
    let tools = tool_messages(second);
    assert_eq!(tools.len(), 1, "one result for the one call: {tools:?}");
    assert_eq!(tools[0]["tool_call_id"], "call_1");
    assert_eq!(tools[0]["content"], "approved: gpu");
    assert_eq!(second.header("authorization"), Some("Bearer test-key"));
}

/// Requests spend approval before proceeding
#[tool(name = "approve_purchase")]
async fn approve_purchase_strict(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(_) => ToolResult::error("declined"),
        None => pending!(
            prompt = format!("Approve purchase of {item}?"),
            kind = "approval"
        ),
    }
}

// 3. Full surface: a declined answer feeds back an error and the loop keeps going.
#[tokio::test]
async fn declined_answer_feeds_back_an_error() {
    let stub = MockLlm::start([
        Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"})),
        Reply::text("The purchase was declined."),
    ])
    .await
    .unwrap();
    let client = LlmClient::builder()
        .base_url(stub.base_url())
        .style(Style::OpenAi)
        .model("gpt-4o-mini")
        .api_key("test-key")
        .wait_for(|request: Request| async move { Answer::decline(request.id, "declined") })
        .build()
        .unwrap();
    let tk = Toolkit::builder()
        .tool(ApprovePurchaseStrict)
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
    let tools = tool_messages(&stub.requests()[1]);
    assert_eq!(tools.len(), 1);
    assert!(tools[0]["content"]
        .as_str()
        .unwrap()
        .contains("declined/expired"));
}
