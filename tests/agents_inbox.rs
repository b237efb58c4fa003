//! A planner whose sub-agent's refund needs two people of finance, parked in the inbox:
//! the inbox judges the relayed request by the rule the refund's approval set, and
//! resumes both runs once, under the receipts it signed.

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
