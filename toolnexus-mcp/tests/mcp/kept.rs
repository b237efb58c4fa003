//! Tasks kept by an inbox, on SQLite and PostgreSQL: a waiting task outlives its server,
//! may be answered on the inbox instead of by the client, and runs once however many
//! answers race through however many servers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolResult, CancelTaskParams, TaskPayload, UpdateTaskParams};
use serde_json::{Value, json};
use toolnexus::{Answer, NativeTool, Request, ToolContext, ToolResult, Toolkit, pending_all};
use toolnexus_inbox::{AuditKind, Inbox, ParkedState};
use toolnexus_mcp::McpServer;
use toolnexus_test_support::databases::TestDb;

use crate::support::{paris, text};
use crate::tasks::{
    accept, asking, builder, get, invalid_params, raw, responses, serve, serve_until_stopped,
    until_ended, waiting,
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
        .unwrap()
}

/// How many answers the inbox took for the run of request `key`.
async fn answers(inbox: &Inbox, key: &str) -> usize {
    let trail = inbox.audit(key).await.unwrap();
    trail
        .iter()
        .filter(|e| e.kind == AuditKind::Answered)
        .count()
}

fn completed(payload: TaskPayload) -> (bool, String) {
    let TaskPayload::Completed { result } = payload else {
        panic!("the task completes, not {payload:?}")
    };
    let result: CallToolResult = serde_json::from_value(Value::Object(result)).unwrap();
    text(&result)
}

