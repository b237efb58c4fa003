//! A request with an `expiresAt` that nobody answers is declined as expired by the
//! workflow's durable timer, and the run goes on without it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{Answer, NativeTool, Request, RunStatus, Tool, ToolContext, ToolResult, Toolkit};
use toolnexus_temporal::Agent;

use crate::common::{self, client, patiently, runs, unique, Serving};

/// How far ahead the tool sets its request's expiry.
const EXPIRES_IN: Duration = Duration::from_secs(2);

/// A tool that asks for a confirmation expiring [`EXPIRES_IN`] after it asks; counts its
/// runs in `ran`.
fn confirm(ran: Arc<AtomicUsize>) -> impl Tool {
    NativeTool::of(
        "confirm_booking",
        "Asks the user to confirm the booking",
        json!({"type": "object", "properties": {}}),
        move |_args: Value, ctx: ToolContext| {
            let ran = ran.clone();
            async move {
                ran.fetch_add(1, Ordering::SeqCst);
                if let Some(answer) = ctx.answer {
                    return ToolResult::ok(format!("answered: ok={}", answer.ok));
                }
                let at = time::OffsetDateTime::from(SystemTime::now() + EXPIRES_IN);
                let Ok(at) = at.format(&time::format_description::well_known::Rfc3339) else {
                    return ToolResult::error("the clock has no RFC 3339 form");
                };
                ToolResult::pending(
                    Request::new("approval", "Confirm the booking?")
                        .with_id("confirm-1")
                        .with_expires_at(at),
                )
            }
        },
    )
}

/// Calls the tool, then says what it returned.
fn script(req: &RecordedRequest) -> Reply {
    match req.tool_results().first() {
        Some((_, out)) => Reply::text(format!("The tool said: {out}")),
        None => Reply::tool_call("call_0", "confirm_booking", json!({})),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_request_is_declined_as_expired_by_the_workflows_timer() {
    let model = MockLlm::with_fn(script)
        .await
        .expect("the scripted model starts");
    let ran = Arc::new(AtomicUsize::new(0));
    let toolkit = Toolkit::builder()
        .tool(confirm(ran.clone()))
        .build()
        .expect("one tool");
    let queue = unique("expiry");
    let worker = Serving::start(Agent::new(client(&model.base_url()), toolkit), &queue);
    let runs = runs(&queue).await;
    let id = unique("expires");
    runs.start(&id, "book it").await.expect("the run starts");
    let waiting = common::waiting(&runs, &id, 1).await;
    assert_eq!(waiting[0].id, "confirm-1");
    assert!(waiting[0].expires_at.is_some(), "{:?}", waiting[0]);

    // Nobody answers: the run ends on its own.
    let result = patiently("the run's end", runs.result(&id))
        .await
        .expect("the run ends well");
    assert_eq!(result.status, RunStatus::Done, "{}", result.text);
    let call = result
        .tool_calls
        .iter()
        .find(|c| c.name == "confirm_booking" && !c.is_pending())
        .unwrap_or_else(|| panic!("the call settled: {:?}", result.tool_calls));
    assert_eq!(
        call.output,
        waiting[0].refusal(&Answer::refuse("confirm-1", toolnexus::Refusal::Expired)),
        "the model reads the request declined as expired"
    );
    assert!(result.text.contains("expired"), "{}", result.text);
    // Declined, the tool is not run again with the refusal.
    assert_eq!(ran.load(Ordering::SeqCst), 1);

    // The wait was the workflow's timer, recorded in its history, not a worker's clock.
    let events = common::event_types(&toolnexus_test_support::temporal::history(&id));
    assert!(
        events.iter().any(|e| e == "EVENT_TYPE_TIMER_FIRED"),
        "no timer fired: {events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| e == "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED"),
        "nobody answered: {events:?}"
    );
    let late = runs.answer(&id, &Answer::ok("confirm-1")).await;
    assert!(late.is_err(), "a late answer is refused: {late:?}");
    worker.stop().await;
}
