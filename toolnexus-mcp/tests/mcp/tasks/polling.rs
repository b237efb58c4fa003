//! Our client polls our server's tasks: a task's question becomes a suspension that resumes in a
//! fresh process, declines, forms and sign-ins carry over, polling follows the server's pace, and a
//! client without tasks is answered in the call.

use super::*;

#[tokio::test]
async fn a_run_halted_on_a_tasks_question_resumes_in_a_fresh_process() {
    let url = serve(server(Arc::default(), Duration::from_millis(20))).await;
    // Process 1: the run halts on the task's question; its transcript and request are all
    // it keeps, as text.
    let (transcript, saved) = {
        let mock = MockLlm::start([
            Reply::tool_call("call_1", "shop__approve_purchase", json!({"item": "gpu"})),
            Reply::text("unreachable"),
        ])
        .await
        .unwrap();
        let tk = ours(&url).await;
        let halted = llm(&mock).run("buy a gpu", &tk).await.unwrap();
        assert_eq!(halted.status, RunStatus::Pending);
        let request = halted.pending.clone().unwrap();
        assert_eq!(request.kind, RequestKind::Input);
        assert_eq!(request.prompt, "Approve purchase of gpu?");
        (
            serde_json::to_string(&halted.messages).unwrap(),
            serde_json::to_string(&request).unwrap(),
        )
    };
    // Process 2: a new connection, a new toolkit; the answer reaches the same task.
    let messages: Vec<Message> = serde_json::from_str(&transcript).unwrap();
    let request: Request = serde_json::from_str(&saved).unwrap();
    let mock = MockLlm::start([Reply::text("Bought.")]).await.unwrap();
    let tk = ours(&url).await;
    let done = llm(&mock)
        .run_with_answer(messages, &request, Answer::ok(&request.id), &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "Bought.");
    let call = done.tool_calls.last().unwrap();
    assert_eq!(call.output, "approved: gpu");
    assert!(!call.is_error);
}

#[tokio::test]
async fn a_declined_task_runs_nothing() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(server(deleted.clone(), Duration::from_millis(20))).await;
    let tk = ours(&url).await;
    let args = json!({"path": "/srv/a"});
    let request = asked(&execute(&tk, "shop__delete_file", args.clone(), None).await);
    assert_eq!(request.prompt, "Delete /srv/a?");
    let answer = Answer::decline(&request.id, "not that one");
    let done = execute(&tk, "shop__delete_file", args, Some(answer)).await;
    assert!(done.is_error, "{}", done.output);
    assert!(done.output.contains("Delete /srv/a?"), "{}", done.output);
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_tasks_form_is_filled_with_the_answers_data() {
    let url = serve(server(Arc::default(), Duration::from_millis(20))).await;
    let tk = ours(&url).await;
    let args = json!({"order": 7});
    let request = asked(&execute(&tk, "shop__ship_order", args.clone(), None).await);
    assert_eq!(request.prompt, "Where should order 7 go?");
    let schema = &request.data.as_ref().expect("the form travels")["schema"];
    assert_eq!(schema["required"], json!(["city", "zip", "express"]));
    let answer = Answer::ok(&request.id).with_data(paris());
    let done = execute(&tk, "shop__ship_order", args, Some(answer)).await;
    assert_eq!(done.output, "order 7 ships to 75001 Paris, express");
}

#[tokio::test]
async fn a_tasks_sign_in_is_an_authorization_with_its_url() {
    let url = serve(server(Arc::default(), Duration::from_millis(20))).await;
    let tk = ours(&url).await;
    let request = asked(&execute(&tk, "shop__sign_in", json!({}), None).await);
    assert_eq!(request.kind, RequestKind::Authorization);
    assert_eq!(request.url.as_deref(), Some("https://shop.example/login"));
    let done = execute(
        &tk,
        "shop__sign_in",
        json!({}),
        Some(Answer::ok(&request.id)),
    )
    .await;
    assert_eq!(done.output, "signed in");
}

#[tokio::test]
async fn the_client_polls_as_often_as_the_server_says() {
    // The work takes 100 ms: the first poll finds it working, the next one done, so the
    // call takes the poll interval when that is longer, and little more than the work
    // when it is short.
    let long = Duration::from_millis(1000);
    for (poll, slow) in [(long, true), (Duration::from_millis(10), false)] {
        let url = serve(server(Arc::default(), poll)).await;
        let tk = ours(&url).await;
        let started = Instant::now();
        let done = execute(&tk, "shop__brew", json!({}), None).await;
        let took = started.elapsed();
        assert_eq!(done.output, "brewed");
        assert!(took >= Duration::from_millis(100), "{took:?}");
        assert_eq!(took >= long, slow, "{poll:?}: took {took:?}");
    }
}

#[tokio::test]
async fn a_client_without_tasks_is_answered_in_the_call() {
    let url = serve(server(Arc::default(), Duration::from_millis(20))).await;
    crypto();
    let transport = StreamableHttpClientTransport::from_uri(url);
    let client = Human::new(form_and_url(), [])
        .serve_with_lifecycle(transport, modern())
        .await
        .unwrap();
    let response = client
        .call_tool_once(call("delete_file", json!({"path": "/srv/c"})))
        .await
        .unwrap();
    assert!(
        matches!(response, CallToolResponse::InputRequired(_)),
        "{response:?}"
    );
    let status = client.get_task(GetTaskParams::new("any".to_owned())).await;
    match status {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY)
        }
        other => panic!("tasks/get needs the extension, got {other:?}"),
    }
}
