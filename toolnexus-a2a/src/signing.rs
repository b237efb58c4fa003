//! Signed agent cards: a card signed as the specification has it — a JWS (RFC 7515) over
//! the card's RFC 8785 form without its `signatures` and with its empty values left out,
//! the payload detached — so a client given the signer's key knows the card it fetched is
//! the one the agent's owner published, whatever served it.
//!
//! Keys are Ed25519 (`EdDSA`): small, fast, and with one way to sign, so no algorithm can
//! be talked down to another.

use std::fmt;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{Ed25519KeyPair, KeyPair, UnparsedPublicKey, ED25519};
use serde_json::{json, Value};

use crate::error::A2aError;

/// The one algorithm signed and taken.
const ALG: &str = "EdDSA";

/// The deepest nesting a card may have to be signed or checked: a card is a few levels
/// deep, and a bound keeps a hostile one from exhausting the stack.
const MAX_DEPTH: usize = 64;

/// The key an agent's card is signed with
/// ([`A2aServerBuilder::sign_card`](crate::A2aServerBuilder::sign_card)).
///
/// ```
/// use toolnexus_a2a::CardSigner;
///
/// let pkcs8 = CardSigner::generate_pkcs8().unwrap();
/// let signer = CardSigner::from_pkcs8(&pkcs8, "card-2026").unwrap();
/// // The key clients are given, to check the card with.
/// let key = signer.verifying_key();
/// assert_eq!(key.kid(), Some("card-2026"));
/// ```
pub struct CardSigner {
    pair: Ed25519KeyPair,
    kid: String,
}

impl CardSigner {
    /// A new Ed25519 key, as PKCS#8 DER: what to keep (in a secret store) and give to
    /// [`from_pkcs8`](Self::from_pkcs8).
    pub fn generate_pkcs8() -> Result<Vec<u8>, A2aError> {
        Ed25519KeyPair::generate_pkcs8(&SystemRandom::new())
            .map(|doc| doc.as_ref().to_vec())
            .map_err(|_| A2aError::CardKey("no Ed25519 key could be generated".to_owned()))
    }

    /// The Ed25519 key in `pkcs8` (DER), named `kid` in each signature's protected header.
    pub fn from_pkcs8(pkcs8: &[u8], kid: impl Into<String>) -> Result<CardSigner, A2aError> {
        let pair = Ed25519KeyPair::from_pkcs8_maybe_unchecked(pkcs8).map_err(|_| {
            A2aError::CardKey("the key is no Ed25519 private key in PKCS#8 DER".to_owned())
        })?;
        Ok(CardSigner {
            pair,
            kid: kid.into(),
        })
    }

    /// The key that checks this signer's signatures, to give to clients.
    pub fn verifying_key(&self) -> CardKey {
        CardKey {
            public: self.pair.public_key().as_ref().to_vec(),
            kid: Some(self.kid.clone()),
        }
    }

    /// `card` (the JSON a server serves) with this key's signature as its `signatures`.
    pub(crate) fn sign(&self, card: &mut Value) -> Result<(), A2aError> {
        let protected = json!({"alg": ALG, "kid": self.kid, "typ": "JOSE"});
        let protected = URL_SAFE_NO_PAD.encode(protected.to_string());
        let payload = URL_SAFE_NO_PAD.encode(canonical(card)?);
        let signature = self.pair.sign(format!("{protected}.{payload}").as_bytes());
        let Value::Object(fields) = card else {
            return Err(A2aError::CardKey("a card is a JSON object".to_owned()));
        };
        fields.insert(
            "signatures".to_owned(),
            json!([{"protected": protected, "signature": URL_SAFE_NO_PAD.encode(signature)}]),
        );
        Ok(())
    }
}

// The private key is a secret: only its name is shown.
impl fmt::Debug for CardSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CardSigner")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

/// The public key a client checks an agent's card with
/// ([`RemoteAgentBuilder::card_key`](crate::RemoteAgentBuilder::card_key)).
#[derive(Clone, PartialEq, Eq)]
pub struct CardKey {
    public: Vec<u8>,
    kid: Option<String>,
}

impl CardKey {
    /// An Ed25519 public key (its 32 bytes), taking signatures under any `kid`.
    pub fn ed25519(public: &[u8]) -> Result<CardKey, A2aError> {
        if public.len() != 32 {
            return Err(A2aError::CardKey(format!(
                "an Ed25519 public key is 32 bytes, not {}",
                public.len()
            )));
        }
        Ok(CardKey {
            public: public.to_vec(),
            kid: None,
        })
    }

    /// Takes only signatures whose protected header names `kid`.
    pub fn with_kid(mut self, kid: impl Into<String>) -> CardKey {
        self.kid = Some(kid.into());
        self
    }

    /// The key's 32 bytes.
    pub fn public_bytes(&self) -> &[u8] {
        &self.public
    }

