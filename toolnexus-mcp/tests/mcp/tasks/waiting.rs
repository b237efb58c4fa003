//! Tasks that wait: a person answers at the park hook, a gate waits until approved, a question MCP
//! cannot carry fails the task, and a task the client gives up on is cancelled.

use super::*;

#[tokio::test]
async fn a_person_answers_a_waiting_task_at_the_park_hook_and_it_runs_once() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let shelf = Shelf::default();
    let server = builder(deleted.clone(), Duration::from_millis(20))
        .park(shelf.clone())
        .build()
        .unwrap();
    let url = serve(server).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/p").await;

    let parked = within(PATIENCE, || {
        let parked = shelf.parked.lock().unwrap().clone();
        async move { (!parked.is_empty()).then_some(parked) }
    })
    .await
    .unwrap_or_default();
    let [call] = parked.as_slice() else {
        panic!("the task's request is parked once: {parked:?}")
    };
    assert_eq!(call.tool, "delete_file");
    assert_eq!(call.request.id, key, "parked under the key the client sees");
    assert_eq!(call.request.prompt, "Delete /srv/p?");

    // The person answers at the shelf; the client's next read finds the task resumed.
    let answer = Answer::ok(&call.request.id);
    shelf.answers.lock().unwrap().push((call.clone(), answer));
    let TaskPayload::Completed { result } = until_ended(&client, &id).await else {
        panic!("task {id} completes")
    };
    let result: rmcp::model::CallToolResult =
        serde_json::from_value(Value::Object(result)).unwrap();
    assert_eq!(text(&result), (false, "deleted /srv/p".to_owned()));

    // The client's own answer, late, finds nothing waiting.
    let late = UpdateTaskParams::new(id.clone(), responses(&key, accept()));
    client.update_task(late).await.unwrap();
    // Taken, it would have moved the task back to working before the reply.
    assert!(matches!(
        get(&client, &id).await,
        TaskPayload::Completed { .. }
    ));
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_gate_waits_in_a_task_and_runs_the_tool_only_once_approved() {
    let runs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let server = McpServer::builder(gated_remover(runs.clone()))
        .name("files")
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .build()
        .unwrap();
    let url = serve(server).await;
    let tk = ours(&url).await;

    let a = json!({"path": "/a"});
    let gate = asked(&execute(&tk, "files__remove", a.clone(), None).await);
    assert_eq!(gate.prompt, r#"Allow remove with {"path":"/a"}?"#);
    let refused = execute(
        &tk,
        "files__remove",
        a,
        Some(Answer::decline(&gate.id, "no")),
    )
    .await;
    assert!(refused.is_error, "{}", refused.output);
    assert!(
        runs.lock().unwrap().is_empty(),
        "a declined gate runs nothing"
    );

    let b = json!({"path": "/b"});
    let gate = asked(&execute(&tk, "files__remove", b.clone(), None).await);
    let approved = execute(&tk, "files__remove", b.clone(), Some(Answer::ok(&gate.id))).await;
    assert_eq!(approved.output, "removed /b");
    assert_eq!(*runs.lock().unwrap(), [b]);
}

#[tokio::test]
async fn a_task_asking_what_mcp_cannot_carry_fails_and_the_client_says_why() {
    let nested = NativeTool::of(
        "survey",
        "Asks for an address MCP elicitation cannot carry",
        json!({"type": "object", "properties": {}}),
        |_args: Value, _ctx| async {
            let schema = json!({
                "type": "object",
                "properties": {"address": {"type": "object", "properties": {}}}
            });
            pending!(
                kind = "input",
                prompt = "Where?",
                data = json!({ "schema": schema })
            )
        },
    );
    let tk = Toolkit::builder().tool(nested).build().unwrap();
    let server = McpServer::builder(tk)
        .name("polls")
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .build()
        .unwrap();
    let url = serve(server).await;

    let client = raw(&url).await;
    let response = client
        .call_tool_once(call("survey", json!({})))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("a task, not {response:?}")
    };
    let TaskPayload::Failed { error } = until_ended(&client, &created.task.task_id).await else {
        panic!("the task fails")
    };
    assert_eq!(error["code"], json!(ErrorCode::INTERNAL_ERROR.0));
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("not an MCP elicitation schema"),
        "{message}"
    );

    let tk = ours(&url).await;
    let failed = execute(&tk, "polls__survey", json!({}), None).await;
    assert!(failed.is_error);
    assert!(
        failed.output.contains("failed `survey`"),
        "{}",
        failed.output
    );
    assert!(
        failed.output.contains("not an MCP elicitation schema"),
        "{}",
        failed.output
    );
}

#[tokio::test]
async fn a_task_the_client_gives_up_on_is_cancelled_and_never_finishes() {
    let finished = Arc::new(AtomicUsize::new(0));
    let ended = Arc::new(tokio::sync::Notify::new());
    // The render goes on until the test lets it, which it does only once the run ended:
    // a run that was not stopped would finish then.
    let go = Arc::new(tokio::sync::Notify::new());
    let (done, over, start) = (finished.clone(), ended.clone(), go.clone());
    let slow = NativeTool::of(
        "render",
        "Renders until it is told to finish",
        json!({"type": "object", "properties": {}}),
        move |_args: Value, _ctx| {
            let (done, over, start) = (done.clone(), over.clone(), start.clone());
            async move {
                // Dropped when the run ends, finished or stopped.
                let _ended = Ended(over);
                start.notified().await;
                done.fetch_add(1, Ordering::SeqCst);
                "rendered"
            }
        },
    );
    let tk = Toolkit::builder().tool(slow).build().unwrap();
    let server = McpServer::builder(tk)
        .name("studio")
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .build()
        .unwrap();
    let url = serve(server).await;
    let tools = McpTools::builder()
        .timeout(Duration::from_millis(300))
        .connect(&url)
        .await
        .unwrap();
    let tk = Toolkit::builder().tools(tools).build().unwrap();
    let given_up = execute(&tk, "studio__render", json!({}), None).await;
    assert!(given_up.is_error);
    assert!(
        given_up.output.contains("did not answer `render`"),
        "{}",
        given_up.output
    );
    assert!(
        given_up.output.contains("is cancelled"),
        "{}",
        given_up.output
    );
    tokio::time::timeout(Duration::from_secs(30), ended.notified())
        .await
        .expect("the run ends, finished or stopped");
    go.notify_waiters();
    tokio::task::yield_now().await;
    assert_eq!(
        finished.load(Ordering::SeqCst),
        0,
        "the cancelled run was stopped"
    );
}
