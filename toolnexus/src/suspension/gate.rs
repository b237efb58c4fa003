//! A gate's request: what a declared approval asks before a tool runs, and what the model
//! is told when a person changed the arguments it proposed.

use std::future::Future;

use serde_json::{json, Value};
use uuid::Uuid;

use super::{Answer, Asks, Request, RequestKind};
use crate::ToolOutcome;

/// Names gate ids apart from any other v5 ids derived from the same text.
const GATES: Uuid = Uuid::from_u128(0x6f3c_2a1e_9b7d_4c05_8e21_d4a7_c3b9_0f62);

/// The request gating a call of `tool` with the model's `args`. Its id is derived from
/// `call` (what identifies the call: its run and its id) and the tool, so the same gated
/// call asks with the same id however often it is asked.
pub(crate) fn request(
    tool: &str,
    call: &str,
    args: &Value,
    schema: &Value,
    prompt: String,
) -> Request {
    let id = Uuid::new_v5(&GATES, format!("{call}\0{tool}").as_bytes());
    Request::new(RequestKind::Approval, prompt)
        .with_id(format!("approval-{id}"))
        .with_data(json!({"tool": tool, "args": args, "argsSchema": schema}))
}

impl Request {
    /// The tool a gate's request asks to run, when this is one (a request asked by an
    /// [`Approval`](crate::Approval) or `#[tool(approval = …)]`, whose `data` holds `tool`,
    /// `args` and `argsSchema`: [`Asks::Gate`]); `None` for a request a tool asked itself.
    ///
    /// ```
    /// use toolnexus::{serde_json::json, Request};
    ///
    /// let asked = Request::new("approval", "Delete /tmp/x?")
    ///     .with_data(json!({"tool": "delete", "args": {"path": "/tmp/x"}, "argsSchema": {"type": "object"}}));
    /// assert_eq!(asked.gated_tool(), Some("delete"));
    /// assert_eq!(Request::new("approval", "Buy?").gated_tool(), None);
    /// ```
    pub fn gated_tool(&self) -> Option<&str> {
        match self.asks() {
            Asks::Gate { tool, .. } => Some(tool),
            _ => None,
        }
    }
}

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

/// What identifies a run up to the turn that made a call, from `seed`: the run's id and
/// the turn's place, or the transcript before that turn. Either is the same in every
/// process that holds the transcript.
pub(crate) fn run_key(seed: &[u8]) -> Uuid {
    Uuid::new_v5(&GATES, seed)
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
pub(super) async fn settle<F, Fut>(
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
