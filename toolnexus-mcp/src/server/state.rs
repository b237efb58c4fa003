//! The `requestState` of an `input_required` result: the suspension and the call's
//! arguments, sealed with an HMAC so that the state a client echoes back (untrusted, by
//! the protocol) is accepted only as this server wrote it, for the tool it was written for.
//!
//! rmcp's seal authenticates and does not hide: the client can read the state. What a
//! suspension kept for its re-run (a sub-agent's halted run, its whole inner transcript) is
//! not the client's to read, so it is encrypted within the state under a key derived from
//! the seal's, and bound to the tool and the round it was kept for.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::hkdf;
use ring::rand::{SecureRandom, SystemRandom};
use rmcp::model::{RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolnexus::{Answer, Request};

use super::asked::Asked;
use crate::McpError;

/// What a retried call needs to resume: the requests it answers (the first under
/// `request`, as state sealed before calls asked several holds it), the answers a
/// retry gave to some of them, and the arguments of the call that suspended (a retry with
/// other arguments is refused), and what the suspension kept for the re-run, encrypted
/// ([`Sealer::seal`] writes it, [`Sealer::open`] reads it back).
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Continuation {
    pub(super) request: Request,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) more: Vec<Request>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) answered: Vec<Answer>,
    pub(super) args: Value,
    /// The kept value's ciphertext, base64url (nonce, then sealed bytes); absent when the
    /// suspension kept nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kept: Option<String>,
}

impl Continuation {
    /// The round this state carries, `kept` already decrypted by [`Sealer::open`].
    fn into_asked(self, kept: Option<Value>) -> Asked {
        let mut requests = Vec::with_capacity(1 + self.more.len());
        requests.push(self.request);
        requests.extend(self.more);
        Asked {
            requests,
            answers: self.answered,
            kept,
        }
    }
}

/// The most a suspension's kept value may weigh, serialized, to be carried in a
/// `requestState`: a client echoes the state with every retry, and a state this large is
/// already a burden on it. A call that keeps more ends with an error naming the limit
/// (never a truncated run); a server that must carry more keeps its calls in an inbox.
pub(super) const MAX_KEPT: usize = 512 * 1024;

/// Tells the encryption key apart from the HMAC key it is derived from.
const KEPT_INFO: &[u8] = b"toolnexus-mcp requestState kept v1";

pub(super) struct Sealer {
    codec: RequestStateCodec,
    cipher: LessSafeKey,
    random: SystemRandom,
}

impl Sealer {
    /// A sealer under `key`, which must be long enough for its HMAC to hold.
    pub(super) fn new(key: Vec<u8>) -> Result<Self, McpError> {
        let min = RequestStateCodec::MIN_KEY_LENGTH;
        if key.len() < min {
            return Err(McpError::ShortStateKey {
                len: key.len(),
                min,
            });
        }
        Ok(Self::under(key))
    }

    /// A sealer under a key of its own, drawn at random.
    pub(super) fn random() -> Self {
        Self::under(random_key())
    }

    fn under(key: Vec<u8>) -> Self {
        Self {
            cipher: cipher_under(&key),
            codec: RequestStateCodec::new_unchecked(key),
            random: SystemRandom::new(),
        }
    }

    /// The state of `asked`, a call of `tool` with `args`, sealed; `Err` says why it
    /// cannot be (a round that asks nothing, a kept value past [`MAX_KEPT`]).
    pub(super) fn seal(&self, tool: &str, asked: &Asked, args: Value) -> Result<String, String> {
        let (request, more) = asked
            .requests
            .split_first()
            .ok_or_else(|| "it asks nothing".to_owned())?;
        let kept = match &asked.kept {
            Some(kept) => Some(self.encrypt(tool, &request.id, kept)?),
            None => None,
        };
        let continuation = Continuation {
            request: request.clone(),
            more: more.to_vec(),
            answered: asked.answers.clone(),
            args,
            kept,
        };
        self.codec
            .seal_json_with(
                &continuation,
                &SealOptions::new().associated_data(tool.as_bytes()),
            )
            .map_err(|e| e.to_string())
    }

    /// The round `sealed` carries for `tool`, with its arguments; `Err` for state this
    /// server did not seal for `tool`, or whose kept value does not decrypt as kept for
    /// its round.
    pub(super) fn open(&self, tool: &str, sealed: &str) -> Result<(Asked, Value), String> {
        let mut continuation: Continuation = self
            .codec
            .open_json_with(sealed, tool.as_bytes())
            .map_err(|e| e.to_string())?;
        let kept = match continuation.kept.take() {
            Some(ciphertext) => Some(self.decrypt(tool, &continuation.request.id, &ciphertext)?),
            None => None,
        };
        let args = std::mem::take(&mut continuation.args);
        Ok((continuation.into_asked(kept), args))
    }

