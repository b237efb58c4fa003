//! Agents that misbehave: a card that is no card, replies that are not JSON-RPC. Each is a
//! clear error (at connect, or as the tool's error result), never a panic.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};
use toolnexus::{Answer, Tool, ToolContext};
use toolnexus_a2a::{A2aError, RemoteAgent};

#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<HeaderMap>>>);

/// Serves the misbehaving agents; `http://127.0.0.1:PORT/<name>` is each one's base URL.
async fn serve() -> (String, Seen) {
    let seen = Seen::default();
    let app = Router::new()
        .route("/{name}/.well-known/agent-card.json", get(card))
        .route("/{name}/rpc", post(rpc))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, seen)
}

fn good_card(name: &str, binding: &str) -> Value {
    json!({
        "name": name, "description": "misbehaves", "version": "1",
        "supportedInterfaces": [
            {"url": format!("/{name}/rpc"), "protocolBinding": binding, "protocolVersion": "1.0"}
        ],
        "capabilities": {}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": []
    })
}

async fn card(Path(name): Path<String>) -> Response {
    match name.as_str() {
        "not-json" => "{not json".into_response(),
        "no-interfaces" => json!({"name": "x", "description": "y"})
            .to_string()
            .into_response(),
        "grpc-only" => good_card(&name, "GRPC").to_string().into_response(),
        "missing" => StatusCode::NOT_FOUND.into_response(),
        _ => good_card(&name, "JSONRPC").to_string().into_response(),
    }
}

async fn rpc(
    Path(name): Path<String>,
    State(seen): State<Seen>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    seen.0.lock().unwrap().push(headers);
    let id = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|b| b.get("id").cloned())
        .unwrap_or(Value::Null);
    let reply = |v: Value| v.to_string().into_response();
    let method = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|b| b["method"].as_str().map(str::to_owned))
        .unwrap_or_default();
    match name.as_str() {
        // Answers before the task settles; GetTask then finds it completed.
        "working" if method == "GetTask" => reply(json!({"jsonrpc": "2.0", "id": id, "result": {
            "id": "t-9", "contextId": "c-9", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"text": "done after a while"}]}]}})),
        "working" => reply(json!({"jsonrpc": "2.0", "id": id, "result": {"task": {
            "id": "t-9", "contextId": "c-9", "status": {"state": "TASK_STATE_WORKING"}}}})),
        "silent" => {
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            StatusCode::OK.into_response()
        }
        "huge" => vec![b' '; 17 * 1024 * 1024].into_response(),
        "html" => "<html>oops</html>".into_response(),
        "crash" => (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        "rpc-error" => reply(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32001, "message": "Task not found"}})),
        "wrong-result" => reply(json!({"jsonrpc": "2.0", "id": id, "result": {"foo": 1}})),
        "wrong-id" => reply(json!({"jsonrpc": "2.0", "id": "someone-else",
            "result": {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}})),
        "unknown-state" => reply(json!({"jsonrpc": "2.0", "id": id, "result": {"task": {
            "id": "t", "contextId": "c", "status": {"state": "TASK_STATE_DREAMING"}}}})),
        _ => reply(json!({"jsonrpc": "2.0", "id": id, "result": {"message": {
            "messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hello from the agent"}]}}})),
    }
}

#[tokio::test]
async fn a_card_that_is_no_a2a_card_is_refused_at_connect() {
    let (base, _) = serve().await;
    let err = |name: &str| {
        let url = format!("{base}/{name}");
        async move { RemoteAgent::connect(url).await.unwrap_err() }
    };
    assert!(matches!(err("not-json").await, A2aError::Card { .. }));
    let missing_fields = err("no-interfaces").await;
    assert!(
        matches!(missing_fields, A2aError::Card { .. }),
        "{missing_fields}"
    );
    let grpc = err("grpc-only").await.to_string();
    assert!(
        grpc.contains("offers no JSON-RPC or HTTP+JSON interface") && grpc.contains("GRPC 1.0"),
        "{grpc}"
    );
    let missing = err("missing").await;
    assert!(
        matches!(missing, A2aError::Status { status: 404, .. }),
        "{missing}"
    );
    let nobody = RemoteAgent::connect("http://127.0.0.1:9/")
        .await
        .unwrap_err();
    assert!(matches!(nobody, A2aError::Http { .. }), "{nobody}");
}

