//! A sub-agent served over MCP, driven by the official Python SDK: the served tool is
//! `payments`, an agent whose toolkit holds `approvals`, an agent that refunds an order
//! behind an approval (the shop's three-level agent, the MCP client in the planner's
//! place). The approval two agents down reaches the client relayed, naming the path; its
//! answer goes back to the halted inner run that asked — in a sealed `input_required`
//! round, over elicitation, in a task kept in memory or by the inbox — and the refund is
//! made once. A refusal ends the call as declined, altered state is refused, and the shop's
//! own agent, whose refund only finance approves, is judged by the inbox as before.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolnexus::testing::MockLlm;
use toolnexus::{Approval, LlmClient, SubAgent, Toolkit};
use toolnexus_inbox::{BearerTokens, Inbox};
use toolnexus_mcp::McpServer;
use toolnexus_test_support::databases::TestDb;

use crate::nested;
use crate::support::run_script;
use crate::tasks::{asking, raw, serve};

/// Who signs in, by token: Ada of finance, Bob of no group.
const PEOPLE: &str = "tok-ada ada@shop.example finance\ntok-bob bob@shop.example\n";

/// The shop's scripted model, shared by both agents.
async fn model() -> (MockLlm, LlmClient) {
    let model = MockLlm::with_fn(nested::script)
        .await
        .expect("the scripted model");
    let client = LlmClient::builder()
        .base_url(model.base_url())
        .model("scripted")
        .api_key("test-key")
        .build()
        .expect("a client");
    (model, client)
}

/// `payments` over `approvals` over the counting `refund`, as the shop's three-level agent
/// builds them, with the refund's approval the caller's own to give (no rule names who):
/// so the MCP client is asked it, rather than an inbox's people.
fn toolkit(client: &LlmClient, refunds: Arc<AtomicUsize>) -> Toolkit {
    let refunds =
        Toolkit::builder()
            .tool(nested::counting_refund(refunds))
            .approval(Approval::tools(["refund"]).prompt(|_, args| {
                format!("Refund order {}?", args["order"].as_str().unwrap_or("?"))
            }))
            .build()
            .expect("one tool");
    let approvals = SubAgent::new(client.clone(), refunds)
        .instructions(nested::APPROVALS)
        .into_tool("approvals", "Carries out a refund once it is approved");
    let payments = Toolkit::builder()
        .tool(approvals)
        .build()
        .expect("one tool");
    let payments = SubAgent::new(client.clone(), payments)
        .instructions(nested::PAYMENTS)
        .into_tool("payments", "Handles payments and refunds; say which order");
    Toolkit::builder().tool(payments).build().expect("one tool")
}

