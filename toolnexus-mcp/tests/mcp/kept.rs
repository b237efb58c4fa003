//! Tasks kept by an inbox, on SQLite and PostgreSQL: a waiting task outlives its server,
//! may be answered on the inbox instead of by the client, and runs once however many
//! answers race through however many servers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CallToolResult, CancelTaskParams, TaskPayload, UpdateTaskParams,
};
use serde_json::{Value, json};
use toolnexus::Answer;
use toolnexus_inbox::{Inbox, ParkedState};
use toolnexus_mcp::McpServer;
use toolnexus_test_support::databases::TestDb;

use crate::support::{call, paris, text};
use crate::tasks::{
    accept, builder, get, invalid_params, raw, responses, serve, serve_until_stopped, until_ended,
    waiting,
};

/// The agent the servers' runs are parked under: theirs alone, so no model's worker
/// takes them.
const AGENT: &str = "mcp-shop";

async fn inbox(db: &TestDb) -> Inbox {
    Inbox::builder(&db.url).agent(AGENT).open().await.unwrap()
}

/// The tasks suite's server, every call a task, keeping waiting tasks in `inbox`.
fn kept(inbox: Inbox, deleted: &Arc<AtomicUsize>) -> McpServer {
    builder(deleted.clone(), Duration::from_millis(20))
        .inbox(inbox)
        .build()
}

fn completed(payload: TaskPayload) -> (bool, String) {
    let TaskPayload::Completed { result } = payload else {
        panic!("the task completes, not {payload:?}")
    };
    let result: CallToolResult = serde_json::from_value(Value::Object(result)).unwrap();
    text(&result)
}

async fn a_waiting_task_outlives_its_server(db: TestDb) {
    let deleted = Arc::new(AtomicUsize::new(0));
    let (url, serving) = serve_until_stopped(kept(inbox(&db).await, &deleted)).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/a").await;
    // The inbox holds the wait: the page lists it, with the call that asked.
    let parked = inbox(&db).await.get(&key).await.unwrap().expect("parked");
    assert_eq!(parked.state, ParkedState::Waiting);
    assert_eq!(parked.request.prompt, "Delete /srv/a?");
    assert_eq!(parked.tool.as_deref(), Some("delete_file"));
    assert_eq!(parked.args, Some(json!({"path": "/srv/a"})));

    // The server stops; another starts on the same database, knowing nothing in memory.
    serving.abort();
    drop(client);
    let url = serve(kept(inbox(&db).await, &deleted)).await;
    let client = raw(&url).await;
    match get(&client, &id).await {
        TaskPayload::InputRequired { input_requests } => {
            assert_eq!(input_requests.keys().collect::<Vec<_>>(), [&key]);
        }
        other => panic!("the task still waits after the restart, not {other:?}"),
    }
    let update = UpdateTaskParams::new(id.clone(), responses(&key, accept()));
    client.update_task(update).await.unwrap();
    assert_eq!(
        completed(until_ended(&client, &id).await),
        (false, "deleted /srv/a".to_owned())
    );
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    let done = inbox(&db).await.get(&key).await.unwrap().expect("kept");
    assert_eq!(done.run_state, ParkedState::Done);
    assert_eq!(done.answered_by.as_deref(), Some("mcp client"));
}

#[tokio::test]
async fn on_sqlite_a_waiting_task_outlives_its_server() {
    a_waiting_task_outlives_its_server(TestDb::sqlite()).await;
}

#[tokio::test]
async fn on_postgres_a_waiting_task_outlives_its_server() {
    a_waiting_task_outlives_its_server(TestDb::postgres().await).await;
}

