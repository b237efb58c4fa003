//! The approve_purchase example's declared approval, tested with `toolnexus::testing`'s kit.
#[allow(dead_code)]
#[path = "../../approve_purchase.rs"]
mod example;
use toolnexus::{serde_json::json, testing::Decision as D, testing::*, Toolkit};
#[tokio::test]
async fn each_decision_and_a_crash() -> Result<(), Box<dyn std::error::Error>> {
    let model = MockLlm::with_fn(example::support::purchase_script).await?;
    let llm = model.client().build()?;
    let tk = Toolkit::builder().tool(example::DeclaredPurchase).build()?;
    for (decision, n, said) in [
        (D::approve(), None, "approved: gpu"),
        (D::approve(), Some(3), "approved: gpu"), // a crash after reply, question and approval
        (D::decline("too dear"), None, "(reason: too dear)"),
        (D::expire(), None, "(reason: expired)"),
        (D::edit(json!({"item": "cpu"})), None, "approved: cpu"),
    ] {
        let people = Approvers::new().tool("approve_purchase", decision);
        let done = people.drive(&llm, &tk, "Buy a gpu").crash_after(n).await?;
        assert!(done.tool_calls[0].output.contains(said), "{done:?}");
        people.asked_exactly(["Approve purchase of gpu?"]);
    }
    Ok(())
}
