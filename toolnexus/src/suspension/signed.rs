//! Approvals a run trusts by their signatures, not by the door they came through: a gated
//! call whose rule names responders or a quorum runs only under receipts that verify, come
//! from enough distinct people, bind that request and that call as it runs, and include
//! the one that settled the request.
//!
//! The core checks what receipts state; whether a signature is genuine is the
//! [`VerifyReceipt`] it is given (the inbox's public key is one), so no cryptography
//! enters this crate.

use std::collections::BTreeSet;
use std::fmt;

use super::receipt::Receipt;
use super::{Answer, Request};

/// Checks that a receipt's signature is genuine: made by a key the host trusts, over
/// exactly what the receipt states. `toolnexus_inbox::receipt::PublicKey` is one.
pub trait VerifyReceipt: Send + Sync + 'static {
    /// `Ok` when `receipt` is signed by a trusted key over what it states; else why not.
    fn verify_signature(&self, receipt: &Receipt) -> Result<(), String>;
}

/// Why a gated call's approval is not trusted: [`check_approval`] names the first problem.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnsignedApproval {
    /// The request the approval answers.
    pub request: String,
    /// What is wrong with its receipts.
    pub reason: String,
}

impl fmt::Display for UnsignedApproval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the approval of `{}` is not signed as its rule requires: {}",
            self.request, self.reason
        )
    }
}

impl std::error::Error for UnsignedApproval {}

