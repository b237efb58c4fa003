//! Agents whose card declares streaming: the client follows their tasks' events instead of
//! polling, ends with what a polled call ends with, and when a stream breaks off follows
//! the task again without sending the message twice. Against the SDK's slow shop (work,
//! an approval, more work, a receipt in chunks), and against streams that misbehave.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};
use toolnexus::{Answer, Request, RunStatus, Tool, ToolContext};
use toolnexus_a2a::RemoteAgent;
use toolnexus_test_support::wait::within;

use super::support::{agents, client, model, remote, task_of, toolkit};

/// The slow shop's result for a gpu: its receipt's three chunks, then its note.
const BOUGHT: &str = "bought gpu\npaid\nshipped\nthank you";

/// Buys a gpu from the slow shop at `path`, approving through `wait_for`: the output, the
/// question asked, and the remote task.
async fn buy_at(path: &str) -> (String, Request, String) {
    let mock = model("slow", "buy a gpu").await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let asked = seen.clone();
    let llm = client(&mock)
        .wait_for(move |request: Request| {
            let answer = Answer::ok(&request.id);
            asked.lock().unwrap().push(request);
            std::future::ready(answer)
        })
        .build()
        .unwrap();
    let run = llm
        .run("buy me a gpu", &toolkit(remote(path).await))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Done, "{path}: {run:?}");
    let call = &run.tool_calls[0];
    assert!(!call.is_error, "{path}: {call:?}");
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{path}: one question: {asked:?}");
    let task = task_of(&asked[0]);
    (call.output.clone(), asked[0].clone(), task)
}

/// How often the agent at `path` was called with `method`.
fn calls(path: &str, method: &str) -> usize {
    let methods = agents().methods(path);
    methods.iter().filter(|(m, _)| m == method).count()
}

/// The methods the agent at `path` was called with, once `n` of them were logged.
async fn methods_after(path: &str, n: usize) -> Vec<(String, String)> {
    let seen = within(Duration::from_secs(2), || {
        let seen = agents().methods(path);
        async move { (seen.len() >= n).then_some(seen) }
    });
    seen.await.unwrap_or_else(|| agents().methods(path))
}

