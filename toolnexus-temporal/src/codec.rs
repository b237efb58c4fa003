//! [`Codec`]: the payload codec that keeps what a run's history holds unreadable without
//! the key. Temporal keeps every workflow input, activity input and output, update and
//! result; with a codec they are AES-256-GCM ciphertext, so a sign-in's token given as an
//! answer, a transcript, or a tool's output is never in the history in clear. What the
//! worker's core records for Temporal itself goes around the codec: the marker of the
//! workflow's patch and the search attribute listing it, which name the patch alone.
//!
//! The format is Temporal's usual one, so any SDK's client can share the key: each payload
//! (its metadata and data, as the `temporal.api.common.v1.Payload` message) is encrypted
//! whole into a payload whose metadata says `encoding: binary/encrypted` and names the key
//! (`encryption-key-id`), and whose data is the 12-byte nonce followed by the ciphertext.
//!
//! A payload that reaches the codec unencrypted is handed on marked as such
//! ([`UNENCRYPTED`]), never as if a key holder had written it: the workflow refuses an
//! `answer` update so marked, since anyone who reaches the namespace could have sent it.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt as _;
use prost::Message as _;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use temporalio_common::data_converters::{
    PayloadCodec, PayloadConversionError, SerializationContextData,
};
use temporalio_common::protos::temporal::api::common::v1::Payload;

use crate::error::TemporalError;

/// The `encoding` of an encrypted payload.
pub const ENCRYPTED: &str = "binary/encrypted";
/// The metadata key that names the key a payload was encrypted with.
pub const KEY_ID: &str = "encryption-key-id";
/// The metadata key the codec sets on a payload it was given to open that was not
/// encrypted: whatever reads it knows no key holder vouched for it.
pub const UNENCRYPTED: &str = "toolnexus-unencrypted";

/// An AES-256-GCM payload codec. Payloads it did not encrypt pass through marked
/// [`UNENCRYPTED`], so a client without the key can still start a run and read what is not
/// secret, but cannot answer one: the workflow refuses an `answer` update in clear. The
/// run's history holds nothing it encrypted in clear.
#[derive(Clone)]
pub struct Codec {
    key: Arc<LessSafeKey>,
    id: String,
    random: SystemRandom,
}

impl Codec {
    /// A codec with the 32-byte `key`.
    pub fn new(key: &[u8]) -> Result<Self, TemporalError> {
        let unbound = UnboundKey::new(&AES_256_GCM, key)
            .map_err(|_| TemporalError::Key(format!("it is {} bytes, not 32", key.len())))?;
        let digest = ring::digest::digest(&ring::digest::SHA256, key);
        Ok(Codec {
            key: Arc::new(LessSafeKey::new(unbound)),
            // Names the key without revealing it: the first 8 bytes of its SHA-256.
            id: hex::encode(&digest.as_ref()[..8]),
            random: SystemRandom::new(),
        })
    }

    /// A codec with the key written as 64 hexadecimal digits (surrounding whitespace is
    /// ignored, so a key file may end with a newline).
    pub fn from_hex(text: &str) -> Result<Self, TemporalError> {
        let text = text.trim();
        let bytes = hex::decode(text).map_err(|_| {
            TemporalError::Key(format!(
                "it is not hexadecimal ({} characters): write 32 bytes as 64 hex digits",
                text.len()
            ))
        })?;
        Codec::new(&bytes)
    }

    /// The key's id, as it appears in each encrypted payload's metadata.
    pub fn key_id(&self) -> &str {
        &self.id
    }

