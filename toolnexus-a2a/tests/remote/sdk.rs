//! Against agents written with the official Python SDK: approve, decline, a form, a
//! halted run resumed in a fresh client, a sign-in, a failed task.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolnexus::{
    Answer, MetricEvent, Request, RunStatus, Tool, ToolContext, ToolResult, ToolSource,
};

use super::support::{agents, client, model, remote, task_of, toolkit};

/// A `wait_for` that answers with `answer(request)` and keeps what it was asked.
fn answering(
    seen: Arc<Mutex<Vec<Request>>>,
    answer: impl Fn(&Request) -> Answer + Send + Sync + 'static,
) -> impl Fn(Request) -> std::future::Ready<Answer> + Send + Sync + 'static {
    move |request: Request| {
        let reply = answer(&request);
        seen.lock().unwrap().push(request);
        std::future::ready(reply)
    }
}

#[tokio::test]
async fn an_approval_asked_remotely_is_answered_by_wait_for_and_continues_the_task() {
    approve_at("shop").await;
}

#[tokio::test]
async fn an_agent_offering_only_http_json_is_called_over_it() {
    approve_at("shop-rest").await;
}

/// Buys a gpu from the SDK's shop agent at `path`, approving through `wait_for`: the
/// remote task is continued once with the approval and its result comes back.
async fn approve_at(path: &str) {
    let mock = model("shop", "buy a gpu").await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let llm = client(&mock)
        .wait_for(answering(seen.clone(), |r| Answer::ok(&r.id)))
        .build()
        .unwrap();
    let run = llm
        .run("buy me a gpu", &toolkit(remote(path).await))
        .await
        .unwrap();

    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "one question: {asked:?}");
    assert_eq!(asked[0].kind, "approval");
    assert_eq!(asked[0].prompt, "Approve purchase of gpu?");
    let task = task_of(&asked[0]);
    let sent = agents().await_continuations(&task, 1).await;
    assert_eq!(sent.len(), 1, "the remote task is continued once: {sent:?}");
    assert_eq!(sent[0]["text"], json!(["approve"]));
    assert_eq!(sent[0]["answer"]["ok"], true);
    assert!(
        sent[0]["answer"].get("id").is_none(),
        "our id means nothing there"
    );

    assert_eq!(run.status, RunStatus::Done);
    let output = &run.tool_calls[0].output;
    assert!(output.starts_with("bought gpu: ORDER-"), "{output}");
    assert!(!run.tool_calls[0].is_error);
    assert_eq!(run.text, format!("remote says: {output}"));
}

#[tokio::test]
async fn a_decline_reaches_the_model_and_runs_nothing_remotely() {
    let mock = model("shop", "buy a gpu").await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let llm = client(&mock)
        .wait_for(answering(seen.clone(), |r| {
            Answer::decline(&r.id, "declined").with_note("too dear")
        }))
        .build()
        .unwrap();
    let run = llm
        .run("buy me a gpu", &toolkit(remote("shop").await))
        .await
        .unwrap();
    let call = &run.tool_calls[0];
    assert!(call.is_error);
    assert_eq!(
        call.output,
        "declined/expired: Approve purchase of gpu? (reason: too dear)"
    );
    assert_eq!(run.text, format!("remote says: {}", call.output));
    let task = task_of(&seen.lock().unwrap()[0]);
    assert!(agents().continuations(&task).is_empty());
}

#[tokio::test]
async fn a_refusal_given_to_the_tool_goes_to_the_remote_task_in_words_and_as_the_answer() {
    // A host that resolves the call itself (not the agent loop) hands the tool the refusal.
    let shop = remote("shop").await;
    let parked = shop
        .execute(json!({"message": "buy a sled"}), ToolContext::default())
        .await;
    let request = ToolResult::pending_of(&parked).expect("the call suspends");
    let no = Answer::decline(&request.id, "declined").with_note("not in summer");
    let done = shop
        .execute(
            json!({"message": "buy a sled"}),
            ToolContext::default().with_answer(no),
        )
        .await;
    assert_eq!(done.output, "purchase of sled declined");
    assert!(!done.is_error, "the remote completed the task: {done:?}");
    let sent = agents().await_continuations(&task_of(&request), 1).await;
    assert_eq!(sent[0]["text"], json!(["decline: not in summer"]));
    assert_eq!(sent[0]["answer"]["ok"], false);
    assert_eq!(sent[0]["answer"]["note"], "not in summer");
}

#[tokio::test]
async fn a_data_part_with_a_schema_is_a_form_whose_values_go_back() {
    let mock = model("shop", "ship a gpu").await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let llm = client(&mock)
        .wait_for(answering(seen.clone(), |r| {
            Answer::ok(&r.id).with_data(json!({"city": "Paris", "zip": "75001"}))
        }))
        .build()
        .unwrap();
    let run = llm
        .run("ship it", &toolkit(remote("shop").await))
        .await
        .unwrap();
    let asked = seen.lock().unwrap()[0].clone();
    assert_eq!(asked.kind, "input");
    assert_eq!(asked.prompt, "Where should the gpu go?");
    let schema = &asked.data.as_ref().unwrap()["schema"];
    assert_eq!(schema["required"], json!(["city", "zip"]));
    assert!(matches!(asked.asks(), toolnexus::Asks::Form { .. }));
    assert_eq!(run.tool_calls[0].output, "shipping gpu to 75001 Paris");
    let sent = agents().await_continuations(&task_of(&asked), 1).await;
    assert_eq!(
        sent[0]["answer"]["data"],
        json!({"city": "Paris", "zip": "75001"})
    );
}

