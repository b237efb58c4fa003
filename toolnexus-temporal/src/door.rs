//! The `answer` update as a door: before the workflow takes an approval, it judges it as
//! the run will judge it before the call runs ([`Toolkit::judge_approval`]), so an approval
//! the run would not trust is refused where it arrives — nothing taken, nothing recorded
//! as answered — and the request keeps waiting for one it trusts.
//!
//! Everything it reads is deterministic: the halted transcript (from the history) and the
//! worker's toolkit, whose receipt verifier (a public key) is configuration every worker of
//! the task queue shares.

use serde_json::Value;
use toolnexus::halted::HaltedTurn;
use toolnexus::{Answer, Message, Request, Toolkit};

/// Whether `answer` to `request`, asked by a call of the halted transcript `messages`, may
/// be taken. A refusal always may (nothing runs). An approval is judged as the call it
/// would run — the tool that asked and its arguments, a person's edits included: with
/// [`verify_receipts`](toolnexus::ToolkitBuilder::verify_receipts) on the toolkit, an
/// approval of a request whose rule names responders or a quorum needs the inbox's
/// receipts for that request and that call. `Err` says why, for whoever sent it.
pub(crate) fn judge(
    toolkit: &Toolkit,
    messages: &[Message],
    request: &Request,
    answer: &Answer,
) -> Result<(), String> {
    if !answer.ok {
        return Ok(());
    }
    let restricted = request
        .rule()
        .map_err(|e| format!("request `{}` cannot be approved: {e}", request.id))?
        .is_restricted();
    let Some((tool, proposed)) = asked_by(messages, &request.id) else {
        if restricted {
            return Err(format!(
                "request `{}` names who may approve it, but the call it approves is not in the \
                 halted transcript, so no approval of it can be checked",
                request.id
            ));
        }
        return Ok(());
    };
    toolkit
        .judge_approval(tool, request, answer, proposed)
        .map_err(|why| format!("refused: {why}"))
}

/// The tool call of `messages` that asked request `id`: its name and its arguments.
fn asked_by<'m>(messages: &'m [Message], id: &str) -> Option<(&'m str, &'m Value)> {
    let call = HaltedTurn::of(messages).ok()?.asked(id)?.call;
    Some((call.name.as_str(), &call.args))
}
