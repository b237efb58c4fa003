//! The official client through each flow: approve, decline, cancel, edited arguments, a
//! form, a sign-in, two calls waiting at once (answered together, all or none), two
//! threads at once, an answer given on the inbox's side, and the refusals a client that
//! follows the protocol can still meet.

use std::sync::atomic::Ordering;

use serde_json::{json, Value};
use toolnexus::Answer;
use toolnexus_inbox::{AuditKind, ParkedState};

use crate::support::*;

/// The one interrupt `result` ended with, checked against the call it waits on.
fn only_interrupt(result: &Value) -> Value {
    assert_eq!(last(result)["type"], "RUN_FINISHED", "{result}");
    assert_eq!(last(result)["outcome"]["type"], "interrupt", "{result}");
    let interrupts = interrupts(result);
    assert_eq!(interrupts.len(), 1, "{result}");
    let interrupt = interrupts[0].clone();
    let calls = of_type(result, "TOOL_CALL_START");
    assert_eq!(interrupt["toolCallId"], calls[0]["toolCallId"], "{result}");
    assert_eq!(
        result["interrupts"],
        json!([interrupt]),
        "the client keeps it pending"
    );
    interrupt
}

/// The result `resumed` sent for the call `interrupt` waited on, checked to be the only
/// thing it says of that call.
fn result_of(resumed: &Value, interrupt: &Value) -> String {
    assert_eq!(types(resumed)[0], "RUN_STARTED", "{resumed}");
    assert!(
        of_type(resumed, "TOOL_CALL_START").is_empty(),
        "the waiting call is not opened again: {resumed}"
    );
    let results = of_type(resumed, "TOOL_CALL_RESULT");
    assert_eq!(results.len(), 1, "{resumed}");
    assert_eq!(results[0]["toolCallId"], interrupt["toolCallId"]);
    assert_eq!(last(resumed)["type"], "RUN_FINISHED", "{resumed}");
    assert_eq!(last(resumed)["outcome"], json!({"type": "success"}));
    assert_eq!(
        resumed["interrupts"],
        json!([]),
        "nothing is pending any more"
    );
    results[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_approval_interrupts_the_run_and_approving_buys_once() {
    let (agent, _db, model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("a", &agent.url, "buy a gpu").await;
    assert_eq!(types(&asked)[0], "RUN_STARTED");
    assert_eq!(
        of_type(&asked, "TOOL_CALL_START")[0]["toolCallName"],
        "purchase"
    );
    assert_eq!(
        of_type(&asked, "TOOL_CALL_ARGS")[0]["delta"],
        r#"{"item":"gpu"}"#
    );
    let interrupt = only_interrupt(&asked);
    assert_eq!(interrupt["reason"], "tool_call");
    assert_eq!(interrupt["message"], "Approve purchase of gpu?");
    assert_eq!(interrupt["metadata"]["tool"], "purchase");
    let schema = &interrupt["responseSchema"];
    assert_eq!(schema["required"], json!(["approved"]));
    assert_eq!(
        schema["properties"]["editedArgs"]["required"],
        json!(["item"])
    );
    assert_eq!(
        agent.purchases.load(Ordering::SeqCst),
        0,
        "nothing bought yet"
    );

    let done = client
        .resume(
            "a",
            &agent.url,
            json!([{"interrupt": 0, "status": "resolved", "payload": {"approved": true}}]),
        )
        .await;
    let bought = result_of(&done, &interrupt);
    assert!(bought.starts_with("ORDER-1:"), "{bought}");
    assert_eq!(text(&done), "Bought, order ORDER-1.");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
    let tool_message = done["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "tool").cloned())
        .expect("the client holds the tool's message");
    assert_eq!(tool_message["toolCallId"], interrupt["toolCallId"]);

    // The same resume again runs nothing twice.
    let replay = client
        .resume("a", &agent.url, json!([{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": true}}]))
        .await;
    assert_eq!(last(&replay)["type"], "RUN_ERROR", "{replay}");
    assert_eq!(last(&replay)["code"], "nothing_to_resume");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);

    // The thread goes on from where it ended: the model reads the whole of it.
    let next = client.say("a", &agent.url, "hello").await;
    assert_eq!(last(&next)["outcome"]["type"], "success", "{next}");
    let seen = model.requests().pop().expect("the model was asked");
    assert_eq!(seen.prompts(), ["buy a gpu", "hello"]);
    assert_eq!(
        seen.tool_results().len(),
        1,
        "the purchase's result is in the thread"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn declining_or_cancelling_buys_nothing_and_editing_buys_what_the_person_chose() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("no", &agent.url, "buy a gpu").await;
    let interrupt = only_interrupt(&asked);
    let declined = client
        .resume("no", &agent.url, json!([{"interrupt": 0, "status": "resolved", "payload": {"approved": false, "reason": "too dear"}}]))
        .await;
    let said = result_of(&declined, &interrupt);
    assert!(
        said.contains("declined") && said.contains("too dear"),
        "{said}"
    );
    assert_eq!(text(&declined), "The purchase was declined.");

    let asked = client.say("cancel", &agent.url, "buy a gpu").await;
    let interrupt = only_interrupt(&asked);
    let cancelled = client
        .resume(
            "cancel",
            &agent.url,
            json!([{"interrupt": 0, "status": "cancelled"}]),
        )
        .await;
    let said = result_of(&cancelled, &interrupt);
    assert!(said.contains("cancelled"), "{said}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0, "nothing bought");

    let asked = client.say("edit", &agent.url, "buy a gpu").await;
    let interrupt = only_interrupt(&asked);
    let edited = client
        .resume("edit", &agent.url, json!([{"interrupt": 0, "status": "resolved", "payload": {"approved": true, "editedArgs": {"item": "tpu"}}}]))
        .await;
    let bought = result_of(&edited, &interrupt);
    assert!(bought.contains("bought tpu"), "{bought}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_form_takes_fitting_data_and_a_misfit_leaves_it_open() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("f", &agent.url, "ship order 7").await;
    let interrupt = only_interrupt(&asked);
    assert_eq!(interrupt["reason"], "input_required");
    assert_eq!(interrupt["message"], "Where should order 7 go?");
    let schema = &interrupt["responseSchema"];
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    required.sort_unstable();
    assert_eq!(required, ["city", "express", "zip"]);

    let misfit = client
        .resume("f", &agent.url, json!([{"interrupt": 0, "status": "resolved", "payload": {"city": "Paris", "zip": 75001, "express": true}}]))
        .await;
    assert_eq!(types(&misfit), ["RUN_ERROR"], "{misfit}");
    assert_eq!(last(&misfit)["code"], "invalid_answer");
    assert!(
        last(&misfit)["message"]
            .as_str()
            .is_some_and(|m| m.contains("zip")),
        "{misfit}"
    );
    assert_eq!(misfit["interrupts"], json!([interrupt]), "still open");

    let shipped = client
        .resume("f", &agent.url, json!([{"interrupt": 0, "status": "resolved", "payload": {"city": "Paris", "zip": "75001", "express": true}}]))
        .await;
    assert_eq!(
        result_of(&shipped, &interrupt),
        "order 7 ships to 75001 Paris, express"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sign_in_names_its_url_and_ends_signed_in() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("s", &agent.url, "log me in").await;
    let interrupt = only_interrupt(&asked);
    assert_eq!(interrupt["message"], "Sign in to the shop");
    assert_eq!(interrupt["metadata"]["url"], LOGIN_URL);
    assert_eq!(interrupt["metadata"]["kind"], "authorization");
    let done = client
        .resume(
            "s",
            &agent.url,
            json!([{"interrupt": 0, "status": "resolved", "payload": {"approved": true}}]),
        )
        .await;
    assert_eq!(result_of(&done, &interrupt), "signed in");
    assert_eq!(text(&done), "You are signed in.");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_waiting_calls_are_two_interrupts_answered_each_by_its_id() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("two", &agent.url, "buy a gpu and a tpu").await;
    let interrupts = interrupts(&asked);
    assert_eq!(interrupts.len(), 2, "{asked}");
    let calls: Vec<Value> = of_type(&asked, "TOOL_CALL_START")
        .iter()
        .map(|c| c["toolCallId"].clone())
        .collect();
    assert_eq!(
        calls,
        [
            interrupts[0]["toolCallId"].clone(),
            interrupts[1]["toolCallId"].clone()
        ]
    );

    // Resumes must answer every open interrupt; a forged id beside them is refused.
    let forged = client
        .resume(
            "two",
            &agent.url,
            json!([
                {"interrupt": 0, "status": "resolved", "payload": {"approved": true}},
                {"interrupt": 1, "status": "resolved", "payload": {"approved": true}},
                {"interruptId": "forged", "status": "resolved", "payload": {"approved": true}},
            ]),
        )
        .await;
    assert_eq!(last(&forged)["code"], "unknown_interrupt", "{forged}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0, "nothing ran");

    let done = client
        .resume(
            "two",
            &agent.url,
            json!([
                {"interrupt": 1, "status": "resolved", "payload": {"approved": false}},
                {"interrupt": 0, "status": "resolved", "payload": {"approved": true}},
            ]),
        )
        .await;
    let results = of_type(&done, "TOOL_CALL_RESULT");
    assert_eq!(results.len(), 2, "{done}");
    let by_call = |call: &Value| {
        results
            .iter()
            .find(|r| &r["toolCallId"] == call)
            .and_then(|r| r["content"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    assert!(by_call(&calls[0]).ends_with("bought gpu"), "{done}");
    assert!(by_call(&calls[1]).contains("declined"), "{done}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_call_asking_two_questions_is_two_interrupts_of_that_call() {
    let db = TestDb::sqlite();
    let model = crate::shop_agent::wrapping_model().await;
    let agent = Agent::serve_tools(&db, &model, crate::shop_agent::wrapping_toolkit()).await;
    let mut client = Client::start();
    let asked = client.say("gift", &agent.url, "wrap my gift").await;
    let interrupts = interrupts(&asked);
    assert_eq!(interrupts.len(), 2, "{asked}");
    let calls = of_type(&asked, "TOOL_CALL_START");
    assert_eq!(calls.len(), 1, "one call: {asked}");
    for interrupt in &interrupts {
        assert_eq!(interrupt["toolCallId"], calls[0]["toolCallId"], "{asked}");
    }

    let done = client
        .resume(
            "gift",
            &agent.url,
            json!([
                {"interrupt": 1, "status": "resolved", "payload": {"approved": true}},
                {"interrupt": 0, "status": "resolved", "payload": {"approved": true}},
            ]),
        )
        .await;
    let results = of_type(&done, "TOOL_CALL_RESULT");
    assert_eq!(results.len(), 1, "{done}");
    assert_eq!(results[0]["toolCallId"], calls[0]["toolCallId"], "{done}");
    assert_eq!(
        results[0]["content"], "wrapped: note true, gold true",
        "{done}"
    );
    assert_eq!(model.calls(), 2, "{done}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_threads_wait_and_resume_at_once_each_with_its_own_answer() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client
        .step(json!({"parallel": [
            {"agent": "a", "url": agent.url, "say": "buy a gpu"},
            {"agent": "b", "url": agent.url, "say": "buy a tpu"},
        ]}))
        .await;
    let [a, b] = [&asked["results"][0], &asked["results"][1]];
    assert_ne!(a["threadId"], b["threadId"]);
    let (ia, ib) = (only_interrupt(a), only_interrupt(b));
    assert_ne!(ia["id"], ib["id"]);

    // Thread b cannot answer thread a's interrupt.
    let crossed = client
        .resume(
            "b",
            &agent.url,
            json!([
                {"interrupt": 0, "status": "resolved", "payload": {"approved": true}},
                {"interruptId": ia["id"], "status": "resolved", "payload": {"approved": true}},
            ]),
        )
        .await;
    assert_eq!(last(&crossed)["code"], "unknown_interrupt", "{crossed}");

    let done = client
        .step(json!({"parallel": [
            {"agent": "a", "url": agent.url, "resume": [{"interrupt": 0, "status": "resolved", "payload": {"approved": true}}]},
            {"agent": "b", "url": agent.url, "resume": [{"interrupt": 0, "status": "resolved", "payload": {"approved": true}}]},
        ]}))
        .await;
    let got_a = result_of(&done["results"][0], &ia);
    let got_b = result_of(&done["results"][1], &ib);
    assert!(
        got_a.ends_with("bought gpu") && got_b.ends_with("bought tpu"),
        "{done}"
    );
    assert_ne!(
        got_a.split(':').next(),
        got_b.split(':').next(),
        "two orders"
    );
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 2);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_answer_given_on_the_inbox_side_resumes_the_run_once() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("page", &agent.url, "buy a gpu").await;
    let interrupt = only_interrupt(&asked);
    let id = interrupt["id"].as_str().expect("an id");
    agent
        .inbox
        .answer_as(Answer::ok(id), "ada@example.com")
        .await
        .expect("the inbox takes the answer");
    agent
        .inbox
        .resume_next(&agent.client, &agent.tk)
        .await
        .expect("a worker resumes")
        .expect("the run was ready");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);

    let late = client
        .resume(
            "page",
            &agent.url,
            json!([{"interrupt": 0, "status": "resolved", "payload": {"approved": true}}]),
        )
        .await;
    assert_eq!(types(&late), ["RUN_ERROR"], "{late}");
    assert_eq!(last(&late)["code"], "nothing_to_resume");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1, "bought once");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_a_worker_the_next_resume_takes_up_a_run_answered_on_the_inbox_side() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("page-alone", &agent.url, "buy a gpu").await;
    let interrupt = only_interrupt(&asked);
    let id = interrupt["id"].as_str().expect("an id");
    agent
        .inbox
        .answer_as(Answer::ok(id), "ada@example.com")
        .await
        .expect("the inbox takes the answer");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0, "nothing ran yet");

    let resumed = client
        .resume(
            "page-alone",
            &agent.url,
            json!([{"interrupt": 0, "status": "resolved", "payload": {"approved": true}}]),
        )
        .await;
    assert_eq!(
        types(&resumed).first().map(String::as_str),
        Some("RUN_STARTED"),
        "{resumed}"
    );
    assert_eq!(
        types(&resumed).last().map(String::as_str),
        Some("RUN_FINISHED"),
        "{resumed}"
    );
    assert!(resumed.to_string().contains("ORDER-1"), "{resumed}");
    let again = client
        .resume(
            "page-alone",
            &agent.url,
            json!([{"interrupt": 0, "status": "resolved", "payload": {"approved": true}}]),
        )
        .await;
    assert_eq!(last(&again)["code"], "nothing_to_resume", "{again}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1, "bought once");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_resume_with_one_misfit_answer_records_none_and_a_good_one_resumes_once() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("both", &agent.url, "buy a gpu and a tpu").await;
    let open = interrupts(&asked);
    assert_eq!(open.len(), 2, "{asked}");
    let (first, second) = (
        open[0]["id"].as_str().expect("an id").to_owned(),
        open[1]["id"].as_str().expect("an id").to_owned(),
    );
    let requests = agent.inbox.run_requests(&first).await.expect("the run");
    let run = requests[0].run.clone();
    let trail = agent.inbox.audit(&run).await.expect("the audit trail");

    // The first answer fits; the second edits the call into arguments the tool refuses.
    let misfit = client
        .resume(
            "both",
            &agent.url,
            json!([
                {"interrupt": 0, "status": "resolved", "payload": {"approved": true}},
                {"interrupt": 1, "status": "resolved", "payload": {"approved": true, "editedArgs": {"item": 3}}},
            ]),
        )
        .await;
    assert_eq!(types(&misfit), ["RUN_ERROR"], "{misfit}");
    assert_eq!(last(&misfit)["code"], "invalid_answer", "{misfit}");
    let message = last(&misfit)["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains(&format!("`{second}`")) && !message.contains(&format!("`{first}`")),
        "names the second interrupt alone: {message}"
    );
    assert!(message.contains("item"), "names the field: {message}");
    assert_eq!(misfit["interrupts"], json!(open), "both still open");
    let states: Vec<ParkedState> = agent
        .inbox
        .run_requests(&run)
        .await
        .expect("the run")
        .iter()
        .map(|p| p.state)
        .collect();
    assert_eq!(
        states,
        [ParkedState::Waiting, ParkedState::Waiting],
        "the first answer was not kept either"
    );
    let mut after = agent.inbox.audit(&run).await.expect("the audit trail");
    after.retain(|e| e.kind != toolnexus_inbox::AuditKind::AnswerRefused);
    assert_eq!(
        after, trail,
        "nothing new in the audit trail but the refusal"
    );
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0, "nothing ran");

    let done = client
        .resume(
            "both",
            &agent.url,
            json!([
                {"interrupt": 0, "status": "resolved", "payload": {"approved": true}},
                {"interrupt": 1, "status": "resolved", "payload": {"approved": true, "editedArgs": {"item": "npu"}}},
            ]),
        )
        .await;
    assert_eq!(types(&done)[0], "RUN_STARTED", "{done}");
    assert_eq!(last(&done)["outcome"], json!({"type": "success"}), "{done}");
    let results = of_type(&done, "TOOL_CALL_RESULT");
    assert_eq!(results.len(), 2, "{done}");
    assert!(
        results.iter().any(|r| r["content"]
            .as_str()
            .is_some_and(|c| c.contains("bought gpu")))
            && results.iter().any(|r| r["content"]
                .as_str()
                .is_some_and(|c| c.contains("bought npu"))),
        "{done}"
    );
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 2);
    let after = agent.inbox.audit(&run).await.expect("the audit trail");
    let count = |kind: AuditKind| after.iter().filter(|e| e.kind == kind).count();
    assert_eq!(count(AuditKind::Answered), 2, "{after:?}");
    assert_eq!(count(AuditKind::Claimed), 1, "resumed once: {after:?}");
    assert_eq!(count(AuditKind::Resumed), 1, "resumed once: {after:?}");
    client.close().await;
}
