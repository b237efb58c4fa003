//! [`verify`]: checking a receipt with the public key alone.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ring::signature::{UnparsedPublicKey, ED25519};

use super::error::ReceiptError;
use super::public::PublicKey;
use toolnexus::receipt::{Receipt, RECEIPT_VERSION};

/// Checks `receipt` against `key`, offline: it is of a version this crate reads, names
/// `key` as its signer, and its signature covers exactly what it states. What it states
/// (the request, the call's digest, who answered) is then the caller's to compare with
/// what it is asked to do.
pub fn verify(receipt: &Receipt, key: &PublicKey) -> Result<(), ReceiptError> {
    // Version 1 lacks `final`, `quorum` and `remember`; it still reads, as never final.
    if !(1..=RECEIPT_VERSION).contains(&receipt.statement.v) {
        return Err(ReceiptError::UnsupportedVersion(receipt.statement.v));
    }
    if receipt.key != key.id() {
        return Err(ReceiptError::OtherKey {
            receipt: receipt.key.clone(),
            key: key.id().to_owned(),
        });
    }
    let signature = URL_SAFE_NO_PAD
        .decode(&receipt.signature)
        .map_err(|_| ReceiptError::MalformedSignature)?;
    if signature.len() != 64 {
        return Err(ReceiptError::MalformedSignature);
    }
    UnparsedPublicKey::new(&ED25519, key.as_bytes())
        .verify(&receipt.signed_bytes(), &signature)
        .map_err(|_| ReceiptError::BadSignature)
}

/// Checks that `receipt` is one a third party can act on for the call with digest `call`
/// (`toolnexus::call_digest` of the tool and the arguments it is asked to run with) that
/// answered request `request`: it [`verify`]s under `key`, names that request and that
/// call, approves, and is final — the answer that settled the request, not a refusal, an
/// expiry's decline or one vote of a quorum still short. A version 1 receipt states no
/// finality and is never final.
///
/// ```
/// use toolnexus::receipt::{ReceiptAnswer, Statement};
/// use toolnexus::{call_digest, serde_json::json, Answer};
/// use toolnexus_inbox::receipt::{verify_for, ReceiptKey};
///
/// let key = ReceiptKey::ephemeral_for_tests().unwrap();
/// let call = call_digest("refund", &json!({"order": "A-1"}));
/// let stated = |answer: &Answer| {
///     Statement::new("req-1", "run-1", call.clone(), ReceiptAnswer::of(answer), "bob",
///                    "2026-01-02T03:04:05.678Z", "group:finance")
/// };
/// let yes = key.sign(stated(&Answer::ok("req-1")));
/// assert!(verify_for(&yes, &key.public_key(), "req-1", &call).is_ok());
/// assert!(verify_for(&yes, &key.public_key(), "req-2", &call).is_err());
/// let no = key.sign(stated(&Answer::decline("req-1", "declined")));
/// assert!(verify_for(&no, &key.public_key(), "req-1", &call).is_err());
/// let partial = key.sign(stated(&Answer::ok("req-1")).quorum(2).partial());
/// assert!(verify_for(&partial, &key.public_key(), "req-1", &call).is_err());
/// ```
pub fn verify_for(
    receipt: &Receipt,
    key: &PublicKey,
    request: &str,
    call: &str,
) -> Result<(), ReceiptError> {
    verify(receipt, key)?;
    let stated = &receipt.statement;
    let not = |why: String| Err(ReceiptError::NotThis(why));
    if stated.request != request {
        return not(format!("it answers request `{}`", stated.request));
    }
    if stated.call != call {
        return not("it was given for another call".to_owned());
    }
    if !stated.answer.ok {
        return not("it is a refusal".to_owned());
    }
    if stated.settles != Some(true) {
        return not("it is not the answer that settled the request".to_owned());
    }
    Ok(())
}

/// The run's own check of a ruled approval's receipts
/// ([`ToolkitBuilder::verify_receipts`](toolnexus::ToolkitBuilder::verify_receipts)):
/// a toolkit given the inbox's public key runs such a call only under receipts this key
/// signed.
impl toolnexus::receipt::VerifyReceipt for PublicKey {
    fn verify_signature(&self, receipt: &Receipt) -> Result<(), String> {
        verify(receipt, self).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receipt::ReceiptKey;
    use toolnexus::receipt::{ReceiptAnswer, Statement};
    use toolnexus::Answer;

    fn signed(key: &ReceiptKey) -> Receipt {
        let answer = Answer::ok("r1");
        key.sign(Statement::new(
            "r1",
            "run",
            toolnexus::call_digest("t", &serde_json::json!({})),
            ReceiptAnswer::of(&answer),
            "ada",
            "2026-01-01T00:00:00.000Z",
            "anyone",
        ))
    }

    #[test]
    fn each_refusal_says_why() {
        let key = ReceiptKey::ephemeral_for_tests().unwrap();
        let other = ReceiptKey::ephemeral_for_tests().unwrap();
        let receipt = signed(&key);
        assert!(verify(&receipt, &key.public_key()).is_ok());
        assert!(matches!(
            verify(&receipt, &other.public_key()),
            Err(ReceiptError::OtherKey { .. })
        ));
        let mut later = receipt.clone();
        later.statement.v = RECEIPT_VERSION + 1;
        assert!(matches!(
            verify(&later, &key.public_key()),
            Err(ReceiptError::UnsupportedVersion(v)) if v == RECEIPT_VERSION + 1
        ));
        let mut garbled = receipt.clone();
        garbled.signature = "not base64!".into();
        assert!(matches!(
            verify(&garbled, &key.public_key()),
            Err(ReceiptError::MalformedSignature)
        ));
        // Another key's signature under this key's id.
        let mut swapped = signed(&other);
        swapped.key = key.id().to_owned();
        assert!(matches!(
            verify(&swapped, &key.public_key()),
            Err(ReceiptError::BadSignature)
        ));
    }
}
