//! A reasoning model's readable reasoning, as the official client reads it: a reasoning span
//! of one reasoning message before the turn's text, which the client keeps as a
//! `reasoning` message.

use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::Toolkit;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reasoning_streams_as_a_reasoning_message_before_the_text() {
    let db = TestDb::sqlite();
    let model = MockLlm::start([Reply::text("It is 42.").with_reasoning("Six times seven.")])
        .await
        .expect("the model starts");
    let agent = Agent::serve_tools(&db, &model, Toolkit::empty()).await;
    let mut client = Client::start();
    let said = client.say("a", &agent.url, "what is it?").await;
    assert_eq!(said["error"], json!(null), "{said}");
    assert_eq!(said["warnings"], json!([]), "{said}");
    // Content comes in as many pieces as the model streams: one kind per run of them.
    let mut kinds = types(&said);
    kinds.dedup();
    let reasoning = [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ];
    let start = kinds
        .iter()
        .position(|k| k == "REASONING_START")
        .unwrap_or_else(|| panic!("reasoning is streamed: {kinds:?}"));
    assert_eq!(
        &kinds[start..start + reasoning.len()],
        reasoning,
        "{kinds:?}"
    );
    let text = kinds
        .iter()
        .position(|k| k == "TEXT_MESSAGE_START")
        .expect("the text");
    assert!(start < text, "reasoning comes before the text: {kinds:?}");
    let thought: String = of_type(&said, "REASONING_MESSAGE_CONTENT")
        .iter()
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(thought, "Six times seven.");

    let kept: Vec<(String, String)> = said["messages"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|m| {
                    let field = |k: &str| m[k].as_str().unwrap_or_default().to_owned();
                    (field("role"), field("content"))
                })
                .collect()
        })
        .unwrap_or_default();
    let reasoned = ("reasoning".to_owned(), "Six times seven.".to_owned());
    let answered = ("assistant".to_owned(), "It is 42.".to_owned());
    assert!(kept.contains(&reasoned), "{kept:?}");
    assert!(kept.contains(&answered), "{kept:?}");
    client.close().await;
    agent.stop().await;
}