    fn seal(&self, payload: &Payload) -> Result<Payload, PayloadConversionError> {
        let mut nonce = [0u8; NONCE_LEN];
        self.random
            .fill(&mut nonce)
            .map_err(|_| encoding_error("no randomness for a nonce"))?;
        let mut data = payload.encode_to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut data)
            .map_err(|_| encoding_error("encryption failed"))?;
        let mut sealed = nonce.to_vec();
        sealed.extend_from_slice(&data);
        Ok(Payload {
            metadata: [
                ("encoding".to_owned(), ENCRYPTED.as_bytes().to_vec()),
                (KEY_ID.to_owned(), self.id.as_bytes().to_vec()),
            ]
            .into_iter()
            .collect(),
            data: sealed,
            ..Payload::default()
        })
    }

    fn open(&self, mut payload: Payload) -> Result<Payload, PayloadConversionError> {
        let encrypted = payload
            .metadata
            .get("encoding")
            .is_some_and(|e| e.as_slice() == ENCRYPTED.as_bytes());
        if !encrypted {
            payload
                .metadata
                .insert(UNENCRYPTED.to_owned(), b"true".to_vec());
            return Ok(payload);
        }
        if let Some(id) = payload.metadata.get(KEY_ID) {
            if id.as_slice() != self.id.as_bytes() {
                return Err(encoding_error(&format!(
                    "a payload was encrypted with key {}, not this codec's {}",
                    String::from_utf8_lossy(id),
                    self.id
                )));
            }
        }
        if payload.data.len() < NONCE_LEN {
            return Err(encoding_error("an encrypted payload is too short"));
        }
        let (nonce, sealed) = payload.data.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce)
            .map_err(|_| encoding_error("an encrypted payload's nonce is malformed"))?;
        let mut sealed = sealed.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::empty(), &mut sealed)
            .map_err(|_| encoding_error("an encrypted payload does not open with this key"))?;
        let mut opened = Payload::decode(&*plain)
            .map_err(|e| encoding_error(&format!("a decrypted payload is malformed: {e}")))?;
        // Sealed by a key holder, it is theirs: no mark they wrote inside says otherwise.
        opened.metadata.remove(UNENCRYPTED);
        Ok(opened)
    }
}

impl PayloadCodec for Codec {
    fn encode(
        &self,
        _context: &SerializationContextData,
        payloads: Vec<Payload>,
    ) -> BoxFuture<'static, Result<Vec<Payload>, PayloadConversionError>> {
        let sealed = payloads.iter().map(|p| self.seal(p)).collect();
        async move { sealed }.boxed()
    }

    fn decode(
        &self,
        _context: &SerializationContextData,
        payloads: Vec<Payload>,
    ) -> BoxFuture<'static, Result<Vec<Payload>, PayloadConversionError>> {
        let opened = payloads.into_iter().map(|p| self.open(p)).collect();
        async move { opened }.boxed()
    }
}

impl fmt::Debug for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Codec")
            .field("key_id", &self.id)
            .finish_non_exhaustive()
    }
}

fn encoding_error(why: &str) -> PayloadConversionError {
    PayloadConversionError::EncodingError(why.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(text: &str) -> Payload {
        Payload {
            metadata: [("encoding".to_owned(), b"json/plain".to_vec())]
                .into_iter()
                .collect(),
            data: text.as_bytes().to_vec(),
            ..Payload::default()
        }
    }

    #[test]
    fn a_sealed_payload_opens_to_itself_and_hides_its_data() {
        let codec = Codec::new(&[7; 32]).unwrap();
        let plain = payload(r#"{"token":"s3cret-token"}"#);
        let sealed = codec.seal(&plain).unwrap();
        assert!(!String::from_utf8_lossy(&sealed.data).contains("s3cret"));
        assert_eq!(sealed.metadata["encoding"], ENCRYPTED.as_bytes());
        assert_eq!(codec.open(sealed).unwrap(), plain);
    }

    #[test]
    fn a_plain_payload_passes_through_marked_and_a_tampered_one_is_refused() {
        let codec = Codec::new(&[7; 32]).unwrap();
        let plain = payload("1");
        let opened = codec.open(plain.clone()).unwrap();
        assert_eq!(opened.data, plain.data);
        assert_eq!(opened.metadata["encoding"], plain.metadata["encoding"]);
        assert!(opened.metadata.contains_key(UNENCRYPTED));
        // A mark sealed inside by a key holder does not survive opening.
        let mut marked = plain.clone();
        marked
            .metadata
            .insert(UNENCRYPTED.to_owned(), b"true".to_vec());
        assert_eq!(codec.open(codec.seal(&marked).unwrap()).unwrap(), plain);
        let mut sealed = codec.seal(&plain).unwrap();
        let last = sealed.data.len() - 1;
        sealed.data[last] ^= 1;
        assert!(codec.open(sealed).is_err());
        let other = Codec::new(&[8; 32]).unwrap();
        let sealed = codec.seal(&plain).unwrap();
        let refused = other.open(sealed).unwrap_err().to_string();
        assert!(refused.contains(codec.key_id()), "{refused}");
    }

    #[test]
    fn a_key_must_be_32_bytes_of_hex() {
        assert!(Codec::from_hex(&"ab".repeat(32)).is_ok());
        assert!(Codec::from_hex(&format!("{}\n", "ab".repeat(32))).is_ok());
        let short = Codec::from_hex("abcd").unwrap_err().to_string();
        assert!(short.contains("2 bytes, not 32"), "{short}");
        assert!(Codec::from_hex(&"zz".repeat(32)).is_err());
    }
}