    /// The `kid` signatures must name, if any.
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// Whether one of `card`'s signatures is this key's over the card as fetched; why
    /// not, otherwise.
    pub(crate) fn check(&self, card: &Value) -> Result<(), String> {
        let signatures = match card.get("signatures") {
            Some(Value::Array(signatures)) if !signatures.is_empty() => signatures,
            _ => return Err("the card is not signed".to_owned()),
        };
        let payload = URL_SAFE_NO_PAD.encode(canonical(card).map_err(|e| e.to_string())?);
        let key = UnparsedPublicKey::new(&ED25519, &self.public);
        let mut why = String::from("no signature is this key's");
        for signature in signatures {
            let (Some(protected), Some(value)) = (
                signature.get("protected").and_then(Value::as_str),
                signature.get("signature").and_then(Value::as_str),
            ) else {
                why = "a signature lacks its protected header or its value".to_owned();
                continue;
            };
            let header = URL_SAFE_NO_PAD
                .decode(protected)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
            let Some(header) = header else {
                why = "a signature's protected header is no base64url JSON".to_owned();
                continue;
            };
            // Only EdDSA: a header naming another algorithm (`none` among them) is never
            // taken, whatever its bytes.
            if header.get("alg").and_then(Value::as_str) != Some(ALG) {
                why = "a signature is not EdDSA".to_owned();
                continue;
            }
            if let Some(kid) = &self.kid
                && header.get("kid").and_then(Value::as_str) != Some(kid.as_str())
            {
                why = format!("no signature names the key `{kid}`");
                continue;
            }
            let Ok(value) = URL_SAFE_NO_PAD.decode(value) else {
                why = "a signature is no base64url".to_owned();
                continue;
            };
            let signed = format!("{protected}.{payload}");
            if key.verify(signed.as_bytes(), &value).is_ok() {
                return Ok(());
            }
            why = "the signature does not match the card".to_owned();
        }
        Err(why)
    }
}

impl fmt::Debug for CardKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CardKey")
            .field("public", &URL_SAFE_NO_PAD.encode(&self.public))
            .field("kid", &self.kid)
            .finish()
    }
}

/// The bytes a card's signature covers: the card without `signatures`, its empty strings,
/// lists and objects left out at every depth, in its RFC 8785 form.
fn canonical(card: &Value) -> Result<Vec<u8>, A2aError> {
    let mut card = card.clone();
    if let Value::Object(fields) = &mut card {
        fields.remove("signatures");
    }
    let cleaned = without_empty(card, 1)?.unwrap_or_else(|| json!({}));
    Ok(toolnexus::canonical_json(&cleaned))
}

/// `value` without its empty strings, lists and objects (`None` when it is one of them,
/// or holds nothing else).
fn without_empty(value: Value, depth: usize) -> Result<Option<Value>, A2aError> {
    if depth > MAX_DEPTH {
        return Err(A2aError::CardKey(format!(
            "the card nests deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(match value {
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let mut kept = Vec::new();
            for item in items {
                kept.extend(without_empty(item, depth + 1)?);
            }
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Value::Object(fields) => {
            let mut kept = serde_json::Map::new();
            for (key, field) in fields {
                if let Some(field) = without_empty(field, depth + 1)? {
                    kept.insert(key, field);
                }
            }
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{CardKey, CardSigner};

    fn signer(kid: &str) -> CardSigner {
        let pkcs8 = CardSigner::generate_pkcs8().unwrap_or_default();
        CardSigner::from_pkcs8(&pkcs8, kid).unwrap_or_else(|e| panic!("{e}"))
    }

    fn card() -> serde_json::Value {
        json!({"name": "Shop", "description": "Buys", "version": "1",
               "capabilities": {"streaming": true, "pushNotifications": false},
               "skills": [], "provider": {"organization": "", "url": ""}})
    }

    #[test]
    fn a_signed_card_checks_with_its_key_and_no_other() {
        let signer = signer("k1");
        let mut card = card();
        signer.sign(&mut card).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(signer.verifying_key().check(&card), Ok(()));
        let other = self::signer("k1").verifying_key();
        assert!(other.check(&card).is_err());
        let wrong_kid =
            CardKey::ed25519(signer.verifying_key().public_bytes()).map(|k| k.with_kid("k2"));
        assert!(wrong_kid.map(|k| k.check(&card).is_err()).unwrap_or(false));
    }

    #[test]
    fn empty_values_and_key_order_do_not_change_what_is_signed() {
        let signer = signer("k1");
        let mut card = card();
        signer.sign(&mut card).unwrap_or_else(|e| panic!("{e}"));
        // The same card as another server writes it: members reordered, empties dropped.
        let mut reordered = json!({"version": "1", "skills": [], "description": "Buys",
            "name": "Shop", "capabilities": {"pushNotifications": false, "streaming": true}});
        reordered["signatures"] = card["signatures"].clone();
        assert_eq!(signer.verifying_key().check(&reordered), Ok(()));
    }

    #[test]
    fn a_changed_card_an_unsigned_one_and_another_algorithm_are_refused() {
        let signer = signer("k1");
        let key = signer.verifying_key();
        let mut card = card();
        assert_eq!(key.check(&card), Err("the card is not signed".to_owned()));
        signer.sign(&mut card).unwrap_or_else(|e| panic!("{e}"));
        let mut changed = card.clone();
        changed["description"] = json!("Buys anything, ask no one");
        assert!(key.check(&changed).is_err());

        // `alg: none` with the same signature bytes: never taken.
        use base64::Engine;
        let none = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(json!({"alg": "none", "kid": "k1"}).to_string());
        let mut downgraded = card.clone();
        downgraded["signatures"][0]["protected"] = json!(none);
        assert_eq!(
            key.check(&downgraded),
            Err("a signature is not EdDSA".to_owned())
        );
    }

    #[test]
    fn keys_of_the_wrong_size_and_secrets_in_debug_are_refused() {
        assert!(CardKey::ed25519(&[0; 31]).is_err());
        let shown = format!("{:?}", signer("k1"));
        assert_eq!(shown, "CardSigner { kid: \"k1\", .. }");
    }
}
