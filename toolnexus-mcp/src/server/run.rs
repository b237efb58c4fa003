//! What running a call means, whether in place or as a task: its first run, and the core's
//! rule once a suspension is answered.

use serde_json::Value;
use tokio::task::JoinError;
use toolnexus::{ToolContext, ToolOutcome, ToolResult, Toolkit};

use super::asked::Asked;

/// What a call's run came to: a result, or the round it waits on (the requests it asked,
/// one or several, never none, with what its suspension kept for the re-run).
pub(super) enum Step {
    Done(ToolResult),
    Ask(Asked),
}

/// The round `result` suspends on: its requests and what it kept (a sub-agent's halted
/// run, which the next round's re-run needs to go on rather than start over).
fn asked_of(result: &ToolResult) -> Asked {
    Asked::new(ToolResult::requests_of(result)).keeping(ToolResult::kept_of(result).cloned())
}

/// A call's first run, owned so it can go on as a task.
pub(super) async fn first_run(toolkit: Toolkit, name: String, args: Value) -> Step {
    let result = toolkit.execute(&name, args, ToolContext::default()).await;
    match ToolOutcome::classify(result) {
        ToolOutcome::Pending { result, .. } => Step::Ask(asked_of(&result)),
        settled => Step::Done(settled.into_result()),
    }
}

/// A call's run on from answered suspensions, by the core's rule for a host that carries
/// rounds ([`Toolkit::settle_all_round`]): what the tool asks next is the call's next
/// round. `asked`'s answers answer its requests: every one, or a refusal that ends the
/// call alone. The re-run is handed what the suspension kept, so a sub-agent goes on with its
/// halted run instead of running again from its first turn.
pub(super) async fn after_answer(
    toolkit: Toolkit,
    name: String,
    args: Value,
    asked: Asked,
) -> Step {
    let context = match asked.kept {
        Some(kept) => ToolContext::default().resuming_kept(kept),
        None => ToolContext::default(),
    };
    let result = toolkit
        .settle_all_round(&name, args, &asked.requests, asked.answers, context)
        .await;
    let next = asked_of(&result);
    match next.requests.is_empty() {
        true => Step::Done(result),
        false => Step::Ask(next),
    }
}

/// The error result of a run that panicked outside the tool's own guard.
pub(super) fn died(name: &str, error: &JoinError) -> ToolResult {
    ToolResult::error(format!("the call to `{name}` died: {error}"))
}