#[tokio::test]
async fn a_halted_run_resumes_in_a_fresh_client_on_the_same_remote_task() {
    let mock = model("shop", "buy a gpu").await;
    let halted = client(&mock)
        .build()
        .unwrap()
        .run("buy me a gpu", &toolkit(remote("shop").await))
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let request = halted.pending.clone().unwrap();
    assert_eq!(request.prompt, "Approve purchase of gpu?");
    let task = task_of(&request);
    assert!(agents().continuations(&task).is_empty());

    // Another process: the transcript as stored text, a new agent, toolkit and client.
    let stored = serde_json::to_string(&halted.messages).unwrap();
    let request: Request = serde_json::from_str(&serde_json::to_string(&request).unwrap()).unwrap();
    let fresh = client(&mock).build().unwrap();
    let tk = toolkit(remote("shop").await);
    let done = fresh
        .run_with_answer(
            serde_json::from_str(&stored).unwrap(),
            &request,
            Answer::ok(&request.id),
            &tk,
        )
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    let output = &done.tool_calls[0].output;
    assert!(output.starts_with("bought gpu: ORDER-"), "{output}");
    assert_eq!(done.text, format!("remote says: {output}"));
    let sent = agents().await_continuations(&task, 1).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        sent[0]["context"],
        request.data.as_ref().unwrap()["a2a"]["contextId"]
    );
}

#[tokio::test]
async fn an_auth_required_task_asks_a_sign_in_at_its_url() {
    let mock = model("warehouse", "log me in").await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let llm = client(&mock)
        .wait_for(answering(seen.clone(), |r| Answer::ok(&r.id)))
        .build()
        .unwrap();
    let run = llm
        .run("log in", &toolkit(remote("signin").await))
        .await
        .unwrap();
    let asked = seen.lock().unwrap()[0].clone();
    let task = task_of(&asked);
    assert_eq!(asked.kind, "authorization");
    assert_eq!(asked.prompt, "Sign in to the warehouse");
    assert_eq!(
        asked.url.as_deref(),
        Some(format!("http://127.0.0.1:{}/login?task={task}", agents().port()).as_str())
    );
    assert_eq!(
        asked.data.as_ref().unwrap()["a2a"]["state"],
        "TASK_STATE_AUTH_REQUIRED"
    );
    assert_eq!(run.tool_calls[0].output, "signed in");
    assert_eq!(agents().await_continuations(&task, 1).await.len(), 1);
}

#[tokio::test]
async fn a_failed_remote_task_is_a_tool_error_the_model_reads() {
    let mock = model("broken", "do anything").await;
    let run = client(&mock)
        .build()
        .unwrap()
        .run("try", &toolkit(remote("broken").await))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Done);
    let call = &run.tool_calls[0];
    assert!(call.is_error);
    assert_eq!(
        call.output,
        "the remote agent `broken` failed: the warehouse is closed"
    );
    assert_eq!(run.text, format!("remote says: {}", call.output));
}

#[tokio::test]
async fn the_card_names_the_tool_unless_overridden() {
    let shop = remote("shop").await;
    assert_eq!(shop.name(), "shop");
    assert_eq!(shop.description(), "Buys and ships items, asking first");
    assert_eq!(shop.endpoint(), format!("{}/", agents().url("shop")));
    let renamed = toolnexus_a2a::RemoteAgent::builder(agents().url("shop"))
        .name("buyer agent")
        .description("Buys")
        .connect()
        .await
        .unwrap();
    assert_eq!(renamed.name(), "buyer_agent");
    assert_eq!(renamed.description(), "Buys");
    assert_eq!(renamed.input_schema()["required"], json!(["message"]));
}

#[tokio::test]
async fn a_remote_agent_is_the_source_of_its_calls_by_its_tool_name() {
    let broken = remote("broken").await;
    assert_eq!(broken.source(), ToolSource::A2a { agent: "broken" });
    assert_eq!(broken.source().to_string(), "a2a:broken");
    let mock = model("broken", "do anything").await;
    let sources = Arc::new(Mutex::new(Vec::new()));
    let seen = sources.clone();
    let run = client(&mock)
        .on_metric(move |event: &MetricEvent| {
            if let MetricEvent::Tool {
                source, is_error, ..
            } = event
            {
                seen.lock().unwrap().push((source.clone(), *is_error));
            }
        })
        .build()
        .unwrap()
        .run("try", &toolkit(broken))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Done);
    assert_eq!(*sources.lock().unwrap(), [("a2a:broken".to_owned(), true)]);
}
