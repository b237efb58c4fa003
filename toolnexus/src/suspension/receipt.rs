//! [`Receipt`]: a signed statement that a person answered a request, which a tool hands to
//! the system it acts on so that system can check, offline and in any language, who
//! approved this very call.
//!
//! The signature covers the RFC 8785 bytes ([`canonical_json`](crate::canonical_json)) of
//! every member but `signature`; the inbox signs and checks receipts
//! (`toolnexus_inbox::receipt`). The core only carries them: on the answer they came with,
//! and to the tool, after refusing any receipt issued for another call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::canonical::{canonical_json, canonical_with, Integers};
use super::codes::Refusal;
use super::digest::sha256_text;

/// The version of the receipt format this crate writes. Version 2 adds `final`, `quorum`
/// and `remember` to what is signed; version 1 receipts (without them) still read, and
/// count as never final.
pub const RECEIPT_VERSION: u32 = 2;

/// A signed statement that an answer was given: which request and call it settled, what
/// it said, who gave it, when, and under which rule.
///
/// Its JSON is what travels (keys `v`, `request`, `run`, `call`, `answer`, `by`, `for`,
/// `at`, `rule`, `key`, `signature`); the signature covers the RFC 8785 bytes of all of it
/// but `signature` ([`signed_bytes`](Receipt::signed_bytes)).
///
/// ```
/// use toolnexus::receipt::{ReceiptAnswer, Statement};
/// use toolnexus::{call_digest, serde_json::json, Answer, Receipt};
///
/// let answer = Answer::ok("req-1").with_data(json!({"note": "fine"}));
/// let statement = Statement::new(
///     "req-1",
///     "run-1",
///     call_digest("refund", &json!({"order": "A-1"})),
///     ReceiptAnswer::of(&answer),
///     "bob@example.com",
///     "2026-01-02T03:04:05.678Z",
///     "responders",
/// )
/// .on_behalf_of("ada@example.com");
/// let receipt = Receipt::new(statement, "ed25519:0123456789abcdef", "c2lnbmF0dXJl");
/// let wire = toolnexus::serde_json::to_value(&receipt).unwrap();
/// assert_eq!(wire["for"], "ada@example.com");
/// assert!(wire["answer"]["data"].as_str().unwrap().starts_with("sha256:"));
/// assert_eq!(toolnexus::serde_json::from_value::<Receipt>(wire).unwrap(), receipt);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Receipt {
    /// What is stated; everything here is signed.
    #[serde(flatten)]
    pub statement: Statement,
    /// The id of the key that signed it (JSON `key`), signed too, so a verifier picks the
    /// public key by it and a receipt cannot be passed off under another key.
    pub key: String,
    /// The Ed25519 signature of [`signed_bytes`](Receipt::signed_bytes), base64url without
    /// padding (JSON `signature`).
    pub signature: String,
}

impl Receipt {
    /// A receipt of `statement`, signed by key `key` with `signature`.
    pub fn new(statement: Statement, key: impl Into<String>, signature: impl Into<String>) -> Self {
        Receipt {
            statement,
            key: key.into(),
            signature: signature.into(),
        }
    }

    /// The bytes the signature covers: the RFC 8785 form of the receipt without its
    /// `signature` member.
    pub fn signed_bytes(&self) -> Vec<u8> {
        self.statement.signed_bytes(&self.key)
    }
}

/// What a [`Receipt`] states, before it is signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Statement {
    /// The format's version (JSON `v`): [`RECEIPT_VERSION`].
    pub v: u32,
    /// The id of the request answered.
    pub request: String,
    /// The id of the run that waited on it.
    pub run: String,
    /// The [`call_digest`](crate::call_digest) of the call as it runs under the answer (a person's edited
    /// arguments included): what binds the receipt to one call.
    pub call: String,
    /// What the answer said.
    pub answer: ReceiptAnswer,
    /// Who answered.
    pub by: String,
    /// On whose behalf (JSON `for`): the person whose authority the answer used, who is
    /// `by` unless someone answered for another.
    #[serde(rename = "for")]
    pub on_behalf_of: String,
    /// When the answer was recorded: RFC 3339 in UTC with milliseconds
    /// (`2026-01-02T03:04:05.678Z`).
    pub at: String,
    /// The rule that allowed `by` to answer (say, the request's responders).
    pub rule: String,
    /// Whether this answer settled the request (JSON `final`): a refusal, or the approval
    /// that reached its quorum; `false` for an approval that left the quorum short.
    /// Absent from version 1 receipts.
    #[serde(rename = "final", default, skip_serializing_if = "Option::is_none")]
    pub settles: Option<bool>,
    /// How many distinct people the request needed (JSON `quorum`). Absent from
    /// version 1 receipts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
    /// Whether the person asked for the decision to be remembered for the rest of the run
    /// (JSON `remember`). Absent from version 1 receipts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remember: Option<bool>,
}

