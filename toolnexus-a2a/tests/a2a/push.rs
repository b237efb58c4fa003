//! Push notifications, driven by the official `a2a-sdk` client: a purchase that waits for
//! approval is pushed to the caller's webhook as `input-required`, and its end too, each
//! configuration with its own token or credentials; only the task's starter manages its
//! configurations; a server that does not serve them says so in its card and refuses them.
//! Every body the webhook got is read by the SDK as a `StreamResponse`, strictly.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use toolnexus_inbox::{BearerTokens, Door};

use crate::support::*;

/// One notification as the webhook got it.
#[derive(Debug, Clone)]
struct Got {
    /// The path's last segment: which configuration it was sent for.
    hook: String,
    token: Option<String>,
    authorization: Option<String>,
    content_type: Option<String>,
    body: Value,
}

impl Got {
    fn state(&self) -> &str {
        self.body["statusUpdate"]["status"]["state"]
            .as_str()
            .unwrap_or_default()
    }
}

/// A webhook on loopback keeping what it got, at `{url}/{name}` for any name.
struct Webhook {
    url: String,
    got: Arc<Mutex<Vec<Got>>>,
}

impl Webhook {
    async fn start() -> Webhook {
        let got = Arc::new(Mutex::new(Vec::new()));
        let app = Router::new()
            .route("/hooks/{name}", post(receive))
            .with_state(got.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!(
            "http://{}/hooks",
            listener.local_addr().expect("an address")
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Webhook { url, got }
    }

    fn got(&self, hook: &str) -> Vec<Got> {
        let got = self.got.lock().unwrap_or_else(|p| p.into_inner());
        got.iter().filter(|g| g.hook == hook).cloned().collect()
    }

    /// Waits until `hook` was told of `state`.
    async fn told(&self, hook: &str, state: &str) -> Vec<Got> {
        let found = within(Duration::from_secs(30), || async {
            let got = self.got(hook);
            got.iter().any(|g| g.state() == state).then_some(got)
        })
        .await;
        found.unwrap_or_else(|| panic!("`{hook}` was not told {state}: {:?}", self.got(hook)))
    }
}

async fn receive(
    State(got): State<Arc<Mutex<Vec<Got>>>>,
    Path(hook): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    got.lock().unwrap_or_else(|p| p.into_inner()).push(Got {
        hook,
        token: header("x-a2a-notification-token"),
        authorization: header("authorization"),
        content_type: header("content-type"),
        body,
    });
}

/// The shop agent serving push notifications, its webhooks allowed on loopback, with an
/// inbox worker delivering them, and the scripted model it talks to (served while it
/// lives); `more` sets the server up further.
async fn pushing(
    db: &TestDb,
    more: impl FnOnce(toolnexus_a2a::A2aServerBuilder) -> toolnexus_a2a::A2aServerBuilder + 'static,
) -> (Agent, toolnexus::testing::MockLlm) {
    let model = model().await;
    let options = Options {
        worker: true,
        server: Some(Box::new(move |server| more(server.push_notifications()))),
        inbox: Some(Box::new(|inbox| inbox.allow_private_posts())),
        ..Options::default()
    };
    let agent = Agent::serve_with(db, &model, Arc::new(AtomicUsize::new(0)), options).await;
    (agent, model)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_wait_for_approval_and_the_end_are_pushed_to_each_webhook() {
    let db = TestDb::sqlite();
    let (agent, _model) = pushing(&db, |server| server).await;
    let hook = Webhook::start().await;
    let first = format!("{}/first", hook.url);
    let out = drive(
        &agent.url,
        json!([{"send": {"text": "buy a gpu", "push": {"url": first, "pushToken": "tok-1"}}}]),
    )
    .await;
    let task = task_of(&out[0]).clone();
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let id = task["id"].as_str().expect("a task id").to_owned();

    let waiting = hook.told("first", "TASK_STATE_INPUT_REQUIRED").await;
    let told = waiting.last().expect("a notification");
    assert_eq!(told.token.as_deref(), Some("tok-1"));
    assert_eq!(told.content_type.as_deref(), Some("application/a2a+json"));
    assert_eq!(told.body["statusUpdate"]["taskId"], json!(id));

    // A second webhook, with credentials, set on the waiting task.
    let second = format!("{}/second", hook.url);
    let auth = json!({"scheme": "Bearer", "credentials": "cred-2"});
    let out = drive(
        &agent.url,
        json!([
            {"createPush": {"task": id, "id": "audit", "url": second, "auth": auth}},
            {"listPush": {"task": id}},
            {"getPush": {"task": id, "id": "audit"}},
        ]),
    )
    .await;
    assert_eq!(out[0]["config"]["id"], "audit", "{}", out[0]);
    let ids: Vec<&str> = out[1]["configs"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ids, [id.as_str(), "audit"], "{}", out[1]);
    assert_eq!(out[2]["config"]["url"], json!(second), "{}", out[2]);

    let out = drive(
        &agent.url,
        json!([{"send": {"task": id, "text": "approve"}}]),
    )
    .await;
    assert_eq!(state(task_of(&out[0])), "TASK_STATE_COMPLETED");
    let first = hook.told("first", "TASK_STATE_COMPLETED").await;
    let second = hook.told("second", "TASK_STATE_COMPLETED").await;
    assert_eq!(
        second.last().and_then(|g| g.authorization.as_deref()),
        Some("Bearer cred-2")
    );
    assert!(second.iter().all(|g| g.token.is_none()), "{second:?}");

    // In order, each status once: the wait before the end, nothing after it; what the
    // purchase produced comes just before its end.
    let states: Vec<&str> = first
        .iter()
        .map(Got::state)
        .filter(|s| !s.is_empty())
        .collect();
    let wait = states
        .iter()
        .position(|s| *s == "TASK_STATE_INPUT_REQUIRED");
    assert!(wait.is_some(), "{states:?}");
    assert_eq!(states.last(), Some(&"TASK_STATE_COMPLETED"), "{states:?}");
    // No status twice in a row: a state and the message it came with.
    let told: Vec<(&str, &Value)> = first
        .iter()
        .filter(|g| !g.state().is_empty())
        .map(|g| {
            (
                g.state(),
                &g.body["statusUpdate"]["status"]["message"]["messageId"],
            )
        })
        .collect();
    assert!(told.windows(2).all(|w| w[0] != w[1]), "{told:?}");
    // Set after the wait was told, the second is told what came after it: the run going
    // on (when the pusher looked while it did), what it produced, then its end.
    let second_states: Vec<&str> = second.iter().map(Got::state).collect();
    assert!(
        !second_states.contains(&"TASK_STATE_INPUT_REQUIRED"),
        "{second_states:?}"
    );
    let [.., produced, end] = second.as_slice() else {
        panic!("an artifact and the end: {second:?}");
    };
    assert_eq!(end.state(), "TASK_STATE_COMPLETED");
    let produced = &produced.body["artifactUpdate"]["artifact"];
    assert!(produced.to_string().contains("ORDER-"), "{produced}");

    // An ended task's configurations are dropped, tokens and all, once its end is told.
    let inbox = agent.inbox.clone();
    let dropped = within(Duration::from_secs(30), || {
        let (inbox, id) = (inbox.clone(), id.clone());
        async move {
            let kept = inbox.record::<Value>(Door::named("a2a-push"), &id).await;
            let configs = kept.ok().flatten().map(|k| k.data["configs"].clone());
            configs
                .is_some_and(|c| c.as_array().is_none_or(Vec::is_empty))
                .then_some(())
        }
    })
    .await;
    assert!(dropped.is_some(), "the configurations were dropped");
    let out = drive(&agent.url, json!([{"listPush": {"task": id}}])).await;
    let left = out[0]["configs"].as_array().map(Vec::len);
    assert!(matches!(left, None | Some(0)), "{}", out[0]);

    // The official SDK reads every body as a StreamResponse.
    let bodies: Vec<Value> = first
        .iter()
        .chain(&second)
        .map(|g| json!({"parse": g.body}))
        .collect();
    let parsed = drive(&agent.url, Value::Array(bodies)).await;
    for (got, parsed) in first.iter().chain(&second).zip(&parsed) {
        assert!(
            parsed.get("parsed").is_some(),
            "{parsed} for {:?}",
            got.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_the_starter_manages_a_tasks_webhooks() {
    let db = TestDb::sqlite();
    let tokens = BearerTokens::parse(
        "ada-token ada@shop.example finance\nmallory-token mallory@elsewhere.example\n",
    )
    .expect("the token lines");
    let (agent, _model) = pushing(&db, move |server| server.identify(tokens)).await;
    let hook = Webhook::start().await;
    let url = format!("{}/ada", hook.url);
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "buy a gpu", "token": "ada-token"}},
            {"createPush": {"task": "$task", "url": url, "token": "ada-token"}},
        ]),
    )
    .await;
    let id = task_of(&out[0])["id"].as_str().expect("an id").to_owned();
    assert!(out[1].get("config").is_some(), "{}", out[1]);
    let evil = format!("{}/mallory", hook.url);
    let out = drive(
        &agent.url,
        json!([
            {"createPush": {"task": id, "url": evil, "token": "mallory-token"}},
            {"listPush": {"task": id, "token": "mallory-token"}},
            {"getPush": {"task": id, "id": id, "token": "mallory-token"}},
            {"deletePush": {"task": id, "id": id, "token": "mallory-token"}},
            {"listPush": {"task": id, "token": "ada-token"}},
        ]),
    )
    .await;
    for refused in &out[..4] {
        assert_eq!(refused["error"], "TaskNotFoundError", "{refused}");
    }
    let kept = out[4]["configs"].as_array().map(Vec::len);
    assert_eq!(kept, Some(1), "Ada's configuration stands: {}", out[4]);
    hook.told("ada", "TASK_STATE_INPUT_REQUIRED").await;
    assert!(hook.got("mallory").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_server_without_push_says_so_and_refuses_webhooks_before_anything_starts() {
    let (agent, _db, model) = agent().await;
    let out = drive(
        &agent.url,
        json!([
            {"card": {}},
            {"send": {"text": "buy a gpu", "push": {"url": "http://127.0.0.1:9/hook"}}},
            {"list": {}},
        ]),
    )
    .await;
    let capabilities = &out[0]["card"]["capabilities"];
    assert_ne!(capabilities["pushNotifications"], true, "{capabilities}");
    assert_eq!(
        out[1]["error"], "PushNotificationNotSupportedError",
        "{}",
        out[1]
    );
    let listed = out[2]["list"]["tasks"].as_array().map(Vec::len);
    assert!(matches!(listed, None | Some(0)), "{}", out[2]);
    assert_eq!(model.calls(), 0, "nothing ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_webhook_that_could_never_be_posted_to_is_refused() {
    let db = TestDb::sqlite();
    let (agent, _model) = pushing(&db, |server| server).await;
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "hello", "push": {"url": "file:///etc/passwd"}}},
            {"send": {"text": "hello"}},
            {"createPush": {"task": "$task", "url": "ftp://example.com/hook"}},
            {"createPush": {"task": "$task", "url": "http://example.com/hook",
                            "pushToken": "line\nbreak"}},
            {"createPush": {"task": "$task", "url": "http://example.com/hook",
                            "auth": {"scheme": "Bearer x", "credentials": "c"}}},
        ]),
    )
    .await;
    assert_eq!(out[0]["error"], "InvalidParamsError", "{}", out[0]);
    for refused in &out[2..] {
        assert_eq!(refused["error"], "InvalidParamsError", "{refused}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn webhooks_are_managed_over_http_json_too() {
    let db = TestDb::sqlite();
    let (agent, _model) = pushing(&db, |server| server).await;
    let hook = Webhook::start().await;
    let url = format!("{}/rest", hook.url);
    let out = drive_over(
        &agent.url,
        "HTTP+JSON",
        json!([
            {"send": {"text": "buy a gpu"}},
            {"createPush": {"task": "$task", "id": "ops", "url": url, "pushToken": "t"}},
            {"getPush": {"task": "$task", "id": "ops"}},
            {"listPush": {"task": "$task"}},
            {"deletePush": {"task": "$task", "id": "ops"}},
            {"listPush": {"task": "$task"}},
            {"getPush": {"task": "$task", "id": "ops"}},
        ]),
    )
    .await;
    assert_eq!(state(task_of(&out[0])), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(out[1]["config"]["id"], "ops", "{}", out[1]);
    assert_eq!(out[2]["config"]["url"], json!(url), "{}", out[2]);
    assert_eq!(out[2]["config"]["token"], "t", "{}", out[2]);
    assert_eq!(out[3]["configs"].as_array().map(Vec::len), Some(1));
    assert_eq!(out[4]["deleted"], "ops", "{}", out[4]);
    let left = out[5]["configs"].as_array().map(Vec::len);
    assert!(matches!(left, None | Some(0)), "{}", out[5]);
    assert_eq!(out[6]["error"], "TaskNotFoundError", "{}", out[6]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_webhook_given_after_the_end_is_told_nothing_and_kept_until_deleted() {
    let db = TestDb::sqlite();
    let (agent, _model) = pushing(&db, |server| server).await;
    let hook = Webhook::start().await;
    let url = format!("{}/late", hook.url);
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "hello"}},
            {"createPush": {"task": "$task", "id": "late", "url": url}},
            {"getPush": {"task": "$task", "id": "late"}},
            {"listPush": {"task": "$task"}},
            {"deletePush": {"task": "$task", "id": "late"}},
            {"getPush": {"task": "$task", "id": "late"}},
        ]),
    )
    .await;
    assert_eq!(state(task_of(&out[0])), "TASK_STATE_COMPLETED");
    assert_eq!(out[1]["config"]["id"], "late", "{}", out[1]);
    assert_eq!(out[2]["config"]["url"], json!(url), "{}", out[2]);
    assert_eq!(out[3]["configs"].as_array().map(Vec::len), Some(1));
    assert_eq!(out[4]["deleted"], "late", "{}", out[4]);
    assert_eq!(out[5]["error"], "TaskNotFoundError", "{}", out[5]);
    let sent = agent
        .inbox
        .posts(&format!(
            "a2a-push:{}:late",
            out[0]["task"]["id"].as_str().unwrap_or_default()
        ))
        .await;
    assert_eq!(sent.map(|p| p.len()).ok(), Some(0), "nothing was told");
    assert!(hook.got("late").is_empty());
}
