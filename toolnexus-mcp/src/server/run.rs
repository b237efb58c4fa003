//! What running a call means, whether in place or as a task: its first run, and the agent
//! loop's rule once a suspension is answered.

use serde_json::Value;
use tokio::task::JoinError;
use toolnexus::{Answer, Asks, Request, ToolContext, ToolOutcome, ToolResult, Toolkit};

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

/// The agent loop's rule for an answered suspension ([`toolnexus::Toolkit::settle`]):
/// `ok` re-runs the tool once with the answer; a refusal ends the call. An approved gate
/// runs the tool for the first time, so the tool may then ask for itself. A tool may also
/// ask its next question once answered: MCP carries it as the call's next round, as it
/// does a gated tool's own request. A re-run that asks the same question again
/// ([`same_question`]) ends the call `unresolved`, never looping.
pub(super) async fn after_answer(
    toolkit: Toolkit,
    name: String,
    args: Value,
    request: Request,
    answer: Answer,
) -> Step {
    // What `settle` would do, but keeping the re-run's own request rather than ending the
    // call on it.
    let rerun =
        answer.ok && answer.id == request.id && !matches!(request.asks(), Asks::Gate { .. });
    let result = if rerun {
        let ctx = ToolContext::default().with_answer(answer);
        toolkit.execute(&name, args, ctx).await
    } else {
        toolkit
            .settle(&name, args, &request, answer, ToolContext::default())
            .await
    };
    match ToolResult::pending_of(&result) {
        Some(again) if same_question(&again, &request) => {
            Step::Done(ToolResult::error(format!("unresolved: {}", request.prompt)))
        }
        Some(next) => Step::Ask(next),
        None => Step::Done(result),
    }
}

/// The error result of a run that panicked outside the tool's own guard.
pub(super) fn died(name: &str, error: &JoinError) -> ToolResult {
    ToolResult::error(format!("the call to `{name}` died: {error}"))
}

/// Whether `again` asks what `asked` did: the same request, or the same question under a
/// fresh id (a tool that leaves `id` out draws a new one on every run, so an id alone would
/// let a tool that ignores its answer ask forever).
fn same_question(again: &Request, asked: &Request) -> bool {
    again.id == asked.id
        || (again.kind == asked.kind
            && again.prompt == asked.prompt
            && again.url == asked.url
            && again.data == asked.data)
}
