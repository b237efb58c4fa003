//! The durable_approval example's purchase, tested with `toolnexus::testing`'s kit: resumed
//! from its kept transcript as a worker resumes it, across a crash after the approval too.
#[allow(dead_code)]
#[path = "../../durable_approval.rs"]
mod example;
use toolnexus::testing::*;

#[tokio::test]
async fn approved_declined_and_approved_across_a_crash() -> Result<(), Box<dyn std::error::Error>> {
    let model = MockLlm::with_fn(example::support::purchase_script).await?;
    let llm = model.client().build()?;
    let tk = example::toolkit()?;
    for (decision, crash_after, said) in [
        (Decision::approve(), None, "approved: gpu (order key "),
        (Decision::approve(), Some(3), "approved: gpu (order key "), // reply, question, answer
        (
            Decision::decline("not this month"),
            None,
            "(reason: not this month)",
        ),
    ] {
        let people = Approvers::new().tool("approve_purchase", decision);
        let drive = people.drive(&llm, &tk, "Please buy a gpu for the lab.");
        let done = drive.crash_after(crash_after).await?;
        let output = done.output("approve_purchase").unwrap_or_default();
        assert!(
            output.starts_with(said) || output.ends_with(said),
            "{output}"
        );
        // The order key is the request's id, also when the run was taken up after a crash.
        let id = &done.questions[0].request.id;
        assert_eq!(
            output.contains(id.as_str()),
            output.starts_with("approved"),
            "{output}"
        );
        people.asked_exactly(["Approve purchase of gpu?"]);
    }
    Ok(())
}
