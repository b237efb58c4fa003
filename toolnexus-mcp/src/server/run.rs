//! What running a call means, whether in place or as a task: its first run, and the core's
//! rule once a suspension is answered.

use serde_json::Value;
use tokio::task::JoinError;
use toolnexus::{Answer, Request, ToolContext, ToolOutcome, ToolResult, Toolkit};

/// What a call's run came to: a result, or the requests it waits on (one, or several a
/// tool asked at once; never none).
pub(super) enum Step {
    Done(ToolResult),
    Ask(Vec<Request>),
}

/// A call's first run, owned so it can go on as a task.
pub(super) async fn first_run(toolkit: Toolkit, name: String, args: Value) -> Step {
    let result = toolkit.execute(&name, args, ToolContext::default()).await;
    match ToolOutcome::classify(result) {
        asked @ ToolOutcome::Pending { .. } => Step::Ask(asked.requests().cloned().collect()),
        settled => Step::Done(settled.into_result()),
    }
}

/// A call's run on from answered suspensions, by the core's rule for a host that carries
/// rounds ([`Toolkit::settle_all_round`]): what the tool asks next is the call's next
/// round. `answers` answer `requests`: every one, or a refusal that ends the call alone.
pub(super) async fn after_answer(
    toolkit: Toolkit,
    name: String,
    args: Value,
    requests: Vec<Request>,
    answers: Vec<Answer>,
) -> Step {
    let result = toolkit
        .settle_all_round(&name, args, &requests, answers, ToolContext::default())
        .await;
    let next = ToolResult::requests_of(&result);
    match next.is_empty() {
        true => Step::Done(result),
        false => Step::Ask(next),
    }
}

/// The error result of a run that panicked outside the tool's own guard.
pub(super) fn died(name: &str, error: &JoinError) -> ToolResult {
    ToolResult::error(format!("the call to `{name}` died: {error}"))
}
