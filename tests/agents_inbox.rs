//! A planner whose sub-agent's refund needs two people of finance, parked in the inbox:
//! the inbox judges the relayed request by the rule the refund's approval set, and
//! resumes both runs once, under the receipts it signed. Then the shop's three-level
//! agent (planner > payments > approvals > refund): its innermost approval parked, judged
//! and answered as finance's, both inner runs and the planner's resumed once.

#[path = "../examples/shop_agent/nested.rs"]
mod nested;

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{tool, Answer, RunStatus, SubAgent, Toolkit};
use toolnexus_inbox::receipt::ReceiptKey;
use toolnexus_inbox::{Inbox, InboxError, ParkedState, Person};

static REFUNDED: AtomicUsize = AtomicUsize::new(0);

/// Refunds an order; two people of finance approve it first
#[tool(approval(
    prompt = "Refund order {order}?",
    responders = ["group:finance"],
    quorum = 2,
))]
async fn refund(order: String) -> String {
    REFUNDED.fetch_add(1, Ordering::SeqCst);
    format!("refunded {order}")
}

fn finance(id: &str) -> Person {
    Person::new(id).groups(["finance"])
}

#[tokio::test]
async fn the_inbox_judges_a_relayed_approval_by_its_rule_and_resumes_both_runs_once() {
    let planner = MockLlm::start([
        Reply::tool_call("c1", "payments", json!({"task": "Refund A-7"})),
        Reply::text("A-7 is refunded."),
    ])
    .await
    .unwrap();
    let payments = MockLlm::start([
        Reply::tool_call("p1", "refund", json!({"order": "A-7"})),
        Reply::text("Refunded A-7."),
    ])
    .await
    .unwrap();
    let toolkit = || {
        let agent_tools = Toolkit::builder().tool(Refund).build().unwrap();
        let agent = SubAgent::new(payments.client().build().unwrap(), agent_tools)
            .into_tool("payments", "Handles refunds");
        Toolkit::builder().tool(agent).build().unwrap()
    };
    let client = planner.client().build().unwrap();
    let key = ReceiptKey::ephemeral_for_tests().unwrap();
    let inbox = Inbox::builder("sqlite::memory:")
        .receipt_key(key)
        .open()
        .await
        .unwrap();

    let halted = client.run("Refund A-7", &toolkit()).await.unwrap();
    let id = inbox.park(&halted).await.unwrap();
    let parked = inbox.get(&id).await.unwrap().unwrap();
    assert_eq!(parked.request.prompt, "payments: Refund order A-7?");
    assert_eq!(parked.quorum, 2);

    let outsider = inbox
        .answer_as(Answer::ok(&id), Person::new("dave@example.com"))
        .await;
    assert!(
        matches!(outsider, Err(InboxError::NotAllowed { .. })),
        "{outsider:?}"
    );
    inbox
        .answer_as(Answer::ok(&id), finance("ada@example.com"))
        .await
        .unwrap();
    assert_eq!(
        inbox.get(&id).await.unwrap().unwrap().state,
        ParkedState::Waiting,
        "one approval of two"
    );
    assert!(inbox
        .resume_next(&client, &toolkit())
        .await
        .unwrap()
        .is_none());
    inbox
        .answer_as(Answer::ok(&id), finance("bob@example.com"))
        .await
        .unwrap();

    let resumed = inbox
        .resume_next(&client, &toolkit())
        .await
        .unwrap()
        .expect("answered by two of finance");
    assert_eq!(resumed.result.status, RunStatus::Done);
    assert_eq!(resumed.result.text, "A-7 is refunded.");
    assert_eq!(REFUNDED.load(Ordering::SeqCst), 1);
    assert!(inbox
        .resume_next(&client, &toolkit())
        .await
        .unwrap()
        .is_none());
    assert_eq!(payments.calls(), 2);
}