#[tokio::test]
async fn a_streamed_task_is_never_polled_and_ends_as_the_polled_one_does() {
    let ((polled, polled_asked, _), (streamed, streamed_asked, task)) =
        tokio::join!(buy_at("slow"), buy_at("slow-stream"));

    assert_eq!(streamed, BOUGHT);
    assert_eq!(
        streamed, polled,
        "the same task ends the same, streamed or polled"
    );
    assert_eq!(streamed_asked.prompt, "Approve purchase of gpu?");
    assert_eq!(streamed_asked.kind, polled_asked.kind);
    assert_eq!(
        streamed_asked.data.as_ref().unwrap()["a2a"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let sent = agents().await_continuations(&task, 1).await;
    assert_eq!(sent.len(), 1, "the remote task is continued once: {sent:?}");

    let streamed_methods = methods_after("slow-stream", 2).await;
    assert_eq!(
        streamed_methods,
        [
            ("SendStreamingMessage".to_owned(), String::new()),
            ("SendStreamingMessage".to_owned(), task.clone()),
        ],
        "the message and its continuation, each streamed, and nothing polled"
    );
    let polls = calls("slow", "GetTask");
    eprintln!(
        "GetTask calls while the slow shop worked: polled {polls}, streamed {}",
        calls("slow-stream", "GetTask")
    );
    // About a second of work before the question at 250 ms a poll, and more after.
    assert!(polls >= 3, "the polled call polls: {polls}");
    assert_eq!(calls("slow", "SendStreamingMessage"), 0);
}

#[tokio::test]
async fn a_halted_run_resumes_over_the_http_json_stream_in_a_fresh_client() {
    let path = "slow-stream-rest";
    let mock = model("slow", "buy a gpu").await;
    let halted = client(&mock)
        .build()
        .unwrap()
        .run("buy me a gpu", &toolkit(remote(path).await))
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let request = halted.pending.clone().unwrap();
    assert_eq!(request.prompt, "Approve purchase of gpu?");
    let task = task_of(&request);

    let stored = serde_json::to_string(&halted.messages).unwrap();
    let done = client(&mock)
        .build()
        .unwrap()
        .run_with_answer(
            serde_json::from_str(&stored).unwrap(),
            &request,
            Answer::ok(&request.id),
            &toolkit(remote(path).await),
        )
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.tool_calls[0].output, BOUGHT);
    assert_eq!(agents().await_continuations(&task, 1).await.len(), 1);
    assert_eq!(
        methods_after(path, 2).await,
        [
            ("SendStreamingMessage".to_owned(), String::new()),
            ("SendStreamingMessage".to_owned(), task),
        ]
    );
}

#[tokio::test]
async fn a_stream_cut_after_its_first_event_is_followed_by_resubscribing_and_sent_once() {
    let path = "slow-cut";
    let (output, _, task) = buy_at(path).await;
    assert_eq!(output, BOUGHT);
    assert_eq!(agents().await_continuations(&task, 1).await.len(), 1);
    let methods = methods_after(path, 4).await;
    let sends: Vec<_> = methods
        .iter()
        .filter(|(m, _)| m == "SendStreamingMessage")
        .collect();
    assert_eq!(
        sends.len(),
        2,
        "the message and its continuation, once each: {methods:?}"
    );
    assert_eq!(sends[1].1, task);
    assert!(
        calls(path, "SubscribeToTask") >= 2,
        "each stream cut is followed again: {methods:?}"
    );
    assert!(methods.iter().all(|(_, t)| t.is_empty() || *t == task));
    assert_eq!(calls(path, "GetTask"), 0, "{methods:?}");
    assert_eq!(calls(path, "SendMessage"), 0, "{methods:?}");
}

#[tokio::test]
async fn a_stream_cut_where_subscribing_is_refused_is_polled_to_its_end() {
    let path = "slow-nosub";
    let (output, _, task) = buy_at(path).await;
    assert_eq!(output, BOUGHT);
    assert_eq!(agents().await_continuations(&task, 1).await.len(), 1);
    let methods = methods_after(path, 4).await;
    assert_eq!(calls(path, "SendStreamingMessage"), 2, "{methods:?}");
    assert_eq!(calls(path, "SendMessage"), 0, "{methods:?}");
    assert!(calls(path, "SubscribeToTask") >= 1, "{methods:?}");
    assert!(calls(path, "GetTask") >= 1, "{methods:?}");
}

#[tokio::test]
async fn an_agent_that_does_not_declare_streaming_is_polled_as_before() {
    let shop = remote("shop").await;
    let parked = shop
        .execute(json!({"message": "buy a kite"}), ToolContext::default())
        .await;
    let request = toolnexus::ToolResult::pending_of(&parked).expect("the call suspends");
    let done = shop
        .execute(
            json!({"message": "buy a kite"}),
            ToolContext::default().with_answer(Answer::ok(&request.id)),
        )
        .await;
    assert!(done.output.starts_with("bought kite: ORDER-"), "{done:?}");
    let methods = agents().methods("shop");
    assert!(
        methods
            .iter()
            .any(|(m, t)| m == "SendMessage" && *t == task_of(&request)),
        "{methods:?}"
    );
    assert!(
        methods
            .iter()
            .all(|(m, _)| m != "SendStreamingMessage" && m != "SubscribeToTask"),
        "{methods:?}"
    );
}

/// The methods each misbehaving agent was called with, by name.
#[derive(Clone, Default)]
struct Called(Arc<Mutex<Vec<(String, String)>>>);

/// Serves agents whose card declares streaming and whose streams misbehave;
/// `http://127.0.0.1:PORT/<name>` is each one's base URL.
async fn serve_streams() -> (String, Called) {
    let called = Called::default();
    let app = Router::new()
        .route("/{name}/.well-known/agent-card.json", get(streaming_card))
        .route("/{name}/rpc", post(stream))
        .with_state(called.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, called)
}

async fn streaming_card(Path(name): Path<String>) -> Response {
    json!({
        "name": name, "description": "streams badly", "version": "1",
        "supportedInterfaces": [
            {"url": format!("/{name}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": []
    })
    .to_string()
    .into_response()
}

async fn stream(Path(name): Path<String>, State(called): State<Called>, body: Bytes) -> Response {
    let body = serde_json::from_slice::<Value>(&body).unwrap_or_default();
    let id = body.get("id").cloned().unwrap_or(Value::Null);
    let method = body["method"].as_str().unwrap_or_default().to_owned();
    called
        .0
        .lock()
        .unwrap()
        .push((name.clone(), method.clone()));
    let event = |result: Value| {
        let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
        Bytes::from(format!("data: {reply}\n\n"))
    };
    let first = event(json!({"task": {"id": "t-1", "contextId": "c-1",
        "status": {"state": "TASK_STATE_WORKING"}}}));
    let sse = |body: Body| ([(CONTENT_TYPE, "text/event-stream")], body).into_response();
    let chunks = |rest: Vec<Bytes>| {
        futures::stream::iter(
            std::iter::once(first.clone())
                .chain(rest)
                .map(Ok::<_, std::io::Error>),
        )
    };
    match (name.as_str(), method.as_str()) {
        // The connection drops after the first event; a subscription tells the rest.
        ("dropped", "SendStreamingMessage") => {
            // After a pause, so the first event has left before the connection drops.
            let rest = futures::stream::once(async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Err(std::io::Error::other("the agent restarts"))
            });
            sse(Body::from_stream(futures::StreamExt::chain(
                chunks(vec![]),
                rest,
            )))
        }
        ("dropped", "SubscribeToTask") => sse(Body::from_stream(futures::stream::iter(
            [
                event(json!({"task": {"id": "t-1", "contextId": "c-1",
                    "status": {"state": "TASK_STATE_WORKING"}}})),
                event(
                    json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c-1",
                    "artifact": {"artifactId": "a", "parts": [{"text": "done after a drop"}]}}}),
                ),
                event(json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
                    "status": {"state": "TASK_STATE_COMPLETED"}}})),
            ]
            .map(Ok::<_, std::io::Error>),
        ))),
        // A working task, then nothing at all.
        ("silent", _) => {
            let rest = futures::stream::pending::<Result<Bytes, std::io::Error>>();
            sse(Body::from_stream(futures::StreamExt::chain(
                chunks(vec![]),
                rest,
            )))
        }
        // An event that never ends, a mebibyte at a time.
        ("huge", _) => {
            let mib = Bytes::from(vec![b'x'; 1024 * 1024]);
            let mut rest = vec![Bytes::from_static(b"data: ")];
            rest.extend(std::iter::repeat_n(mib, 17));
            sse(Body::from_stream(chunks(rest)))
        }
        ("garbage", _) => sse(Body::from_stream(chunks(vec![Bytes::from_static(
            b"data: {not json\n\n",
        )]))),
        ("other-task", _) => {
            let other = event(json!({"statusUpdate": {"taskId": "t-2", "contextId": "c-1",
                "status": {"state": "TASK_STATE_COMPLETED"}}}));
            sse(Body::from_stream(chunks(vec![other])))
        }
        // Ends before it names a task: nothing can be followed, and nothing is sent again.
        _ => sse(Body::from_stream(futures::stream::iter([Ok::<
            _,
            std::io::Error,
        >(
            Bytes::from_static(b": nothing\n\n"),
        )]))),
    }
}

