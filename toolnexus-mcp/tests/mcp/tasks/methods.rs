//! rmcp's client drives the task methods directly, hostile input included: cancelled and unknown
//! tasks, responses keyed for another task, requests of the wrong shape, and tasks past their TTL.

use super::*;

#[tokio::test]
async fn a_cancelled_task_never_runs_even_when_answered_after() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(server(deleted.clone(), Duration::from_millis(20))).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/b").await;
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert!(matches!(get(&client, &id).await, TaskPayload::Cancelled));
    client
        .update_task(UpdateTaskParams::new(id.clone(), responses(&key, accept())))
        .await
        .unwrap();
    // The reply is the answer's chance: the server takes an answer, and starts the re-run,
    // before it replies. A cancelled task took none, so nothing was started.
    assert!(matches!(get(&client, &id).await, TaskPayload::Cancelled));
    // Cancelling again is the same empty acknowledgement.
    client.cancel_task(CancelTaskParams::new(id)).await.unwrap();
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_unknown_task_is_invalid_params_on_every_method() {
    let url = serve(server(Arc::default(), Duration::from_millis(20))).await;
    let client = raw(&url).await;
    let unknown = "no-such-task".to_owned();
    let got = invalid_params(client.get_task(GetTaskParams::new(unknown.clone())).await);
    assert!(got.contains("no-such-task"), "{got}");
    let update = UpdateTaskParams::new(unknown.clone(), responses("k", accept()));
    invalid_params(client.update_task(update).await);
    invalid_params(client.cancel_task(CancelTaskParams::new(unknown)).await);
}

#[tokio::test]
async fn a_response_keyed_for_another_task_or_malformed_leaves_the_task_waiting() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(server(deleted.clone(), Duration::from_millis(20))).await;
    let client = raw(&url).await;
    let (a, key_a) = waiting(&client, "/srv/a").await;
    let (b, key_b) = waiting(&client, "/srv/b").await;
    assert_ne!(key_a, key_b);

    // B's request answered through A: no request of A's, so nothing is answered.
    let forged = UpdateTaskParams::new(a.clone(), responses(&key_b, accept()));
    client.update_task(forged).await.unwrap();
    // A's request answered with something that is no elicitation result.
    let malformed = UpdateTaskParams::new(a.clone(), responses(&key_a, json!(42)));
    let why = invalid_params(client.update_task(malformed).await);
    assert!(why.contains("not an elicitation result"), "{why}");
    let unknown_action = json!({"action": "launch"});
    let malformed = UpdateTaskParams::new(a.clone(), responses(&key_a, unknown_action));
    invalid_params(client.update_task(malformed).await);

    // Each reply came once the server had decided on the update: a task that took an
    // answer is working by now, and neither is.
    for (id, key) in [(&a, &key_a), (&b, &key_b)] {
        match get(&client, id).await {
            TaskPayload::InputRequired { input_requests } => {
                assert_eq!(input_requests.keys().collect::<Vec<_>>(), [key]);
            }
            other => panic!("task {id} is still waiting, not {other:?}"),
        }
    }
    assert_eq!(deleted.load(Ordering::SeqCst), 0);

    // Answered for real, by many at once: it runs once.
    let client = Arc::new(client);
    let racers: Vec<_> = (0..8)
        .map(|_| {
            let client = client.clone();
            let update = UpdateTaskParams::new(a.clone(), responses(&key_a, accept()));
            tokio::spawn(async move { client.update_task(update).await })
        })
        .collect();
    for racer in racers {
        racer.await.unwrap().unwrap();
    }
    let TaskPayload::Completed { result } = until_ended(&client, &a).await else {
        panic!("task {a} completes")
    };
    let result: rmcp::model::CallToolResult =
        serde_json::from_value(Value::Object(result)).unwrap();
    assert_eq!(text(&result), (false, "deleted /srv/a".to_owned()));
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    assert!(matches!(
        get(&client, &b).await,
        TaskPayload::InputRequired { .. }
    ));
}

#[tokio::test]
async fn task_requests_of_the_wrong_shape_are_json_rpc_errors_and_change_nothing() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(server(deleted.clone(), Duration::from_millis(20))).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/w").await;
    let bodies = [
        (
            "tasks/update",
            json!({"taskId": id, "inputResponses": "approve"}),
        ),
        (
            "tasks/update",
            json!({"taskId": id, "inputResponses": [accept()]}),
        ),
        ("tasks/update", json!({"taskId": id})),
        (
            "tasks/update",
            json!({"inputResponses": {key.clone(): accept()}}),
        ),
        ("tasks/get", json!({"taskId": 7})),
        ("tasks/cancel", json!({})),
    ];
    for (method, params) in bodies {
        let request =
            ClientRequest::CustomRequest(CustomRequest::new(method, Some(params.clone())));
        match client.send_request(request).await {
            Err(ServiceError::McpError(e)) => {
                assert_eq!(
                    e.code,
                    ErrorCode::INVALID_PARAMS,
                    "{method} {params}: {e:?}"
                );
                assert!(
                    e.message
                        .contains(&format!("the params of `{method}` do not fit it")),
                    "{method} {params}: {}",
                    e.message
                );
            }
            other => panic!("{method} {params} is refused, not {other:?}"),
        }
    }
    match get(&client, &id).await {
        TaskPayload::InputRequired { input_requests } => {
            assert_eq!(input_requests.keys().collect::<Vec<_>>(), [&key]);
        }
        other => panic!("the task still waits, not {other:?}"),
    }
    // The server keeps serving: the real answer still resumes the task, once.
    let update = UpdateTaskParams::new(id.clone(), responses(&key, accept()));
    client.update_task(update).await.unwrap();
    assert!(matches!(
        until_ended(&client, &id).await,
        TaskPayload::Completed { .. }
    ));
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_task_past_its_ttl_is_gone_and_cannot_be_answered() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let server = builder(deleted.clone(), Duration::from_millis(20))
        .task_ttl(Duration::from_millis(300))
        .build()
        .unwrap();
    let url = serve(server).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/t").await;
    let response = client
        .call_tool_once(call("delete_file", json!({"path": "/srv/t"})))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("a task, not {response:?}")
    };
    assert_eq!(created.task.ttl_ms, Some(300));
    // The ttl runs on the server's clock: look until the task is gone rather than sleep
    // past it.
    let gone = within(Duration::from_secs(10), || {
        let (client, id) = (&client, id.clone());
        async move {
            match client.get_task(GetTaskParams::new(id)).await {
                Err(ServiceError::McpError(e)) if e.code == ErrorCode::INVALID_PARAMS => Some(()),
                _ => None,
            }
        }
    })
    .await;
    assert!(gone.is_some(), "the task is gone once its ttl has passed");
    invalid_params(client.get_task(GetTaskParams::new(id.clone())).await);
    let late = UpdateTaskParams::new(id, responses(&key, accept()));
    invalid_params(client.update_task(late).await);
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}
