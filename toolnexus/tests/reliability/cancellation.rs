//! Dropping a run's future is a clean cancellation wherever the run stands — in the HTTP
//! call, in a tool, in `wait_for`: the dropped work really stops (drop guards fire, the
//! server sees the connection close), nothing keeps running in the background, and the
//! same client serves the next run at once.

use std::future::{Future, IntoFuture};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::Notify;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    LlmClient, NativeTool, Request, RunResult, RunStatus, Style, Tool, ToolContext, ToolResult,
    Toolkit,
};

use crate::support::{no_task_left, on, DropFlag, PATIENCE, STYLES};

/// Far longer than any test runs: whatever waits this long only ends by being dropped.
const FOREVER: Duration = Duration::from_secs(3600);

/// Polls `run` until `reached` resolves, then drops it unfinished.
async fn drop_when<R, F>(run: R, reached: F)
where
    R: IntoFuture<Output = Result<RunResult, toolnexus::ClientError>>,
    F: Future<Output = ()>,
{
    let outcome = tokio::time::timeout(PATIENCE, async {
        tokio::select! {
            done = run.into_future() => panic!("the run should still be in flight, it ended with {done:?}"),
            () = reached => {}
        }
    })
    .await;
    assert!(
        outcome.is_ok(),
        "the run never reached the point to drop it at"
    );
}

/// The next run on the same client completes (a hang guard bounds it).
async fn next_run_succeeds(client: &LlmClient, mock: &MockLlm, tk: &Toolkit) {
    mock.push(Reply::text("still here"));
    let result = tokio::time::timeout(PATIENCE, client.run("again", tk))
        .await
        .expect("the next run does not hang")
        .unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "still here");
}

/// Drops the client and the mock and waits for the runtime to run no task: a tool, a
/// `wait_for` or a request left behind by the dropped run would keep one alive.
async fn shut_down(client: LlmClient, mock: MockLlm) {
    drop(client);
    drop(mock);
    no_task_left().await;
}

/// A tool that signals it started and then never finishes unless dropped.
fn stuck_tool(
    started: Arc<Notify>,
    dropped: Arc<AtomicBool>,
    finished: Arc<AtomicBool>,
) -> impl Tool {
    NativeTool::of(
        "slow",
        "Takes forever",
        json!({"type": "object"}),
        move |_args: Value, _ctx: ToolContext| {
            let (started, dropped, finished) = (started.clone(), dropped.clone(), finished.clone());
            async move {
                let _guard = DropFlag(dropped);
                started.notify_one();
                tokio::time::sleep(FOREVER).await;
                finished.store(true, Ordering::SeqCst);
                "done"
            }
        },
    )
}

#[tokio::test]
async fn dropping_a_run_during_the_http_call_aborts_the_request() {
    for style in STYLES {
        let mock = MockLlm::start([Reply::text("too late").delayed(FOREVER)])
            .await
            .unwrap();
        let builder = on(&mock, style);
        let client = builder.build().unwrap();
        let tk = Toolkit::empty();

        drop_when(client.run("hi", &tk), mock.wait_for_calls(1)).await;
        tokio::time::timeout(PATIENCE, mock.wait_for_dropped(1))
            .await
            .expect("the server sees the request abandoned");
        assert_eq!(mock.calls(), 1, "{style:?}: no retry after the drop");

        next_run_succeeds(&client, &mock, &tk).await;
        assert_eq!(mock.dropped(), 1);
        shut_down(client, mock).await;
    }
}

#[tokio::test]
async fn dropping_a_run_during_a_tool_drops_the_tool() {
    let mock = MockLlm::start([Reply::tool_calls([
        ("c1", "slow", json!({})),
        ("c2", "slow", json!({})),
    ])])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let started = Arc::new(Notify::new());
    let (dropped, finished) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let tk = Toolkit::builder()
        .tool(stuck_tool(
            started.clone(),
            dropped.clone(),
            finished.clone(),
        ))
        .build()
        .unwrap();

    drop_when(client.run("go", &tk), started.notified()).await;
    assert!(
        dropped.load(Ordering::SeqCst),
        "the tool's future was dropped"
    );
    assert!(!finished.load(Ordering::SeqCst));

    next_run_succeeds(&client, &mock, &tk).await;
    assert_eq!(mock.dropped(), 0, "no HTTP request was in flight");
    assert!(
        !finished.load(Ordering::SeqCst),
        "the dropped tool never resumed"
    );
    shut_down(client, mock).await;
}

#[tokio::test]
async fn dropping_a_run_during_wait_for_drops_the_wait() {
    let mock = MockLlm::start([Reply::tool_call("c1", "park", json!({}))])
        .await
        .unwrap();
    let started = Arc::new(Notify::new());
    let (dropped, answered) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (s, d, a) = (started.clone(), dropped.clone(), answered.clone());
    let client = on(&mock, Style::Anthropic)
        .wait_for(move |request: Request| {
            let (s, d, a) = (s.clone(), d.clone(), a.clone());
            async move {
                let _guard = DropFlag(d);
                s.notify_one();
                tokio::time::sleep(FOREVER).await;
                a.store(true, Ordering::SeqCst);
                toolnexus::Answer::ok(request.id)
            }
        })
        .build()
        .unwrap();
    let park = NativeTool::of(
        "park",
        "Asks for approval",
        json!({"type": "object"}),
        |_args: Value, ctx: ToolContext| async move {
            match ctx.answer {
                Some(_) => ToolResult::ok("approved"),
                None => ToolResult::pending(Request::new("approval", "ok?")),
            }
        },
    );
    let tk = Toolkit::builder().tool(park).build().unwrap();

    drop_when(client.run("go", &tk), started.notified()).await;
    assert!(
        dropped.load(Ordering::SeqCst),
        "the wait_for future was dropped"
    );

    next_run_succeeds(&client, &mock, &tk).await;
    assert!(
        !answered.load(Ordering::SeqCst),
        "the dropped wait never resumed"
    );
    shut_down(client, mock).await;
}
