//! Signed receipts of answers: the inbox signs, for each answer it records, a
//! [`Receipt`] with its Ed25519 key, and anyone holding the [`PublicKey`] checks it offline
//! with [`verify`], in this crate or in any language that speaks RFC 8785 and Ed25519.
//!
//! ```
//! use toolnexus::receipt::{ReceiptAnswer, Statement};
//! use toolnexus::{call_digest, serde_json::json, Answer};
//! use toolnexus_inbox::receipt::{timestamp, verify, ReceiptKey};
//!
//! // The host's own key, loaded with `ReceiptKey::from_env` or `from_file`; a throwaway here.
//! # let key = ReceiptKey::ephemeral_for_tests().unwrap();
//! let answer = Answer::ok("req-1");
//! let statement = Statement::new(
//!     "req-1",
//!     "run-1",
//!     call_digest("refund", &json!({"order": "A-1"})),
//!     ReceiptAnswer::of(&answer),
//!     "bob@example.com",
//!     timestamp(std::time::SystemTime::now()),
//!     "responders",
//! )
//! .on_behalf_of("ada@example.com");
//! let receipt = key.sign(statement);
//! verify(&receipt, &key.public_key()).unwrap();
//!
//! let mut forged = receipt.clone();
//! forged.statement.by = "mallory@example.com".into();
//! assert!(verify(&forged, &key.public_key()).is_err());
//! ```

mod armor;
mod error;
mod key;
mod public;
mod verify;

pub use error::ReceiptError;
pub use key::ReceiptKey;
pub use public::PublicKey;
pub use verify::{verify, verify_for};

/// The RFC 8785 bytes of a JSON value, which receipts are signed over: the core's
/// [`canonical_json`](toolnexus::canonical_json), the one implementation both crates use.
pub use toolnexus::canonical_json as canonical;
pub use toolnexus::receipt::{data_digest, Receipt, ReceiptAnswer, Statement};

use std::time::SystemTime;

use time::OffsetDateTime;

/// `at` as a receipt states it: RFC 3339 in UTC with milliseconds
/// (`2026-01-02T03:04:05.678Z`).
///
/// ```
/// use std::time::{Duration, SystemTime};
///
/// let when = SystemTime::UNIX_EPOCH + Duration::from_nanos(1_767_323_045_678_900_000);
/// assert_eq!(toolnexus_inbox::receipt::timestamp(when), "2026-01-02T03:04:05.678Z");
/// ```
pub fn timestamp(when: SystemTime) -> String {
    utc_millis(OffsetDateTime::from(when))
}

// Takes the `time` crate's type for the inbox's own clock; kept private so that crate stays
// out of the public API.
pub(crate) fn utc_millis(when: OffsetDateTime) -> String {
    let utc = when.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        utc.year(),
        u8::from(utc.month()),
        utc.day(),
        utc.hour(),
        utc.minute(),
        utc.second(),
        utc.millisecond()
    )
}