#[tokio::test]
async fn a_task_answered_on_the_inbox_completes_for_the_client() {
    let db = TestDb::sqlite();
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(kept(inbox(&db).await, &deleted)).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/b").await;
    let people = inbox(&db).await;
    people
        .answer_as(Answer::ok(&key), "ada@example.com")
        .await
        .unwrap();
    assert_eq!(
        completed(until_ended(&client, &id).await),
        (false, "deleted /srv/b".to_owned())
    );
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    // The client's answer, come too late, changes nothing.
    let late = UpdateTaskParams::new(id.clone(), responses(&key, accept()));
    client.update_task(late).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    let done = people.get(&key).await.unwrap().expect("kept");
    assert_eq!(done.answered_by.as_deref(), Some("ada@example.com"));
}

#[tokio::test]
async fn answers_racing_through_two_servers_run_the_call_once() {
    let db = TestDb::postgres().await;
    let deleted = Arc::new(AtomicUsize::new(0));
    let one = raw(&serve(kept(inbox(&db).await, &deleted)).await).await;
    let two = raw(&serve(kept(inbox(&db).await, &deleted)).await).await;
    let (id, key) = waiting(&one, "/srv/c").await;
    let (one, two) = (Arc::new(one), Arc::new(two));
    let racers: Vec<_> = (0..8)
        .map(|n| {
            let client = if n % 2 == 0 { one.clone() } else { two.clone() };
            let update = UpdateTaskParams::new(id.clone(), responses(&key, accept()));
            tokio::spawn(async move { client.update_task(update).await })
        })
        .collect();
    for racer in racers {
        racer.await.unwrap().unwrap();
    }
    for client in [&one, &two] {
        assert_eq!(
            completed(until_ended(client, &id).await),
            (false, "deleted /srv/c".to_owned())
        );
    }
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_declined_task_runs_nothing_and_a_cancelled_one_never_runs() {
    let db = TestDb::sqlite();
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(kept(inbox(&db).await, &deleted)).await;
    let client = raw(&url).await;

    let (id, key) = waiting(&client, "/srv/d").await;
    let decline = json!({"action": "decline"});
    let update = UpdateTaskParams::new(id.clone(), responses(&key, decline));
    client.update_task(update).await.unwrap();
    let (is_error, output) = completed(until_ended(&client, &id).await);
    assert!(is_error, "{output}");
    assert!(output.contains("Delete /srv/d?"), "{output}");

    let (id, key) = waiting(&client, "/srv/e").await;
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert!(matches!(get(&client, &id).await, TaskPayload::Cancelled));
    let update = UpdateTaskParams::new(id.clone(), responses(&key, accept()));
    client.update_task(update).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(matches!(get(&client, &id).await, TaskPayload::Cancelled));
    // The inbox no longer offers it to anyone.
    let people = inbox(&db).await;
    let closed = people.get(&key).await.unwrap().expect("kept");
    assert_eq!(closed.run_state, ParkedState::Done);
    assert!(people.waiting().await.unwrap().is_empty());
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_form_that_does_not_fit_leaves_the_task_waiting() {
    let db = TestDb::sqlite();
    let url = serve(kept(inbox(&db).await, &Arc::default())).await;
    let client = raw(&url).await;
    let response = client
        .call_tool_once(call("ship_order", json!({"order": 7})))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("a task, not {response:?}")
    };
    let id = created.task.task_id;
    let key = loop {
        if let TaskPayload::InputRequired { input_requests } = get(&client, &id).await {
            break input_requests.keys().next().expect("one request").clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let misfit = json!({"action": "accept", "content": {"city": "Paris"}});
    let update = UpdateTaskParams::new(id.clone(), responses(&key, misfit));
    let why = invalid_params(client.update_task(update).await);
    assert!(why.contains("zip"), "{why}");
    assert!(matches!(
        get(&client, &id).await,
        TaskPayload::InputRequired { .. }
    ));
    let fits = json!({"action": "accept", "content": paris()});
    let update = UpdateTaskParams::new(id.clone(), responses(&key, fits));
    client.update_task(update).await.unwrap();
    assert_eq!(
        completed(until_ended(&client, &id).await),
        (false, "order 7 ships to 75001 Paris, express".to_owned())
    );
}
