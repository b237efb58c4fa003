//! A gate's answer: how an answered gate settles its call (a refusal runs nothing, edited
//! arguments must fit the tool's schema), what the model is told when a person changed the
//! arguments it proposed, and under which receipts an approved call runs.

use std::future::Future;

use serde_json::Value;

use crate::{Answer, Request, ToolContext, ToolOutcome};

/// The fields a person changed (added, removed or given another value), by name.
pub(crate) fn changed_fields(proposed: &Value, edited: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let before = proposed.as_object().unwrap_or(&empty);
    let after = edited.as_object().unwrap_or(&empty);
    let mut names: Vec<String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What the model reads after a result that ran with a person's arguments, so it is never
/// told it called something it did not.
fn edited_note(fields: &[String]) -> String {
    format!(
        "\n\n(a person changed the arguments before this call ran: {}; the call shows the arguments it ran with)",
        fields.join(", ")
    )
}

/// The gate's part of [`Request::settle`]: a refusal, or an answer to another request,
/// does not run the call; edited arguments that do not fit the tool's schema do not
/// either; otherwise `run` runs it (as a first run: the gate's answer is not the tool's)
/// with the person's arguments when they gave other ones than `proposed`, and the model
/// reads which fields they changed. Returns the outcome and the arguments a person gave,
/// when they differ.
pub(crate) async fn settle<F, Fut>(
    request: &Request,
    answer: &Answer,
    proposed: Value,
    run: F,
) -> (ToolOutcome, Option<Value>)
where
    F: FnOnce(Value) -> Fut,
    Fut: Future<Output = ToolOutcome>,
{
    if let Some(refused) = request.refuses(answer) {
        return (refused, None);
    }
    if let Err(misfit) = request.check_answer(answer) {
        let why = format!(
            "unresolved: {} (the edited arguments do not fit: {misfit})",
            request.prompt
        );
        return (ToolOutcome::failure(why), None);
    }
    let Some(edited) = answer.args.clone().filter(|args| *args != proposed) else {
        return (run(proposed).await, None);
    };
    let mut outcome = run(edited.clone()).await;
    if !outcome.is_pending() {
        let fields = changed_fields(&proposed, &edited);
        outcome.result_mut().output.push_str(&edited_note(&fields));
    }
    (outcome, Some(edited))
}

/// `ctx` with the receipts of a gate's approval, when `requests` is a gate and its answer
/// carries some: the approved call runs without the answer, but under its receipts
/// ([`ToolContext::receipts`]), as it does in the agent loop. A re-run with answers reads
/// theirs instead.
pub(crate) fn approved(
    mut ctx: ToolContext,
    requests: &[Request],
    answers: &[Answer],
) -> ToolContext {
    let gate = requests.first().and_then(Request::gated_tool).is_some();
    if gate && ctx.receipts.is_empty() {
        ctx.receipts = answers
            .iter()
            .filter(|a| a.ok)
            .flat_map(|a| a.receipts.iter().cloned())
            .collect();
    }
    ctx
}