/// The line of step `name` the script printed.
fn step<'a>(lines: &'a [Value], name: &str) -> &'a Value {
    lines
        .iter()
        .find(|line| line["step"] == name)
        .unwrap_or_else(|| panic!("no step {name} in {lines:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_answers_a_question_asked_two_agents_down() {
    let (model, client) = model().await;
    let refunds = Arc::new(AtomicUsize::new(0));
    let server = McpServer::new(toolkit(&client, refunds.clone()));
    let url = serve(server).await;

    let stdout = run_script("agents.py", &[&url]).await;
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();

    // On 2026-07-28 and over elicitation alike: one question, naming the agent it came
    // through, and the approval completes the refund the inner run asked for, once.
    for (name, order, n) in [("round", "A-7", 1), ("elicited", "B-2", 2)] {
        let line = step(&lines, name);
        assert_eq!(
            line["asked"],
            json!([format!("payments > approvals: Refund order {order}?")]),
            "{line}"
        );
        assert_eq!(line["error"], false, "{line}");
        let text = line["text"].as_str().unwrap_or_default();
        assert!(
            text.contains(&format!("REFUND-{n}: refunded {order}")),
            "{name}: {text}"
        );
    }
    // A refusal ends the call as declined, and nothing is refunded.
    let declined = step(&lines, "declined");
    assert_eq!(
        declined["asked"],
        json!(["payments > approvals: Refund order C-3?"]),
        "{declined}"
    );
    let text = declined["text"].as_str().unwrap_or_default();
    assert!(text.contains("declined"), "{declined}");
    assert!(!text.contains("REFUND"), "{declined}");

    // The sealed state shows the question, not the inner runs: no instructions, no call
    // the agents made.
    let sealed = step(&lines, "sealed");
    let readable = sealed["readable"].as_str().unwrap_or_default();
    assert!(readable.contains("Refund order D-4?"), "{sealed}");
    for secret in [
        nested::PAYMENTS,
        nested::APPROVALS,
        nested::PAYMENTS_CALL,
        &nested::refund_call("D-4"),
        "Payments:",
    ] {
        assert!(!readable.contains(secret), "{secret} leaks: {readable}");
    }
    // Altered state is refused as invalid params, the refund not made; the state as it
    // was sealed completes the call.
    let tampered = step(&lines, "tampered");
    let refused = tampered["refused"].as_array().expect("the attempts");
    assert_eq!(refused.len(), 2, "{tampered}");
    for attempt in refused {
        assert_eq!(attempt["code"], -32602, "{tampered}");
    }
    let honest = step(&lines, "honest");
    assert_eq!(honest["error"], false, "{honest}");
    let text = honest["text"].as_str().unwrap_or_default();
    assert!(text.contains("REFUND-3: refunded D-4"), "{honest}");

    assert_eq!(
        refunds.load(Ordering::SeqCst),
        3,
        "A-7, B-2, D-4, each once"
    );
    drop(model);
}

/// Two tasks of `payments` at `url`, for orders A-7 and C-3, answered by the Python SDK:
/// each waits on the relayed question, the first's acceptance completes it with its refund,
/// the second's refusal ends it as declined. The first's line.
async fn answered_tasks(url: &str) -> Value {
    // The SDK's client cannot take a task for a call; rmcp's starts them, and the SDK's
    // answers them.
    let mcp = raw(url).await;
    let (approved, _) = asking(&mcp, "payments", json!({"task": "Refund order A-7"})).await;
    let (declined, _) = asking(&mcp, "payments", json!({"task": "Refund order C-3"})).await;
    let stdout = run_script("agent_tasks.py", &[url, &approved, &declined]).await;
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();

    let approved = step(&lines, "approved");
    assert_eq!(approved["waited"], "input_required", "{approved}");
    assert_eq!(
        approved["asked"],
        json!(["payments > approvals: Refund order A-7?"]),
        "{approved}"
    );
    assert_eq!(approved["status"], "completed", "{approved}");
    let text = approved["text"].as_str().unwrap_or_default();
    assert!(text.contains("REFUND-1: refunded A-7"), "{approved}");
    let declined = step(&lines, "declined");
    assert_eq!(declined["waited"], "input_required", "{declined}");
    assert_eq!(declined["status"], "completed", "{declined}");
    let text = declined["text"].as_str().unwrap_or_default();
    assert!(text.contains("declined"), "{declined}");
    assert!(!text.contains("REFUND"), "{declined}");
    approved.clone()
}

toolnexus_test_support::both_engines!(a_kept_task_resumes_the_agent_that_asked);

/// Over tasks the inbox keeps ([`answered_tasks`]), which keeps the question with the path
/// it came through.
async fn a_kept_task_resumes_the_agent_that_asked(db: TestDb) {
    let (model, client) = model().await;
    let refunds = Arc::new(AtomicUsize::new(0));
    let inbox = Inbox::builder(&db.url)
        .agent("mcp-agents")
        .open()
        .await
        .unwrap();
    let server = McpServer::builder(toolkit(&client, refunds.clone()))
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .inbox(inbox.clone())
        .build()
        .unwrap();
    let url = serve(server).await;
    let approved = answered_tasks(&url).await;
    let key = approved["keys"][0].as_str().expect("the question's key");
    let parked = inbox.get(key).await.unwrap().expect("kept");
    let relay = parked.request.relay().expect("a relayed request");
    assert_eq!(relay.path, ["payments", "approvals", "refund"]);

    assert_eq!(refunds.load(Ordering::SeqCst), 1, "A-7 once, C-3 never");
    drop(model);
}

/// Over tasks the server keeps in memory, without an inbox ([`answered_tasks`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_in_memory_resumes_the_agent_that_asked() {
    let (model, client) = model().await;
    let refunds = Arc::new(AtomicUsize::new(0));
    let server = McpServer::builder(toolkit(&client, refunds.clone()))
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .build()
        .unwrap();
    answered_tasks(&serve(server).await).await;
    assert_eq!(refunds.load(Ordering::SeqCst), 1, "A-7 once, C-3 never");
    drop(model);
}

toolnexus_test_support::both_engines!(only_finance_answers_the_refund_relayed_from_two_agents_down);

/// The shop's own three-level agent, whose refund only finance approves: the question a
/// sub-agent relayed is judged by the inbox as the refund's own, so a caller outside
/// finance accepting its elicitation refunds nothing, and finance's acceptance resumes the
/// inner run the inbox kept, refunding once.
async fn only_finance_answers_the_refund_relayed_from_two_agents_down(db: TestDb) {
    let (model, client) = model().await;
    let refunds = Arc::new(AtomicUsize::new(0));
    let inbox = Inbox::builder(&db.url)
        .agent("mcp-agents")
        .open()
        .await
        .unwrap();
    let tk = nested::planner_toolkit(&client, nested::counting_refund(refunds.clone()));
    let server = McpServer::builder(tk)
        .inbox(inbox)
        .identify(BearerTokens::parse(PEOPLE).unwrap())
        .build()
        .unwrap();
    let url = serve(server).await;
    let ask = |token: &'static str, order: &'static str| {
        let url = url.clone();
        async move {
            let args = json!({"task": format!("Refund order {order}")}).to_string();
            let out = run_script("ask.py", &[&url, token, "payments", &args]).await;
            serde_json::from_str::<Value>(out.trim()).expect("one JSON line")
        }
    };

    let bob = ask("tok-bob", "B-2").await;
    assert_eq!(bob["error"], true, "{bob}");
    let text = bob["text"].as_str().unwrap_or_default();
    assert!(text.contains(nested::FINANCE), "{bob}");
    assert!(!text.contains("REFUND"), "{bob}");

    let ada = ask("tok-ada", "A-7").await;
    assert_eq!(ada["error"], false, "{ada}");
    assert_eq!(ada["elicited"], 1, "{ada}");
    let text = ada["text"].as_str().unwrap_or_default();
    assert!(text.contains("REFUND-1: refunded A-7"), "{ada}");

    assert_eq!(refunds.load(Ordering::SeqCst), 1, "A-7 once, B-2 never");
    drop(model);
}