#[tokio::test]
async fn replies_that_are_not_json_rpc_are_tool_errors_naming_the_problem() {
    let (base, _) = serve().await;
    let call = |name: &'static str| {
        let url = format!("{base}/{name}");
        async move {
            let agent = RemoteAgent::connect(url).await.unwrap();
            let result = agent
                .execute(json!({"message": "hi"}), ToolContext::default())
                .await;
            assert!(result.is_error, "{name}: {result:?}");
            result.output
        }
    };
    let html = call("html").await;
    assert!(
        html.contains(
            "did not answer SendMessage as its binding says: the body is not a JSON-RPC response"
        ),
        "{html}"
    );
    assert!(call("crash").await.ends_with("answered HTTP 500"));
    let refused = call("rpc-error").await;
    assert!(
        refused.contains("refused SendMessage: Task not found (A2A error -32001)"),
        "{refused}"
    );
    let wrong = call("wrong-result").await;
    assert!(
        wrong.contains("the result is not what SendMessage returns"),
        "{wrong}"
    );
    assert!(call("wrong-id")
        .await
        .contains("the reply's id is not the request's"));
    let state = call("unknown-state").await;
    assert!(
        state.contains("the result is not what SendMessage returns"),
        "{state}"
    );
}

#[tokio::test]
async fn headers_go_with_every_request_and_stay_out_of_debug() {
    let (base, seen) = serve().await;
    let agent = RemoteAgent::builder(format!("{base}/polite"))
        .bearer_auth("s3cret-token")
        .header("x-tenant", "acme")
        .connect()
        .await
        .unwrap();
    let result = agent
        .execute(json!({"message": "hi"}), ToolContext::default())
        .await;
    assert_eq!(result.output, "hello from the agent");
    let headers = seen.0.lock().unwrap()[0].clone();
    assert_eq!(headers["authorization"], "Bearer s3cret-token");
    assert_eq!(headers["x-tenant"], "acme");
    assert_eq!(headers["a2a-version"], "1.0");
    assert!(!format!("{agent:?}").contains("s3cret"));
}

#[tokio::test]
async fn bad_arguments_and_foreign_answers_are_refused_before_anything_is_sent() {
    let (base, seen) = serve().await;
    let agent = RemoteAgent::connect(format!("{base}/polite"))
        .await
        .unwrap();
    let no_message = agent
        .execute(json!({"text": "hi"}), ToolContext::default())
        .await;
    assert!(no_message.is_error);
    assert!(
        no_message.output.contains("needs a `message`"),
        "{}",
        no_message.output
    );
    let forged = ToolContext::default().with_answer(Answer::ok("someone-elses-request"));
    let foreign = agent.execute(json!({"message": "hi"}), forged).await;
    assert!(foreign.is_error);
    assert!(
        foreign
            .output
            .contains("answers no request of the remote agent"),
        "{}",
        foreign.output
    );
    assert!(
        seen.0.lock().unwrap().is_empty(),
        "nothing reached the agent"
    );
}

#[tokio::test]
async fn a_task_left_working_is_polled_until_it_settles() {
    let (base, seen) = serve().await;
    let agent = RemoteAgent::builder(format!("{base}/working"))
        .poll_interval(std::time::Duration::from_millis(10))
        .connect()
        .await
        .unwrap();
    let result = agent
        .execute(json!({"message": "hi"}), ToolContext::default())
        .await;
    assert_eq!(result.output, "done after a while");
    assert_eq!(
        seen.0.lock().unwrap().len(),
        2,
        "SendMessage, then one GetTask"
    );
}

#[tokio::test]
async fn an_agent_that_never_answers_or_answers_without_end_is_cut_off() {
    let (base, _) = serve().await;
    let agent = RemoteAgent::builder(format!("{base}/silent"))
        .timeout(std::time::Duration::from_millis(300))
        .connect()
        .await
        .unwrap();
    let result = agent
        .execute(json!({"message": "hi"}), ToolContext::default())
        .await;
    assert!(result.is_error);
    assert!(
        result.output.contains("did not answer within 300ms"),
        "{}",
        result.output
    );

    let agent = RemoteAgent::connect(format!("{base}/huge")).await.unwrap();
    let result = agent
        .execute(json!({"message": "hi"}), ToolContext::default())
        .await;
    assert!(result.is_error);
    assert!(
        result.output.contains("is larger than 16777216 bytes"),
        "{}",
        result.output
    );
}
