//! [`PublicKey`]: what checks receipts, shared with whoever must check them.

use std::fmt;

use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use base64::Engine as _;

use super::armor;
use super::error::ReceiptError;

/// The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the algorithm
/// `1.3.101.112` and a bit string of 32 bytes, which follow.
const SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// An Ed25519 public key that checks receipts ([`verify`](super::verify)): its 32 raw
/// bytes, written as base64url ([`to_base64`](PublicKey::to_base64)) or as the SPKI PEM
/// other languages' libraries load ([`to_pem`](PublicKey::to_pem)).
///
/// ```
/// use toolnexus_inbox::receipt::{PublicKey, ReceiptKey};
///
/// let public = ReceiptKey::ephemeral_for_tests().unwrap().public_key();
/// assert_eq!(PublicKey::from_base64(&public.to_base64()).unwrap(), public);
/// assert_eq!(PublicKey::from_pem(&public.to_pem()).unwrap(), public);
/// assert!(public.id().starts_with("ed25519:"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PublicKey {
    bytes: [u8; 32],
    id: String,
}

impl PublicKey {
    /// The key of these 32 raw bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        let sum = ring::digest::digest(&ring::digest::SHA256, &bytes);
        let mut id = String::from("ed25519:");
        for byte in &sum.as_ref()[..8] {
            id.push_str(&format!("{byte:02x}"));
        }
        PublicKey { bytes, id }
    }

    /// The 32 raw bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.bytes
    }

    /// The id receipts name their key by (their `key`): `ed25519:` and the first 16 hex
    /// digits of the SHA-256 of the raw key.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The raw key in base64url without padding.
    pub fn to_base64(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.bytes)
    }

    /// A key from [`to_base64`](PublicKey::to_base64)'s text; standard base64, padded or
    /// not, is read too.
    pub fn from_base64(text: &str) -> Result<Self, ReceiptError> {
        let text = text.trim().trim_end_matches('=');
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .or_else(|_| STANDARD_NO_PAD.decode(text))
            .map_err(|_| ReceiptError::InvalidKey("the public key is not base64".into()))?;
        Self::from_slice(&bytes)
    }

    /// The key as an SPKI PEM (`-----BEGIN PUBLIC KEY-----`), as `openssl pkey -pubout`
    /// writes it and Python's `cryptography` loads it (`load_pem_public_key`).
    pub fn to_pem(&self) -> String {
        armor::wrap(&self.to_spki_der(), "PUBLIC KEY")
    }

    /// A key from an SPKI PEM.
    pub fn from_pem(text: &str) -> Result<Self, ReceiptError> {
        let der = armor::unwrap(text, "PUBLIC KEY")?;
        match der.strip_prefix(&SPKI_PREFIX[..]) {
            Some(raw) => Self::from_slice(raw),
            None => Err(ReceiptError::InvalidKey(
                "the PEM holds no Ed25519 public key".into(),
            )),
        }
    }

    fn to_spki_der(&self) -> Vec<u8> {
        let mut der = SPKI_PREFIX.to_vec();
        der.extend_from_slice(&self.bytes);
        der
    }

    pub(super) fn from_slice(raw: &[u8]) -> Result<Self, ReceiptError> {
        let bytes: [u8; 32] = raw.try_into().map_err(|_| {
            ReceiptError::InvalidKey(format!(
                "an Ed25519 public key has 32 bytes, not {}",
                raw.len()
            ))
        })?;
        Ok(Self::from_bytes(bytes))
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PublicKey").field(&self.id).finish()
    }
}