impl Statement {
    /// A statement that `by` answered `request` of `run`, whose call has digest `call`,
    /// with `answer`, at `at`, allowed by `rule`; on their own behalf until
    /// [`on_behalf_of`](Statement::on_behalf_of) says otherwise.
    pub fn new(
        request: impl Into<String>,
        run: impl Into<String>,
        call: impl Into<String>,
        answer: ReceiptAnswer,
        by: impl Into<String>,
        at: impl Into<String>,
        rule: impl Into<String>,
    ) -> Self {
        let by = by.into();
        Statement {
            v: RECEIPT_VERSION,
            request: request.into(),
            run: run.into(),
            call: call.into(),
            answer,
            on_behalf_of: by.clone(),
            by,
            at: at.into(),
            rule: rule.into(),
            settles: Some(true),
            quorum: Some(1),
            remember: Some(false),
        }
    }

    /// Records that the answer left the request waiting for more approvals: one vote
    /// toward a quorum, which settles nothing alone.
    pub fn partial(mut self) -> Self {
        self.settles = Some(false);
        self
    }

    /// Records that the request needed `n` distinct people.
    pub fn quorum(mut self, n: u32) -> Self {
        self.quorum = Some(n);
        self
    }

    /// Records whether the person asked for the decision to be remembered.
    pub fn remembered(mut self, remember: bool) -> Self {
        self.remember = Some(remember);
        self
    }

    /// Records that `by` answered for `who`.
    pub fn on_behalf_of(mut self, who: impl Into<String>) -> Self {
        self.on_behalf_of = who.into();
        self
    }

    /// The bytes a signature by key `key` covers: the RFC 8785 form of this statement
    /// with the member `key` added, which is a [`Receipt`]'s JSON without `signature`.
    pub fn signed_bytes(&self, key: &str) -> Vec<u8> {
        let mut value = match serde_json::to_value(self) {
            Ok(value) => value,
            // Strings, a bool and an integer always serialize.
            Err(_) => Value::Null,
        };
        if let Value::Object(members) = &mut value {
            members.insert("key".to_owned(), Value::String(key.to_owned()));
        }
        canonical_json(&value)
    }
}

/// What a receipt says of the answer: granted or not, the refusal's code, and the digest
/// of its data ([`data_digest`]), never the data itself. [`ReceiptAnswer::of`] states an
/// [`Answer`](crate::Answer) (it sits beside `Answer`, which carries receipts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReceiptAnswer {
    /// Whether the request was granted.
    pub ok: bool,
    /// The refusal's code; omitted when granted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Refusal>,
    /// The [`data_digest`] of the answer's data; omitted when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

/// The digest of an answer's data as a receipt states it: `sha256:` and the hex SHA-256 of
/// the data's RFC 8785 bytes, so the system handed a receipt can check the data it was
/// given is the data that was approved. One departure from RFC 8785 keeps two data apart
/// that a double would not: an integer beyond 2^53 is written with all its digits, not as
/// the nearest double (up to 2^53 the two texts are the same).
///
/// ```
/// use toolnexus::{data_digest, serde_json::json};
///
/// let d = data_digest(&json!({"amount": 40.0, "zip": "75001"}));
/// assert_eq!(d, data_digest(&json!({"zip": "75001", "amount": 40})));
/// assert_eq!(d.len(), "sha256:".len() + 64);
/// // Integers a double cannot hold keep every digit: no two share a digest.
/// let big = 1_u64 << 53;
/// assert_ne!(data_digest(&json!(big + 1)), data_digest(&json!(big + 2)));
/// ```
pub fn data_digest(data: &Value) -> String {
    sha256_text(&canonical_with(data, Integers::Exact))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{call_digest, Answer};
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
    fn the_wire_keys_are_as_pinned() {
        let r = receipt("r1", call_digest("t", &json!({})));
        let wire = serde_json::to_value(&r).unwrap();
        let mut keys: Vec<&str> = wire
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "answer",
                "at",
                "by",
                "call",
                "final",
                "for",
                "key",
                "quorum",
                "remember",
                "request",
                "rule",
                "run",
                "signature",
                "v"
            ]
        );
        assert_eq!(wire["answer"], json!({"ok": true}));
        let declined = ReceiptAnswer::of(&Answer::decline("r1", "declined").with_data(json!(1)));
        assert_eq!(
            serde_json::to_value(declined).unwrap(),
            json!({"ok": false, "reason": "declined", "data": data_digest(&json!(1))})
        );
    }

    #[test]
    fn signed_bytes_are_the_receipt_without_its_signature() {
        let r = receipt("r1", call_digest("t", &json!({})));
        let mut wire = serde_json::to_value(&r).unwrap();
        wire.as_object_mut().unwrap().remove("signature");
        assert_eq!(r.signed_bytes(), canonical_json(&wire));
    }
}
