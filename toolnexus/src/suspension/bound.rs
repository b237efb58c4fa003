//! What binds an answer's receipts to the call they let run: each must name the answer's
//! request and the digest of the call as it will run, so a receipt issued for one call
//! never lets another run.

use serde_json::Value;

use super::answer::Answer;
use super::digest::call_digest;

/// Refuses an answer carrying a receipt issued for anything but this call: each receipt
/// must name the answer's request and the digest of the call as it will run, `tool` with
/// the answer's edited arguments when it has some, else `args`. An answer without receipts
/// passes without a digest being made.
pub(crate) fn check_bound(answer: &Answer, tool: &str, args: &Value) -> Result<(), String> {
    if answer.receipts.is_empty() {
        return Ok(());
    }
    let call = call_digest(tool, answer.args.as_ref().unwrap_or(args));
    for receipt in &answer.receipts {
        let stated = &receipt.statement;
        if stated.request != answer.id {
            return Err(format!(
                "a receipt names request `{}`, not `{}`",
                stated.request, answer.id
            ));
        }
        if stated.call != call {
            return Err(format!(
                "a receipt names call {}, not this call of `{tool}` ({call})",
                stated.call
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receipt::{Receipt, ReceiptAnswer, Statement};
    use serde_json::json;

    fn receipt(request: &str, call: String) -> Receipt {
        let statement = Statement::new(
            request,
            "run",
            call,
            ReceiptAnswer::of(&Answer::ok(request)),
            "ada",
            "2026-01-01T00:00:00.000Z",
            "anyone",
        );
        Receipt::new(statement, "ed25519:00", "sig")
    }

    #[test]
    fn a_receipt_binds_its_request_and_the_call_as_it_runs() {
        let args = json!({"amount": 40});
        let mut answer = Answer::ok("r1");
        assert_eq!(check_bound(&answer, "refund", &args), Ok(()));
        answer.receipts = vec![receipt("r1", call_digest("refund", &args))];
        assert_eq!(check_bound(&answer, "refund", &args), Ok(()));
        assert!(check_bound(&answer, "refund", &json!({"amount": 4000})).is_err());
        assert!(check_bound(&answer, "charge", &args).is_err());
        // Edited arguments are what runs, so the receipt must name them.
        let edited = answer.clone().with_args(json!({"amount": 30}));
        assert!(check_bound(&edited, "refund", &args).is_err());
        let mut bound = Answer::ok("r1").with_args(json!({"amount": 30}));
        bound.receipts = vec![receipt("r1", call_digest("refund", &json!({"amount": 30})))];
        assert_eq!(check_bound(&bound, "refund", &args), Ok(()));
        let mut other = Answer::ok("r2");
        other.receipts = answer.receipts.clone();
        let refused = check_bound(&other, "refund", &args).unwrap_err();
        assert!(refused.contains("`r1`"), "{refused}");
    }
}