#[tokio::test]
async fn a_three_level_agents_innermost_approval_is_parked_judged_and_resumed_once() {
    let model = MockLlm::with_fn(nested::script).await.unwrap();
    let client = model
        .client()
        .system_prompt(nested::PLANNER)
        .build()
        .unwrap();
    let refunds = std::sync::Arc::new(AtomicUsize::new(0));
    let toolkit = || nested::planner_toolkit(&client, nested::counting_refund(refunds.clone()));
    let inbox = Inbox::builder("sqlite::memory:").open().await.unwrap();

    let halted = client
        .run("Refund order A-7, it arrived broken", &toolkit())
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(halted.waiting.len(), 1, "{:?}", halted.waiting);
    let asked = &halted.waiting[0];
    assert_eq!(asked.prompt, "payments > approvals: Refund order A-7?");
    assert_eq!(
        asked.rule().unwrap().responders,
        Some(vec![nested::FINANCE])
    );
    let relay = asked.relay().expect("a relayed request");
    assert_eq!(relay.path, ["payments", "approvals", "refund"]);
    assert_eq!(relay.agents(), ["payments", "approvals"]);
    assert_eq!(relay.prompt, "Refund order A-7?");
    assert_eq!(
        refunds.load(Ordering::SeqCst),
        0,
        "nothing refunded before the answer"
    );

    let id = inbox.park(&halted).await.unwrap();
    assert_eq!(id, asked.id);
    let outsider = inbox
        .answer_as(Answer::ok(&id), Person::new("dave@example.com"))
        .await;
    assert!(
        matches!(outsider, Err(InboxError::NotAllowed { .. })),
        "{outsider:?}"
    );
    inbox
        .answer_as(Answer::ok(&id), finance("ada@example.com"))
        .await
        .unwrap();
    let resumed = inbox
        .resume_next(&client, &toolkit())
        .await
        .unwrap()
        .expect("answered by finance");
    assert_eq!(resumed.result.status, RunStatus::Done);
    assert_eq!(
        resumed.result.text,
        "Planner: Payments: Approvals: REFUND-1: refunded A-7"
    );
    assert_eq!(refunds.load(Ordering::SeqCst), 1);
    assert!(inbox
        .resume_next(&client, &toolkit())
        .await
        .unwrap()
        .is_none());
    // Each agent asked the model twice: once for its call, once with its result.
    let levels: Vec<nested::Level> = model.requests().iter().map(nested::level).collect();
    for level in [
        nested::Level::Planner,
        nested::Level::Payments,
        nested::Level::Approvals,
    ] {
        assert_eq!(
            levels.iter().filter(|l| **l == level).count(),
            2,
            "{level:?} in {levels:?}"
        );
    }
}

#[tokio::test]
async fn two_refunds_asked_two_agents_down_by_two_calls_halt_together_and_only_the_approved_one_runs(
) {
    let model = MockLlm::with_fn(nested::script).await.unwrap();
    let client = model.client().build().unwrap();
    let refunds = std::sync::Arc::new(AtomicUsize::new(0));
    let toolkit = || nested::planner_toolkit(&client, nested::counting_refund(refunds.clone()));
    let inbox = Inbox::builder("sqlite::memory:").open().await.unwrap();

    let halted = client
        .run("Refund orders A-7 and B-2", &toolkit())
        .await
        .unwrap();
    let prompts: Vec<&str> = halted.waiting.iter().map(|r| r.prompt.as_str()).collect();
    assert_eq!(
        prompts,
        [
            "payments > approvals: Refund order A-7?",
            "payments > approvals: Refund order B-2?"
        ]
    );
    inbox.park(&halted).await.unwrap();
    let ada = finance("ada@example.com");
    inbox
        .answer_as(Answer::ok(&halted.waiting[0].id), ada.clone())
        .await
        .unwrap();
    inbox
        .answer_as(Answer::decline(&halted.waiting[1].id, "not this one"), ada)
        .await
        .unwrap();
    let resumed = inbox
        .resume_next(&client, &toolkit())
        .await
        .unwrap()
        .expect("both answered");
    assert_eq!(resumed.result.status, RunStatus::Done);
    assert_eq!(
        refunds.load(Ordering::SeqCst),
        1,
        "{:?}",
        resumed.result.text
    );
    assert!(
        resumed
            .result
            .text
            .starts_with("Planner: Payments: Approvals: REFUND-1: refunded A-7; declined"),
        "{}",
        resumed.result.text
    );
}
