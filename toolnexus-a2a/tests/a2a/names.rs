//! ProtoJSON readers take a field by its proto name (`task_id`) as well as by its JSON name
//! (`taskId`), so the server does too, on JSON-RPC, over raw HTTP since the official SDK
//! only ever sends JSON names: a message, `GetTask`, `ListTasks` and the push
//! configurations' operations all read their fields so, and what a data part carries is
//! kept as it was sent.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::support::*;

async fn call(url: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .expect("the server answers")
        .json()
        .await
        .expect("a JSON-RPC response")
}

fn result<'a>(response: &'a Value, what: &str) -> &'a Value {
    assert!(response.get("error").is_none(), "{what}: {response}");
    &response["result"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fields_named_by_their_proto_names_are_read_as_by_their_json_names() {
    let db = TestDb::sqlite();
    let model = model().await;
    let options = Options {
        server: Some(Box::new(|server| server.push_notifications())),
        inbox: Some(Box::new(|inbox| inbox.allow_private_posts())),
        ..Options::default()
    };
    let agent = Agent::serve_with(&db, &model, Arc::new(AtomicUsize::new(0)), options).await;
    let url = agent.url.as_str();

    let sent = call(
        url,
        "SendMessage",
        json!({"message": {
            "message_id": "m-proto",
            "role": "ROLE_USER",
            "context_id": "ctx-proto",
            "parts": [{"text": "buy a gpu"}, {"data": {"order_id": 7}}],
        }}),
    )
    .await;
    let task = &result(&sent, "SendMessage")["task"];
    assert_eq!(task["contextId"], "ctx-proto", "{task}");
    assert_eq!(state(task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let id = task["id"].as_str().expect("a task id").to_owned();
    let other = call(
        url,
        "SendMessage",
        json!({"message": {"message_id": "m-other", "role": "ROLE_USER", "context_id": "ctx-other", "parts": [{"text": "hello"}]}}),
    )
    .await;
    result(&other, "another task");

    let whole = call(url, "GetTask", json!({"id": id})).await;
    let history = result(&whole, "GetTask")["history"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(history.len() > 1, "{whole}");
    assert_eq!(history[0]["messageId"], "m-proto", "{whole}");
    assert_eq!(
        history[0]["parts"][1]["data"],
        json!({"order_id": 7}),
        "a data part's keys are the sender's: {whole}"
    );
    let short = call(url, "GetTask", json!({"id": id, "history_length": 1})).await;
    let kept = result(&short, "GetTask with history_length")["history"]
        .as_array()
        .map(Vec::len);
    assert_eq!(kept, Some(1), "{short}");

    let listed = call(
        url,
        "ListTasks",
        json!({"context_id": "ctx-proto", "page_size": 10}),
    )
    .await;
    let tasks = result(&listed, "ListTasks")["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ids: Vec<&str> = tasks.iter().filter_map(|t| t["id"].as_str()).collect();
    assert_eq!(ids, [id.as_str()], "{listed}");

    let hook = "http://127.0.0.1:9/hook";
    let created = call(
        url,
        "CreateTaskPushNotificationConfig",
        json!({"task_id": id, "id": "ops", "url": hook, "authentication": {"scheme": "Bearer", "credentials": "c"}}),
    )
    .await;
    let config = result(&created, "CreateTaskPushNotificationConfig");
    assert_eq!(config["taskId"], json!(id), "{created}");
    assert_eq!(config["id"], "ops", "{created}");
    let got = call(
        url,
        "GetTaskPushNotificationConfig",
        json!({"task_id": id, "id": "ops"}),
    )
    .await;
    assert_eq!(result(&got, "GetTaskPushNotificationConfig")["url"], hook);
    let configs = call(
        url,
        "ListTaskPushNotificationConfigs",
        json!({"task_id": id, "page_size": 5}),
    )
    .await;
    let count = result(&configs, "ListTaskPushNotificationConfigs")["configs"]
        .as_array()
        .map(Vec::len);
    assert_eq!(count, Some(1), "{configs}");
    let deleted = call(
        url,
        "DeleteTaskPushNotificationConfig",
        json!({"task_id": id, "id": "ops"}),
    )
    .await;
    result(&deleted, "DeleteTaskPushNotificationConfig");
    let gone = call(
        url,
        "GetTaskPushNotificationConfig",
        json!({"task_id": id, "id": "ops"}),
    )
    .await;
    assert_eq!(gone["error"]["code"], -32001, "{gone}");
}
