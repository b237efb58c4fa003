//! What running a call means, whether in place or as a task: its first run, and the core's
//! rule once a suspension is answered.

use serde_json::Value;
use tokio::task::JoinError;
use toolnexus::{Answer, Request, ToolContext, ToolOutcome, ToolResult, Toolkit};

/// What a call's run came to: a result, or a request it waits on.
pub(super) enum Step {
    Done(ToolResult),
    Ask(Request),
}

/// A call's first run, owned so it can go on as a task.
pub(super) async fn first_run(toolkit: Toolkit, name: String, args: Value) -> Step {
    let result = toolkit.execute(&name, args, ToolContext::default()).await;
    match ToolOutcome::classify(result) {
        ToolOutcome::Pending { request, .. } => Step::Ask(request),
        settled => Step::Done(settled.into_result()),
    }
}

/// A call's run on from an answered suspension, by the core's rule for a host that carries
/// rounds ([`Toolkit::settle_round`]): what the tool asks next is the call's next round.
pub(super) async fn after_answer(
    toolkit: Toolkit,
    name: String,
    args: Value,
    request: Request,
    answer: Answer,
) -> Step {
    let result = toolkit
        .settle_round(&name, args, &request, answer, ToolContext::default())
        .await;
    match ToolResult::pending_of(&result) {
        Some(next) => Step::Ask(next),
        None => Step::Done(result),
    }
}

/// The error result of a run that panicked outside the tool's own guard.
pub(super) fn died(name: &str, error: &JoinError) -> ToolResult {
    ToolResult::error(format!("the call to `{name}` died: {error}"))
}
