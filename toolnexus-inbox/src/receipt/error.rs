//! [`ReceiptError`]: why a receipt key could not be loaded or a receipt does not verify.

use std::path::PathBuf;

/// Why a receipt key could not be loaded, or a receipt does not check out. No variant
/// carries key material.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiptError {
    /// The key file could not be read.
    #[error("the receipt key file {} cannot be read: {source}", path.display())]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// The environment variable meant to hold the key is not set (or not UTF-8).
    #[error(
        "the environment variable {0} holds no receipt key: set it to a PKCS#8 PEM or its base64"
    )]
    MissingKey(String),
    /// The text or bytes given are not an Ed25519 key in the form expected.
    #[error("not an Ed25519 key: {0}")]
    InvalidKey(String),
    /// The receipt names another format version than this crate reads.
    #[error("the receipt has version {0}; this version of toolnexus-inbox reads versions 1 to {v}", v = toolnexus::receipt::RECEIPT_VERSION)]
    UnsupportedVersion(u32),
    /// The receipt was signed by another key than the one it is checked with.
    #[error("the receipt was signed by key `{receipt}`, not by `{key}`")]
    OtherKey {
        /// The key id the receipt names.
        receipt: String,
        /// The id of the key it was checked with.
        key: String,
    },
    /// The signature is not base64url of 64 bytes.
    #[error("the receipt's signature is not base64url of an Ed25519 signature")]
    MalformedSignature,
    /// The signature does not match what the receipt states: it was changed after it was
    /// signed, or signed by another key.
    #[error("the receipt's signature does not match its contents")]
    BadSignature,
    /// The receipt is genuine but does not say what [`verify_for`](super::verify_for) was
    /// asked to rely on: another request or call, a refusal, or a vote that settled nothing.
    #[error("the receipt does not approve this: {0}")]
    NotThis(String),
}
