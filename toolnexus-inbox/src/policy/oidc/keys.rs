//! The provider's signing keys: read from its JWKS, kept, and read again when a token names
//! a key that is not among them (the provider rotated) — at most once per floor, however
//! many such tokens come, so forged `kid`s cannot turn the validator against the provider.
//! Requests that meet the same unknown key while a read is under way wait for that read.
//! Keys held longer than their maximum age are read again before they are used, so a key
//! the provider withdrew stops verifying; while the provider cannot be reached, the keys
//! held go on verifying (a provider's outage is not every caller's).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::SigningAlg;
use crate::clock::{ms, Clock};
use crate::error::InboxError;

/// The most bytes a discovery document or a JWKS may have: a provider's are a few
/// kilobytes; the bound keeps a misbehaving endpoint from filling memory.
const MAX_DOCUMENT: usize = 512 * 1024;

/// One verification key of the provider's, usable for the algorithms its type allows.
pub(super) struct Key {
    pub(super) decoding: DecodingKey,
    kind: Kind,
    /// The `alg` the JWKS pins the key to, if it does.
    pinned: Option<String>,
}

/// What a key is, as far as which algorithms it may verify: an EC key's curve fixes its
/// algorithm; an RSA key serves PKCS#1 v1.5 and PSS alike.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Rsa,
    P256,
    P384,
    Ed25519,
}

impl Key {
    /// Whether this key may verify a signature made with `alg`.
    pub(super) fn fits(&self, alg: SigningAlg) -> bool {
        if self
            .pinned
            .as_deref()
            .is_some_and(|pinned| pinned != alg.as_str())
        {
            return false;
        }
        match alg.algorithm() {
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => self.kind == Kind::Rsa,
            Algorithm::ES256 => self.kind == Kind::P256,
            Algorithm::ES384 => self.kind == Kind::P384,
            Algorithm::EdDSA => self.kind == Kind::Ed25519,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => false,
        }
    }
}

/// Why a token's key could not be had; each is logged, and the token refused.
pub(super) enum Missing {
    /// Not in the JWKS, even as just read.
    Unknown,
    /// Not in the JWKS as last read, and the floor keeps it from being read again yet.
    Floor,
    /// The JWKS could not be read.
    Unreachable,
}

struct Held {
    keys: HashMap<String, Arc<Key>>,
    /// Bumped by every read that brought keys, so a request that waited for another's read
    /// knows it need not read again.
    generation: u64,
    /// When the keys were last read again (the first read does not count: the floor is
    /// about reads strangers can cause).
    refreshed_at_ms: Option<i64>,
    /// When the keys held were read.
    read_at_ms: i64,
}

/// The provider's keys, kept between requests.
pub(super) struct Keys {
    jwks_uri: String,
    http: reqwest::Client,
    floor: Duration,
    max_age: Duration,
    clock: Clock,
    held: RwLock<Held>,
    reading: tokio::sync::Mutex<()>,
}

impl Keys {
    /// The keys at `jwks_uri`, read now.
    pub(super) async fn read(
        jwks_uri: String,
        http: reqwest::Client,
        floor: Duration,
        max_age: Duration,
        clock: Clock,
    ) -> Result<Keys, InboxError> {
        let document = get_json(&http, &jwks_uri).await?;
        let keys = parse_jwks(&document).map_err(|reason| InboxError::InvalidProvider {
            url: jwks_uri.clone(),
            reason: reason.to_owned(),
            source: None,
        })?;
        let read_at_ms = clock.now_ms();
        Ok(Keys {
            jwks_uri,
            http,
            floor,
            max_age,
            clock,
            held: RwLock::new(Held {
                keys,
                generation: 0,
                refreshed_at_ms: None,
                read_at_ms,
            }),
            reading: tokio::sync::Mutex::new(()),
        })
    }

    /// How many keys are held.
    pub(super) fn len(&self) -> usize {
        self.held.read().map(|held| held.keys.len()).unwrap_or(0)
    }

    /// The key named `kid`, read again from the provider when it is not held or the keys
    /// are past their maximum age, and the floor allows.
    pub(super) async fn key(&self, kid: &str) -> Result<Arc<Key>, Missing> {
        let seen = {
            let held = self.held.read().map_err(|_| Missing::Unreachable)?;
            let fresh = self.clock.now_ms().saturating_sub(held.read_at_ms) < ms(self.max_age);
            match held.keys.get(kid) {
                Some(key) if fresh => return Ok(key.clone()),
                _ => held.generation,
            }
        };
        let _one_reader = self.reading.lock().await;
        let now = self.clock.now_ms();
        let held_key = {
            let mut held = self.held.write().map_err(|_| Missing::Unreachable)?;
            let held_key = held.keys.get(kid).cloned();
            if held.generation != seen {
                // Another request read the keys while this one waited.
                return held_key.ok_or(Missing::Unknown);
            }
            if held
                .refreshed_at_ms
                .is_some_and(|at| now.saturating_sub(at) < ms(self.floor))
            {
                return held_key.ok_or(Missing::Floor);
            }
            // A read that fails counts too: a provider that is down is not asked again at
            // every request.
            held.refreshed_at_ms = Some(now);
            held_key
        };
        let fetched = match get_json(&self.http, &self.jwks_uri).await {
            Ok(document) => parse_jwks(&document).map_err(|reason| {
                tracing::warn!(jwks_uri = %self.jwks_uri, reason, "the provider's JWKS is unusable");
            }),
            Err(e) => {
                tracing::warn!(jwks_uri = %self.jwks_uri, error = %e, "the provider's JWKS cannot be read");
                Err(())
            }
        };
        let Ok(keys) = fetched else {
            // Past their age but not withdrawn as far as anyone can tell: they still verify.
            return held_key.ok_or(Missing::Unreachable);
        };
        let mut held = self.held.write().map_err(|_| Missing::Unreachable)?;
        tracing::info!(jwks_uri = %self.jwks_uri, keys = keys.len(), "read the provider's keys again");
        held.keys = keys;
        held.generation += 1;
        held.read_at_ms = now;
        held.keys.get(kid).cloned().ok_or(Missing::Unknown)
    }
}

