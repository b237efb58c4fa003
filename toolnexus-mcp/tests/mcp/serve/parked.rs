//! Requests parked for a person, over stdio and streamable HTTP, and gated tools asking through
//! elicitation with the same id each time.

use super::*;

#[tokio::test]
async fn with_a_park_hook_the_request_waits_for_a_person() {
    let shelf = Shelf::default();
    let server = McpServer::builder(shop::toolkit())
        .park(shelf.clone())
        .build()
        .unwrap();
    let client = client(server, Human::new(no_elicitation(), []), legacy()).await;
    let args = json!({"item": "gpu"});
    let first = ask(&client, "approve_purchase", args.clone()).await;
    let parked = shelf
        .parked
        .lock()
        .unwrap()
        .pop()
        .expect("the call is parked");
    assert_eq!(parked.tool, "approve_purchase");
    assert_eq!(parked.args, args);
    let (is_error, message) = first;
    assert!(is_error);
    assert!(message.contains(&parked.request.id), "{message}");
    assert!(
        message.contains("Call `approve_purchase` again"),
        "{message}"
    );

    let answer = Answer::ok(&parked.request.id);
    shelf.answers.lock().unwrap().push((parked, answer));
    let again = ask(&client, "approve_purchase", args).await;
    assert_eq!(again, (false, "approved: gpu".to_owned()));
}

#[tokio::test]
async fn streamable_http_serves_and_consumes_with_suspensions() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().nest_service("/mcp", shop().http_service());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let tools = McpTools::connect(format!("http://{addr}/mcp"))
        .await
        .unwrap();
    assert_eq!(tools.server(), "shop");
    let tk = Toolkit::builder().tools(tools).build().unwrap();
    let args = json!({"order": 7});
    let parked = tk
        .execute("shop__ship_order", args.clone(), Default::default())
        .await;
    let request = ToolResult::pending_of(&parked).expect("the form question suspends");
    assert_eq!(request.kind, "input");
    assert_eq!(request.prompt, "Where should order 7 go?");
    let schema = &request.data.as_ref().unwrap()["schema"];
    assert_eq!(schema["required"], json!(["city", "zip", "express"]));
    let answer = Answer::ok(&request.id).with_data(paris());
    let done = tk
        .execute(
            "shop__ship_order",
            args,
            toolnexus::ToolContext::default().with_answer(answer),
        )
        .await;
    assert_eq!(done.output, "order 7 ships to 75001 Paris, express");
    assert!(!done.is_error);
}

#[tokio::test]
async fn a_gated_tool_asks_through_elicitation_before_it_runs() {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let server = McpServer::builder(gated_remover(runs.clone()))
        .build()
        .unwrap();
    let human = Human::new(form_and_url(), [Says::Decline, Says::Accept(json!({}))]);
    let client = client(server, human.clone(), legacy()).await;

    let refused = ask(&client, "remove", json!({"path": "/a"})).await;
    assert_eq!(
        refused,
        (
            true,
            r#"declined/expired: Allow remove with {"path":"/a"}? (reason: declined)"#.to_owned()
        )
    );
    assert!(
        runs.lock().unwrap().is_empty(),
        "a declined gate runs nothing"
    );
    let approved = ask(&client, "remove", json!({"path": "/b"})).await;
    assert_eq!(approved, (false, "removed /b".to_owned()));
    assert_eq!(*runs.lock().unwrap(), [json!({"path": "/b"})]);
    let asked = human.asked();
    assert_eq!(asked.len(), 2, "each call asked once, before it ran");
    let ElicitRequestParams::FormElicitationParams { message, .. } = &asked[1] else {
        panic!("a form");
    };
    assert_eq!(message, r#"Allow remove with {"path":"/b"}?"#);
}

#[tokio::test]
async fn a_gated_call_parked_for_a_person_asks_again_with_the_same_id() {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let shelf = Shelf::default();
    let server = McpServer::builder(gated_remover(runs.clone()))
        .park(shelf.clone())
        .build()
        .unwrap();
    let client = client(server, Human::new(no_elicitation(), []), legacy()).await;
    let args = json!({"path": "/a"});
    let (is_error, _) = ask(&client, "remove", args.clone()).await;
    assert!(is_error);
    let parked = shelf
        .parked
        .lock()
        .unwrap()
        .pop()
        .expect("the gate is parked");
    assert_eq!(parked.request.gated_tool(), Some("remove"));
    assert!(runs.lock().unwrap().is_empty());

    // Asked again before anyone answered: the same call parks the same request.
    let _ = ask(&client, "remove", args.clone()).await;
    let again = shelf.parked.lock().unwrap().pop().expect("parked again");
    assert_eq!(again.request.id, parked.request.id);

    let answer = Answer::ok(&parked.request.id).with_args(json!({"path": "/tmp/a"}));
    shelf.answers.lock().unwrap().push((parked, answer));
    let (is_error, text) = ask(&client, "remove", args).await;
    assert!(!is_error, "{text}");
    assert!(text.starts_with("removed /tmp/a"), "{text}");
    assert_eq!(*runs.lock().unwrap(), [json!({"path": "/tmp/a"})]);
}
