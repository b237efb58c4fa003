//! The page's secrets, all derived from its access tokens: the session cookie's name, the
//! signature of each session (keyed by the token its holder signed in with), and the
//! anti-forgery token of each form. Deriving them (HMAC-SHA256 keyed by the access token)
//! means no second secret to store or rotate, none of them reveals a token, and a token
//! taken away ends the sessions it opened. Every check is constant-time.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Purpose labels keep the derived values apart: a cookie value is never a valid
/// anti-forgery token and the reverse.
const SESSION: &[u8] = b"toolnexus-inbox session\0";
const COOKIE_NAME: &[u8] = b"toolnexus-inbox cookie name\0";
const ANSWER: &[u8] = b"toolnexus-inbox answer\0";

/// The access token and what derives from it. `Debug` never shows any of it.
#[derive(Clone)]
pub(crate) struct Secret {
    /// `None` when the configured token is empty: such an inbox lets nobody in.
    mac: Option<HmacSha256>,
    cookie_name: String,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secret").finish_non_exhaustive()
    }
}

impl Secret {
    pub(crate) fn new(token: &str) -> Secret {
        let mac = (!token.is_empty())
            .then(|| HmacSha256::new_from_slice(token.as_bytes()).ok())
            .flatten();
        // Cookies are not kept apart by port, so two inboxes on one host each need a
        // cookie of their own; a short tag of the token names it.
        let tag = mac
            .as_ref()
            .map(|mac| hex(&derive(mac, COOKIE_NAME, b"")[..4]))
            .unwrap_or_default();
        Secret {
            mac,
            cookie_name: format!("toolnexus_inbox_{tag}"),
        }
    }

    /// Whether `given` is the access token.
    pub(crate) fn is_token(&self, given: &str) -> bool {
        let Some(mac) = &self.mac else { return false };
        // Keyed by the candidate, the session value only comes out right for the token
        // itself; the comparison is `Mac::verify_slice`'s constant-time one.
        match HmacSha256::new_from_slice(given.as_bytes()) {
            Ok(candidate) if !given.is_empty() => candidate
                .chain_update(SESSION)
                .verify_slice(&derive(mac, SESSION, b""))
                .is_ok(),
            _ => false,
        }
    }

    /// The session cookie's name.
    pub(crate) fn cookie_name(&self) -> &str {
        &self.cookie_name
    }

    /// Whether this secret comes from a token at all (an empty one signs nothing).
    pub(crate) fn is_set(&self) -> bool {
        self.mac.is_some()
    }

    /// The signature of a session of `who` that ends at `until_ms`; `None` for a token
    /// nobody may enter with.
    pub(crate) fn sign_session(&self, who: &str, until_ms: i64) -> Option<String> {
        let mac = self.mac.as_ref()?;
        Some(hex(&derive(mac, SESSION, &session_subject(who, until_ms))))
    }

    /// Whether `signature` is this token's signature of a session of `who` until
    /// `until_ms`.
    pub(crate) fn is_session(&self, who: &str, until_ms: i64, signature: &str) -> bool {
        self.verify(SESSION, &session_subject(who, until_ms), signature)
    }

    /// The anti-forgery token a form answering request `id` carries.
    pub(crate) fn answer_token(&self, id: &str) -> String {
        self.mac
            .as_ref()
            .map(|mac| hex(&derive(mac, ANSWER, id.as_bytes())))
            .unwrap_or_default()
    }

    /// Whether `given` is the anti-forgery token of request `id`.
    pub(crate) fn is_answer_token(&self, id: &str, given: &str) -> bool {
        self.verify(ANSWER, id.as_bytes(), given)
    }

    fn verify(&self, purpose: &[u8], subject: &[u8], given: &str) -> bool {
        let (Some(mac), Some(given)) = (&self.mac, unhex(given)) else {
            return false;
        };
        mac.clone()
            .chain_update(purpose)
            .chain_update(subject)
            .verify_slice(&given)
            .is_ok()
    }
}

/// What a session's signature covers: who and until when, the length first so no two
/// pairs read the same.
fn session_subject(who: &str, until_ms: i64) -> Vec<u8> {
    format!("{}:{who}{until_ms}", who.len()).into_bytes()
}

fn derive(mac: &HmacSha256, purpose: &[u8], subject: &[u8]) -> Vec<u8> {
    mac.clone()
        .chain_update(purpose)
        .chain_update(subject)
        .finalize()
        .into_bytes()
        .to_vec()
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// A new random access token: 32 hex digits (128 bits) from the operating system's
/// generator.
pub(crate) fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
    Ok(hex(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_token_itself_passes() {
        let secret = Secret::new("s3cret");
        assert!(secret.is_token("s3cret"));
        assert!(!secret.is_token("s3cre"));
        assert!(!secret.is_token("s3cret "));
        assert!(!secret.is_token(""));
    }

    #[test]
    fn an_empty_token_lets_nobody_in() {
        let secret = Secret::new("");
        assert!(!secret.is_token(""));
        assert_eq!(secret.sign_session("ada", 1), None);
        assert!(!secret.is_session("ada", 1, ""));
        assert!(!secret.is_answer_token("id", ""));
    }

    #[test]
    fn derived_values_are_bound_to_their_purpose_and_request() {
        let secret = Secret::new("s3cret");
        let session = secret.sign_session("ada", 1_000).unwrap();
        assert!(secret.is_session("ada", 1_000, &session));
        assert!(!secret.is_session("ada", 1_001, &session));
        assert!(!secret.is_session("bob", 1_000, &session));
        assert!(!Secret::new("other").is_session("ada", 1_000, &session));
        assert!(!secret.is_answer_token("a", &session));
        let a = secret.answer_token("a");
        assert!(secret.is_answer_token("a", &a));
        assert!(!secret.is_answer_token("b", &a));
        assert!(!secret.is_session("a", 0, &a));
        assert!(!Secret::new("other").is_answer_token("a", &a));
        assert!(!secret.is_answer_token("a", "zz"));
    }

    #[test]
    fn inboxes_with_different_tokens_use_different_cookies() {
        assert_ne!(
            Secret::new("one").cookie_name(),
            Secret::new("two").cookie_name()
        );
        assert!(!format!("{:?}", Secret::new("s3cret")).contains("s3cret"));
    }

    #[test]
    fn new_tokens_are_random_hex() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