    /// `kept`, encrypted under a fresh random nonce and bound to `tool` and the round's
    /// first request, so that it opens only in the round it was kept for.
    fn encrypt(&self, tool: &str, request: &str, kept: &Value) -> Result<String, String> {
        let mut bytes = serde_json::to_vec(kept).map_err(|e| e.to_string())?;
        if bytes.len() > MAX_KEPT {
            return Err(format!(
                "what it keeps for its next round is {} bytes, more than the {MAX_KEPT} a \
                 requestState carries; keep its calls in an inbox",
                bytes.len()
            ));
        }
        let mut nonce = [0u8; NONCE_LEN];
        self.random
            .fill(&mut nonce)
            .map_err(|_| "no random nonce could be drawn".to_owned())?;
        self.cipher
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(bound(tool, request)),
                &mut bytes,
            )
            .map_err(|_| "the kept state could not be encrypted".to_owned())?;
        let mut out = Vec::with_capacity(NONCE_LEN + bytes.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&bytes);
        Ok(URL_SAFE_NO_PAD.encode(out))
    }

    fn decrypt(&self, tool: &str, request: &str, ciphertext: &str) -> Result<Value, String> {
        let refused = || "its kept state does not open".to_owned();
        let mut bytes = URL_SAFE_NO_PAD.decode(ciphertext).map_err(|_| refused())?;
        if bytes.len() < NONCE_LEN {
            return Err(refused());
        }
        let mut sealed = bytes.split_off(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(&bytes).map_err(|_| refused())?;
        let plain = self
            .cipher
            .open_in_place(nonce, Aad::from(bound(tool, request)), &mut sealed)
            .map_err(|_| refused())?;
        serde_json::from_slice(plain).map_err(|_| refused())
    }
}

/// The associated data a kept value is bound to: the tool, then the round's first request
/// (a NUL between them, which neither a tool's name nor an id carries, keeps them apart).
fn bound(tool: &str, request: &str) -> Vec<u8> {
    let mut aad = Vec::with_capacity(tool.len() + 1 + request.len());
    aad.extend_from_slice(tool.as_bytes());
    aad.push(0);
    aad.extend_from_slice(request.as_bytes());
    aad
}

/// The ChaCha20-Poly1305 key for kept values, derived from the seal's key by HKDF-SHA256,
/// so that the HMAC key itself never encrypts.
fn cipher_under(key: &[u8]) -> LessSafeKey {
    let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, &[]).extract(key);
    let okm = prk
        .expand(&[KEPT_INFO], &CHACHA20_POLY1305)
        // HKDF-SHA256 yields up to 8160 bytes; the cipher's key is 32.
        .expect("HKDF-SHA256 yields a 32-byte key");
    LessSafeKey::new(UnboundKey::from(okm))
}

/// 32 bytes from the OS's random source (two v4 UUIDs carry 244 random bits).
fn random_key() -> Vec<u8> {
    let mut key = Vec::with_capacity(32);
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    key
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const SECRET: &str = "the inner agent's instructions";

    fn asked(kept: Option<Value>) -> Asked {
        Asked::new(vec![Request::new("approval", "Refund order A-7?")]).keeping(kept)
    }

    /// Everything a client can read of `sealed`: each part, decoded where it decodes.
    fn readable(sealed: &str) -> String {
        sealed
            .split('.')
            .map(|part| {
                URL_SAFE_NO_PAD
                    .decode(part)
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                    .unwrap_or_else(|_| part.to_owned())
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_kept_run_comes_back_and_is_never_readable() {
        let sealer = Sealer::random();
        let kept = json!({"messages": [{"role": "system", "content": SECRET}]});
        let args = json!({"task": "Refund order A-7"});
        let sealed = sealer
            .seal("payments", &asked(Some(kept.clone())), args.clone())
            .unwrap();
        let shown = readable(&sealed);
        assert!(shown.contains("Refund order A-7?"), "{shown}");
        assert!(!shown.contains(SECRET), "{shown}");
        let (opened, opened_args) = sealer.open("payments", &sealed).unwrap();
        assert_eq!((opened.kept, opened_args), (Some(kept), args));
        // Another tool's state, or another server's, does not open.
        assert!(sealer.open("refund", &sealed).is_err());
        assert!(Sealer::random().open("payments", &sealed).is_err());
    }

    #[test]
    fn a_kept_value_opens_only_in_its_own_round() {
        let sealer = Sealer::random();
        let sealed = sealer.encrypt("payments", "r1", &json!(SECRET)).unwrap();
        assert_eq!(
            sealer.decrypt("payments", "r1", &sealed).unwrap(),
            json!(SECRET)
        );
        assert!(sealer.decrypt("payments", "r2", &sealed).is_err());
        assert!(sealer.decrypt("approvals", "r1", &sealed).is_err());
        assert!(sealer.decrypt("payments", "r1", "AAAA").is_err());
    }

    #[test]
    fn a_kept_value_past_the_limit_is_refused_not_cut() {
        let sealer = Sealer::random();
        let huge = json!("x".repeat(MAX_KEPT));
        let refused = sealer
            .seal("payments", &asked(Some(huge)), json!({}))
            .unwrap_err();
        assert!(refused.contains(&MAX_KEPT.to_string()), "{refused}");
    }
}