toolnexus_test_support::both_engines!(a_waiting_task_outlives_its_server);

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
    // The update had its chance before its reply: the inbox took no second answer, and a
    // run that is done has nothing left to resume.
    assert_eq!(answers(&people, &key).await, 1);
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
    // The update had its chance before its reply: the inbox recorded the cancel, first,
    // and no answer.
    let people = inbox(&db).await;
    assert_eq!(answers(&people, &key).await, 0);
    let trail = people.audit(&key).await.unwrap();
    let cancels = trail.iter().filter(|e| e.kind == AuditKind::Cancelled);
    assert_eq!(cancels.count(), 1, "{trail:?}");
    assert!(matches!(get(&client, &id).await, TaskPayload::Cancelled));
    // The inbox no longer offers it to anyone, and its run will never resume.
    let closed = people.get(&key).await.unwrap().expect("kept");
    assert_eq!(closed.run_state, ParkedState::Failed);
    assert!(people.waiting().await.unwrap().is_empty());
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_form_that_does_not_fit_leaves_the_task_waiting() {
    let db = TestDb::sqlite();
    let url = serve(kept(inbox(&db).await, &Arc::default())).await;
    let client = raw(&url).await;
    let (id, key) = asking(&client, "ship_order", json!({"order": 7})).await;
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

/// A tool that asks for a zip code of five characters or more, and counts its runs.
fn register(runs: Arc<AtomicUsize>) -> impl toolnexus::Tool {
    NativeTool::of(
        "register",
        "Registers an address once a person gives its zip code",
        json!({"type": "object", "properties": {}}),
        move |_args: Value, ctx: ToolContext| {
            let runs = runs.clone();
            async move {
                match ctx.answer {
                    Some(a) if a.ok => {
                        runs.fetch_add(1, Ordering::SeqCst);
                        let zip = a.data.as_ref().map_or(Value::Null, |d| d["zip"].clone());
                        ToolResult::ok(format!("registered {zip}"))
                    }
                    Some(_) => ToolResult::error("not registered"),
                    None => ToolResult::pending(Request::new("input", "Your zip code?").with_data(
                        json!({"schema": {
                            "type": "object",
                            "properties": {"zip": {"type": "string", "minLength": 5}},
                            "required": ["zip"]
                        }}),
                    )),
                }
            }
        },
    )
}

#[tokio::test]
async fn a_misfit_update_records_nothing_and_a_good_one_runs_the_call_once() {
    let db = TestDb::sqlite();
    let runs = Arc::new(AtomicUsize::new(0));
    let tk = Toolkit::builder()
        .tool(register(runs.clone()))
        .build()
        .unwrap();
    let server = McpServer::builder(tk)
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .inbox(inbox(&db).await)
        .build()
        .unwrap();
    let client = raw(&serve(server).await).await;
    let (id, key) = asking(&client, "register", json!({})).await;

    let misfit = json!({"action": "accept", "content": {"zip": "750"}});
    let update = UpdateTaskParams::new(id.clone(), responses(&key, misfit));
    let why = invalid_params(client.update_task(update).await);
    assert!(why.contains("zip"), "names the field: {why}");
    assert!(why.contains(&key), "names the request: {why}");
    let people = inbox(&db).await;
    let requests = people.run_requests(&key).await.unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].state, ParkedState::Waiting, "still waiting");
    assert_eq!(
        answers(&people, &key).await,
        0,
        "nothing in the audit trail"
    );
    assert!(matches!(
        get(&client, &id).await,
        TaskPayload::InputRequired { .. }
    ));

    let fits = json!({"action": "accept", "content": {"zip": "75001"}});
    let update = UpdateTaskParams::new(id.clone(), responses(&key, fits));
    client.update_task(update).await.unwrap();
    assert_eq!(
        completed(until_ended(&client, &id).await),
        (false, r#"registered "75001""#.to_owned())
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(answers(&people, &key).await, 1);
}

/// A tool that asks at once whether to go ahead and for a note, and counts its runs.
fn label(runs: Arc<AtomicUsize>) -> impl toolnexus::Tool {
    NativeTool::of(
        "label",
        "Prints a label once a person approves it and gives its note",
        json!({"type": "object", "properties": {}}),
        move |_args: Value, ctx: ToolContext| {
            let runs = runs.clone();
            async move {
                match ctx.answers.as_slice() {
                    [] => pending_all![
                        (kind = "approval", prompt = "Print a label?", id = "print"),
                        (kind = "question", prompt = "Its note?", id = "note"),
                    ],
                    [print, note] => {
                        runs.fetch_add(1, Ordering::SeqCst);
                        let note = note
                            .data
                            .as_ref()
                            .map_or(Value::Null, |d| d["answer"].clone());
                        ToolResult::ok(format!("printed: {} {note}", print.ok))
                    }
                    other => ToolResult::error(format!("{} answers", other.len())),
                }
            }
        },
    )
}

#[tokio::test]
async fn a_kept_task_asking_two_questions_takes_them_one_at_a_time_and_runs_once() {
    let db = TestDb::sqlite();
    let runs = Arc::new(AtomicUsize::new(0));
    let tk = Toolkit::builder()
        .tool(label(runs.clone()))
        .build()
        .unwrap();
    let server = McpServer::builder(tk)
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .inbox(inbox(&db).await)
        .build()
        .unwrap();
    let client = raw(&serve(server).await).await;
    let (id, _) = asking(&client, "label", json!({})).await;
    let TaskPayload::InputRequired { input_requests } = get(&client, &id).await else {
        panic!("the task asks")
    };
    let mut keys: Vec<&String> = input_requests.keys().collect();
    keys.sort();
    assert_eq!(keys, ["note", "print"], "both questions at once");
    let people = inbox(&db).await;
    assert_eq!(
        people.run_requests("print").await.unwrap().len(),
        2,
        "a row each"
    );

    let update = UpdateTaskParams::new(id.clone(), responses("print", accept()));
    client.update_task(update).await.unwrap();
    match get(&client, &id).await {
        TaskPayload::InputRequired { input_requests } => {
            assert_eq!(input_requests.keys().collect::<Vec<_>>(), ["note"]);
        }
        other => panic!("the task waits for the note, not {other:?}"),
    }
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "nothing ran on half the answers"
    );

    let note = json!({"action": "accept", "content": {"answer": "fragile"}});
    let update = UpdateTaskParams::new(id.clone(), responses("note", note));
    client.update_task(update).await.unwrap();
    assert_eq!(
        completed(until_ended(&client, &id).await),
        (false, r#"printed: true "fragile""#.to_owned())
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(answers(&people, "print").await, 2);
}

#[tokio::test]
async fn a_task_an_answer_reached_first_is_not_cancelled() {
    let db = TestDb::sqlite();
    let deleted = Arc::new(AtomicUsize::new(0));
    let people = inbox(&db).await;
    let url = serve(kept(people.clone(), &deleted)).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/f").await;
    // A person approves on the inbox's side before the client cancels.
    people
        .answer_as(Answer::ok(&key), "ada@example.com")
        .await
        .unwrap();
    let refused = invalid_params(client.cancel_task(CancelTaskParams::new(id.clone())).await);
    assert!(refused.contains("cannot be cancelled"), "{refused}");
    assert_eq!(
        completed(until_ended(&client, &id).await),
        (false, "deleted /srv/f".to_owned())
    );
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}
