//! The shipping_form example's order form, tested with `toolnexus::testing`'s kit.
#[allow(dead_code)]
#[path = "../../shipping_form.rs"]
mod example;
use toolnexus::{serde_json::json, testing::Decision as D, testing::*, Toolbox, Toolkit};

#[tokio::test]
async fn the_form_filled_in_or_not() -> Result<(), Box<dyn std::error::Error>> {
    let model = MockLlm::with_fn(example::script).await?;
    let llm = model.client().build()?;
    let paris = json!({"city": "Paris", "zip": "75001", "express": true});
    for (decision, said, left) in [
        (D::fill(paris), "order #1: 2 gpus to 75001 Paris", 1),
        (D::fill(json!({"city": "Paris"})), "invalid answer", 3), // no zip: refused
        (D::decline("not today"), "(reason: not today)", 3),
        (D::expire(), "(reason: expired)", 3),
    ] {
        let shop = example::Shop::open();
        let tk = Toolkit::builder()
            .tools(shop.clone().into_tools())
            .build()?;
        let people = Approvers::new().tool("order", decision);
        let done = people.drive(&llm, &tk, "Please send me 2 gpus.").await?;
        assert!(
            done.output("order").is_some_and(|o| o.contains(said)),
            "{done:?}"
        );
        assert_eq!(shop.left("gpu"), left);
        people.asked_exactly(["Where should the 2 gpus go?"]);
    }
    Ok(())
}