#[tokio::test]
async fn a_dropped_connection_is_followed_by_subscribing_and_the_message_goes_once() {
    let (base, called) = serve_streams().await;
    let agent = RemoteAgent::connect(format!("{base}/dropped"))
        .await
        .unwrap();
    let result = agent
        .execute(json!({"message": "hi"}), ToolContext::default())
        .await;
    assert_eq!(result.output, "done after a drop", "{result:?}");
    let methods: Vec<String> = called
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|(_, m)| m.clone())
        .collect();
    assert_eq!(methods, ["SendStreamingMessage", "SubscribeToTask"]);
}

#[tokio::test]
async fn streams_that_misbehave_end_in_clear_errors_without_the_credentials() {
    let (base, _) = serve_streams().await;
    let call = |name: &'static str, timeout: u64| {
        let url = format!("{base}/{name}");
        async move {
            let agent = RemoteAgent::builder(url)
                .bearer_auth("s3cret-token")
                .timeout(Duration::from_millis(timeout))
                .connect()
                .await
                .unwrap();
            let result = agent
                .execute(json!({"message": "hi"}), ToolContext::default())
                .await;
            assert!(result.is_error, "{name}: {result:?}");
            assert!(!result.output.contains("s3cret"), "{}", result.output);
            result.output
        }
    };
    let silent = call("silent", 500).await;
    assert!(silent.contains("did not answer within 500ms"), "{silent}");
    let huge = call("huge", 30_000).await;
    assert!(huge.contains("is larger than 16777216 bytes"), "{huge}");
    let garbage = call("garbage", 30_000).await;
    assert!(
        garbage.contains("did not answer SendStreamingMessage as its binding says")
            && garbage.contains("not a JSON-RPC response"),
        "{garbage}"
    );
    let other = call("other-task", 30_000).await;
    assert!(
        other.contains("an event of the task `t-2` came on the stream of `t-1`"),
        "{other}"
    );
    let nameless = call("nameless", 30_000).await;
    assert!(
        nameless.contains("the stream ended before it named a task"),
        "{nameless}"
    );
}