/// The JSON document at `url`, within the client's timeouts and [`MAX_DOCUMENT`] bytes.
pub(super) async fn get_json(http: &reqwest::Client, url: &str) -> Result<Value, InboxError> {
    let failed = |reason: &str, source: Option<reqwest::Error>| InboxError::InvalidProvider {
        url: url.to_owned(),
        reason: reason.to_owned(),
        source: source.map(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>),
    };
    let mut response = http
        .get(url)
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| failed("the request failed", Some(e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(failed(&format!("it answered HTTP {status}"), None));
    }
    if response
        .content_length()
        .is_some_and(|n| n > MAX_DOCUMENT as u64)
    {
        return Err(failed(&format!("it is over {MAX_DOCUMENT} bytes"), None));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| failed("its body could not be read", Some(e)))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(failed(&format!("it is over {MAX_DOCUMENT} bytes"), None));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| InboxError::InvalidProvider {
        url: url.to_owned(),
        reason: "it is not JSON".to_owned(),
        source: Some(Box::new(e)),
    })
}

/// The signature keys of a JWKS (RFC 7517 §5) by `kid`. Keys for encryption, symmetric
/// keys, keys without a `kid` and keys of types not verified here are left out, each
/// noted in the log; a JWKS with no key left is refused.
fn parse_jwks(document: &Value) -> Result<HashMap<String, Arc<Key>>, &'static str> {
    let listed = document
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("it has no `keys` array")?;
    let mut keys = HashMap::new();
    for jwk in listed {
        let kid = jwk.get("kid").and_then(Value::as_str);
        match (kid, parse_key(jwk)) {
            (Some(kid), Ok(key)) => {
                keys.insert(kid.to_owned(), Arc::new(key));
            }
            (None, _) => tracing::debug!("a key without a `kid` in the JWKS is left out"),
            (Some(kid), Err(reason)) => {
                tracing::debug!(kid, reason, "a key of the JWKS is left out");
            }
        }
    }
    match keys.is_empty() {
        true => Err("it holds no signature key this validator can use"),
        false => Ok(keys),
    }
}

fn parse_key(jwk: &Value) -> Result<Key, &'static str> {
    let text = |name: &str| jwk.get(name).and_then(Value::as_str);
    if text("use").is_some_and(|u| u != "sig") {
        return Err("it is not for signatures");
    }
    let pinned = text("alg").map(str::to_owned);
    let (kind, decoding) = match (text("kty"), text("crv")) {
        (Some("RSA"), _) => {
            let (n, e) = text("n")
                .zip(text("e"))
                .ok_or("an RSA key needs `n` and `e`")?;
            // A modulus under 2048 bits is refused (NIST SP 800-131A).
            let modulus = URL_SAFE_NO_PAD
                .decode(n)
                .map_err(|_| "`n` is not base64url")?;
            let bits = modulus.iter().skip_while(|b| **b == 0).count() * 8;
            if bits < 2048 {
                return Err("its RSA modulus is under 2048 bits");
            }
            let key = DecodingKey::from_rsa_components(n, e).map_err(|_| "`n` or `e` is bad")?;
            (Kind::Rsa, key)
        }
        (Some("EC"), Some(crv @ ("P-256" | "P-384"))) => {
            let (x, y) = text("x")
                .zip(text("y"))
                .ok_or("an EC key needs `x` and `y`")?;
            let key = DecodingKey::from_ec_components(x, y).map_err(|_| "`x` or `y` is bad")?;
            let kind = if crv == "P-256" {
                Kind::P256
            } else {
                Kind::P384
            };
            (kind, key)
        }
        (Some("OKP"), Some("Ed25519")) => {
            let x = text("x").ok_or("an Ed25519 key needs `x`")?;
            let key = DecodingKey::from_ed_components(x).map_err(|_| "`x` is bad")?;
            (Kind::Ed25519, key)
        }
        (Some("oct"), _) => return Err("a symmetric key never verifies a provider's token"),
        _ => return Err("its type or curve is not one verified here"),
    };
    Ok(Key {
        decoding,
        kind,
        pinned,
    })
}
