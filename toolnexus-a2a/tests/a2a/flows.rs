//! The official `a2a-sdk` client through each flow: the card, approve, decline, a form, a
//! sign-in, streaming, GetTask's history, cancel, an answer given on the inbox's side,
//! answers that race, and one call asking two questions at once.

use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use toolnexus_inbox::{AuditKind, Inbox, ParkedState};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_card_names_the_endpoint_the_version_streaming_and_a_skill_per_tool() {
    let (agent, _db, _model) = agent().await;
    let out = drive(&agent.url, json!([{"card": {}}])).await;
    let card = &out[0]["card"];
    assert_eq!(card["name"], "Shop", "{card}");
    assert_eq!(card["capabilities"]["streaming"], true);
    let interface = &card["supportedInterfaces"][0];
    assert_eq!(interface["url"], agent.url.as_str());
    assert_eq!(interface["protocolBinding"], "JSONRPC");
    assert_eq!(interface["protocolVersion"], "1.0");
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(skills, ["purchase", "sign_in", "ship_order"]);
    assert_eq!(card["skills"][0]["description"], "Buys an item");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_approval_waits_for_input_and_approve_buys_once() {
    let (agent, _db, _model) = agent().await;
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "buy a gpu"}},
            {"send": {"text": "approve", "task": "$task", "context": "$context"}},
            {"get": {"task": "$task"}},
            {"get": {"task": "$task", "history": 2}},
        ]),
    )
    .await;
    let waiting = task_of(&out[0]);
    assert_eq!(state(waiting), "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    assert_eq!(status_text(waiting), "Approve purchase of gpu?");
    let request = &status_data(waiting)[0];
    assert_eq!(request["kind"], "approval");
    assert_eq!(request["prompt"], "Approve purchase of gpu?");
    assert!(request["id"].as_str().is_some_and(|id| !id.is_empty()));
    assert_eq!(request["data"]["tool"], "purchase");
    assert_eq!(request["data"]["args"], json!({"item": "gpu"}));
    assert!(request["data"]["argsSchema"].is_object());
    let data_part = parts(&waiting["status"]["message"])
        .into_iter()
        .find(|p| p.get("data").is_some())
        .expect("a data part");
    assert_eq!(data_part["mediaType"], "application/json");

    let done = task_of(&out[1]);
    assert_eq!(done["id"], waiting["id"]);
    assert_eq!(done["contextId"], waiting["contextId"]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(status_text(done), "Bought, order ORDER-1.");
    assert_eq!(
        done["artifacts"][0]["parts"][0]["text"],
        "Bought, order ORDER-1."
    );
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);

    let got = task_of(&out[2]);
    assert_eq!(state(got), "TASK_STATE_COMPLETED");
    let history = got["history"].as_array().expect("a history");
    assert_eq!(history[0]["role"], "ROLE_USER");
    assert_eq!(history[0]["parts"][0]["text"], "buy a gpu");
    let rendered = Value::Array(history.clone()).to_string();
    assert!(rendered.contains("\"toolCall\""), "{rendered}");
    assert!(rendered.contains("ORDER-1: bought gpu"), "{rendered}");
    let last = history.last().expect("a last message");
    assert_eq!(last["role"], "ROLE_AGENT");
    assert_eq!(last["parts"][0]["text"], "Bought, order ORDER-1.");
    let short = task_of(&out[3])["history"]
        .as_array()
        .expect("a history")
        .len();
    assert_eq!(short, 2, "historyLength keeps the last messages");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_decline_buys_nothing_and_keeps_the_reason() {
    let (agent, _db, _model) = agent().await;
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "buy a gpu"}},
            {"send": {"text": "decline: too dear", "task": "$task"}},
            {"send": {"text": "buy a cpu"}},
            {"send": {"data": {"ok": false, "reason": "declined"}, "task": "$task1"}},
        ]),
    )
    .await;
    for i in [1, 3] {
        let done = task_of(&out[i]);
        assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
        assert_eq!(status_text(done), "The purchase was declined.");
    }
    let history = task_of(&out[1])["history"].to_string();
    assert!(history.contains("(reason: too dear)"), "{history}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_form_is_checked_before_anything_runs_and_a_misfit_says_which_field() {
    let (agent, _db, _model) = agent().await;
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "ship order 7"}},
            {"send": {"data": {"ok": true, "data": {"city": "Paris", "zip": "75001"}}, "task": "$task"}},
            {"send": {"text": "ship it", "task": "$task"}},
            {"get": {"task": "$task"}},
            {"send": {"data": {"ok": true, "data": {"city": "Paris", "zip": "75001", "express": true}}, "task": "$task"}},
        ]),
    )
    .await;
    let waiting = task_of(&out[0]);
    assert_eq!(state(waiting), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(status_text(waiting), "Where should order 7 go?");
    let schema = &status_data(waiting)[0]["data"]["schema"];
    assert!(schema["properties"]["zip"].is_object(), "{schema}");

    assert_eq!(out[1]["error"], "InvalidParamsError", "{}", out[1]);
    assert!(
        out[1]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("express"),
        "{}",
        out[1]
    );
    assert_eq!(out[2]["error"], "InvalidParamsError", "{}", out[2]);
    assert!(out[2]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("form"));
    assert_eq!(
        state(task_of(&out[3])),
        "TASK_STATE_INPUT_REQUIRED",
        "unchanged"
    );

    let done = task_of(&out[4]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(
        status_text(done),
        "Done: order 7 ships to 75001 Paris, express."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sign_in_requires_auth_with_its_url_and_any_text_resumes() {
    let (agent, _db, _model) = agent().await;
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "log me in"}},
            {"send": {"text": "done, I signed in", "task": "$task"}},
        ]),
    )
    .await;
    let waiting = task_of(&out[0]);
    assert_eq!(state(waiting), "TASK_STATE_AUTH_REQUIRED", "{waiting}");
    assert_eq!(status_text(waiting), "Sign in to the shop");
    let urls: Vec<Value> = parts(&waiting["status"]["message"])
        .into_iter()
        .filter_map(|p| p.get("url").cloned())
        .collect();
    assert_eq!(urls, [json!(LOGIN_URL)]);
    assert_eq!(status_data(waiting)[0]["kind"], "authorization");
    let done = task_of(&out[1]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert!(status_text(done).ends_with("signed in."), "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn streaming_sends_the_task_first_then_closes_at_the_wait_and_at_the_end() {
    let (agent, _db, _model) = agent().await;
    let out = drive(
        &agent.url,
        json!([
            {"stream": {"text": "buy a gpu"}},
            {"stream": {"text": "perhaps", "task": "$task"}},
            {"stream": {"text": "yes", "task": "$task"}},
        ]),
    )
    .await;
    // A continuation refused before the stream starts is the JSON-RPC error, as the SDK
    // reads it.
    assert_eq!(out[1]["error"], "InvalidParamsError", "{}", out[1]);
    let out = [out[0].clone(), out[2].clone()];
    for (result, last) in [
        (&out[0], "TASK_STATE_INPUT_REQUIRED"),
        (&out[1], "TASK_STATE_COMPLETED"),
    ] {
        let events = result["events"]
            .as_array()
            .unwrap_or_else(|| panic!("{result}"));
        assert!(events.len() >= 2, "{result}");
        assert_eq!(state(&events[0]["task"]), "TASK_STATE_WORKING", "{result}");
        let update = &events.last().expect("a last event")["statusUpdate"];
        assert_eq!(update["taskId"], events[0]["task"]["id"]);
        assert_eq!(update["status"]["state"], last, "{result}");
    }
    let end = &out[1]["events"]
        .as_array()
        .expect("events")
        .last()
        .expect("an event")["statusUpdate"];
    assert_eq!(status_text(end), "Bought, order ORDER-1.");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_subscriber_sees_an_approval_on_the_inbox_page_complete_the_task() {
    let db = TestDb::sqlite();
    let model = model().await;
    let options = Options {
        worker: true,
        ..Options::default()
    };
    let agent = Agent::serve_with(&db, &model, Arc::new(AtomicUsize::new(0)), options).await;
    let out = drive(&agent.url, json!([{"send": {"text": "buy a gpu"}}])).await;
    let task = task_of(&out[0]).clone();
    let id = task["id"].as_str().expect("an id").to_owned();
    let request = status_data(&task)[0]["id"]
        .as_str()
        .expect("a request id")
        .to_owned();

    let replies = agent.replies();
    let subscribed = tokio::spawn({
        let url = agent.url.clone();
        let id = id.clone();
        async move { drive(&url, json!([{"subscribe": {"task": id}}])).await }
    });
    // Once the server has answered the subscribe call of the SDK's client (a Python
    // process starting up), the stream has read the waiting task, and a person approves
    // on the inbox page; the worker beside the server resumes the run.
    agent.replies_reach(replies + 1).await;
    approve_on_the_page(&agent.inbox, &request).await;
    let events = subscribed.await.expect("the subscriber")[0]["events"].clone();
    let events = events.as_array().unwrap_or_else(|| panic!("{events}"));
    assert_eq!(state(&events[0]["task"]), "TASK_STATE_INPUT_REQUIRED");
    let update = &events.last().expect("an update")["statusUpdate"];
    assert_eq!(
        update["status"]["state"], "TASK_STATE_COMPLETED",
        "{events:?}"
    );
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);

    let out = drive(
        &agent.url,
        json!([{"send": {"text": "approve", "task": id}}]),
    )
    .await;
    assert_eq!(out[0]["error"], "UnsupportedOperationError", "{}", out[0]);
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_canceled_task_refuses_its_request_and_takes_no_more_messages() {
    let (agent, _db, _model) = agent().await;
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "buy a gpu"}},
            {"cancel": {"task": "$task"}},
            {"send": {"text": "approve", "task": "$task"}},
            {"cancel": {"task": "$task"}},
        ]),
    )
    .await;
    assert_eq!(state(task_of(&out[1])), "TASK_STATE_CANCELED", "{}", out[1]);
    assert_eq!(out[2]["error"], "UnsupportedOperationError", "{}", out[2]);
    assert_eq!(out[3]["error"], "TaskNotCancelableError", "{}", out[3]);
    assert!(agent.inbox.waiting().await.expect("the inbox").is_empty());
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_tasks_answered_at_once_each_buy_once() {
    let (agent, _db, _model) = agent().await;
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "buy a gpu"}},
            {"send": {"text": "buy a cpu"}},
            {"race": [
                {"send": {"text": "approve", "task": "$task"}},
                {"send": {"data": {"ok": true}, "task": "$task1"}},
            ]},
        ]),
    )
    .await;
    let race = out[2]["race"].as_array().expect("both answers");
    let mut orders: Vec<String> = race
        .iter()
        .map(|r| {
            let done = task_of(r);
            assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
            status_text(done)
        })
        .collect();
    orders.sort();
    assert_eq!(orders, ["Bought, order ORDER-1.", "Bought, order ORDER-2."]);
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_continuations_of_one_task_resume_it_exactly_once() {
    let (agent, _db, _model) = agent().await;
    let answer = json!({"send": {"text": "approve", "task": "$task"}});
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "buy a gpu"}},
            {"race": [answer.clone(), answer.clone(), answer.clone(), answer]},
            {"get": {"task": "$task"}},
        ]),
    )
    .await;
    let race = out[1]["race"].as_array().expect("the answers");
    let won = race.iter().filter(|r| r.get("task").is_some()).count();
    assert_eq!(won, 1, "{race:?}");
    for lost in race.iter().filter(|r| r.get("task").is_none()) {
        assert_eq!(lost["error"], "UnsupportedOperationError", "{lost}");
    }
    assert_eq!(state(task_of(&out[2])), "TASK_STATE_COMPLETED");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_continuation_answering_two_requests_is_taken_all_or_none() {
    let (agent, _db, model) = agent().await;
    let out = drive(
        &agent.url,
        json!([{"send": {"text": "buy a gpu and a cpu"}}]),
    )
    .await;
    let waiting = task_of(&out[0]).clone();
    assert_eq!(state(&waiting), "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    let requests = status_data(&waiting);
    assert_eq!(requests.len(), 2, "both calls wait: {waiting}");
    let first = requests[0]["id"].as_str().expect("an id").to_owned();
    let second = requests[1]["id"].as_str().expect("an id").to_owned();
    let task = waiting["id"].as_str().expect("a task id").to_owned();
    let trail = agent.inbox.audit(&first).await.expect("the trail");
    let calls = model.calls();

    // The second answer's edited arguments do not fit the tool: neither answer is taken.
    let out = drive(
        &agent.url,
        json!([
            {"send": {"task": task, "answers": [
                {"id": first, "ok": true},
                {"id": second, "ok": true, "args": {"item": 42}},
            ]}},
            {"get": {"task": task}},
        ]),
    )
    .await;
    assert_eq!(out[0]["error"], "InvalidParamsError", "{}", out[0]);
    let refusal = out[0]["message"].as_str().unwrap_or_default();
    assert!(refusal.contains(&format!("`{second}`")), "{refusal}");
    assert!(!refusal.contains(&first), "{refusal}");
    let unchanged = task_of(&out[1]);
    assert_eq!(
        unchanged["status"], waiting["status"],
        "the task waits as it did"
    );
    let parked = agent.inbox.run_requests(&first).await.expect("the run");
    assert_eq!(parked.len(), 2);
    for request in &parked {
        assert_eq!(request.state, ParkedState::Waiting, "{request:?}");
    }
    assert_eq!(
        agent.inbox.audit(&first).await.expect("the trail"),
        trail,
        "nothing was recorded"
    );
    assert_eq!(model.calls(), calls, "nothing ran");

    // Both answers fit: both are taken, and the run resumes once, buying each item once.
    let out = drive(
        &agent.url,
        json!([{"send": {"task": task, "answers": [
            {"id": first, "ok": true},
            {"id": second, "ok": true},
        ]}}]),
    )
    .await;
    let done = task_of(&out[0]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(
        status_text(done),
        "Bought, order ORDER-1. Bought, order ORDER-2."
    );
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 2);
    let trail = agent.inbox.audit(&first).await.expect("the trail");
    let count = |kind: AuditKind| trail.iter().filter(|e| e.kind == kind).count();
    assert_eq!(count(AuditKind::Answered), 2, "{trail:?}");
    assert_eq!(count(AuditKind::Resumed), 1, "{trail:?}");
    assert_eq!(count(AuditKind::Claimed), 1, "{trail:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_call_asking_two_questions_is_one_task_answered_in_two_messages() {
    let db = TestDb::sqlite();
    let model = crate::shop_agent::wrapping_model().await;
    let options = Options {
        toolkit: Some(crate::shop_agent::wrapping_toolkit()),
        ..Options::default()
    };
    let agent = Agent::serve_with(&db, &model, Arc::new(AtomicUsize::new(0)), options).await;
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "wrap my gift"}},
            {"send": {"task": "$task", "context": "$context", "answers": [{"id": "gold", "ok": true}]}},
            {"send": {"task": "$task", "context": "$context", "answers": [{"id": "note", "ok": true}]}},
        ]),
    )
    .await;
    let waiting = task_of(&out[0]);
    assert_eq!(state(waiting), "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    let asked: Vec<Value> = status_data(waiting);
    let ids: Vec<&str> = asked.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(
        ids,
        ["note", "gold"],
        "both questions, in one task: {waiting}"
    );

    let half = task_of(&out[1]);
    assert_eq!(half["id"], waiting["id"]);
    assert_eq!(state(half), "TASK_STATE_INPUT_REQUIRED", "{half}");
    let open: Vec<Value> = status_data(half);
    let ids: Vec<&str> = open.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(
        ids,
        ["note"],
        "only the unanswered question is left: {half}"
    );

    let done = task_of(&out[2]);
    assert_eq!(done["id"], waiting["id"]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(status_text(done), "Done: wrapped: note true, gold true.");
    assert_eq!(
        model.calls(),
        2,
        "the model is called again only once the call has its result"
    );
}

/// Serves the inbox page over `inbox` and approves request `id` on it as a person does:
/// the link's token, the request's page, its form posted from the same origin.
async fn approve_on_the_page(inbox: &Inbox, id: &str) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let host = listener.local_addr().expect("an address").to_string();
    let page = toolnexus_inbox::web::router(inbox.clone(), "page-token");
    tokio::spawn(async move { axum::serve(listener, page).await });
    let status = crate::support::approve_on_the_page_as(&host, "page-token", id).await;
    assert_eq!(status, 303, "the page recorded the approval");
}