/// Whether `answer`, an approval of the gate `request`, may run the call whose
/// [`call_digest`](crate::call_digest) is `call` (the tool with the arguments it runs
/// with, a person's edits included), judged by its receipts alone.
///
/// A refusal needs no receipt (nothing runs), and neither does a request whose rule names
/// nobody and one person ([`Rule::is_restricted`](crate::Rule::is_restricted)). Otherwise
/// every receipt must verify under `verifier`, approve, and name this request and this
/// call; together they must come from at least the rule's quorum of distinct people (by
/// whose authority each was given, `for`), and one of them must be final — the approval
/// that settled the request. A rule written wrong is refused.
///
/// ```
/// use toolnexus::receipt::{check_approval, Receipt, VerifyReceipt};
/// use toolnexus::serde_json::json;
/// use toolnexus::{Answer, Request};
///
/// struct TrustNothing;
/// impl VerifyReceipt for TrustNothing {
///     fn verify_signature(&self, _: &Receipt) -> Result<(), String> {
///         Err("no key".into())
///     }
/// }
///
/// let gate = Request::new("approval", "Pay?").with_id("g1").with_data(json!({
///     "tool": "pay", "args": {}, "argsSchema": {"type": "object"},
///     "responders": ["group:finance"]
/// }));
/// let call = toolnexus::call_digest("pay", &json!({}));
/// // An approval with no receipts, from a door that did not ask the inbox: refused.
/// let bare = check_approval(&gate, &Answer::ok("g1"), &call, &TrustNothing);
/// assert!(bare.unwrap_err().reason.contains("no receipt"));
/// // A refusal runs nothing, so it needs none.
/// assert!(check_approval(&gate, &Answer::decline("g1", "declined"), &call, &TrustNothing).is_ok());
/// ```
pub fn check_approval(
    request: &Request,
    answer: &Answer,
    call: &str,
    verifier: &dyn VerifyReceipt,
) -> Result<(), UnsignedApproval> {
    let refuse = |reason: String| UnsignedApproval {
        request: request.id.clone(),
        reason,
    };
    if !answer.ok {
        return Ok(());
    }
    let rule = request.rule().map_err(|e| refuse(e.to_string()))?;
    if !rule.is_restricted() {
        return Ok(());
    }
    if answer.receipts.is_empty() {
        return Err(refuse(
            "it carries no receipt; approvals of a ruled request are given through the inbox, \
             which signs them"
                .to_owned(),
        ));
    }
    let mut people = BTreeSet::new();
    let mut settled = false;
    for receipt in &answer.receipts {
        let stated = &receipt.statement;
        verifier
            .verify_signature(receipt)
            .map_err(|why| refuse(format!("a receipt by {} does not verify: {why}", stated.by)))?;
        if stated.request != request.id {
            return Err(refuse(format!(
                "a receipt by {} is for request `{}`",
                stated.by, stated.request
            )));
        }
        if stated.call != call {
            return Err(refuse(format!(
                "a receipt by {} approves another call than the one that would run",
                stated.by
            )));
        }
        if !stated.answer.ok {
            return Err(refuse(format!("the receipt by {} is a refusal", stated.by)));
        }
        settled |= stated.settles == Some(true);
        people.insert(stated.on_behalf_of.to_lowercase());
    }
    if people.len() < rule.quorum as usize {
        return Err(refuse(format!(
            "{} of {} distinct people approved",
            people.len(),
            rule.quorum
        )));
    }
    if !settled {
        return Err(refuse(
            "none of its receipts settled the request (each is a vote that left it waiting)"
                .to_owned(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::call_digest;
    use crate::receipt::{ReceiptAnswer, Statement};

    /// Trusts a receipt whose signature is the text `good`.
    struct Stub;
    impl VerifyReceipt for Stub {
        fn verify_signature(&self, receipt: &Receipt) -> Result<(), String> {
            match receipt.signature.as_str() {
                "good" => Ok(()),
                _ => Err("bad signature".to_owned()),
            }
        }
    }

    fn gate(quorum: u32) -> Request {
        Request::new("approval", "Pay?")
            .with_id("g1")
            .with_data(json!({
                "tool": "pay", "args": {"cents": 1}, "argsSchema": {"type": "object"},
                "responders": ["group:finance"], "quorum": quorum
            }))
    }

    fn vote(by: &str, call: &str, last: bool) -> Receipt {
        let mut statement = Statement::new(
            "g1",
            "run",
            call,
            ReceiptAnswer::of(&Answer::ok("g1")),
            by,
            "2026-01-01T00:00:00.000Z",
            "group:finance",
        )
        .quorum(2);
        if !last {
            statement = statement.partial();
        }
        Receipt::new(statement, "ed25519:test", "good")
    }

    fn with(receipts: Vec<Receipt>) -> Answer {
        let mut answer = Answer::ok("g1");
        answer.receipts = receipts;
        answer
    }

    #[test]
    fn a_quorum_needs_its_people_its_call_and_a_final_vote() {
        let call = call_digest("pay", &json!({"cents": 1}));
        let two = with(vec![vote("ada", &call, false), vote("bob", &call, true)]);
        assert!(check_approval(&gate(2), &two, &call, &Stub).is_ok());

        let one = with(vec![vote("ada", &call, true)]);
        let short = check_approval(&gate(2), &one, &call, &Stub).unwrap_err();
        assert!(short.reason.contains("1 of 2"), "{short}");

        let same = with(vec![vote("ada", &call, false), vote("ADA", &call, true)]);
        assert!(check_approval(&gate(2), &same, &call, &Stub).is_err());

        let partial = with(vec![vote("ada", &call, false), vote("bob", &call, false)]);
        let open = check_approval(&gate(2), &partial, &call, &Stub).unwrap_err();
        assert!(open.reason.contains("settled"), "{open}");

        let other = call_digest("pay", &json!({"cents": 5_000_000}));
        let edited = check_approval(&gate(2), &two, &other, &Stub).unwrap_err();
        assert!(edited.reason.contains("another call"), "{edited}");

        let mut forged = vote("bob", &call, true);
        forged.signature = "forged".to_owned();
        let forged = with(vec![vote("ada", &call, false), forged]);
        assert!(check_approval(&gate(2), &forged, &call, &Stub).is_err());
    }

    #[test]
    fn an_unruled_gate_and_a_refusal_need_no_receipt() {
        let open = Request::new("approval", "Go?")
            .with_id("g1")
            .with_data(json!({
                "tool": "go", "args": {}, "argsSchema": {"type": "object"}
            }));
        assert!(check_approval(&open, &Answer::ok("g1"), "sha256:x", &Stub).is_ok());
        let no = Answer::decline("g1", "declined");
        assert!(check_approval(&gate(2), &no, "sha256:x", &Stub).is_ok());
        let malformed = Request::new("approval", "Go?")
            .with_id("g1")
            .with_data(json!({"responders": "anyone"}));
        assert!(check_approval(&malformed, &Answer::ok("g1"), "sha256:x", &Stub).is_err());
    }
}
